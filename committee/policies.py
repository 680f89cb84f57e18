"""Baseline policies and exploit probes for the committee, reused by the tests, the baseline
report and the evaluation harness.

- `heuristic`: a committee-aware PM that uses only observations — it consults Research and
  Risk, sizes a research tilt inside the mandate with the Risk Officer's model, answers
  warnings at once, prepares for announced mandate revisions and de-risks under drawdown.
- `random`: a uniformly random action with plausible arguments.
- `research_chaser`: the naive PM — asks Research, goes all-in on its two favourite assets,
  never asks Risk (a probe).
- `always_cash`: sells everything and sits in cash (a probe).
- `query_spammer`: asks question after question and never decides (a probe).
- `hold_only`, `equal_weight`, `fixed_concentrated`, `research_then_hold`,
  `regime_table_reader`: the cheap rules of issue #16 (do nothing; a static book; read research
  and never trade; map one sector note onto the regime profiles) — probes.
- `regime_oracle`, `hindsight_oracle`: told the hidden regime (and, the second, each regime
  spell's realised mean returns); the better of the two is the score's reference (`scoring.py`).

Every policy derives from the project's one `memex.policies.base.Policy`: `reset(obs,
case=None)` and `act(obs) -> CommitteeAction`; only the oracles use `case` (the episode's
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
from memex.committee.models import CommitteeAction, CommitteeObservation, MandateView
from memex.committee.optimizer import optimise
from memex.committee.research import CONVICTION_SCALE_PCT, RESEARCH_TARGETS
from memex.committee.rewards import RESEARCH_FRESH_PERIODS, VARIANCE_AVERSION
from memex.committee.tasks import TASKS
from memex.committee.world import (
    CASH_RATE_PCT,
    PERIODS_PER_YEAR,
    REGIMES,
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
    report_cov: risk.Cov | None = None
    cov: risk.Cov | None = None
    risk_period: int | None = None
    returns: list[dict[str, float]] = field(default_factory=list)
    alarm_at_research: Alarm = (0, False, frozenset())
    alarm_at_trade: Alarm = (0, False, frozenset())


class Heuristic(Policy):
    """Committee-aware PM from observations only.

    Priorities, each period: (1) fix any breach the Risk Officer flags, at once; (2) when a
    mandate revision is announced, get a fresh risk model and comply before it binds; (3)
    build the book only after asking Research (every asset) and Risk (the model); (4) when
    the officer raises an alarm — market stress, drawdown discipline, a position alert —
    de-risk first and ask Research again after; (5) refresh research when it goes stale; (6)
    rebalance towards the mean-variance target when it has drifted far enough to pay for the
    trade, checking with Risk first if the model is older than the research; (7) otherwise
    hold. The target: research convictions shrunk towards zero (no positive view on an
    alerted position, views dented by recent losses under stress), the mandate with
    headroom, the officer's model rescaled to its latest headline volatility, and a
    volatility target that falls with market stress and deep drawdowns.
    """

    name = "heuristic"
    ASSET_HEADROOM = 0.88
    SECTOR_HEADROOM = 0.88
    VOL_HEADROOM = 0.9
    CONVICTION_SHRINK = 0.6
    LOSS_WEIGHT = 0.25             # under stress, how much recent losses dent the view
    SELLOFF_PCT = 3.0              # last month's mean equity return at or below -this: cut risk
    SELLOFF_VOL_SCALE = 0.5
    REBALANCE_TURNOVER = 0.15
    RISK_MODEL_MAX_AGE = 8
    STRESS_VOL_SCALE: ClassVar[dict[str, float]] = {"normal": 1.0, "elevated": 0.7,
                                                    "severe": 0.4}

    def reset(self, obs, case=None):
        self.mem = _Memory()

    def _observe(self, obs: CommitteeObservation) -> None:
        if obs.action_type == "query_risk" and obs.result and \
                obs.result.get("target") == "PORTFOLIO":
            self.mem.report_cov = cov_from_report(obs.result)
            self.mem.risk_period = obs.period
        if obs.market.returns_pct:
            self.mem.returns.append(dict(obs.market.returns_pct))
        # The officer's model moves every month; the headline vol of the current book is always
        # visible, so rescale the last full report to agree with it.
        cov = self.mem.report_cov
        if cov is not None:
            model_vol = risk.vol_annual_pct(risky_weights(obs), cov)
            if model_vol > 0.5 and obs.risk.vol_annual_pct > 0:
                k2 = (obs.risk.vol_annual_pct / model_vol) ** 2
                cov = [[x * k2 for x in row] for row in cov]
        self.mem.cov = cov

    def act(self, obs):
        self._observe(obs)
        nxt = obs.period + 1
        current = risky_weights(obs)
        views = {v.name: v for v in obs.research}
        newest = max((v.period for v in views.values()), default=None)
        research_age = math.inf if newest is None else nxt - newest
        model_age = math.inf if self.mem.risk_period is None else nxt - self.mem.risk_period
        mandate = binding_mandate(obs.mandate, nxt)
        pending = obs.mandate.pending

        # (1) a breach flagged by the Risk Officer: fix it now
        if any(f.level in ("breach", "escalated") for f in obs.risk.flags):
            target = self._compliant(current, mandate, obs)
            return act("allocate", weights=target, reason="Restore compliance with the mandate "
                       "as the Risk Officer flagged.")
        # (2) an announced mandate revision: fresh model first, then comply before it binds
        preparing = bool(pending and pending["effective_period"] <= nxt + 1
                         and not self._complies(current, mandate, obs))
        if preparing and model_age > 1 and obs.queries_left > 0:
            return act("query_risk", query_target="PORTFOLIO",
                       reason="Prepare for the mandate revision.")
        # (3) the committee's input before the first trade
        if not views and obs.queries_left > 0:
            return act("query_research", query_target="MARKET", reason="Opening views.")
        if self.mem.cov is None and obs.queries_left > 0:
            return act("query_risk", query_target="PORTFOLIO", reason="Opening risk check.")
        if self.mem.cov is None or not views:
            return act("hold", reason="Waiting for the committee's input.")
        target = self._target(obs, views, mandate)
        moved = turnover(target, current)
        if preparing:
            return self._trade(target, self.mem.alarm_at_trade,
                               "Comply with the revised mandate before it binds.")
        # (4) the Risk Officer raised an alarm (market stress, drawdown discipline, a position
        # alert) since the last trade: de-risk first, ask later
        alarm = (STRESS_RANK[obs.risk.market_stress], obs.risk.drawdown_discipline,
                 frozenset(obs.risk.position_alerts))
        if self._worse(alarm, self.mem.alarm_at_trade) and moved >= 0.05:
            return self._trade(target, alarm, "De-risk on the Risk Officer's warning.")
        # (5) keep research fresh; a change in the officer's alarms makes it stale early
        alarm_changed = alarm != self.mem.alarm_at_research
        if (research_age >= RESEARCH_FRESH_PERIODS or (alarm_changed and research_age >= 2)) \
                and obs.queries_left > 0:
            self.mem.alarm_at_research = alarm
            return act("query_research", query_target="MARKET", reason="Refresh views.")
        if model_age > self.RISK_MODEL_MAX_AGE and obs.queries_left > 1:
            return act("query_risk", query_target="PORTFOLIO", reason="Refresh the risk model.")
        # (6) rebalance to the target when it has moved enough to pay for the trade, checking
        # it with Risk first when the model is older than the research behind it
        if moved >= self.REBALANCE_TURNOVER or (
                self._worse(self.mem.alarm_at_trade, alarm) and moved >= 0.05):
            if model_age > research_age and obs.queries_left >= 3:
                return act("query_risk", query_target="PORTFOLIO",
                           reason="Check the rebalance with Risk.")
            return self._trade(target, alarm, "Research tilt sized to the mandate and the Risk "
                               "Officer's model.")
        return act("hold", reason="Book is on target.")

    @staticmethod
    def _worse(a: Alarm, b: Alarm) -> bool:
        """Alarm `a` is more severe than `b` (more stress, discipline, a new position alert)."""
        return a[:2] > b[:2] or bool(a[2] - b[2])

    def _trade(self, target: dict[str, float], alarm: Alarm,
               reason: str) -> CommitteeAction:
        self.mem.alarm_at_trade = alarm
        return act("allocate", weights=target, reason=reason)

    def _vol_target(self, mandate: Mandate, obs: CommitteeObservation) -> float:
        cap = risk.vol_cap(mandate, obs.risk.drawdown_discipline)
        dd_share = min(1.0, obs.portfolio.drawdown_pct / mandate.drawdown_limit_pct)
        # a sharp equity sell-off last month: the officer's gauge lags it, so cut ahead of it
        last = self.mem.returns[-1] if self.mem.returns else {}
        equity = [v for t, v in last.items() if t in TICKERS and SECTOR_OF[t] != "BONDS"]
        selloff = bool(equity) and statistics.fmean(equity) <= -self.SELLOFF_PCT
        return (cap * self.VOL_HEADROOM * (1 - 0.6 * max(0.0, dd_share - 0.5))
                * self.STRESS_VOL_SCALE[obs.risk.market_stress]
                * (self.SELLOFF_VOL_SCALE if selloff else 1.0))

    def _target(self, obs, views, mandate: Mandate) -> dict[str, float]:
        recent = self.mem.returns[-2:]
        bias = TASKS[obs.task].research_bias if obs.task in TASKS else {}
        mu = {}
        for t in TICKERS:
            view = views.get(t) or views.get(SECTOR_OF[t])
            c = view.conviction if view is not None else 0.0
            # the analyst's documented pet-sector bias comes out before sizing
            signal = math.atanh(max(-0.95, min(0.95, c))) - bias.get(SECTOR_OF[t], 0.0)
            mu[t] = self.CONVICTION_SHRINK * CONVICTION_SCALE_PCT * signal
            if recent and obs.risk.market_stress != "normal":
                avg = statistics.fmean(r[t] for r in recent) - CASH_RATE_PCT
                mu[t] += self.LOSS_WEIGHT * min(0.0, avg)
            if t in obs.risk.position_alerts:  # a stop-loss review: no new money on a faller
                mu[t] = min(mu[t], 0.0)
        return optimise(mu, self.mem.cov, aversion=VARIANCE_AVERSION,
                        max_asset_weight=mandate.max_asset_weight * self.ASSET_HEADROOM,
                        max_sector_weight=mandate.max_sector_weight * self.SECTOR_HEADROOM,
                        vol_cap_annual_pct=self._vol_target(mandate, obs),
                        excluded=mandate.excluded)

    def _complies(self, weights, mandate: Mandate, obs) -> bool:
        if self.mem.cov is None:
            return True
        return not risk.breaches(risk.check_book(weights, mandate, self.mem.cov,
                                                 obs.risk.drawdown_discipline))

    def _compliant(self, current, mandate: Mandate, obs) -> dict[str, float]:
        """Trim to the mandate with headroom; with no model yet, scale by the headline vol."""
        if self.mem.cov is not None:
            return risk.make_compliant(current, mandate, self.mem.cov,
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


class HindsightOracle(RegimeOracle):
    """The regime oracle told, besides the regime path, each regime spell's *realised* mean
    return per asset (blended with the regime's expectation by `HINDSIGHT`; 1 = the spell's
    mean), never a single month's return. Same workflow, same mandate; with it the score's
    reference beats cash on almost every path, which the expectation-only oracle cannot (a
    hindsight-free PM loses to cash on a sixth of 20-month paths by chance)."""

    name = "hindsight_oracle"
    HINDSIGHT = 1.0

    def reset(self, obs, case=None):
        super().reset(obs, case)
        regimes, spells, start = case.regimes, {}, 0
        for end in range(1, len(regimes) + 1):
            if end == len(regimes) or regimes[end] != regimes[start]:
                months = case.returns_pct[start:end]
                mean = {t: statistics.fmean(r[t] for r in months) for t in TICKERS}
                for p in range(start + 1, end + 1):
                    spells[p] = mean
                start = end
        self.spells = spells

    def _mu(self, period: int) -> dict[str, float]:
        expected = super()._mu(period)
        realised = self.spells[min(max(period, 1), self.world.horizon)]
        return {t: (1 - self.HINDSIGHT) * expected[t]
                + self.HINDSIGHT * (realised[t] - CASH_RATE_PCT) for t in TICKERS}


POLICIES: dict[str, Callable[[], Policy]] = {
    "heuristic": Heuristic, "random": RandomPolicy, "research_chaser": ResearchChaser,
    "always_cash": AlwaysCash, "query_spammer": QuerySpammer, "regime_oracle": RegimeOracle,
    "hindsight_oracle": HindsightOracle, "hold_only": HoldOnly, "equal_weight": EqualWeight,
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
