"""The fund's book over one episode: weights, NAV, drawdown, the Risk Officer's model and the
breach streaks. Mutable state lives here and in the environment only.

Timing of one period `t` (one step): the PM's trade executes at the prices of the end of
`t - 1` (its cost is taken from NAV), the mandate is checked on the traded book with the model
estimated up to `t - 1`, then the market moves, weights drift with prices, NAV, high-water
mark and drawdown update, and the model takes in the month's returns.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from memex.committee.world.market import (
    ASSETS,
    CASH,
    CASH_RATE_PCT,
    INITIAL_NAV,
    TICKERS,
    World,
)
from memex.committee.world.risk import (
    DISCIPLINE_PERIODS,
    DISCIPLINE_RELEASE_FRACTION,
    DISCIPLINE_RETRIGGER_PCT,
    STRESS_LAMBDA,
    Cov,
    equity_index_return_pct,
    ewma_update,
    initial_covariance,
    stress_gauge,
)


@dataclass
class Book:
    weights: dict[str, float]                     # risky weights; cash is the remainder
    cov: Cov
    nav: float = INITIAL_NAV
    high_water_mark: float = INITIAL_NAV
    max_drawdown_pct: float = 0.0
    period: int = 0                               # the last period completed
    discipline_left: int = 0                      # periods of drawdown discipline to run
    discipline_mark: float | None = None          # drawdown at which it last engaged
    streaks: dict[str, int] = field(default_factory=dict)
    turnover_total: float = 0.0
    stress_norm: float = 1.0                      # equity index second moment, prehistory
    stress_fast: float = 1.0                      # its fast EWMA

    @classmethod
    def open(cls, world: World) -> Book:
        norm, fast = stress_gauge(world.prehistory_pct)
        return cls(weights={t: world.initial_weights.get(t, 0.0) for t in TICKERS},
                   cov=initial_covariance(world.prehistory_pct), stress_norm=norm,
                   stress_fast=fast)

    @property
    def stress_ratio(self) -> float:
        """Fast equity-market volatility over its norm."""
        return math.sqrt(self.stress_fast / self.stress_norm)

    @property
    def cash(self) -> float:
        return max(0.0, 1.0 - sum(self.weights.values()))

    @property
    def discipline(self) -> bool:
        return self.discipline_left > 0

    def update_discipline(self, drawdown_limit_pct: float) -> None:
        """After a period: engage, run down or release drawdown discipline (see `risk.py`)."""
        dd = self.drawdown_pct
        if dd < drawdown_limit_pct * DISCIPLINE_RELEASE_FRACTION:
            self.discipline_left, self.discipline_mark = 0, None
        elif dd >= drawdown_limit_pct and (
                self.discipline_mark is None or dd >= self.discipline_mark
                + DISCIPLINE_RETRIGGER_PCT):
            self.discipline_left, self.discipline_mark = DISCIPLINE_PERIODS, dd
        elif self.discipline_left > 0:
            self.discipline_left -= 1

    @property
    def drawdown_pct(self) -> float:
        return 100 * (1 - self.nav / self.high_water_mark)

    def all_weights(self) -> dict[str, float]:
        return {**{t: round(w, 4) for t, w in self.weights.items()}, CASH: round(self.cash, 4)}

    def trade_to(self, target: Mapping[str, float]) -> tuple[float, float]:
        """Rebalance to `target`; returns (turnover, cost as a fraction of NAV). Turnover is
        the traded notional over NAV, one way, summed over risky assets."""
        turnover = cost = 0.0
        for t in TICKERS:
            traded = abs(target.get(t, 0.0) - self.weights[t])
            turnover += traded
            cost += traded * ASSETS[t].cost_bps / 10_000
        self.weights = {t: target.get(t, 0.0) for t in TICKERS}
        self.nav *= 1 - cost
        self.turnover_total += turnover
        return turnover, cost

    def mark(self, returns_pct: Mapping[str, float]) -> float:
        """Let one month pass: returns the book's gross return (fraction)."""
        growth = {t: self.weights[t] * (1 + returns_pct[t] / 100) for t in TICKERS}
        cash = self.cash * (1 + CASH_RATE_PCT / 100)
        total = sum(growth.values()) + cash
        book_return = total - 1
        self.weights = {t: g / total for t, g in growth.items()}
        self.nav *= total
        self.high_water_mark = max(self.high_water_mark, self.nav)
        self.max_drawdown_pct = max(self.max_drawdown_pct, self.drawdown_pct)
        self.cov = ewma_update(self.cov, returns_pct)
        self.stress_fast = (STRESS_LAMBDA * self.stress_fast
                            + (1 - STRESS_LAMBDA) * equity_index_return_pct(returns_pct) ** 2)
        self.period += 1
        return book_return
