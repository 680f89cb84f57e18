"""Instruments over the committee: playing scored episodes in process (`episodes.py`) and the
baseline report (`baselines.py`)."""
