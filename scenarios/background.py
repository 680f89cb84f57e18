"""Legitimate background activity and decoys that the pattern of interest hides among.

Every case gets realistic ordinary banking for its customers (salary or a retiree's benefit,
rent, card spend, supplier and payroll runs) over the knob-controlled history, plus
`knobs.decoys` look-alike distractions: innocent one-off transfers and, at the rate real
screening raises them, near-miss watchlist names and namesake news stories.
"""

from __future__ import annotations

from memex.scenarios import vocab
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.difficulty import ALERT_WINDOW_DAYS
from memex.scenarios.model import Account, Entity

MERCHANTS = ("Shoprite Supermarkets", "Metro Fuel Stations", "Amazon Marketplace",
             "Verizon Wireless", "Target Stores", "CVS Pharmacy", "Home Depot", "Uber Trip")
SUPPLIERS = ("Sysco Food Services", "Cintas Uniform Co", "Grainger Industrial Supply",
             "ULINE Shipping Supplies", "Staples Business")
RETIREMENT_MEMO = "SOC SEC BENEFIT"
# Per decoy, the chance it is a screening namesake (sanctions, news) instead of an innocent
# transfer: a few percent of screened customers raise a name hit at all (docs/world.md).
NAMESAKE_SANCTIONS_RATE = 0.01
NAMESAKE_MEDIA_RATE = 0.02
SANCTIONS_PROGRAMS = ("SDGT", "RUSSIA-EO14024", "IRAN", "SDNTK", "GLOMAG", "VENEZUELA-EO13850")
NEWS_HEADLINES = (
    "charged in a payroll-tax fraud scheme", "named in a procurement bribery inquiry",
    "convicted of wire fraud involving investment clubs", "sanctioned by a securities regulator",
    "arrested over an invoice-fraud ring",
)


def _span_days(b: CaseBuilder) -> int:
    return b.knobs.history_days + ALERT_WINDOW_DAYS


def personal_banking(b: CaseBuilder, person: Entity, acct: Account, annual_income: float,
                     *, retired: bool = False) -> None:
    """Salary every two weeks (a retiree: a monthly Social Security benefit), rent, utilities,
    card spend and the odd ATM withdrawal."""
    rng = b.rng
    employer = b.shared_counterparty("employer", person.employer or b.company_name("US"))
    landlord = b.shared_counterparty("landlord", f"{b.pick(vocab.COMPANY_WORDS_A)} "
                                                 "Property Management LLC")
    utility = b.shared_counterparty("utility", "PSE&G Utilities")
    pay, every, memo = (annual_income / 12 * 0.9, 30, RETIREMENT_MEMO) if retired else (
        annual_income / 26 * 0.74, 14, "PAYROLL DIRECT DEPOSIT")
    rent = round(annual_income / 12 * rng.uniform(0.22, 0.32), -1)
    span = _span_days(b)
    for d in range(span - b.ri(0, every - 1), 0, -every):
        b.txn(b.days_ago(d), pay * rng.uniform(0.99, 1.01), "ach", employer, acct, memo=memo)
    for d in range(span - b.ri(0, 29), 0, -30):
        b.txn(b.days_ago(d), rent, "ach", acct, landlord, memo="RENT AUTOPAY")
        b.txn(b.days_ago(max(1, d - 3)), rng.uniform(60, 260), "ach", acct, utility,
              memo="UTILITY BILL")
    months = span / 30
    for _ in range(int(b.knobs.background_per_month * months * 0.75)):
        pick = rng.randrange(len(MERCHANTS))
        merchant = b.shared_counterparty(f"merchant:{pick}", MERCHANTS[pick])
        b.txn(b.days_ago(b.ri(1, span)), rng.uniform(8, 240), "card", acct, merchant,
              memo="POS PURCHASE")
    for _ in range(int(months)):
        b.txn(b.days_ago(b.ri(1, span)), b.pick((60, 100, 200, 300)), "cash", acct,
              None, branch=b.pick(vocab.BRANCHES), memo="ATM WITHDRAWAL")


