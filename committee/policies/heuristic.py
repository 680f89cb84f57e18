"""The committee-aware heuristic PM: the reference a trained PM is compared against, and the
strongest simple policy the project knows."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping

from memex.committee.models import CommitteeObservation
from memex.committee.policies.belief import RegimeBelief
from memex.committee.policies.common import (
    Policy,
    act,
    binding_mandate,
    cov_from_report,
    flagged_breach,
    risky_weights,
    turnover,
)
from memex.committee.policies.optimizer import optimise
from memex.committee.scoring import VARIANCE_AVERSION
from memex.committee.world import risk
from memex.committee.world.market import SECTOR_MEMBERS, SECTOR_OF, TICKERS, Mandate
from memex.committee.world.research import CONVICTION_SCALE_PCT
from memex.committee.world.tasks import TASKS


class Heuristic(Policy):
    """Committee-aware PM from observations only.

    What it knows is public: the market model's regime profiles and the task's regime process
    (`belief.py` filters the regime of the coming month from the month's returns with them),
    the Risk Officer's EWMA model (λ is documented, so one PORTFOLIO report is enough to track
    the officer's model exactly from then on) and Research's strength: it ranks the stocks of
    a sector well (its biases are common to a sector and cancel in the spread).

    Its book is the mean-variance book (the mandate's variance aversion) for the filtered
    regime mixture, tilted within each sector by the averaged research spread, inside the
    mandate it must meet next — an announced revision planned for a month ahead — with
    `ASSET_HEADROOM` under the weight caps and `VOL_HEADROOM` under the volatility cap on the
    officer's model (`BLIND_HEADROOM`, on its own model rescaled to the officer's headline
    figure, until it has the officer's model).

    Priorities, each month: (1) ask Risk for the officer's model once, the first month after
    its opening trade that nothing is in breach; (2) trade to the book when the officer flags
    a breach, when the book held would breach at the next check, or when the book has moved
    `REBALANCE_TURNOVER` away from it; (3) otherwise — the book on target, so the month costs
    nothing — refresh Research (every asset) when its views are `RESEARCH_MAX_AGE` months old;
    (4) hold. The knobs were chosen on train seeds 1,000-1,039 of every task (mean utility,
    paired by seed: `reports/tuning.py`), never on validation or test seeds.
    """

    name = "heuristic"
    ASSET_HEADROOM = 0.95
    VOL_HEADROOM = 0.97
    BLIND_HEADROOM = 0.85
    TILT_SHRINK = 0.3              # how far to trust the research's within-sector spread
    TILT_MEMORY = 0.5              # weight of the earlier notes in the averaged research signal
    REBALANCE_TURNOVER = 0.05
    RESEARCH_MAX_AGE = 4
    REVISION_LEAD_PERIODS = 1      # plan for an announced mandate this many months ahead

    def reset(self, obs, case=None):
        spec = TASKS[obs.task]
        self.belief = RegimeBelief(spec.regime_process, spec.horizon)
        self.tilt: dict[str, float] = {}          # research signal per stock, averaged
        self.research_period: int | None = None
        self.officer: risk.Cov | None = None      # the Risk Officer's model, tracked

    def _observe(self, obs: CommitteeObservation) -> None:
        if obs.market.returns_pct:
            self.belief.update(obs.market.returns_pct)
        if obs.action_type == "query_research" and obs.result:
            self.research_period = obs.period
            for v in obs.result["views"]:
                if v["level"] == "asset":
                    x = CONVICTION_SCALE_PCT * math.atanh(max(-0.95, min(0.95, v["conviction"])))
                    old = self.tilt.get(v["name"])
                    self.tilt[v["name"]] = x if old is None else (
                        self.TILT_MEMORY * old + (1 - self.TILT_MEMORY) * x)
        if obs.action_type == "query_risk" and obs.result and \
                obs.result.get("target") == "PORTFOLIO":
            # the report is the model before this month's returns; they follow below
            self.officer = cov_from_report(obs.result)
        if self.officer is not None and obs.market.returns_pct:
            self.officer = risk.ewma_update(self.officer, obs.market.returns_pct)

    def insight(self) -> dict[str, dict[str, float]]:
        return self.belief.insight()

    def act(self, obs):
        self._observe(obs)
        nxt = obs.period + 1
        current = risky_weights(obs)
        breach = flagged_breach(obs)
        if self.officer is None and obs.period >= 1 and not breach and obs.queries_left > 0:
            return act("query_risk", query_target="PORTFOLIO",
                       reason="The Risk Officer's model, to size against it.")
        target = self._target(obs, binding_mandate(obs.mandate, nxt,
                                                   self.REVISION_LEAD_PERIODS), current)
        if breach or self._would_breach(current, binding_mandate(obs.mandate, nxt, 0), obs) \
                or turnover(target, current) >= self.REBALANCE_TURNOVER:
            return act("allocate", weights=target, reason="Filtered regime and research tilt, "
                       "sized to the mandate on the Risk Officer's model.")
        age = math.inf if self.research_period is None else nxt - self.research_period
        if age >= self.RESEARCH_MAX_AGE and obs.queries_left > 0:
            return act("query_research", query_target="MARKET", reason="Refresh views.")
        return act("hold", reason="Book is on target.")

    def _would_breach(self, weights: Mapping[str, float], mandate: Mandate, obs) -> bool:
        """The officer's next check of the book held finds a breach (known once the model
        is)."""
        if self.officer is None:
            return False
        return bool(risk.breaches(risk.check_book(weights, mandate, self.officer,
                                                  obs.risk.drawdown_discipline)))

    def _target(self, obs, mandate: Mandate, current: Mapping[str, float]) -> dict[str, float]:
        """The book to hold for the coming month."""
        # the sector view from the regime filter; within a sector, the research's relative view
        # of its stocks (the analyst's bias, mood and sector calls cancel in the spread)
        mu = self.belief.expected_excess_pct()
        for t in TICKERS:
            peers = [self.tilt[u] for u in SECTOR_MEMBERS[SECTOR_OF[t]] if u in self.tilt]
            if t in self.tilt and len(peers) > 1:
                mu[t] += self.TILT_SHRINK * (self.tilt[t] - statistics.fmean(peers))
        cov = self.belief.covariance_pct2()
        cap = risk.vol_cap(mandate, obs.risk.drawdown_discipline)
        if self.officer is None:
            # judge volatility as the officer does: rescale this model to its headline figure
            own = risk.vol_annual_pct(current, cov)
            scale = obs.risk.vol_annual_pct / own if own > 0.5 else 1.0
            cap *= self.BLIND_HEADROOM / max(scale, 1e-6)
        else:
            cap *= self.VOL_HEADROOM
        target = optimise(mu, cov, aversion=VARIANCE_AVERSION,
                          max_asset_weight=mandate.max_asset_weight * self.ASSET_HEADROOM,
                          max_sector_weight=mandate.max_sector_weight * self.ASSET_HEADROOM,
                          vol_cap_annual_pct=cap, excluded=mandate.excluded)
        if self.officer is not None:
            vol = risk.vol_annual_pct(target, self.officer)
            if vol > cap:
                target = {t: math.floor(w * cap / vol * 10_000) / 10_000
                          for t, w in target.items()}
        return target
