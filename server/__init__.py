"""The environment: tools, the Environment class, and the app wiring."""
