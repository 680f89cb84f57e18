"""The Research Analyst: noisy buy/sell convictions, correlated with the hidden regime's true
expected returns.

A conviction is `tanh(signal + bias + mood + call + noise)` in [-1, 1], where `signal` is the
expected excess return over cash in units of `CONVICTION_SCALE_PCT` (per month) under the
regime the analyst believes in — the current one, or the one `research_lag_periods` ago for a
slow analyst — `bias` is the task's pet-sector optimism, `mood` (every equity view) and `call`
(per sector) are biases drawn per world and per believed regime, and `noise` is drawn afresh
for every query from a generator keyed by (task, seed, period, target), so the world never
depends on how often the PM asks. Mood and calls are common to a sector's stocks: the spread
*within* a sector is unbiased (research picks stocks well), while a sector note matched against
the regime profiles names the wrong regime often (research is no regime label). Narrower
questions get sharper answers: sector views average their members, and a single stock gets the
analyst's full attention.
"""

from __future__ import annotations

import math
import random

from memex.committee.world.market import (
    CASH_RATE_PCT,
    SECTOR_MEMBERS,
    SECTOR_OF,
    SECTORS,
    TICKERS,
    World,
    expected_returns_pct,
)
from memex.committee.world.tasks import TASKS

CONVICTION_SCALE_PCT = 1.5
# The analyst's mood: a bias common to every equity view, drawn per world and per regime the
# analyst believes in, N(0, MOOD_SD) in conviction units. It makes the level of a note say
# little about the regime (only the cross-section and its changes do), as a real desk's does.
MOOD_SD = 0.4
# The analyst's sector calls: a bias per sector, drawn per world and per regime the analyst
# believes in, N(0, SECTOR_CALL_SD), common to the sector's stocks. Research is good at ranking
# the stocks of a sector (the spread within a sector is unbiased) and unreliable at calling
# sectors, so a sector note matched against the regimes' profiles is no regime label.
SECTOR_CALL_SD = 1.0
RESEARCH_TARGETS: tuple[str, ...] = ("SECTOR", "MARKET", *SECTORS, *TICKERS)
# Noise multiplier by question: sector-level views (SECTOR), every stock (MARKET), the stocks of
# one sector, one stock.
NOISE_FACTOR = {"SECTOR": 0.75, "MARKET": 1.0, "sector": 0.8, "asset": 0.6}


def stance(conviction: float) -> str:
    if conviction >= 0.5:
        return "strong buy"
    if conviction >= 0.15:
        return "buy"
    if conviction > -0.15:
        return "neutral"
    return "sell" if conviction > -0.5 else "strong sell"


def research_note(world: World, period: int, target: str) -> dict[str, object]:
    """The analyst's note for a query made during `period` (1-based) about `target`."""
    if target not in RESEARCH_TARGETS:
        raise ValueError(target)
    spec = TASKS[world.task]
    believed = world.regime_at(period - spec.research_lag_periods)
    mu = expected_returns_pct(believed, world.alphas)
    rng = random.Random(f"memex-committee|{world.task}|{world.seed}|research|{period}|{target}")
    mood_rng = random.Random(f"memex-committee|{world.task}|{world.seed}|mood|{believed}")
    mood = mood_rng.gauss(0.0, MOOD_SD)
    call = {s: mood_rng.gauss(0.0, SECTOR_CALL_SD) for s in SECTORS}

    def conviction(excess_pct: float, sector: str, factor: float) -> float:
        signal = (excess_pct / CONVICTION_SCALE_PCT + spec.research_bias.get(sector, 0.0)
                  + (mood if sector != "BONDS" else 0.0) + call[sector])
        return round(math.tanh(signal + rng.gauss(0.0, spec.research_noise * factor)), 2)

    views = []
    if target == "SECTOR":
        for s in SECTORS:
            excess = sum(mu[t] for t in SECTOR_MEMBERS[s]) / len(SECTOR_MEMBERS[s]) - CASH_RATE_PCT
            views.append({"name": s, "level": "sector",
                          "conviction": conviction(excess, s, NOISE_FACTOR["SECTOR"])})
    else:
        if target == "MARKET":
            names, factor = TICKERS, NOISE_FACTOR["MARKET"]
        elif target in SECTORS:
            names, factor = SECTOR_MEMBERS[target], NOISE_FACTOR["sector"]
        else:
            names, factor = (target,), NOISE_FACTOR["asset"]
        for t in names:
            views.append({"name": t, "level": "asset",
                          "conviction": conviction(mu[t] - CASH_RATE_PCT, SECTOR_OF[t], factor)})
    for v in views:
        v["stance"] = stance(v["conviction"])
    ranked = sorted(views, key=lambda v: -v["conviction"])
    best, worst = ranked[0], ranked[-1]
    if len(views) == 1:
        text = f"Research on {best['name']}: {best['stance']} ({best['conviction']:+.2f})."
    else:
        text = (f"Research on {target}: most constructive on {best['name']} "
                f"({best['conviction']:+.2f}, {best['stance']}), least on {worst['name']} "
                f"({worst['conviction']:+.2f}, {worst['stance']}).")
    return {"analyst": "Research Analyst", "target": target, "period": period,
            "views": views, "text": text}
