"""Benign look-alike of elder exploitation: documented family support or attorney payments.

Same TM-ELDER-09 surface. Every cross-check holds; the variant names the main explanation:
`poa_payments` (the durable power of attorney on file names the payee), `disclosed_device`
(the shared device runs a company the customer owns), `payee_namesake` (the watchlist hit on
the payee has another date of birth). Manual 11.11 makes closing right.
"""
from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import ELDER, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "poa_payments": Scheme(ELDER, ck.AUTHORITY),
    "disclosed_device": Scheme(ELDER, ck.DEVICE),
    "payee_namesake": Scheme(ELDER, ck.PAYEE_WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='family_support', variant=variant, scheme=SCHEMES[variant],
                      suspicious=False, typology=None)


KIND = KindSpec(name='family_support', suspicious=False, schemes=SCHEMES,
                build=build, holdout_variants=())
