"""Regret against the oracle: play a policy and the oracle on a level, in process.

The oracle reads the hidden case (it decides only from what tools reveal, but knows where to
look), so its return is the level's attainable return; a policy's regret on a level is the
oracle's return minus its own. Oracle returns are cached per level (the environment and the
oracle are deterministic given the level).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memex.curriculum.levels import Level
from memex.curriculum.plr import regret
from memex.envkit.episodes import Episode


def play_level(adapter: Any, policy: Any, level: Level, repeat: int = 0) -> Episode:
    """One episode of `policy` on `level`, on a fresh in-process session."""
    session = adapter.open()
    try:
        return adapter.play(session, policy, level.to_spec(repeat))
    finally:
        session.close()


class RegretOracle:
    """Oracle returns per level (cached) and policies' regret estimates."""

    def __init__(self, adapter: Any, oracle: str = "oracle"):
        self.adapter = adapter
        self.oracle = oracle
        self.returns: dict[str, float] = {}
        self.episodes = 0  # oracle episodes played (cache misses)

    def oracle_return(self, level: Level) -> float:
        if level.key not in self.returns:
            episode = play_level(self.adapter, self.adapter.make_policy(self.oracle), level)
            self.returns[level.key] = episode.episode_return
            self.episodes += 1
        return self.returns[level.key]

    def regret(self, level: Level, policy_return: float) -> float:
        return regret(self.oracle_return(level), policy_return)

    def score(self, make_policy: Callable[[Level], Any], level: Level) -> tuple[float, Episode]:
        """(regret, the policy's episode) of a fresh policy from `make_policy(level)`."""
        episode = play_level(self.adapter, make_policy(level), level)
        return self.regret(level, episode.episode_return), episode
