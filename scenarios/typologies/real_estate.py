"""Real-estate laundering: an all-cash purchase funded from sources that do not hold up.

Grounded in FinCEN's residential real-estate geographic targeting orders (title insurers report
purchases of $300,000 or more by legal entities without bank financing) and advisory
FIN-2017-A003 (real estate bought through shell companies with funds of unexplained origin).
Manual 11.8 states the figures.

Fires TM-RE-08 with exactly the surface of a documented purchase
(`scenarios.surfaces.property_surface`): one to three funding transfers in, then a purchase paid
to a title and escrow agent. The cover story fails:

- `unexplained_funds`: the sale deed, gift letter or contribution agreement on file does not
  match the funds received;
- `funds_from_own_shell`: the origin trace of the largest funding transfer ends at a company
  the buyer owns;
- `nominee_buyer_device`: the buyer's device also runs an unrelated company's account;
- `related_funder` (test-only hold-out): the registry shows the buyer owning a "third-party"
  funder;
- `listed_buyer`: the watchlist hit on the buyer's name is the buyer.
"""
from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import PROPERTY, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "unexplained_funds": Scheme(PROPERTY, ck.SOURCE_OF_FUNDS),
    "funds_from_own_shell": Scheme(PROPERTY, ck.TRACE),
    "nominee_buyer_device": Scheme(PROPERTY, ck.DEVICE),
    "related_funder": Scheme(PROPERTY, ck.HOLDINGS),
    "listed_buyer": Scheme(PROPERTY, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='real_estate', variant=variant, scheme=SCHEMES[variant],
                      suspicious=True, typology='real_estate')


KIND = KindSpec(name='real_estate', suspicious=True, schemes=SCHEMES,
                build=build, holdout_variants=("related_funder",))
