"""Episode score in [-1, 1]: the episode's edge over cash in units of the reference's typical
edge on the same task, clipped symmetrically:

    score = clip((G - G_cash) / REFERENCE_EDGE_PTS[task], -1, 1)

- `G` is the episode return: the sum of the per-period rewards (pts of NAV, `rewards.py`),
  growth net of costs and risk penalties; the bonus terms are capped far below its spread
  (`rewards.MAX_BONUS_PTS`).
- `G_cash` is the return of the fund sitting in cash from period 1: the cash rate every month.
  Doing nothing from cash scores 0; *losing* against cash scores below 0, symmetrically — a
  variance-seeking policy pays for its bad paths as much as it earns on its good ones.
- `REFERENCE_EDGE_PTS[task]` is the mean edge over cash of the score's reference on the task's
  validation seeds 1,000,000-1,000,039 (pinned by a test). The reference of an episode, `G_ref`,
  is the *regime oracle* replayed on its world: told the hidden regime of each coming month —
  never a return, so it is hindsight-free — it runs the committee's workflow and holds the
  mean-variance optimal book for the regime's expected returns inside the mandate. It beats
  cash on about 99% of paths (the share is in `docs/committee_baselines.md` and pinned at
  >= 95% by a test); a PM matching its typical edge scores 1. (The earlier reference, the better
  of this oracle and one told each regime spell's realised mean returns, used hindsight to beat
  cash on noisy paths; in the calmer market the honest oracle does so on its own.)
- The divisor is one number per task, not the episode's own reference edge: dividing by a
  per-episode span would let luck set the scale (a loss on a path where the reference barely
  beat cash would count as -1, the same gain on a rich path as +0.1) and reverse the growth
  ranking; with one divisor per task, ranking by mean score *is* ranking by mean risk-adjusted
  return. There is no span floor.
- A task's or a run's score is the **mean** of its episode scores: losses count.

The references are computed by `references.py` (which plays the oracle) and injected into the
environment, so this module — and the environment — import no policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCORE_RANGE: tuple[float, float] = (-1.0, 1.0)
# Mean edge of the reference over cash (pts), validation seeds 1,000,000-1,000,039.
REFERENCE_EDGE_PTS: dict[str, float] = {
    "guided_allocation": 18.5, "research_risk_conflict": 19.0,
    "regime_shift_recovery": 18.0, "mandate_drift": 15.0,
}


@dataclass(frozen=True)
class References:
    cash: float
    oracle: float     # the regime oracle: the score's reference


def normalised_score(episode_return: float, refs: References, task: str) -> float:
    """The episode's score in [-1, 1] (see the module docstring)."""
    lo, hi = SCORE_RANGE
    edge = (episode_return - refs.cash) / REFERENCE_EDGE_PTS[task]
    return round(min(hi, max(lo, edge)), 6)


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
