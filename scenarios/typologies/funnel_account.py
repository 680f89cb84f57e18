"""Funnel accounts and money mules: deposits gathered from many places, sent on at once.

Grounded in FinCEN advisory FIN-2014-A005 (funnel accounts: deposits in one or several places,
often by different people, withdrawn or wired quickly elsewhere) and the FBI/FinCEN money-mule
guidance (accounts recruited or controlled by someone else). Manual 11.1 states the figures.

Fires TM-FUNNEL-05 with exactly the surface a marketplace seller or a travelling salesperson
shows (`scenarios.surfaces.funnel_surface`): ten or more deposits at three or more branches or
from three or more senders, over $15,000, 70 to 95 percent wired on within days. The cover story
(a business whose customers pay from everywhere) fails in one cross-check:

- `undocumented_deposits`: the payout statement or sales report on file does not match the
  deposits' total;
- `funnel_to_controlled_company`: the wire that empties the account ends, after correspondent
  hops, at a company the customer owns;
- `mule_herder_device` (test-only hold-out): the customer's online-banking device also runs an
  unrelated company's account (the account is operated by someone else);
- `listed_account_holder`: the watchlist hit on the customer's name is the customer.
"""
from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import FUNNEL, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "undocumented_deposits": Scheme(FUNNEL, ck.SOURCE_OF_FUNDS),
    "funnel_to_controlled_company": Scheme(FUNNEL, ck.TRACE),
    "mule_herder_device": Scheme(FUNNEL, ck.DEVICE),
    "listed_account_holder": Scheme(FUNNEL, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='funnel_account', variant=variant, scheme=SCHEMES[variant],
                      suspicious=True, typology='funnel_account')


KIND = KindSpec(name='funnel_account', suspicious=True, schemes=SCHEMES,
                build=build, holdout_variants=("mule_herder_device",))
