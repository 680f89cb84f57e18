"""The regime oracle: told the hidden regime of each coming month (never a return); its mean
utility on validation seeds is the score's scale (`scoring.py`)."""

from __future__ import annotations

from memex.committee.policies.common import (
    Policy,
    act,
    binding_mandate,
    flagged_breach,
    risky_weights,
    turnover,
)
from memex.committee.policies.optimizer import optimise
from memex.committee.scoring import VARIANCE_AVERSION
from memex.committee.world import risk
from memex.committee.world.market import CASH_RATE_PCT


class RegimeOracle(Policy):
    """Told the hidden regime of each coming period (not its returns). Fixes an inherited
    breach at once, otherwise consults Research and Risk before its first trade; keeps research
    fresh, and holds the mean-variance optimal book for the true expected returns inside the
    mandate (judged with the Risk Officer's own model, rebuilt from public returns)."""

    name = "regime_oracle"
    needs_case = True
    REBALANCE_TURNOVER = 0.10
    RESEARCH_REFRESH_PERIODS = 4

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
        breached = flagged_breach(obs)
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
        if views and nxt - max(views) >= self.RESEARCH_REFRESH_PERIODS and obs.queries_left > 0:
            return act("query_research", query_target="MARKET", reason="Keep views fresh.")
        return act("hold")

    def _mu(self, period: int) -> dict[str, float]:
        """Expected excess returns (monthly %) of `period` under its true regime."""
        return {t: m - CASH_RATE_PCT for t, m in self.world.expected_at(period).items()}
