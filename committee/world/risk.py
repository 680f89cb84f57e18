"""The Risk Officer: a risk model estimated from realised returns, the mandate checks, escalation,
and the reports the PM can ask for.

The risk model is RiskMetrics-style: a zero-mean exponentially weighted covariance of monthly
returns (decay `EWMA_LAMBDA`), seeded from the prehistory. It never sees the regime, so it lags
turns exactly as a real desk's model does. Compliance is judged against this model, which the
PM can read in `query_risk("PORTFOLIO")`.

Limits and their levels: a holding, sector or the volatility estimate is `watch` at
`WATCH_USAGE` of its cap and `breach` at or above it; an excluded asset is a breach as soon as
it is held. When the drawdown reaches the mandate's drawdown limit, *drawdown discipline* caps
volatility at the lower de-risking level for `DISCIPLINE_PERIODS` periods (the committee's
review), or until the drawdown is back under half the limit; it re-engages if the drawdown
deepens by another `DISCIPLINE_RETRIGGER_PCT` points. (A discipline that lasted until the loss
was recovered would lock a fund in cash for good.)
The officer also watches the market: a fast EWMA of the equal-weight equity index's squared
return against its prehistory norm gives a stress ratio, `elevated` from
`STRESS_ELEVATED_RATIO` and `severe` from `STRESS_SEVERE_RATIO`; a change of level is posted
to the committee, as are *position alerts*: holdings `POSITION_ALERT_PCT` or more below their
highest price of the last `POSITION_LOOKBACK_PERIODS` months. A breach that persists escalates
(`escalated` on the second consecutive period) and on the `ENFORCE_AFTER_PERIODS`-th the Risk
Officer enforces the mandate by trading the book back inside the limits itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from memex.committee.world.market import (
    ASSETS,
    PERIODS_PER_YEAR,
    SECTOR_MEMBERS,
    SECTOR_OF,
    SECTORS,
    TICKERS,
    Mandate,
    World,
    annualise_vol,
)

EWMA_LAMBDA = 0.85
STRESS_LAMBDA = 0.5                # a fast gauge of equity-market volatility
STRESS_ELEVATED_RATIO = 1.4        # fast equity vol / its prehistory norm
STRESS_SEVERE_RATIO = 2.0
WATCH_USAGE = 0.85
ESCALATE_AFTER_PERIODS = 2
ENFORCE_AFTER_PERIODS = 3
ENFORCEMENT_HEADROOM = 0.97        # the officer trades to 97% of each cap, not to the edge
RECOMMENDATION_HEADROOM = 0.92     # and recommends a little more room than that
DISCIPLINE_PERIODS = 3             # a drawdown at the limit caps risk for this many periods
DISCIPLINE_RELEASE_FRACTION = 0.5  # ... or until the drawdown is back under half the limit
DISCIPLINE_RETRIGGER_PCT = 5.0     # and again each time the drawdown deepens this much more
VAR_Z_95 = 1.645
EPS_WEIGHT = 1e-4
POSITION_ALERT_PCT = 10.0          # a holding this far below its recent high is flagged
POSITION_LOOKBACK_PERIODS = 3
MIN_ALERT_WEIGHT = 0.02

Level = Literal["ok", "watch", "breach"]
Cov = list[list[float]]


# ---- the risk model ----------------------------------------------------------------------

def initial_covariance(history: Sequence[Mapping[str, float]]) -> Cov:
    """Zero-mean sample second moment of the prehistory (monthly %^2)."""
    n = len(history)
    return [[sum(r[a] * r[b] for r in history) / n for b in TICKERS] for a in TICKERS]


def ewma_update(cov: Cov, returns_pct: Mapping[str, float], lam: float = EWMA_LAMBDA) -> Cov:
    r = [returns_pct[t] for t in TICKERS]
    return [[lam * cov[i][j] + (1 - lam) * r[i] * r[j] for j in range(len(r))]
            for i in range(len(r))]


def equity_index_return_pct(returns_pct: Mapping[str, float]) -> float:
    """Equal-weight return of the equities (the officer's market gauge)."""
    equities = [t for t in TICKERS if ASSETS[t].asset_class == "equity"]
    return sum(returns_pct[t] for t in equities) / len(equities)


def stress_gauge(history: Sequence[Mapping[str, float]]) -> tuple[float, float]:
    """(norm, fast) second moments of the equity index over the prehistory: the norm is the
    plain average, the fast gauge an EWMA with `STRESS_LAMBDA`."""
    r2 = [equity_index_return_pct(r) ** 2 for r in history]
    fast = r2[0]
    for x in r2[1:]:
        fast = STRESS_LAMBDA * fast + (1 - STRESS_LAMBDA) * x
    return sum(r2) / len(r2), fast


def stress_level(ratio: float) -> Literal["normal", "elevated", "severe"]:
    if ratio >= STRESS_SEVERE_RATIO:
        return "severe"
    return "elevated" if ratio >= STRESS_ELEVATED_RATIO else "normal"


def _vec(weights: Mapping[str, float]) -> list[float]:
    return [weights.get(t, 0.0) for t in TICKERS]


def variance_pct2(weights: Mapping[str, float], cov: Cov) -> float:
    """Monthly variance of the book (%^2) under `cov`."""
    w = _vec(weights)
    return sum(w[i] * cov[i][j] * w[j] for i in range(len(w)) for j in range(len(w))
               if w[i] and w[j])


def vol_annual_pct(weights: Mapping[str, float], cov: Cov) -> float:
    return annualise_vol(math.sqrt(max(variance_pct2(weights, cov), 0.0)))


def asset_vol_annual_pct(cov: Cov) -> dict[str, float]:
    return {t: annualise_vol(math.sqrt(cov[i][i])) for i, t in enumerate(TICKERS)}


def correlation(cov: Cov) -> dict[str, dict[str, float]]:
    sd = [math.sqrt(cov[i][i]) for i in range(len(TICKERS))]
    return {a: {b: round(cov[i][j] / (sd[i] * sd[j]), 2) for j, b in enumerate(TICKERS)}
            for i, a in enumerate(TICKERS)}


def sector_weights(weights: Mapping[str, float]) -> dict[str, float]:
    out = dict.fromkeys(SECTORS, 0.0)
    for t, w in weights.items():
        if t in SECTOR_OF:
            out[SECTOR_OF[t]] += w
    return out


# ---- limits ------------------------------------------------------------------------------

@dataclass(frozen=True)
class LimitCheck:
    """One mandate item: `asset:NOVA`, `sector:TECH`, `volatility`, `excluded:PTRL` or
    `drawdown_discipline`. Weights are fractions of NAV; volatilities annual %."""

    limit: str
    value: float
    cap: float

    @property
    def usage(self) -> float:
        if self.cap <= 0:
            return math.inf if self.value > EPS_WEIGHT else 0.0
        return self.value / self.cap

    @property
    def level(self) -> Level:
        if self.limit.startswith("excluded:"):
            return "breach" if self.value > EPS_WEIGHT else "ok"
        if self.value > self.cap + 1e-9:
            return "breach"
        return "watch" if self.usage >= WATCH_USAGE else "ok"


def vol_cap(mandate: Mandate, discipline: bool) -> float:
    return (min(mandate.vol_budget_annual_pct, mandate.derisk_vol_annual_pct) if discipline
            else mandate.vol_budget_annual_pct)


def check_book(weights: Mapping[str, float], mandate: Mandate, cov: Cov,
               discipline: bool) -> list[LimitCheck]:
    """Every mandate item that applies to the book, in a fixed order."""
    checks = []
    for t in TICKERS:
        w = weights.get(t, 0.0)
        if t in mandate.excluded:
            checks.append(LimitCheck(f"excluded:{t}", w, 0.0))
        elif w > EPS_WEIGHT:
            checks.append(LimitCheck(f"asset:{t}", w, mandate.max_asset_weight))
    for s, w in sector_weights(weights).items():
        if w > EPS_WEIGHT:
            checks.append(LimitCheck(f"sector:{s}", w, mandate.max_sector_weight))
    vol = vol_annual_pct(weights, cov)
    checks.append(LimitCheck("volatility", vol, mandate.vol_budget_annual_pct))
    if discipline:
        checks.append(LimitCheck("drawdown_discipline", vol, vol_cap(mandate, True)))
    return checks


def breaches(checks: Sequence[LimitCheck]) -> list[LimitCheck]:
    return [c for c in checks if c.level == "breach"]


def make_compliant(weights: Mapping[str, float], mandate: Mandate, cov: Cov, discipline: bool,
                   headroom: float = ENFORCEMENT_HEADROOM) -> dict[str, float]:
    """The smallest-change book inside the mandate (with `headroom` on every cap): excluded
    holdings sold, holdings and sectors cut to their caps, then everything scaled down until
    the volatility fits. The proceeds go to cash."""
    w = {t: (0.0 if t in mandate.excluded else weights.get(t, 0.0)) for t in TICKERS}
    asset_cap = mandate.max_asset_weight * headroom
    w = {t: min(v, asset_cap) for t, v in w.items()}
    sector_cap = mandate.max_sector_weight * headroom
    for s, total in sector_weights(w).items():
        if total > sector_cap:
            for t in SECTOR_MEMBERS[s]:
                w[t] *= sector_cap / total
    cap = vol_cap(mandate, discipline) * headroom
    vol = vol_annual_pct(w, cov)
    if vol > cap:
        w = {t: v * cap / vol for t, v in w.items()}
    return {t: math.floor(v * 10_000) / 10_000 for t, v in w.items()}


def max_weight_for_vol(ticker: str, weights: Mapping[str, float], cov: Cov,
                       cap_annual_pct: float) -> float:
    """Largest weight of `ticker` (others fixed) that keeps the book within `cap_annual_pct`."""
    i = TICKERS.index(ticker)
    w = _vec(weights)
    w[i] = 0.0
    cap_var = (cap_annual_pct / math.sqrt(PERIODS_PER_YEAR)) ** 2
    # variance(x) = a x^2 + b x + c
    a = cov[i][i]
    b = 2 * sum(cov[i][j] * w[j] for j in range(len(w)))
    c = sum(w[k] * cov[k][j] * w[j] for k in range(len(w)) for j in range(len(w)))
    disc = b * b - 4 * a * (c - cap_var)
    if disc < 0 or a <= 0:
        return 0.0
    return max(0.0, (-b + math.sqrt(disc)) / (2 * a))


def position_alerts(weights: Mapping[str, float],
                    prices: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Holdings at least `POSITION_ALERT_PCT` below their highest price of the last
    `POSITION_LOOKBACK_PERIODS` months: ticker -> % below that high."""
    window = prices[-(POSITION_LOOKBACK_PERIODS + 1):]
    alerts = {}
    for t in TICKERS:
        if weights.get(t, 0.0) >= MIN_ALERT_WEIGHT:
            off = 100 * (1 - window[-1][t] / max(p[t] for p in window))
            if off >= POSITION_ALERT_PCT:
                alerts[t] = round(off, 1)
    return alerts


# ---- reports -----------------------------------------------------------------------------

def _pct(x: float) -> float:
    return round(100 * x, 2)


def describe(check: LimitCheck, level: str | None = None) -> str:
    level = level or check.level
    if check.limit.startswith("excluded:"):
        return f"{check.limit[9:]} is excluded by the mandate but held at {_pct(check.value)}%"
    if check.limit in ("volatility", "drawdown_discipline"):
        what = ("volatility" if check.limit == "volatility"
                else "volatility under drawdown discipline")
        return (f"{what} {check.value:.1f}% a year vs cap {check.cap:.1f}% "
                f"({100 * check.usage:.0f}%, {level})")
    kind, name = check.limit.split(":")
    return (f"{kind} {name} at {_pct(check.value)}% vs cap {_pct(check.cap)}% "
            f"({100 * check.usage:.0f}%, {level})")


def recommendation(weights: Mapping[str, float], mandate: Mandate, cov: Cov,
                   discipline: bool) -> dict[str, object]:
    """The officer's suggested trims: a compliant target with some headroom, as changes."""
    target = make_compliant(weights, mandate, cov, discipline, RECOMMENDATION_HEADROOM)
    trims = {t: round(target[t] - weights.get(t, 0.0), 4) for t in TICKERS
             if target[t] < weights.get(t, 0.0) - 5e-4}
    if not trims:
        return {"action": "none", "text": "No change required by the mandate."}
    text = ", ".join(f"{t} {_pct(weights.get(t, 0.0))}% -> {_pct(target[t])}%" for t in trims)
    return {"action": "trim", "changes": trims,
            "target_weights": {t: v for t, v in target.items() if v > 0},
            "text": f"Trim to restore headroom: {text}."}


def portfolio_report(weights: Mapping[str, float], mandate: Mandate, cov: Cov,
                     discipline: bool, drawdown_pct: float,
                     streaks: Mapping[str, int]) -> dict[str, object]:
    checks = check_book(weights, mandate, cov, discipline)
    var = variance_pct2(weights, cov)
    vols = asset_vol_annual_pct(cov)
    contrib = {}
    w = _vec(weights)
    for i, t in enumerate(TICKERS):
        if w[i] > EPS_WEIGHT and var > 0:
            contrib[t] = round(100 * w[i] * sum(cov[i][j] * w[j] for j in range(len(w))) / var,
                               1)
    return {
        "officer": "Risk Officer", "target": "PORTFOLIO",
        "vol_annual_pct": round(vol_annual_pct(weights, cov), 2),
        "vol_cap_annual_pct": vol_cap(mandate, discipline),
        "value_at_risk_95_1m_pct": round(VAR_Z_95 * math.sqrt(max(var, 0.0)), 2),
        "drawdown_pct": round(drawdown_pct, 2),
        "drawdown_discipline": discipline,
        "limits": [{"limit": c.limit, "value": round(c.value, 4), "cap": c.cap,
                    "usage": round(c.usage, 3) if math.isfinite(c.usage) else None,
                    "level": escalated_level(c, streaks)} for c in checks],
        "risk_contribution_pct": contrib,
        "asset_vol_annual_pct": {t: round(v, 1) for t, v in vols.items()},
        "correlation": correlation(cov),
        "recommendation": recommendation(weights, mandate, cov, discipline),
    }


def sector_report(sector: str, weights: Mapping[str, float], mandate: Mandate,
                  cov: Cov) -> dict[str, object]:
    members = SECTOR_MEMBERS[sector]
    total = sum(weights.get(t, 0.0) for t in members)
    only = {t: (weights.get(t, 0.0) / total if total else 1 / len(members)) for t in members}
    vols = asset_vol_annual_pct(cov)
    corr = correlation(cov)
    return {
        "officer": "Risk Officer", "target": sector,
        "weight": round(total, 4), "cap": mandate.max_sector_weight,
        "headroom": round(max(0.0, mandate.max_sector_weight - total), 4),
        "sector_vol_annual_pct": round(vol_annual_pct(only, cov), 2),
        "members": [{"ticker": t, "weight": round(weights.get(t, 0.0), 4),
                     "vol_annual_pct": round(vols[t], 1),
                     "excluded": t in mandate.excluded} for t in members],
        "correlation": {a: {b: corr[a][b] for b in members} for a in members},
    }


def asset_report(ticker: str, weights: Mapping[str, float], mandate: Mandate, cov: Cov,
                 discipline: bool) -> dict[str, object]:
    i = TICKERS.index(ticker)
    w = _vec(weights)
    var = variance_pct2(weights, cov)
    cov_book = sum(cov[i][j] * w[j] for j in range(len(w)))
    corr_book = (cov_book / math.sqrt(cov[i][i] * var)) if var > 0 else 0.0
    sector = SECTOR_OF[ticker]
    sector_room = mandate.max_sector_weight - sector_weights(weights)[sector] + w[i]
    by_vol = max_weight_for_vol(ticker, weights, cov, vol_cap(mandate, discipline))
    excluded = ticker in mandate.excluded
    return {
        "officer": "Risk Officer", "target": ticker, "name": ASSETS[ticker].name,
        "sector": sector, "weight": round(w[i], 4),
        "vol_annual_pct": round(annualise_vol(math.sqrt(cov[i][i])), 1),
        "correlation_with_book": round(corr_book, 2),
        "excluded": excluded,
        "max_weight": 0.0 if excluded else round(
            max(0.0, min(mandate.max_asset_weight, sector_room, by_vol)), 4),
        "max_weight_binding": ("exclusion" if excluded else min(
            (("asset limit", mandate.max_asset_weight), ("sector limit", sector_room),
             ("volatility budget", by_vol)), key=lambda kv: kv[1])[0]),
    }


def mandate_report(world: World, period: int) -> dict[str, object]:
    current = world.mandate_at(period)
    change = world.mandate_change
    report: dict[str, object] = {"officer": "Risk Officer", "target": "MANDATE",
                                 "mandate": current.as_dict()}
    if change is not None and change.announce_period <= period < change.effective_period:
        report["pending"] = {"effective_period": change.effective_period,
                             "mandate": change.mandate.as_dict(), "summary": change.summary}
    return report


def escalated_level(check: LimitCheck, streaks: Mapping[str, int]) -> str:
    """`breach`, or `escalated` once a breach has lasted `ESCALATE_AFTER_PERIODS` checks."""
    level = check.level
    if level == "breach" and streaks.get(check.limit, 0) >= ESCALATE_AFTER_PERIODS:
        return "escalated"
    return level
