"""Trade-based money laundering: value moved by misdescribing trade.

Fires TM-TRADE-03 with the same surface as fair trade with a high-risk-country partner
(complete invoices, bills of lading and customs declarations in both). The cover story fails:

- `over_invoicing` / `under_invoicing` (test-only hold-out): the market band for the
  commodity sits well below / above the invoiced price;
- `third_party_routing`: the payment's trace ends at a company the customer owns;
- `controlled_partner`: the customer's device also runs an unrelated company's account;
- `related_party_trade`: the registry shows the customer owning its "independent" partner;
- `listed_trader`: the watchlist hit on the customer's name is the customer.
"""

from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import TRADE, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "over_invoicing": Scheme(TRADE, ck.PRICE, over=True),
    "under_invoicing": Scheme(TRADE, ck.PRICE, over=False),
    "third_party_routing": Scheme(TRADE, ck.TRACE),
    "controlled_partner": Scheme(TRADE, ck.DEVICE),
    "related_party_trade": Scheme(TRADE, ck.HOLDINGS),
    "listed_trader": Scheme(TRADE, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='trade_based', variant=variant, scheme=SCHEMES[variant],
                      suspicious=True, typology="trade_based")


KIND = KindSpec(name='trade_based', suspicious=True, schemes=SCHEMES,
                build=build, holdout_variants=("under_invoicing",))
