"""Mandate-constrained mean-variance allocation (long only), used by the regime oracle that
anchors the score and by the committee-aware heuristic.

    maximise  mu' w - aversion * w' C w
    s.t.      0 <= w_i <= asset cap (0 if excluded),  sum over a sector <= sector cap,
              sum w <= 1 (the rest is cash),  annual vol(w) <= vol cap

The box/sector/budget constraints form a laminar family, so the linear step of Frank-Wolfe is a
greedy fill; the volatility cap is met by raising the aversion (bisection) until it holds.
Pure Python: eight assets need no numerical library.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from operator import mul

from memex.committee.world.market import SECTOR_OF, SECTORS, TICKERS
from memex.committee.world.risk import Cov, sector_weights, vol_annual_pct

FW_ITERATIONS = 80
GAP_TOLERANCE = 1e-3   # in % a month: far below any decision that matters
BISECTION_STEPS = 8


def _greedy_vertex(gradient: list[float], asset_caps: list[float],
                   sector_cap: float) -> list[float]:
    room = dict.fromkeys(SECTORS, sector_cap)
    total = 1.0
    vertex = [0.0] * len(TICKERS)
    for i in sorted(range(len(TICKERS)), key=lambda k: -gradient[k]):
        if gradient[i] <= 0 or total <= 0:
            break
        s = SECTOR_OF[TICKERS[i]]
        x = min(asset_caps[i], room[s], total)
        if x > 0:
            vertex[i] = x
            room[s] -= x
            total -= x
    return vertex


def _frank_wolfe(mu: list[float], cov: Cov, aversion: float, asset_caps: list[float],
                 sector_cap: float, start: list[float] | None = None) -> list[float]:
    w = list(start) if start is not None else [0.0] * len(mu)
    cw = [sum(map(mul, row, w)) for row in cov]     # cov @ w, kept up to date
    for _ in range(FW_ITERATIONS):
        grad = [m - 2 * aversion * c for m, c in zip(mu, cw, strict=True)]
        s = _greedy_vertex(grad, asset_caps, sector_cap)
        d = [a - b for a, b in zip(s, w, strict=True)]
        gap = sum(map(mul, grad, d))    # the Frank-Wolfe duality gap
        if gap <= GAP_TOLERANCE:
            break
        cd = [sum(map(mul, row, d)) for row in cov]
        curv = sum(map(mul, d, cd))
        step = 1.0 if curv <= 0 else min(1.0, gap / (2 * aversion * curv))
        w = [a + step * b for a, b in zip(w, d, strict=True)]
        cw = [a + step * b for a, b in zip(cw, cd, strict=True)]
    return w


def optimise(mu_pct: Mapping[str, float], cov: Cov, *, aversion: float,
             max_asset_weight: float, max_sector_weight: float, vol_cap_annual_pct: float,
             excluded: tuple[str, ...] = ()) -> dict[str, float]:
    """Target weights (fractions of NAV, floored to 0.01%) for expected excess returns
    `mu_pct` (monthly %) and covariance `cov` (monthly %^2)."""
    mu = [mu_pct.get(t, 0.0) for t in TICKERS]
    caps = [0.0 if t in excluded else max_asset_weight for t in TICKERS]

    warm: list[float] | None = None

    def solve(a: float) -> dict[str, float]:
        nonlocal warm
        warm = _frank_wolfe(mu, cov, a, caps, max_sector_weight, warm)
        return {t: math.floor(x * 10_000) / 10_000 for t, x in zip(TICKERS, warm, strict=True)}

    best = solve(aversion)
    vol = vol_annual_pct(best, cov)
    if vol <= vol_cap_annual_pct:
        return best
    # an interior optimum scales as 1/aversion, so start the bracket at the scaled guess
    lo, hi = aversion, aversion * max(2.0, 1.2 * vol / vol_cap_annual_pct)
    while vol_annual_pct(solve(hi), cov) > vol_cap_annual_pct and hi < aversion * 1e4:
        lo, hi = hi, hi * 2
    for _ in range(BISECTION_STEPS):
        mid = (lo + hi) / 2
        if vol_annual_pct(solve(mid), cov) > vol_cap_annual_pct:
            lo = mid
        else:
            hi = mid
    best = solve(hi)
    vol = vol_annual_pct(best, cov)
    if vol > vol_cap_annual_pct:  # caps too tight for any positive-return book: scale down
        best = {t: math.floor(x * vol_cap_annual_pct / vol * 10_000) / 10_000
                for t, x in best.items()}
    assert all(v <= max_sector_weight + 1e-9 for v in sector_weights(best).values())
    return best
