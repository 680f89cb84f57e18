"""The score's reference returns, and the environment that is scored against them.

`references(task, seed)` plays the regime oracle on an unscored environment (the market does
not react to the PM, so the oracle's world is the PM's) and prices sitting in cash; the
environment receives this function by injection (`ScoredCommitteeEnvironment`), which keeps the
imports one way: references -> environment, policies -> scoring.
"""

from __future__ import annotations

import functools

from memex.committee.environment import CommitteeEnvironment
from memex.committee.policies import RegimeOracle
from memex.committee.scoring import References
from memex.committee.world.market import CASH_RATE_PCT
from memex.committee.world.tasks import generate
from memex.envkit.episodes import EpisodeSpec, LocalSession, play


@functools.lru_cache(maxsize=8192)
def references(task: str, seed: int) -> References:
    """The reference returns of `(task, seed)`: cash and the regime oracle (cached: a pure
    function of its inputs)."""
    spec = EpisodeSpec(task, "standard", seed, {"task": task, "seed": seed})
    world = generate(task, seed)
    oracle = play(LocalSession(CommitteeEnvironment()), RegimeOracle(), spec, case=world)
    cash = oracle.final.horizon * CASH_RATE_PCT
    return References(cash=round(cash, 6), oracle=oracle.episode_return)


class ScoredCommitteeEnvironment(CommitteeEnvironment):
    """The committee environment whose final observation carries the normalised `score`: what
    the server, the adapter and the reports run."""

    def __init__(self) -> None:
        super().__init__(references=references)
