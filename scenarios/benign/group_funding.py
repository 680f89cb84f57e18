"""Benign look-alike of loan-back: cash pooling, a shareholder loan or a capital call.

Same TM-LOAN-06 surface as `loan_back`. Every cross-check holds; the variant names the main
explanation: `documented_loan` (the loan, cash-pooling or subscription agreement matches the
amount), `lender_traced_unrelated` (the loan's origin trace ends with an unrelated party),
`independent_lender`, `disclosed_device`, `namesake_hit`. Manual 11.4 makes closing right.
"""
from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import LOAN, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "documented_loan": Scheme(LOAN, ck.SOURCE_OF_FUNDS),
    "lender_traced_unrelated": Scheme(LOAN, ck.TRACE),
    "independent_lender": Scheme(LOAN, ck.HOLDINGS),
    "disclosed_device": Scheme(LOAN, ck.DEVICE),
    "namesake_hit": Scheme(LOAN, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='group_funding', variant=variant, scheme=SCHEMES[variant],
                      suspicious=False, typology=None)


KIND = KindSpec(name='group_funding', suspicious=False, schemes=SCHEMES,
                build=build, holdout_variants=())