def business_banking(b: CaseBuilder, company: Entity, acct: Account, monthly_revenue: float,
                     *, card_share: float = 0.6, staff: int = 5) -> None:
    """Card settlements in; suppliers, payroll batches, rent and tax out."""
    rng = b.rng
    processor = b.shared_counterparty("processor", "Elavon Merchant Settlement")
    payroll = b.shared_counterparty("payroll", "ADP Payroll Services")
    landlord = b.shared_counterparty("commercial_landlord", f"{b.pick(vocab.COMPANY_WORDS_A)}"
                                                           " Commercial Realty LLC")
    irs = b.shared_counterparty("tax", "US Treasury EFTPS")
    span = _span_days(b)
    months = span / 30
    settlements = max(4, int(b.knobs.background_per_month * 0.5))
    for _ in range(int(settlements * months)):
        b.txn(b.days_ago(b.ri(1, span)),
              monthly_revenue * card_share / settlements * rng.uniform(0.7, 1.3), "ach",
              processor, acct, memo="CARD SETTLEMENT BATCH")
    for _ in range(int(b.knobs.background_per_month * 0.3 * months)):
        pick = rng.randrange(len(SUPPLIERS))
        supplier = b.shared_counterparty(f"supplier:{pick}", SUPPLIERS[pick])
        b.txn(b.days_ago(b.ri(1, span)), monthly_revenue * rng.uniform(0.02, 0.09), "ach",
              acct, supplier, memo="SUPPLIER PAYMENT")
    wage_bill = staff * 2_900
    for d in range(span - b.ri(0, 13), 0, -14):
        b.txn(b.days_ago(d), wage_bill * rng.uniform(0.97, 1.04), "ach", acct, payroll,
              memo="PAYROLL BATCH")
    for d in range(span - b.ri(0, 29), 0, -30):
        b.txn(b.days_ago(d), monthly_revenue * rng.uniform(0.05, 0.08), "ach", acct, landlord,
              memo="LEASE PAYMENT")
        b.txn(b.days_ago(max(1, d - 10)), monthly_revenue * rng.uniform(0.03, 0.06), "ach", acct,
              irs, memo="FEDERAL TAX DEPOSIT")


def name_variant(b: CaseBuilder, name: str) -> str:
    """A different person's name that screening software would flag against `name`."""
    first, _, last = name.partition(" ")
    if first in vocab.NAME_VARIANTS:
        return f"{vocab.NAME_VARIANTS[first]} {last}"
    if last in vocab.NAME_VARIANTS:
        return f"{first} {vocab.NAME_VARIANTS[last]}"
    if b.rng.random() < 0.5:
        return f"{first} {b.pick('ABCDEHJKMRST')}. {last}"
    return f"{b.pick(vocab.FIRST_NAMES)} {last}"


def decoys(b: CaseBuilder, people: list[Entity], account: Account) -> None:
    """`knobs.decoys` distractions that look like red flags but are not: mostly innocent
    one-off transfers; a namesake on a sanctions list or in the news only at the rate real
    screening raises one (a few percent of customers; `NAMESAKE_*_RATE`, docs/world.md)."""
    rng = b.rng
    persons = [p for p in people if p.kind == "person"] or people
    for i in range(b.knobs.decoys):
        target = persons[i % len(persons)]
        u = rng.random()
        if u < NAMESAKE_SANCTIONS_RATE:  # near-miss sanctions name: DOB and country differ
            b.watch("sanctions", name_variant(b, target.name) if rng.random() < 0.6
                    else target.name, b.pick(("IR", "SY", "VE", "RU", "KP", "CU")),
                    f"SDN list, programme {b.pick(SANCTIONS_PROGRAMS)}",
                    dob=b.dob(30, 75))
        elif u < NAMESAKE_SANCTIONS_RATE + NAMESAKE_MEDIA_RATE:  # a namesake in the news
            b.watch("adverse_media", target.name if rng.random() < 0.5
                    else name_variant(b, target.name),
                    b.pick(("GB", "AU", "CA", "ZA", "IE")),
                    f"{target.name.split()[-1]} {b.pick(NEWS_HEADLINES)} "
                    f"({b.pick(('Daily Courier', 'Financial Ledger', 'Metro Herald'))})",
                    dob=b.dob(25, 80))
        else:  # innocent one-off transfer from abroad, e.g. family support or a refund
            relative = b.person(customer=False, country=b.pick(("GB", "DE", "NG", "PH")))
            src = b.account(relative, ours=False)
            b.txn(b.history_day(), rng.uniform(1_500, 7_500), "wire", src, account,
                  memo=b.pick(("FAMILY SUPPORT", "LOAN REPAYMENT", "GIFT", "DEPOSIT REFUND")))
