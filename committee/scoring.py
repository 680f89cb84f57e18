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
  validation seeds (pinned by a test). The reference of an episode, `G_ref`, is the better of
  two oracles replayed on its world: the *regime oracle* (told the hidden regime of each coming
  month, not its returns) and the *hindsight oracle* (told, in addition, each regime spell's
  realised mean return per asset — never a single month's return); both run the committee's
  workflow and hold the mean-variance optimal book inside the mandate. The reference beats cash
  on about 99% of paths (`docs/committee_baselines.md`); a PM matching its typical edge scores 1.
- The divisor is one number per task, not the episode's own reference edge: dividing by a
  per-episode span would let luck set the scale (a loss on a path where the reference barely
  beat cash would count as -1, the same gain on a rich path as +0.1) and reverse the growth
  ranking; with one divisor per task, ranking by mean score *is* ranking by mean risk-adjusted
  return. There is no span floor.
- A task's or a run's score is the **mean** of its episode scores: losses count.

The references are computed by `references.py` (which plays the oracles) and injected into the
environment, so this module — and the environment — import no policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

SCORE_RANGE: tuple[float, float] = (-1.0, 1.0)
# Mean edge of the reference over cash (pts), validation seeds 1,000,000-1,000,039.
REFERENCE_EDGE_PTS: dict[str, float] = {
    "guided_allocation": 18.5, "research_risk_conflict": 28.5,
    "regime_shift_recovery": 29.0, "mandate_drift": 19.5,
}


@dataclass(frozen=True)
class References:
    cash: float
    oracle: float                 # the regime oracle (expectations only)
    hindsight: float | None = None  # the hindsight oracle (each regime spell's realised means)

    @property
    def reference(self) -> float:
        """The score's upper reference: the better of the two oracles."""
        return self.oracle if self.hindsight is None else max(self.oracle, self.hindsight)


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
