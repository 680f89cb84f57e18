"""The market: eight assets in four sectors, hidden regimes, and a regime-switching factor model
of monthly returns.

One period is one month. In regime `k` the return of asset `i` (sector `s`), in percent, is

    r_i = mu_k[s] + alpha_{i,k} + beta_k[s] * M + S_s + e_i
    M ~ N(0, market_vol_k),  S_s ~ N(0, sector_vol_k[s]),  e_i ~ N(0, IDIO_VOL_PCT[i])

so assets in a sector move together, sectors load on one market factor, and government bonds
hedge equities in a crisis (negative beta) but not in an inflation scare (positive beta). The
asset tilts `alpha` are drawn once per world. Cash earns `CASH_RATE_PCT` a month.

The market is calm enough to be read: a month's noise is about the size of the gap
between regimes' expected returns (a single tech stock runs at about 9% a year in an
expansion), so a PM who filters the regime from prices can act on it within a month or two,
and a PM told the regime beats cash on about 99% of 20-month paths. With twice the noise, luck
swamped skill: the regime-told PM lost to cash on a sixth of paths.

Everything here is a pure function of its inputs; the only randomness is the `random.Random`
passed in (no global RNG, no clock).
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal

CASH = "CASH"
CASH_RATE_PCT = 0.25          # monthly (3% a year)
PERIODS_PER_YEAR = 12
PREHISTORY_PERIODS = 24       # months of history the risk model starts from
INITIAL_NAV = 100.0           # the fund's AUM in millions; reported, never used for sizing


@dataclass(frozen=True)
class Asset:
    ticker: str
    name: str
    sector: str
    asset_class: Literal["equity", "bond"]
    cost_bps: float           # one-way transaction cost (spread + commission + impact)
    idio_vol_pct: float       # monthly idiosyncratic volatility
    initial_price: float


UNIVERSE: tuple[Asset, ...] = (
    Asset("NOVA", "Nova Semiconductors", "TECH", "equity", 10.0, 1.4, 142.50),
    Asset("CLDX", "Cloudex Software", "TECH", "equity", 10.0, 1.2, 88.20),
    Asset("PTRL", "Petrolux Energy", "ENERGY", "equity", 12.0, 1.1, 61.75),
    Asset("SOLR", "Solaria Renewables", "ENERGY", "equity", 15.0, 1.5, 34.10),
    Asset("MEDI", "Medivance Health", "HEALTH", "equity", 8.0, 0.9, 205.30),
    Asset("BIOG", "Biogenix Therapeutics", "HEALTH", "equity", 15.0, 1.6, 47.90),
    Asset("GOVT", "Government Bond Fund 7-10y", "BONDS", "bond", 3.0, 0.15, 101.40),
    Asset("CORP", "Investment-Grade Credit Fund", "BONDS", "bond", 5.0, 0.25, 98.60),
)
TICKERS: tuple[str, ...] = tuple(a.ticker for a in UNIVERSE)
ASSETS: Mapping[str, Asset] = MappingProxyType({a.ticker: a for a in UNIVERSE})
SECTORS: tuple[str, ...] = ("TECH", "ENERGY", "HEALTH", "BONDS")
SECTOR_OF: Mapping[str, str] = MappingProxyType({a.ticker: a.sector for a in UNIVERSE})
SECTOR_MEMBERS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {s: tuple(a.ticker for a in UNIVERSE if a.sector == s) for s in SECTORS})
ALPHA_SD_PCT = {"equity": 0.35, "bond": 0.06}


@dataclass(frozen=True)
class Regime:
    """A hidden market state: expected sector returns and the factor volatilities (monthly %)."""

    name: str
    sector_mu_pct: Mapping[str, float]
    market_vol_pct: float
    sector_beta: Mapping[str, float]
    sector_vol_pct: Mapping[str, float]


def _regime(name: str, mu: tuple[float, ...], market_vol: float, beta: tuple[float, ...],
            sector_vol: tuple[float, ...]) -> Regime:
    def per_sector(values: tuple[float, ...]) -> Mapping[str, float]:
        return MappingProxyType(dict(zip(SECTORS, values, strict=True)))

    return Regime(name, per_sector(mu), market_vol, per_sector(beta), per_sector(sector_vol))


# The regime profiles. What a PM may know: this model (it is the code). What a PM never sees: the
# regime of any month. Expected returns per sector, market vol, sector betas, sector vols:
#                         TECH  ENERGY HEALTH BONDS
REGIMES: Mapping[str, Regime] = MappingProxyType({r.name: r for r in (
    _regime("expansion", (1.6, 0.8, 0.9, 0.25), 1.5, (1.3, 1.0, 0.7, 0.0), (1.25, 1.25, 0.75, 0.3)),
    _regime("inflation", (-0.8, 1.7, 0.6, -0.5), 1.75, (1.3, 0.8, 0.7, 0.3), (1.5, 1.75, 0.9, 0.5)),
    _regime("late_cycle", (0.2, 0.4, 0.4, 0.3), 2.75, (1.3, 1.0, 0.7, 0.0), (1.75, 1.5, 1.0, 0.4)),
    _regime("crisis", (-5.0, -4.0, -2.0, 0.7), 3.5, (1.3, 1.1, 0.8, -0.2), (2.0, 2.0, 1.25, 0.5)),
    _regime("recovery", (2.8, 2.0, 1.3, 0.1), 1.75, (1.3, 1.0, 0.7, 0.0), (1.25, 1.25, 0.75, 0.35)),
    _regime("tech_boom", (2.3, 0.5, 0.8, 0.2), 1.5, (1.5, 1.0, 0.7, 0.0), (2.0, 1.25, 0.75, 0.3)),
    _regime("tech_correction", (-3.5, 0.2, 0.5, 0.5), 2.0, (1.5, 0.9, 0.6, -0.1),
            (3.0, 1.25, 0.75, 0.4)),
)})


def draw_alphas(rng: random.Random) -> dict[str, dict[str, float]]:
    """Per-asset tilts, regime by regime: what makes one stock in a sector better than another."""
    return {k: {a.ticker: round(rng.gauss(0.0, ALPHA_SD_PCT[a.asset_class]), 4)
                for a in UNIVERSE} for k in REGIMES}


def expected_returns_pct(regime: str, alphas: Mapping[str, Mapping[str, float]]
                         ) -> dict[str, float]:
    """Expected monthly return (%) of each asset in `regime`."""
    reg = REGIMES[regime]
    return {a.ticker: reg.sector_mu_pct[a.sector] + alphas[regime][a.ticker] for a in UNIVERSE}


def covariance_pct2(regime: str) -> list[list[float]]:
    """The true monthly covariance (%^2) of the factor model in `regime`, in `TICKERS` order."""
    reg = REGIMES[regime]
    cov = []
    for a in UNIVERSE:
        row = []
        for b in UNIVERSE:
            c = reg.sector_beta[a.sector] * reg.sector_beta[b.sector] * reg.market_vol_pct ** 2
            if a.sector == b.sector:
                c += reg.sector_vol_pct[a.sector] ** 2
            if a.ticker == b.ticker:
                c += a.idio_vol_pct ** 2
            row.append(c)
        cov.append(row)
    return cov


def draw_returns_pct(rng: random.Random, regime: str,
                     alphas: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """One month of asset returns (%) in `regime`; losses are floored at -95%."""
    reg = REGIMES[regime]
    market = rng.gauss(0.0, reg.market_vol_pct)
    sector = {s: rng.gauss(0.0, reg.sector_vol_pct[s]) for s in SECTORS}
    mu = expected_returns_pct(regime, alphas)
    out = {}
    for a in UNIVERSE:
        r = (mu[a.ticker] + reg.sector_beta[a.sector] * market + sector[a.sector]
             + rng.gauss(0.0, a.idio_vol_pct))
        out[a.ticker] = round(max(r, -95.0), 4)
    return out


@dataclass(frozen=True)
class Mandate:
    """The investment mandate the Risk Officer enforces. Weights are fractions of NAV."""

    max_asset_weight: float = 0.35
    max_sector_weight: float = 0.60
    vol_budget_annual_pct: float = 8.0
    drawdown_limit_pct: float = 10.0
    derisk_vol_annual_pct: float = 4.0   # the vol cap while drawdown discipline is active
    excluded: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, object]:
        return {"max_asset_weight": self.max_asset_weight,
                "max_sector_weight": self.max_sector_weight,
                "vol_budget_annual_pct": self.vol_budget_annual_pct,
                "drawdown_limit_pct": self.drawdown_limit_pct,
                "derisk_vol_annual_pct": self.derisk_vol_annual_pct,
                "excluded": list(self.excluded)}


@dataclass(frozen=True)
class MandateChange:
    """A mandate revision: announced by the committee, binding from `effective_period`."""

    announce_period: int
    effective_period: int
    mandate: Mandate
    summary: str


@dataclass(frozen=True)
class World:
    """Everything the market does in one episode, fixed at reset. Hidden from the agent except
    through prices, research and the risk model."""

    task: str
    seed: int
    horizon: int
    regimes: tuple[str, ...]                          # regime of period 1..horizon
    alphas: Mapping[str, Mapping[str, float]]
    returns_pct: tuple[Mapping[str, float], ...]      # realised return of period 1..horizon
    prehistory_pct: tuple[Mapping[str, float], ...]   # months before period 1 (risk model)
    initial_weights: Mapping[str, float]
    mandate: Mandate
    mandate_change: MandateChange | None

    def regime_at(self, period: int) -> str:
        """Regime of `period` (1-based); before period 1 the first regime holds."""
        return self.regimes[min(max(period, 1), self.horizon) - 1]

    def expected_at(self, period: int) -> dict[str, float]:
        return expected_returns_pct(self.regime_at(period), self.alphas)

    def mandate_at(self, period: int) -> Mandate:
        change = self.mandate_change
        if change is not None and period >= change.effective_period:
            return change.mandate
        return self.mandate

    def price_path(self) -> list[dict[str, float]]:
        """Prices at the end of period 0..horizon."""
        prices = [{a.ticker: a.initial_price for a in UNIVERSE}]
        for r in self.returns_pct:
            prices.append({t: prices[-1][t] * (1 + r[t] / 100) for t in TICKERS})
        return prices


def simulate(rng: random.Random, regimes: Sequence[str], prehistory_regime: str
             ) -> tuple[dict[str, dict[str, float]], tuple[dict[str, float], ...],
                        tuple[dict[str, float], ...]]:
    """Alphas, then `PREHISTORY_PERIODS` months in `prehistory_regime`, then one month per
    regime in `regimes` — in that order, from `rng`."""
    alphas = draw_alphas(rng)
    history = tuple(draw_returns_pct(rng, prehistory_regime, alphas)
                    for _ in range(PREHISTORY_PERIODS))
    path = tuple(draw_returns_pct(rng, k, alphas) for k in regimes)
    return alphas, history, path


def annualise_vol(monthly_vol_pct: float) -> float:
    return monthly_vol_pct * math.sqrt(PERIODS_PER_YEAR)
