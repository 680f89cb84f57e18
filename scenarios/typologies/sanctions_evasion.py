"""Sanctions evasion through a front company and transshipment.

Grounded in OFAC's revised guidance on entities owned by blocked persons (the 50 Percent Rule,
13 August 2014: holdings of blocked persons are aggregated) and the FinCEN/BIS joint alerts on
export-control evasion (FIN-2022-A003, FIN-2023-NTCA002: Common High Priority List goods
routed through transshipment points such as the UAE, Turkiye, Armenia, Georgia, Kazakhstan,
Kyrgyzstan and Hong Kong). Manual 11.5 and 11.6 state the figures.

Fires TM-SANC-07 with exactly the surface of lawful trade with a hub distributor
(`scenarios.surfaces.hub_trade_surface`): complete invoices, bills of lading and customs
declarations for high-priority goods. The cover story fails:

- `aggregate_blocked_owners`: two of the partner's four owners are confirmed SDN entries; each
  holds under 50 percent, together 50 percent or more, so the partner is blocked;
- `proceeds_routed_back`: the payment's trace ends at a company the customer owns;
- `front_company_device` (test-only hold-out): the customer's device also runs an unrelated
  company's account;
- `front_company_owned`: the registry shows the customer owning its "independent" partner;
- `listed_trader`: the watchlist hit on the customer's name is the customer.
"""
from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import HUB, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "aggregate_blocked_owners": Scheme(HUB, ck.AGGREGATE_OWNERSHIP),
    "proceeds_routed_back": Scheme(HUB, ck.TRACE),
    "front_company_device": Scheme(HUB, ck.DEVICE),
    "front_company_owned": Scheme(HUB, ck.HOLDINGS),
    "listed_trader": Scheme(HUB, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='sanctions_evasion', variant=variant, scheme=SCHEMES[variant],
                      suspicious=True, typology='sanctions_evasion')


KIND = KindSpec(name='sanctions_evasion', suspicious=True, schemes=SCHEMES,
                build=build, holdout_variants=("front_company_device",))
