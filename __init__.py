"""Memex: an OpenEnv reinforcement-learning environment for anti-money-laundering investigation.

The repository root is this package (OpenEnv convention); see README.md.
"""

__version__ = "0.1.0"
