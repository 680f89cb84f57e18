"""Probes and trivial baselines: cheap rules a committee-aware PM must clearly beat.

- `random`: a uniformly random action with plausible arguments.
- `research_chaser`: the naive PM — asks Research, goes all-in on its two favourite assets,
  never asks Risk.
- `always_cash`: sells everything and sits in cash.
- `query_spammer`: asks question after question and never decides.
- `hold_only`, `equal_weight`, `fixed_concentrated`, `research_then_hold`,
  `regime_table_reader`: do nothing; a static book; read research and never trade; map one
  sector note onto the regime profiles.
- `bonds_only`, `max_risk`, `balanced`, `momentum`, `inverse_vol`: the bond sector and cash;
  all in tech whatever the mandate says; a rebalanced 60/40; the three best recent
  performers; volatility-weighted inside the budget.
"""

from __future__ import annotations

import math
from typing import ClassVar

from memex.committee.models import CommitteeAction, CommitteeObservation
from memex.committee.policies.common import (
    Policy,
    SeededPolicy,
    act,
    binding_mandate,
    cov_from_report,
    risky_weights,
    turnover,
)
from memex.committee.policies.optimizer import optimise
from memex.committee.scoring import VARIANCE_AVERSION
from memex.committee.tools import RISK_TARGETS
from memex.committee.world import risk
from memex.committee.world.market import (
    CASH_RATE_PCT,
    REGIMES,
    SECTOR_OF,
    TICKERS,
    covariance_pct2,
)
from memex.committee.world.research import CONVICTION_SCALE_PCT, RESEARCH_TARGETS


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


class BondsOnly(_SetOnceThenHold):
    """Probe: the whole bond sector the mandate allows, set once and held; the rest cash."""

    name = "bonds_only"
    BOOK: ClassVar[dict[str, float]] = {"GOVT": 0.34, "CORP": 0.25}


class _Rebalanced(Policy):
    """Trades back to `book(obs)` whenever the book has drifted `DRIFT` away from it."""

    DRIFT = 0.05

    def book(self, obs) -> dict[str, float]:
        raise NotImplementedError

    def act(self, obs):
        target = self.book(obs)
        if turnover(target, risky_weights(obs)) >= self.DRIFT:
            return act("allocate", weights=target, reason="Back to the policy book.")
        return act("hold", reason="On the policy book.")


class MaxRisk(_Rebalanced):
    """Probe: everything in the two tech stocks, the riskiest book there is, bought back after
    every enforcement; ignores the mandate."""

    name = "max_risk"

    def book(self, obs):
        return {"NOVA": 0.5, "CLDX": 0.5}


class Balanced(_Rebalanced):
    """Probe: the classic 60/40 — 60% in the six stocks equally, 40% in the two bond funds —
    rebalanced when it drifts."""

    name = "balanced"

    def book(self, obs):
        return {t: (0.2 if SECTOR_OF[t] == "BONDS" else 0.1) for t in TICKERS}


class Momentum(_Rebalanced):
    """Probe: the three assets with the best return over the last three months, equally
    weighted inside the mandate's caps, excluded assets left out."""

    name = "momentum"
    LOOKBACK = 3
    WEIGHT = 0.28

    def reset(self, obs, case=None):
        self.history: list[dict[str, float]] = []

    def book(self, obs):
        if obs.market.returns_pct:
            self.history.append(obs.market.returns_pct)
        recent = self.history[-self.LOOKBACK:]
        if not recent:
            return {}
        m = binding_mandate(obs.mandate, obs.period + 1)
        weight = min(self.WEIGHT, 0.95 * m.max_asset_weight, 0.95 * m.max_sector_weight / 2)
        growth = {t: math.prod(1 + r[t] / 100 for r in recent) for t in TICKERS
                  if t not in m.excluded}
        return {t: weight for t in sorted(growth, key=lambda t: -growth[t])[:3]}

    def act(self, obs):
        if obs.period == 0:
            return act("hold", reason="No track record yet.")
        return super().act(obs)


class InverseVolatility(_Rebalanced):
    """Probe: asks Risk for the asset volatilities once, then holds every allowed asset in
    inverse proportion to its volatility, inside the weight caps and scaled to 90% of the
    volatility budget."""

    name = "inverse_vol"

    def reset(self, obs, case=None):
        self.report: dict | None = None

    def book(self, obs):
        m = binding_mandate(obs.mandate, obs.period + 1)
        vols = self.report["asset_vol_annual_pct"]
        raw = {t: 1 / max(vols[t], 0.1) for t in TICKERS if t not in m.excluded}
        w = {t: min(x / sum(raw.values()), 0.95 * m.max_asset_weight) for t, x in raw.items()}
        for sector, total in risk.sector_weights(w).items():
            if total > 0.95 * m.max_sector_weight:
                w = {t: x * (0.95 * m.max_sector_weight / total if SECTOR_OF[t] == sector else 1)
                     for t, x in w.items()}
        vol = risk.vol_annual_pct(w, cov_from_report(self.report))
        k = min(1.0, 0.9 * m.vol_budget_annual_pct / vol) if vol > 0 else 1.0
        return {t: math.floor(x * k * 10_000) / 10_000 for t, x in w.items()}

    def act(self, obs):
        if obs.action_type == "query_risk" and obs.result and "asset_vol_annual_pct" in obs.result:
            self.report = obs.result
        if self.report is None:
            if obs.queries_left > 0:
                return act("query_risk", query_target="PORTFOLIO", reason="Asset volatilities.")
            return act("hold", reason="No risk model.")
        return super().act(obs)


class ResearchThenHold(Policy):
    """Probe: reads Research every three months and never trades."""

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
