"""Benign look-alike of sanctions evasion: hub trade that clears screening.

Same TM-SANC-07 surface. Every cross-check holds; the variant names the main explanation:
`owners_cleared` (of the partner's two owners with sanctions hits, one is a namesake with
another date of birth, or both are confirmed but hold under 50 percent together: OFAC 50
Percent Rule, not blocked), `payee_unrelated`, `disclosed_device`, `independent_partner`,
`namesake_hit`. Manual 11.7 makes closing right.
"""
from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import HUB, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "owners_cleared": Scheme(HUB, ck.AGGREGATE_OWNERSHIP),
    "payee_unrelated": Scheme(HUB, ck.TRACE),
    "disclosed_device": Scheme(HUB, ck.DEVICE),
    "independent_partner": Scheme(HUB, ck.HOLDINGS),
    "namesake_hit": Scheme(HUB, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='screened_hub_trade', variant=variant, scheme=SCHEMES[variant],
                      suspicious=False, typology=None)


KIND = KindSpec(name='screened_hub_trade', suspicious=False, schemes=SCHEMES,
                build=build, holdout_variants=())
