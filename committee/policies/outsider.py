"""An outsider's PM: what a competent user builds from public material alone — the README, the
regime processes of `GET /tasks` and the returns of public train episodes — without reading
Research or asking Risk. A probe the heuristic must match (`em_filter`).

It fits each regime's return profile by expectation-maximisation on the returns of
`FIT_EPISODES` train episodes per task (`belief.fit_profiles`: the published regime processes
fixed, means and covariances free), filters the regime of the coming month from the month's
returns with those profiles (`belief.RegimeBelief`), and holds the mean-variance book for the
filtered mixture inside the mandate, its volatility judged as the Risk Officer judges it (the
headline volatility of the book it holds rescales its own model).
"""

from __future__ import annotations

import functools

import numpy as np

from memex.committee.policies.belief import RegimeBelief, RegimeProfiles, fit_profiles
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
from memex.committee.world.market import TICKERS
from memex.committee.world.tasks import SPLITS, TASK_NAMES, TASKS, generate

FIT_EPISODES = 100          # train episodes per task the profiles are fitted on


def public_returns(task: str, seed: int) -> np.ndarray:
    """The monthly returns a PM sees over one episode (`market.returns_pct` of its
    observations, rounded as they are), `TICKERS` order; the market ignores the PM, so these
    are the same whatever it plays."""
    world = generate(task, seed)
    return np.array([[round(r[t], 2) for t in TICKERS] for r in world.returns_pct])


@functools.cache
def fitted_profiles(episodes_per_task: int = FIT_EPISODES) -> RegimeProfiles:
    """Regime profiles fitted on the first train seeds of every task (never a validation or
    test seed)."""
    seeds = SPLITS["train"][:episodes_per_task]
    return fit_profiles((TASKS[t].regime_process, public_returns(t, s))
                        for t in TASK_NAMES for s in seeds)


class EmRegimeFilter(Policy):
    """Probe: EM-fitted regime profiles, a forward filter on the published process, and the
    mean-variance book inside the mandate; never queries."""

    name = "em_filter"
    ASSET_HEADROOM = 0.95
    VOL_HEADROOM = 0.9
    REBALANCE_TURNOVER = 0.05

    def reset(self, obs, case=None):
        spec = TASKS[obs.task]
        self.belief = RegimeBelief(spec.regime_process, spec.horizon, fitted_profiles())

    def insight(self) -> dict[str, dict[str, float]]:
        return self.belief.insight()

    def act(self, obs):
        if obs.market.returns_pct:
            self.belief.update(obs.market.returns_pct)
        mandate = binding_mandate(obs.mandate, obs.period + 1)
        cov = self.belief.covariance_pct2()
        current = risky_weights(obs)
        own_vol = risk.vol_annual_pct(current, cov)
        # the officer's view of the book held, against this model's
        scale = obs.risk.vol_annual_pct / own_vol if own_vol > 0.5 else 1.0
        vol_cap = risk.vol_cap(mandate, obs.risk.drawdown_discipline) * self.VOL_HEADROOM
        target = optimise(self.belief.expected_excess_pct(), cov, aversion=VARIANCE_AVERSION,
                          max_asset_weight=mandate.max_asset_weight * self.ASSET_HEADROOM,
                          max_sector_weight=mandate.max_sector_weight * self.ASSET_HEADROOM,
                          vol_cap_annual_pct=vol_cap / max(scale, 1e-6),
                          excluded=mandate.excluded)
        if flagged_breach(obs) or turnover(target, current) >= self.REBALANCE_TURNOVER:
            return act("allocate", weights=target, reason="Filtered regime, mean-variance book.")
        return act("hold", reason="Book on target.")
