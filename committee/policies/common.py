"""What every committee policy shares: the one `Policy` base of the project specialised to the
committee's observation and action, and the small readings of an observation that several
policies make (the risky book, turnover, the mandate to plan for, the officer's model rebuilt
from a report)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from memex.committee.models import CommitteeAction, CommitteeObservation, MandateView
from memex.committee.world import risk
from memex.committee.world.market import PERIODS_PER_YEAR, TICKERS, Mandate
from memex.envkit.policy import Policy as BasePolicy
from memex.envkit.policy import SeededPolicy

__all__ = ["Policy", "SeededPolicy", "act", "binding_mandate", "cov_from_report",
           "flagged_breach", "risky_weights", "turnover"]


def act(action_type: str, **params: Any) -> CommitteeAction:
    return CommitteeAction(action_type=action_type, **params)


def risky_weights(obs: CommitteeObservation) -> dict[str, float]:
    return {t: obs.portfolio.weights.get(t, 0.0) for t in TICKERS}


def turnover(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    return sum(abs(a.get(t, 0.0) - b.get(t, 0.0)) for t in TICKERS)


def binding_mandate(view: MandateView, next_period: int, lead_periods: int = 1) -> Mandate:
    """The mandate to plan for: the current one, tightened by an announced revision once its
    effective date is within `lead_periods` of the coming period."""
    current = Mandate(view.max_asset_weight, view.max_sector_weight, view.vol_budget_annual_pct,
                      view.drawdown_limit_pct, view.derisk_vol_annual_pct, tuple(view.excluded))
    pending = view.pending
    if not pending or pending["effective_period"] > next_period + lead_periods:
        return current
    new = pending["mandate"]
    return Mandate(min(current.max_asset_weight, new["max_asset_weight"]),
                   min(current.max_sector_weight, new["max_sector_weight"]),
                   min(current.vol_budget_annual_pct, new["vol_budget_annual_pct"]),
                   min(current.drawdown_limit_pct, new["drawdown_limit_pct"]),
                   min(current.derisk_vol_annual_pct, new["derisk_vol_annual_pct"]),
                   tuple(sorted(set(current.excluded) | set(new["excluded"]))))


def cov_from_report(report: Mapping[str, Any]) -> risk.Cov:
    """The Risk Officer's model rebuilt from a PORTFOLIO report (vols and correlations)."""
    vols = report["asset_vol_annual_pct"]
    corr = report["correlation"]
    sd = {t: vols[t] / math.sqrt(PERIODS_PER_YEAR) for t in TICKERS}
    return [[corr[a][b] * sd[a] * sd[b] for b in TICKERS] for a in TICKERS]




Policy = BasePolicy[CommitteeObservation, CommitteeAction]


def flagged_breach(obs: CommitteeObservation) -> bool:
    """The Risk Officer flags a mandate item in breach (escalated or not)."""
    return any(f.level in ("breach", "escalated") for f in obs.risk.flags)
