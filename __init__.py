"""Memex: an OpenEnv reinforcement-learning environment for anti-money-laundering investigation.

The repository root is this package (OpenEnv convention); see README.md. The package face is
the typed client and the wire models (importing them builds no world and no search index):

    from memex import MemexEnv, MemexAction, MemexObservation
"""

from memex.client import MemexEnv
from memex.models import MemexAction, MemexObservation, MemexState

__version__ = "0.1.0"
__all__ = ["MemexAction", "MemexEnv", "MemexObservation", "MemexState", "__version__"]
