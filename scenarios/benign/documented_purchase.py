"""Benign look-alike of real-estate laundering: a purchase whose funds are documented.

Same TM-RE-08 surface. Every cross-check holds; the variant names the main explanation:
`documented_funds` (the sale deed, investment statement, gift letter or members' agreement
matches the funds), `funder_unrelated`, `disclosed_device`, `independent_funders`,
`namesake_hit`. Manual 11.9 makes closing right.
"""
from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import PROPERTY, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "documented_funds": Scheme(PROPERTY, ck.SOURCE_OF_FUNDS),
    "funder_unrelated": Scheme(PROPERTY, ck.TRACE),
    "disclosed_device": Scheme(PROPERTY, ck.DEVICE),
    "independent_funders": Scheme(PROPERTY, ck.HOLDINGS),
    "namesake_hit": Scheme(PROPERTY, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='documented_purchase', variant=variant, scheme=SCHEMES[variant],
                      suspicious=False, typology=None)


KIND = KindSpec(name='documented_purchase', suspicious=False, schemes=SCHEMES,
                build=build, holdout_variants=())
