"""Round-tripping and loan-back: the customer's own money comes back as a "loan" or "investment".

Grounded in the FATF typologies on the misuse of corporate vehicles (FATF, "Money Laundering
Using Trust and Company Service Providers", 2010, and "Concealment of Beneficial Ownership",
FATF/Egmont 2018: loan-back arrangements and funds returned through related companies). Manual
11.3 states the figures.

Fires TM-LOAN-06 with exactly the surface of intra-group funding or a shareholder loan
(`scenarios.surfaces.loan_surface`): an outgoing transfer, then within 3 to 12 days an inbound
loan drawdown or capital contribution of $150,000 or more. The cover story fails:

- `loan_back_trace`: the origin trace of the loan ends at a company the customer owns;
- `undocumented_loan`: the loan agreement on file does not match the amount received;
- `related_lender` (test-only hold-out): the registry shows the customer owning the "lender" or
  the company it paid;
- `controlled_lender_device`: the customer's device also runs an unrelated company's account;
- `listed_borrower`: the watchlist hit on the customer's name is the customer.
"""
from __future__ import annotations

from memex.scenarios import checks as ck
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.story import LOAN, Scheme, build_case

SCHEMES: dict[str, Scheme] = {
    "loan_back_trace": Scheme(LOAN, ck.TRACE),
    "undocumented_loan": Scheme(LOAN, ck.SOURCE_OF_FUNDS),
    "related_lender": Scheme(LOAN, ck.HOLDINGS),
    "controlled_lender_device": Scheme(LOAN, ck.DEVICE),
    "listed_borrower": Scheme(LOAN, ck.WATCHLIST),
}


def build(b: CaseBuilder, variant: str) -> Case:
    return build_case(b, kind='loan_back', variant=variant, scheme=SCHEMES[variant],
                      suspicious=True, typology='loan_back')


KIND = KindSpec(name='loan_back', suspicious=True, schemes=SCHEMES,
                build=build, holdout_variants=("related_lender",))
