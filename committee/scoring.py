"""The committee's objective, and the episode score that is that objective per task.

**The objective** is the expected utility of the fund's terminal edge over cash, net of the
fines its mandate breaches stand for, under the mandate's risk aversion:

    x      = (NAV_T - NAV_T^cash) - F                     pts of the initial NAV of 100
    U(x)   = (1 - exp(-a x)) / a,   a = RISK_AVERSION / INITIAL_NAV = 4 / 100 per pt
    CE     = -ln(1 - a E[U(x)]) / a                       the certainty-equivalent edge, pts
    score  = U(x) / SCORE_SCALE_PTS[task]                 per episode; a run's is the mean

- `NAV_T` is the book's value after the horizon, net of every trading cost (the PM's trades
  and those the Risk Officer enforces); `NAV_T^cash` is the fund left in cash from the start
  (100 x 1.0025^20 = 105.12).
- `F` is the breaches costed as the fines they stand for: `BREACH_FINE_PTS` for every mandate
  item in breach after the PM's action, each month, and `ENFORCEMENT_FINE_PTS` each time the
  Risk Officer has to trade the book back himself.
- `U` is exponential (constant absolute risk aversion) with `a` chosen so that at the initial
  NAV its relative risk aversion is the mandate's `RISK_AVERSION` (4). Its mean-variance
  reading, `CE ~ E[x] - (a/2) Var[x]`, charges `VARIANCE_AVERSION = a/2 = 0.02` per pt^2 —
  the aversion the committee's optimiser sizes books with. Exponential rather than power
  utility because `x` may be any number of points (fines can exceed a gain): the score is
  defined, finite and unclipped for every episode.
- `SCORE_SCALE_PTS[task]` is the regime oracle's mean `U` on the task's validation seeds
  1,000,000-1,000,039 (pinned by a test): a PM whose episodes average the utility of a PM told
  the hidden regime scores 1; sitting in cash scores 0; losing to cash scores below 0.

Why this objective: a committee is judged on what the client ends with against the risk-free
alternative, risk-adjusted with the mandate's own aversion, and charged for breaking the
mandate. Because `U` is increasing, an episode that loses money against cash always scores
below one that beats cash without breaches; because the mean of `U` is expected utility,
ranking policies by mean score *is* ranking them by certainty-equivalent edge. Nothing is
clipped: `U` is bounded above only by `1/a` = 25 pts, which no episode reaches.

The per-period reward is this objective's increments (`rewards.py`), so the episode return is
`U(x)` itself and a trainer optimises what the score measures.
"""

from __future__ import annotations

import math
from typing import Any

from memex.committee.world.market import INITIAL_NAV

RISK_AVERSION = 4.0                     # relative, at the initial NAV
ABSOLUTE_RISK_AVERSION = RISK_AVERSION / INITIAL_NAV       # per pt
VARIANCE_AVERSION = ABSOLUTE_RISK_AVERSION / 2             # per pt^2 (= per %^2 a month)
BREACH_FINE_PTS = 0.5                   # per mandate item in breach, per month
ENFORCEMENT_FINE_PTS = 1.0              # per enforced trade-back
BEAT_CASH_TOLERANCE_PTS = 1e-6          # sitting in cash must not "beat" cash by rounding
# The regime oracle's mean utility (pts), validation seeds 1,000,000-1,000,039.
SCORE_SCALE_PTS: dict[str, float] = {
    "guided_allocation": 14.7, "research_risk_conflict": 14.7,
    "regime_shift_recovery": 14.5, "mandate_drift": 12.7,
}


def utility(edge_pts: float) -> float:
    """`U(x)`: the utility (pts) of a terminal edge over cash of `edge_pts`, fines deducted."""
    a = ABSOLUTE_RISK_AVERSION
    return -math.expm1(-a * edge_pts) / a


def certainty_equivalent(mean_utility: float) -> float:
    """The sure edge over cash (pts) worth a mean utility: `U^-1(E[U])`."""
    a = ABSOLUTE_RISK_AVERSION
    return -math.log1p(-a * mean_utility) / a


def score_range(task: str) -> tuple[float, float]:
    """The score's range on `task`: unbounded below; above, the supremum `1 / (a x scale)`,
    which no finite edge reaches (nothing is clipped)."""
    return -math.inf, 1 / (ABSOLUTE_RISK_AVERSION * SCORE_SCALE_PTS[task])


def episode_score(edge_pts: float, task: str) -> float:
    """The episode's score: its utility in units of the task's scale (unbounded)."""
    return round(utility(edge_pts) / SCORE_SCALE_PTS[task], 6)


def outcome(edge_pts: float) -> str:
    """`beat_cash` when the fund ended above sitting in cash, fines deducted (the objective's
    edge is positive), else `below_cash`."""
    return "beat_cash" if edge_pts > BEAT_CASH_TOLERANCE_PTS else "below_cash"


def episode_metrics(observation: Any) -> dict[str, Any]:
    """Per-episode metrics from the final observation (a `CommitteeObservation` or its JSON):
    score, its components, NAV, drawdown, costs, queries, breaches and the totals of every
    reward term."""
    obs = observation if isinstance(observation, dict) else observation.model_dump()
    meta = obs.get("metadata") or {}
    if "score" not in meta:
        raise ValueError("episode_metrics needs the final observation of an episode")
    return {"task": obs.get("task"), "score": meta["score"], **meta["metrics"],
            **{f"term_{k}": v for k, v in (obs.get("reward_totals") or {}).items()}}
