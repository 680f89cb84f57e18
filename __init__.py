"""Memex: an OpenEnv reinforcement-learning environment for anti-money-laundering investigation.

The repository root is this package (OpenEnv convention); see README.md. The package face is
the typed client and the wire models (importing them builds no world and no search index):

    from memex import MemexEnv, MemexAction, MemexObservation
"""

import sys

# openenv's server package imports gradio (about 6 s on 2 cores) for an optional web page that
# it skips when gradio is missing; Memex serves its own (the Glass Box), so that one import is
# skipped. gradio stays importable afterwards (the failed import is not cached).
if "gradio" not in sys.modules:
    sys.modules["gradio"] = None  # type: ignore[assignment]
    try:
        import openenv.core.env_server  # noqa: F401
    finally:
        del sys.modules["gradio"]

from memex.client import MemexEnv
from memex.models import MemexAction, MemexObservation, MemexState

__version__ = "0.1.0"
__all__ = ["MemexAction", "MemexEnv", "MemexObservation", "MemexState", "__version__"]
