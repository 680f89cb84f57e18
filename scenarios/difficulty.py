"""Difficulty knobs. Each knob is named for what it changes in the generated world; every knob
applies to benign and suspicious cases alike (the shared surface and the latent stories both
read them), so difficulty never tells the label. A suspicious cover story fails one of the
`cross_checks` written into the case (two when the failure shows in one view only), so
clearing a case means combining that many views.

| knob | easy | medium | hard | effect |
|---|---|---|---|---|
| cross_checks | 2 | 3 | 4 | cross-checks written into the case (views to combine) |
| history_days | 60 | 90 | 120 | ledger history before the alert window (more to read) |
| background_per_month | 8 | 14 | 24 | legitimate lines per customer account per month (noise) |
| decoys | 1 | 2 | 4 | innocent one-off transfers; namesake hits at screening's rate |
| layers | 1 | 2 | 3 | companies between a company subject and its natural-person owner |
| hops | 1 | 2 | 3 | correspondent hops a wire trace follows after the first bank |
| threshold_gap_usd | 1,500 | 900 | 500 | just-below-$10,000 deposits sit this close |
| cash_deposits | 5-7 | 6-9 | 8-11 | cash deposits in an aggregate-cash alert |
| spread_days | 6 | 12 | 20 | days the alerted cash deposits are spread over |
| branches | 2 | 3 | 4 | most branches the alerted cash is deposited at |
| price_multiple | 1.5-1.9 | 1.4-1.7 | 1.34-1.5 | mispriced invoice vs the band's edge (see below) |
| legit_shipments | 1 | 2 | 4 | earlier shipments with the same trading partner in the history |
| step_budget | 40 | 38 | 36 | steps before the episode times out (slack shrinks as work grows) |

Every price multiple is at least 1 / 0.75, so an under-invoiced price always sits more than 25
percent below the market low and an over-invoiced one more than 25 percent above the high
(manual 6.2): the red flag the case carries is the one the manual defines.
"""

from __future__ import annotations

from dataclasses import dataclass

from memex.scenarios.model import Difficulty


@dataclass(frozen=True)
class Knobs:
    cross_checks: int
    history_days: int
    background_per_month: int
    decoys: int
    layers: int
    hops: int
    threshold_gap_usd: float
    cash_deposits: tuple[int, int]
    spread_days: int
    branches: int
    price_multiple: tuple[float, float]
    legit_shipments: int
    step_budget: int


KNOBS: dict[Difficulty, Knobs] = {
    "easy": Knobs(2, 60, 8, 1, 1, 1, 1_500.0, (5, 7), 6, 2, (1.5, 1.9), 1, 40),
    "medium": Knobs(3, 90, 14, 2, 2, 2, 900.0, (6, 9), 12, 3, (1.4, 1.7), 2, 38),
    "hard": Knobs(4, 120, 24, 4, 3, 3, 500.0, (8, 11), 20, 4, (1.34, 1.5), 4, 36),
}

ALERT_WINDOW_DAYS = 30
