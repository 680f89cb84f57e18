"""The typed OpenEnv WebSocket client of the launderer environment:

    with LaunderEnv(base_url="http://localhost:7862").sync() as env:
        result = env.reset(seed=3, defender="heuristic")
        result = env.step(LaunderAction(plan={"kind": "structuring",
                                              "variant": "undocumented_cash"}))
"""

from __future__ import annotations

from memex.adversary.models import LaunderObservation, LaunderState
from memex.envkit.client import TypedEnvClient


class LaunderEnv(TypedEnvClient):
    """Typed WebSocket client for a launderer server (one session per client instance)."""

    observation_cls = LaunderObservation
    state_cls = LaunderState
