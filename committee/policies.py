"""Baseline policies and exploit probes for the committee, reused by the tests, the baseline
report and the evaluation harness.

- `heuristic`: a committee-aware PM that uses only observations — it filters the hidden regime
  from the month's returns (`belief.py`), takes Research's within-sector stock views, sizes
  the book inside the mandate with the Risk Officer's model, answers warnings at once and
  prepares for announced mandate revisions.
- `random`: a uniformly random action with plausible arguments.
- `research_chaser`: the naive PM — asks Research, goes all-in on its two favourite assets,
  never asks Risk (a probe).
- `always_cash`: sells everything and sits in cash (a probe).
- `query_spammer`: asks question after question and never decides (a probe).
- `hold_only`, `equal_weight`, `fixed_concentrated`, `research_then_hold`,
  `regime_table_reader`: the cheap rules of issue #16 (do nothing; a static book; read research
  and never trade; map one sector note onto the regime profiles) — probes.
- `regime_oracle`: told the hidden regime of each coming month (never a return); the score's
  reference (`scoring.py`).

Every policy derives from the project's one `memex.policies.base.Policy`: `reset(obs,
case=None)` and `act(obs) -> CommitteeAction`; only the oracle uses `case` (the episode's
`World`). `committee/report.py` runs them over a seed split.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from memex.committee import risk
from memex.committee.actions import RISK_TARGETS
from memex.committee.belief import RegimeBelief
from memex.committee.models import CommitteeAction, CommitteeObservation, MandateView
from memex.committee.optimizer import optimise
from memex.committee.research import CONVICTION_SCALE_PCT, RESEARCH_TARGETS
from memex.committee.rewards import RESEARCH_FRESH_PERIODS, VARIANCE_AVERSION
from memex.committee.tasks import TASKS
from memex.committee.world import (
    ASSETS,
    CASH_RATE_PCT,
    PERIODS_PER_YEAR,
    REGIMES,
    SECTOR_MEMBERS,
    SECTOR_OF,
    TICKERS,
    Mandate,
    covariance_pct2,
)
from memex.policies.base import Policy as BasePolicy
from memex.policies.base import SeededPolicy


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


STRESS_RANK = {"normal": 0, "elevated": 1, "severe": 2}
Alarm = tuple[int, bool, frozenset[str]]   # stress rank, drawdown discipline, position alerts


Policy = BasePolicy[CommitteeObservation, CommitteeAction]


# ---- probes and trivial baselines --------------------------------------------------------

class AlwaysCash(Policy):
    """Probe: sells everything at once and sits in cash."""

    name = "always_cash"

    def act(self, obs):
        return act("move_to_cash", reason="Capital preservation.")


class QuerySpammer(Policy):
    """Probe: alternates research and risk queries forever and never decides; once the budget
    is gone every query is an invalid action."""

    name = "query_spammer"

    def reset(self, obs, case=None):
        self.i = 0

    def act(self, obs):
        self.i += 1
        if self.i % 2:
            return act("query_research", query_target="SECTOR")
        return act("query_risk", query_target="PORTFOLIO")


class ResearchChaser(Policy):
    """Probe: the naive PM. Refreshes research every other period and puts the whole book in
    the two assets Research likes best; never asks Risk, ignores its warnings."""

    name = "research_chaser"

    def act(self, obs):
        views = {v.name: v for v in obs.research if v.level == "asset"}
        newest = max((v.period for v in views.values()), default=None)
        if (newest is None or obs.period + 1 - newest >= 2) and obs.queries_left > 0:
            return act("query_research", query_target="MARKET", reason="Latest research.")
        if not views:
            return act("hold")
        top = sorted(views.values(), key=lambda v: -v.conviction)[:2]
        target = {v.name: 0.5 for v in top if v.conviction > 0}
        if not target:
            return act("move_to_cash", reason="Research is negative on everything.")
        if turnover(target, risky_weights(obs)) < 0.02:
            return act("hold", reason="Already positioned on Research's top picks.")
        return act("allocate", weights=target, reason="Follow Research's top convictions.")


class RandomPolicy(SeededPolicy[CommitteeObservation, CommitteeAction]):
    """Uniformly random action; targets drawn from the valid ones; weights over a random
    subset of assets with a random total."""

    name = "random"

    def act(self, obs):
        rng = self.rng
        kind = rng.choice(("query_research", "query_risk", "allocate", "revise_allocation",
                           "hold", "move_to_cash"))
        if kind == "query_research":
            return act(kind, query_target=rng.choice(RESEARCH_TARGETS))
        if kind == "query_risk":
            return act(kind, query_target=rng.choice(RISK_TARGETS))
        if kind == "allocate":
            names = rng.sample(TICKERS, rng.randint(1, 5))
            raw = [rng.random() for _ in names]
            total = rng.uniform(0.3, 1.0)
            return act(kind, weights={t: round(total * x / sum(raw), 4)
                                      for t, x in zip(names, raw, strict=True)})
        if kind == "revise_allocation":
            current = risky_weights(obs)
            names = rng.sample(TICKERS, rng.randint(1, 2))
            room = 1.0 - sum(w for t, w in current.items() if t not in names)
            return act(kind, weights={t: round(rng.uniform(0, max(0.0, room) / len(names)), 4)
                                      for t in names})
        return act(kind)


class HoldOnly(Policy):
    """Probe: does nothing, ever — keeps whatever book it inherits."""

    name = "hold_only"

    def act(self, obs):
        return act("hold", reason="No change.")


class _SetOnceThenHold(Policy):
    """Buys `BOOK` at the first meeting and never trades again (never responds)."""

    BOOK: ClassVar[dict[str, float]] = {}

    def act(self, obs):
        if obs.period == 0:
            return act("allocate", weights=dict(self.BOOK), reason="Strategic book.")
        return act("hold", reason="Stay the course.")


class EqualWeight(_SetOnceThenHold):
    """Probe: an equal-weight book of every asset, set once and held."""

    name = "equal_weight"
    BOOK: ClassVar[dict[str, float]] = dict.fromkeys(TICKERS, 0.125)


class FixedConcentrated(_SetOnceThenHold):
    """Probe: a concentrated equity book inside the limits, set once and never revisited."""

    name = "fixed_concentrated"
    BOOK: ClassVar[dict[str, float]] = {"NOVA": 0.35, "CLDX": 0.25, "PTRL": 0.2, "MEDI": 0.2}


class ResearchThenHold(Policy):
    """Probe: reads Research every three months and never trades (farms signal alignment)."""

    name = "research_then_hold"

    def act(self, obs):
        if obs.period % 3 == 0 and obs.queries_left > 0:
            return act("query_research", query_target="SECTOR", reason="Quarterly views.")
        return act("hold", reason="No change.")


class RegimeTableReader(Policy):
    """Probe: matches one sector note to the regime profiles in `world.REGIMES` (the table the
    README used to print), assumes the closest regime and holds that regime's optimal book
    inside the mandate; re-reads every three months."""

    name = "regime_table_reader"

    def reset(self, obs, case=None):
        self.cov = None

    def act(self, obs):
        if obs.period % 3 == 0 and obs.queries_left > 0:
            return act("query_research", query_target="SECTOR", reason="Which regime are we in?")
        if obs.action_type != "query_research" or not obs.result:
            return act("hold", reason="Regime unchanged.")
        seen = {v["name"]: v["conviction"] for v in obs.result["views"]}
        regime = min(REGIMES.values(), key=lambda r: sum(
            (math.tanh((r.sector_mu_pct[s] - CASH_RATE_PCT) / CONVICTION_SCALE_PCT) - seen[s]) ** 2
            for s in seen))
        mu = {t: regime.sector_mu_pct[SECTOR_OF[t]] - CASH_RATE_PCT for t in TICKERS}
        m = binding_mandate(obs.mandate, obs.period + 1)
        target = optimise(mu, covariance_pct2(regime.name), aversion=VARIANCE_AVERSION,
                          max_asset_weight=m.max_asset_weight * 0.95,
                          max_sector_weight=m.max_sector_weight * 0.95,
                          vol_cap_annual_pct=m.vol_budget_annual_pct * 0.95, excluded=m.excluded)
        return act("allocate", weights=target, reason=f"Book for a {regime.name} regime.")


# ---- the committee-aware heuristic -------------------------------------------------------

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


# ---- the regime oracle -------------------------------------------------------------------

class RegimeOracle(Policy):
    """Told the hidden regime of each coming period (not its returns). Fixes an inherited
    breach at once, otherwise consults Research and Risk before its first trade; keeps research
    fresh, and holds the mean-variance optimal book for the true expected returns inside the
    mandate (judged with the Risk Officer's own model, rebuilt from public returns)."""

    name = "regime_oracle"
    needs_case = True
    REBALANCE_TURNOVER = 0.10

    def reset(self, obs, case=None):
        if case is None:
            raise ValueError("the regime oracle needs the episode's world")
        self.world = case
        self.cov = risk.initial_covariance(case.prehistory_pct)
        self.seen = 0

    def act(self, obs):
        while self.seen < obs.period:
            self.cov = risk.ewma_update(self.cov, self.world.returns_pct[self.seen])
            self.seen += 1
        nxt = obs.period + 1
        breached = any(f.level in ("breach", "escalated") for f in obs.risk.flags)
        if obs.queries_used == 0 and not breached:
            return act("query_research", query_target="MARKET", reason="Opening views.")
        if obs.queries_used == 1 and not breached:
            return act("query_risk", query_target="PORTFOLIO", reason="Opening risk check.")
        mandate = binding_mandate(obs.mandate, nxt, lead_periods=0)
        mu = self._mu(nxt)
        target = optimise(mu, self.cov, aversion=VARIANCE_AVERSION,
                          max_asset_weight=mandate.max_asset_weight * 0.97,
                          max_sector_weight=mandate.max_sector_weight * 0.97,
                          vol_cap_annual_pct=risk.vol_cap(mandate, obs.risk.drawdown_discipline)
                          * 0.95, excluded=mandate.excluded)
        current = risky_weights(obs)
        if turnover(target, current) >= self.REBALANCE_TURNOVER or breached:
            return act("allocate", weights=target, reason="Regime-optimal book.")
        views = [v.period for v in obs.research]
        if views and nxt - max(views) >= RESEARCH_FRESH_PERIODS and obs.queries_left > 0:
            return act("query_research", query_target="MARKET", reason="Keep views fresh.")
        return act("hold")

    def _mu(self, period: int) -> dict[str, float]:
        """Expected excess returns (monthly %) of `period` under its true regime."""
        return {t: m - CASH_RATE_PCT for t, m in self.world.expected_at(period).items()}


POLICIES: dict[str, Callable[[], Policy]] = {
    "heuristic": Heuristic, "random": RandomPolicy, "research_chaser": ResearchChaser,
    "always_cash": AlwaysCash, "query_spammer": QuerySpammer, "regime_oracle": RegimeOracle,
    "hold_only": HoldOnly, "equal_weight": EqualWeight,
    "fixed_concentrated": FixedConcentrated, "research_then_hold": ResearchThenHold,
    "regime_table_reader": RegimeTableReader,
}
PROBES: tuple[str, ...] = ("random", "research_chaser", "always_cash", "query_spammer",
                           "hold_only", "equal_weight", "fixed_concentrated",
                           "research_then_hold", "regime_table_reader")
BASELINES: tuple[str, ...] = ("heuristic", "regime_oracle", *PROBES)


def make_policy(name: str, seed: int = 0) -> Policy:
    """A policy by name; the random policy draws from `seed` (give each episode its own)."""
    factory = POLICIES[name]
    return factory(seed=seed) if factory is RandomPolicy else factory()
