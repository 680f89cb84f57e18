"""Episode score in [0, 1], normalised per episode against two references played on the very
same world (the market does not react to the PM, so any policy can be replayed on it):

    score = clip((G - G_cash) / max(G_oracle - G_cash, MIN_SPAN_PTS), 0, 1)

- `G` is the episode return: the sum of the per-period rewards (pts of NAV, `rewards.py`).
- `G_cash` is the return of the fund sitting in cash from period 1: the cash rate every month
  and nothing else. Doing nothing scores 0 by construction; anything that loses against cash
  after costs and penalties also scores 0.
- `G_oracle` is the return of the *regime oracle*: a PM that is told the hidden regime each
  period (not the returns), consults Research and Risk like a diligent committee member, and
  holds the mean-variance optimal book inside the mandate. It is a strong, not a perfect,
  policy: a PM can beat it on a lucky path, and the score is then capped at 1.
- `MIN_SPAN_PTS` keeps the ratio meaningful on paths where even the oracle barely beats cash.

The same formula holds for all four tasks; what differs is the world, so the per-task numbers
in `docs/committee_baselines.md` are comparable across tasks only as fractions of the oracle's
edge over cash.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from memex.committee.world import CASH_RATE_PCT

MIN_SPAN_PTS = 5.0


@dataclass(frozen=True)
class References:
    cash: float
    oracle: float


@functools.lru_cache(maxsize=8192)
def references(task: str, seed: int) -> References:
    """The two reference returns of `(task, seed)` (cached: a pure function of its inputs)."""
    from memex.committee.environment import CommitteeEnvironment
    from memex.committee.policies import RegimeOracle

    env = CommitteeEnvironment(score_episodes=False)
    obs = env.reset(task=task, seed=seed)
    oracle = RegimeOracle()
    oracle.reset(obs, case=env.current_world)
    total = 0.0
    while not obs.done:
        obs = env.step(oracle.act(obs))
        total += obs.reward or 0.0
    cash = obs.horizon * CASH_RATE_PCT
    return References(cash=round(cash, 6), oracle=round(total, 6))


def normalised_score(episode_return: float, refs: References) -> float:
    span = max(refs.oracle - refs.cash, MIN_SPAN_PTS)
    return round(min(1.0, max(0.0, (episode_return - refs.cash) / span)), 6)


def episode_metrics(observation: Any) -> dict[str, Any]:
    """Per-episode metrics from the final observation (a `CommitteeObservation` or its JSON):
    score, return, reference returns, NAV, drawdown, costs, queries, breaches and the totals of
    every reward term."""
    obs = observation if isinstance(observation, dict) else observation.model_dump()
    meta = obs.get("metadata") or {}
    if "score" not in meta:
        raise ValueError("episode_metrics needs the final observation of an episode")
    return {"task": obs.get("task"), "score": meta["score"], **meta["metrics"],
            **{f"term_{k}": v for k, v in (obs.get("reward_totals") or {}).items()}}
