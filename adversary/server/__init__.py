"""The launderer's server: `app.py` wires the app; `python -m memex.adversary.server` serves it."""
