"""The one Policy base of the project, generic over an environment's observations and actions.

A policy has a `name`, says whether it `needs_case` (reads the hidden world: oracles only), is
told each episode's first observation by `reset(obs, case=None)` and chooses every action with
`act(obs)`. A policy that keeps a belief may show it with `insight()` after each `act` (the
committee heuristic's regime belief): traces record it and the Glass Box draws it; nothing feeds
it back to the environment. `envkit.episodes.play` runs any policy; both environments'
baselines, probes and oracles derive from this class.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from typing import Any, Generic, TypeVar

ObsT = TypeVar("ObsT")
ActT = TypeVar("ActT")


class Policy(ABC, Generic[ObsT, ActT]):
    name = "policy"
    needs_case = False

    def reset(self, obs: ObsT, case: Any = None) -> None:
        """Start an episode (most policies keep no state between episodes)."""

    @abstractmethod
    def act(self, obs: ObsT) -> ActT:
        ...

    def insight(self) -> dict[str, Any] | None:
        """What the policy believes after its last `act`, as JSON (None: nothing to show)."""
        return None


class SeededPolicy(Policy[ObsT, ActT]):
    """A stochastic policy with its own RNG: a run is reproducible from `seed`, and each episode
    reseeds the RNG from its last draw so consecutive episodes differ."""

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def reset(self, obs: ObsT, case: Any = None) -> None:
        self.rng.seed(self.rng.random())
