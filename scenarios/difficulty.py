"""Difficulty knobs. Each knob is named for what it changes in the generated world.

| knob | easy | medium | hard | effect |
|---|---|---|---|---|
| history_days | 60 | 90 | 120 | ledger history before the alert window (more to read) |
| background_per_month | 8 | 14 | 24 | legitimate lines per customer account per month (noise) |
| decoys | 1 | 2 | 4 | near-miss watchlist names, namesake news, innocent one-off counterparties |
| layers | 1 | 2 | 3 | companies between a shell and its beneficial owner |
| hops | 1 | 2 | 3 | correspondent hops after funds leave the bank |
| threshold_gap_usd | 1,500 | 900 | 500 | structured deposits sit within this gap under $10,000 |
| structured_deposits | 5-6 | 6-8 | 8-11 | number of structured deposits |
| spread_days | 6 | 12 | 20 | days the illicit pattern is spread over |
| branches | 2 | 3 | 4 | branches used for structured cash |
| price_multiple | 1.9-3.0 | 1.5-2.1 | 1.32-1.6 | TBML mispricing factor beyond the market band |
| fair_price_premium | 0-0.05 | 0-0.10 | 0.05-0.15 | benign prices sit this far above the band |
| legit_shipments | 1 | 2 | 4 | genuine shipments the illicit one hides among |
| step_budget | 40 | 36 | 34 | steps before the episode times out (slack shrinks as work grows) |
"""

from __future__ import annotations

from dataclasses import dataclass

from memex.scenarios.model import Difficulty


@dataclass(frozen=True)
class Knobs:
    history_days: int
    background_per_month: int
    decoys: int
    layers: int
    hops: int
    threshold_gap_usd: float
    structured_deposits: tuple[int, int]
    spread_days: int
    branches: int
    price_multiple: tuple[float, float]
    fair_price_premium: tuple[float, float]
    legit_shipments: int
    step_budget: int


KNOBS: dict[Difficulty, Knobs] = {
    "easy": Knobs(60, 8, 1, 1, 1, 1_500.0, (5, 6), 6, 2, (1.9, 3.0), (0.0, 0.05), 1, 40),
    "medium": Knobs(90, 14, 2, 2, 2, 900.0, (6, 8), 12, 3, (1.5, 2.1), (0.0, 0.10), 2, 36),
    "hard": Knobs(120, 24, 4, 3, 3, 500.0, (8, 11), 20, 4, (1.32, 1.6), (0.05, 0.15), 4, 34),
}

ALERT_WINDOW_DAYS = 30
