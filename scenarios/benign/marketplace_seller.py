"""Benign look-alike of a funnel account: a seller, franchise or salesperson paid from many places.

Same TM-FUNNEL-05 surface as `funnel_account`. Every cross-check holds; the variant names the
main explanation: `documented_sales` (the marketplace payout statement, commission statement or
franchise sales report matches the deposits), `payee_unrelated` (the outgoing wire ends with an
unrelated supplier), `disclosed_device` (the shared device runs a company the customer owns),
`namesake_hit` (the watchlist hit has another date of birth or incorporation). Manual 11.2 (a
documented business with dispersed receipts, FinCEN FIN-2014-A005 read with its caveats) makes
closing right.
"""
from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import FUNNEL, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "documented_sales": Scheme(FUNNEL, ck.SOURCE_OF_FUNDS),
    "payee_unrelated": Scheme(FUNNEL, ck.TRACE),
    "disclosed_device": Scheme(FUNNEL, ck.DEVICE),
    "namesake_hit": Scheme(FUNNEL, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='marketplace_seller', variant=variant, scheme=SCHEMES[variant],
                      suspicious=False, typology=None)


KIND = KindSpec(name='marketplace_seller', suspicious=False, schemes=SCHEMES,
                build=build, holdout_variants=())
