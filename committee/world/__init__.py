"""The committee's world, pure functions of `(task, seed)`: the market (`market.py`: assets,
regimes, the return model, the mandate), the four tasks and their regime processes
(`tasks.py`), and the two scripted actors — the Research Analyst (`research.py`) and the Risk
Officer (`risk.py`)."""
