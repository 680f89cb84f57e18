"""Structuring: cash placed through deposits into one customer's accounts (31 USC 5324).

Fires TM-CASH-01 with exactly the surface a cash-intensive business or a cash-earning person
shows (`scenarios.surfaces.cash_surface`): amounts just below $10,000 or takings-sized, one or
several branches and depositors. What differs is where the cover story fails:

- `undocumented_cash`: the declared source of the cash (a sales summary, a bill of sale) does
  not match the deposits' total;
- `cash_out_round_trip`: the wire that follows the deposits comes back, after correspondent
  hops, to a company the customer owns;
- `controlled_account` (test-only hold-out): the customer's online-banking device also runs
  an unrelated company's account;
- `listed_depositor`: the watchlist hit on the customer's name is the customer (same date of
  birth or incorporation).
"""

from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import CASH, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "undocumented_cash": Scheme(CASH, ck.SOURCE_OF_FUNDS),
    "cash_out_round_trip": Scheme(CASH, ck.TRACE),
    "controlled_account": Scheme(CASH, ck.DEVICE),
    "listed_depositor": Scheme(CASH, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='structuring', variant=variant, scheme=SCHEMES[variant],
                      suspicious=True, typology="structuring")


KIND = KindSpec(name='structuring', suspicious=True, schemes=SCHEMES,
                build=build, holdout_variants=("controlled_account",))
