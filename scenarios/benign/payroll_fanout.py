"""Benign look-alike of layering: an operating business paying out after it is paid.

Same TM-FLOW-02 surface as layering. Every cross-check holds; the variant names the main
explanation: `documented_receipts`, `payee_unrelated`, `disclosed_device`, `namesake_hit`,
`independent_counterparties` (the registry shows none of the counterparties is the
customer's own company). Manual 8.2 (payroll and supplier disbursements) makes closing right.
"""

from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import FLOW, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "documented_receipts": Scheme(FLOW, ck.SOURCE_OF_FUNDS),
    "payee_unrelated": Scheme(FLOW, ck.TRACE),
    "disclosed_device": Scheme(FLOW, ck.DEVICE),
    "namesake_hit": Scheme(FLOW, ck.WATCHLIST),
    "independent_counterparties": Scheme(FLOW, ck.HOLDINGS),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='payroll_fanout', variant=variant, scheme=SCHEMES[variant],
                      suspicious=False, typology=None)


KIND = KindSpec(name='payroll_fanout', suspicious=False, schemes=SCHEMES,
                build=build, holdout_variants=())
