"""Benign look-alike of structuring: cash a business or a person really earned.

Same TM-CASH-01 surface as structuring. Every cross-check written into the case holds; the
variant names the main explanation: `documented_takings` (the sales summary or bill of sale
matches the deposits), `payee_unrelated` (the following wire ends with an unrelated party),
`disclosed_device` (the shared device runs a company the customer owns, per the registry),
`namesake_hit` (the watchlist hit has a different date of birth or incorporation). Manual 8.1
(cash-intensive businesses) makes closing right.
"""

from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import CASH, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "documented_takings": Scheme(CASH, ck.SOURCE_OF_FUNDS),
    "payee_unrelated": Scheme(CASH, ck.TRACE),
    "disclosed_device": Scheme(CASH, ck.DEVICE),
    "namesake_hit": Scheme(CASH, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='cash_business', variant=variant, scheme=SCHEMES[variant],
                      suspicious=False, typology=None)


KIND = KindSpec(name='cash_business', suspicious=False, schemes=SCHEMES,
                build=build, holdout_variants=())
