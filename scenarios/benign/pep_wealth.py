"""Benign look-alike of a PEP conduit: a politically exposed customer's documented windfall.

Same TM-PEP-04 surface as the layering PEP variants. Every cross-check holds; the variant
names the main explanation: `documented_source` (the deed, probate grant or agreement on file
matches the transfer), `payer_unrelated`, `disclosed_device`, `namesake_hit`,
`independent_payer`. Manual 5.3 makes closing right.
"""

from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import PEP, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "documented_source": Scheme(PEP, ck.SOURCE_OF_FUNDS),
    "payer_unrelated": Scheme(PEP, ck.TRACE),
    "disclosed_device": Scheme(PEP, ck.DEVICE),
    "namesake_hit": Scheme(PEP, ck.WATCHLIST),
    "independent_payer": Scheme(PEP, ck.HOLDINGS),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='pep_wealth', variant=variant, scheme=SCHEMES[variant],
                      suspicious=False, typology=None)


KIND = KindSpec(name='pep_wealth', suspicious=False, schemes=SCHEMES,
                build=build, holdout_variants=())
