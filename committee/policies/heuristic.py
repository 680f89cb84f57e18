"""The committee-aware heuristic PM: the reference a trained PM is compared against."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from memex.committee.models import CommitteeAction, CommitteeObservation
from memex.committee.policies.belief import RegimeBelief
from memex.committee.policies.common import (
    Policy,
    act,
    binding_mandate,
    cov_from_report,
    risky_weights,
    turnover,
)
from memex.committee.policies.optimizer import optimise
from memex.committee.rewards import RESEARCH_FRESH_PERIODS, VARIANCE_AVERSION
from memex.committee.world import risk
from memex.committee.world.market import ASSETS, SECTOR_MEMBERS, SECTOR_OF, TICKERS, Mandate
from memex.committee.world.research import CONVICTION_SCALE_PCT
from memex.committee.world.tasks import TASKS

STRESS_RANK = {"normal": 0, "elevated": 1, "severe": 2}
Alarm = tuple[int, bool, frozenset[str]]   # stress rank, drawdown discipline, position alerts


@dataclass
class _Memory:
    belief: RegimeBelief
    report_cov: risk.Cov | None = None        # the officer's model, as last reported
    officer_cov: risk.Cov | None = None       # ... rescaled to the latest headline volatility
    risk_period: int | None = None
    tilt: dict[str, float] = field(default_factory=dict)   # research signal per stock, averaged
    alarm_at_trade: Alarm = (0, False, frozenset())


class Heuristic(Policy):
    """Committee-aware PM from observations only.

    It filters the hidden regime from the month's returns (`belief.py`: a forward filter on the
    factor model's regime profiles and the task's published regime process), takes from
    Research what Research is good at — which stock of a sector to prefer (the analyst's
    biases are common to a sector, so they cancel in the spread) — and from the Risk Officer
    the model its limits are judged by.

    Priorities, each period: (1) fix any breach the Risk Officer flags, at once; (2) when a
    mandate revision is announced, get a fresh risk model and comply before it binds; (3)
    ask Research (every asset) and Risk (the model) before the first trade; (4) when the
    officer raises an alarm (market stress, drawdown discipline, a position alert) re-plan at
    once; (5) rebalance when the target — the mean-variance book for the filtered regime
    mixture, inside the mandate with headroom — beats the book by more than the trade costs;
    (6) with the book on target, refresh stale research and an old risk model; (7) hold.
    """

    name = "heuristic"
    ASSET_HEADROOM = 0.93
    SECTOR_HEADROOM = 0.93
    VOL_HEADROOM = 0.85
    TILT_SHRINK = 0.3              # how far to trust the research's within-sector spread
    TILT_MEMORY = 0.5              # weight of the earlier notes in the averaged research signal
    REBALANCE_GAIN_PCT = 0.1       # a trade must gain this much a month, net of its cost
    RISK_MODEL_MAX_AGE = 8
    STRESS_VOL_SCALE: ClassVar[dict[str, float]] = {"normal": 1.0, "elevated": 0.85,
                                                    "severe": 0.7}

    def reset(self, obs, case=None):
        spec = TASKS[obs.task]
        self.mem = _Memory(belief=RegimeBelief(spec.regime_process, spec.horizon))

    def _observe(self, obs: CommitteeObservation) -> None:
        mem = self.mem
        if obs.market.returns_pct:
            mem.belief.update(obs.market.returns_pct)
        if obs.action_type == "query_research" and obs.result:
            for v in obs.result["views"]:
                if v["level"] == "asset":
                    x = CONVICTION_SCALE_PCT * math.atanh(max(-0.95, min(0.95, v["conviction"])))
                    old = mem.tilt.get(v["name"])
                    mem.tilt[v["name"]] = x if old is None else (
                        self.TILT_MEMORY * old + (1 - self.TILT_MEMORY) * x)
        if obs.action_type == "query_risk" and obs.result and \
                obs.result.get("target") == "PORTFOLIO":
            mem.report_cov = cov_from_report(obs.result)
            mem.risk_period = obs.period
        # The officer's model moves every month; the headline vol of the current book is always
        # visible, so rescale the last full report to agree with it.
        cov = mem.report_cov
        if cov is not None:
            model_vol = risk.vol_annual_pct(risky_weights(obs), cov)
            if model_vol > 0.5 and obs.risk.vol_annual_pct > 0:
                k2 = (obs.risk.vol_annual_pct / model_vol) ** 2
                cov = [[x * k2 for x in row] for row in cov]
        mem.officer_cov = cov

    def act(self, obs):
        self._observe(obs)
        nxt = obs.period + 1
        current = risky_weights(obs)
        newest = max((v.period for v in obs.research), default=None)
        research_age = math.inf if newest is None else nxt - newest
        model_age = math.inf if self.mem.risk_period is None else nxt - self.mem.risk_period
        mandate = binding_mandate(obs.mandate, nxt, lead_periods=2)
        pending = obs.mandate.pending

        # (1) a breach flagged by the Risk Officer: fix it now
        if any(f.level in ("breach", "escalated") for f in obs.risk.flags):
            target = self._compliant(current, mandate, obs)
            return act("allocate", weights=target, reason="Restore compliance with the mandate "
                       "as the Risk Officer flagged.")
        # (2) an announced mandate revision: fresh model first, then comply before it binds
        preparing = bool(pending and pending["effective_period"] <= nxt + 2
                         and not self._complies(current, mandate, obs))
        if preparing and model_age > 1 and obs.queries_left > 0:
            return act("query_risk", query_target="PORTFOLIO",
                       reason="Prepare for the mandate revision.")
        # (3) Research's views before the first trade (the officer's full model comes once
        # the book is on target: its headline figures are always visible)
        if newest is None and obs.queries_left > 0:
            return act("query_research", query_target="MARKET", reason="Opening views.")
        target, mu, cov = self._target(obs, mandate)
        if preparing:
            return self._trade(target, self.mem.alarm_at_trade,
                               "Comply with the revised mandate before it binds.")
        # (4) the Risk Officer raised an alarm (market stress, drawdown discipline, a position
        # alert) since the last trade, or lowered one: re-plan at once
        alarm = (STRESS_RANK[obs.risk.market_stress], obs.risk.drawdown_discipline,
                 frozenset(obs.risk.position_alerts))
        moved = turnover(target, current)
        if alarm != self.mem.alarm_at_trade and moved >= 0.05:
            return self._trade(target, alarm, "Re-plan on the Risk Officer's warning.")
        # (5) rebalance when the target beats the book by more than the trade costs: the
        # market does not wait for a meeting spent asking
        if self._gain(target, current, mu, cov) >= self.REBALANCE_GAIN_PCT:
            return self._trade(target, alarm, "Regime view and research tilt, sized to the "
                               "mandate and the Risk Officer's model.")
        # (6) with the book on target, keep research and the risk model fresh
        if research_age >= RESEARCH_FRESH_PERIODS and obs.queries_left > 0:
            return act("query_research", query_target="MARKET", reason="Refresh views.")
        if model_age > self.RISK_MODEL_MAX_AGE and obs.queries_left > 0:
            return act("query_risk", query_target="PORTFOLIO", reason="Refresh the risk model.")
        return act("hold", reason="Book is on target.")

    @staticmethod
    def _gain(target: Mapping[str, float], current: Mapping[str, float],
              mu: Mapping[str, float], cov: risk.Cov) -> float:
        """Monthly mean-variance gain (%) of moving to `target`, net of the trade's cost."""
        def utility(w: Mapping[str, float]) -> float:
            return (sum(mu[t] * w.get(t, 0.0) for t in TICKERS)
                    - VARIANCE_AVERSION * risk.variance_pct2(w, cov))
        cost = sum(abs(target.get(t, 0.0) - current.get(t, 0.0)) * ASSETS[t].cost_bps / 100
                   for t in TICKERS)
        return utility(target) - utility(current) - cost

    def _trade(self, target: dict[str, float], alarm: Alarm,
               reason: str) -> CommitteeAction:
        self.mem.alarm_at_trade = alarm
        return act("allocate", weights=target, reason=reason)

    def _vol_target(self, mandate: Mandate, obs: CommitteeObservation) -> float:
        cap = risk.vol_cap(mandate, obs.risk.drawdown_discipline)
        dd_share = min(1.0, obs.portfolio.drawdown_pct / mandate.drawdown_limit_pct)
        return (cap * self.VOL_HEADROOM * (1 - 0.6 * max(0.0, dd_share - 0.5))
                * self.STRESS_VOL_SCALE[obs.risk.market_stress])

    def _target(self, obs, mandate: Mandate
                ) -> tuple[dict[str, float], dict[str, float], risk.Cov]:
        """The book to hold, with the expected excess returns and covariance behind it."""
        # the sector view from the regime filter; within a sector, the research's relative view
        # of its stocks (the analyst's bias, mood and sector calls cancel in the spread)
        mu = self.mem.belief.expected_excess_pct()
        signal = self.mem.tilt
        for t in TICKERS:
            peers = [signal[u] for u in SECTOR_MEMBERS[SECTOR_OF[t]] if u in signal]
            if t in signal and len(peers) > 1:
                mu[t] += self.TILT_SHRINK * (signal[t] - statistics.fmean(peers))
            if t in obs.risk.position_alerts:  # a stop-loss review: no new money on a faller
                mu[t] = min(mu[t], 0.0)
        # the belief's covariance (regime uncertainty included) sizes the book; the officer's
        # model, which the limits are judged by, caps it
        cov = self.mem.belief.covariance_pct2()
        vol_target = self._vol_target(mandate, obs)
        target = optimise(mu, cov, aversion=VARIANCE_AVERSION,
                          max_asset_weight=mandate.max_asset_weight * self.ASSET_HEADROOM,
                          max_sector_weight=mandate.max_sector_weight * self.SECTOR_HEADROOM,
                          vol_cap_annual_pct=vol_target, excluded=mandate.excluded)
        # until the officer reports, judge the book as a zero-mean model of the belief would
        officer = self.mem.officer_cov or self.mem.belief.second_moment_pct2()
        vol = risk.vol_annual_pct(target, officer)
        if vol > vol_target:
            target = {t: math.floor(w * vol_target / vol * 10_000) / 10_000
                      for t, w in target.items()}
        return target, mu, cov

    def _complies(self, weights, mandate: Mandate, obs) -> bool:
        cov = self.mem.officer_cov
        if cov is None:
            return True
        return not risk.breaches(risk.check_book(weights, mandate, cov,
                                                 obs.risk.drawdown_discipline))

    def _compliant(self, current, mandate: Mandate, obs) -> dict[str, float]:
        """Trim to the mandate with headroom; with no model yet, scale by the headline vol."""
        if self.mem.officer_cov is not None:
            return risk.make_compliant(current, mandate, self.mem.officer_cov,
                                       obs.risk.drawdown_discipline, headroom=0.9)
        w = {t: (0.0 if t in mandate.excluded else min(v, 0.9 * mandate.max_asset_weight))
             for t, v in current.items()}
        for s, total in risk.sector_weights(w).items():
            if total > 0.9 * mandate.max_sector_weight:
                for t in w:
                    if SECTOR_OF[t] == s:
                        w[t] *= 0.9 * mandate.max_sector_weight / total
        vol = obs.risk.vol_annual_pct
        cap = 0.9 * risk.vol_cap(mandate, obs.risk.drawdown_discipline)
        if vol > cap:
            w = {t: v * cap / vol for t, v in w.items()}
        return {t: math.floor(v * 10_000) / 10_000 for t, v in w.items()}
