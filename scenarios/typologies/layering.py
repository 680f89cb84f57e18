"""Layering: funds moved through the customer's account to distance them from their source.

Fires TM-FLOW-02 (inflow then fan-out) or TM-PEP-04 (a large transfer to a politically
exposed customer) with the same surface as payroll and supplier runs or a PEP's documented
windfall. The cover story fails in one cross-check:

- `undocumented_inflow` / `pep_conduit`: the contract or deed on file does not match the
  inflow it is said to explain;
- `round_trip` (test-only hold-out) / `pep_round_trip`: a wire trace ends at a company the
  customer owns;
- `shared_control` / `pep_shared_control`: the customer's device also runs an unrelated
  company's account;
- `listed_subject` / `pep_adverse_media`: the watchlist hit is the customer itself;
- `related_beneficiary` / `pep_self_dealing`: the registry shows the customer owning one of
  the counterparties it presents as independent.
"""

from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import FLOW, PEP, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "undocumented_inflow": Scheme(FLOW, ck.SOURCE_OF_FUNDS),
    "round_trip": Scheme(FLOW, ck.TRACE),
    "shared_control": Scheme(FLOW, ck.DEVICE),
    "listed_subject": Scheme(FLOW, ck.WATCHLIST),
    "related_beneficiary": Scheme(FLOW, ck.HOLDINGS),
    "pep_conduit": Scheme(PEP, ck.SOURCE_OF_FUNDS),
    "pep_round_trip": Scheme(PEP, ck.TRACE),
    "pep_shared_control": Scheme(PEP, ck.DEVICE),
    "pep_adverse_media": Scheme(PEP, ck.WATCHLIST),
    "pep_self_dealing": Scheme(PEP, ck.HOLDINGS),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='layering', variant=variant, scheme=SCHEMES[variant],
                      suspicious=True, typology="layering")


KIND = KindSpec(name='layering', suspicious=True, schemes=SCHEMES,
                build=build, holdout_variants=("round_trip",))
