"""The typed OpenEnv WebSocket client of the Memex environment.

    with MemexEnv(base_url="http://localhost:7860").sync() as env:
        result = env.reset(seed=7, difficulty="hard")
        result = env.step(MemexAction(tool="review_alert"))

There is no TRL `environment_factory` class: TRL's tool loop appends every result to one
growing conversation, which defeats the bounded RAM this environment models, so the trainer
uses its own `rollout_func` over bounded-context prompts (`train_grpo.py`).

`base_url` may list replicas (`"http://h:7860,http://h:7861"`, as `python -m
memex.openenv_server --replicas 2` serves them): each new client takes the next in turn.

If the connection is lost mid-episode (server restart, dropped socket, idle session reaped),
the next `step` or `state` raises `EpisodeLostError` rather than returning a fake `done`;
`reset()` on the same client then starts a new episode.
"""

from __future__ import annotations

from memex.envkit.client import EpisodeLostError, TypedEnvClient
from memex.models import MemexObservation, MemexState

__all__ = ["EpisodeLostError", "MemexEnv"]


class MemexEnv(TypedEnvClient):
    """Typed WebSocket client for a Memex server (one session per client instance)."""

    observation_cls = MemexObservation
    state_cls = MemexState
