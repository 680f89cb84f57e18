"""Benign look-alike of trade-based laundering: fair trade with a high-risk-country partner.

Same TM-TRADE-03 surface. Every cross-check holds; the variant names the main explanation:
`priced_in_band` and `priced_in_band_export_season` (the market band brackets the invoiced
price; two variants so pricing anchors as often as in the typology), `payee_unrelated`,
`disclosed_device`, `independent_partner`, `namesake_hit`. Manual 6.6 makes closing right.
"""

from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import TRADE, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "priced_in_band": Scheme(TRADE, ck.PRICE),
    "priced_in_band_export_season": Scheme(TRADE, ck.PRICE),
    "payee_unrelated": Scheme(TRADE, ck.TRACE),
    "disclosed_device": Scheme(TRADE, ck.DEVICE),
    "independent_partner": Scheme(TRADE, ck.HOLDINGS),
    "namesake_hit": Scheme(TRADE, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='fair_trade', variant=variant, scheme=SCHEMES[variant],
                      suspicious=False, typology=None)


KIND = KindSpec(name='fair_trade', suspicious=False, schemes=SCHEMES,
                build=build, holdout_variants=())
