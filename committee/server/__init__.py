"""The committee's server: `app.py` wires the app; `python -m memex.committee.server` serves it."""
