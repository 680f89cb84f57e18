"""Shared surfaces: one sampler per monitoring rule draws everything the alert shows.

A monitoring rule fires on a pattern; the pattern does not know why it happened. So for each
rule ONE sampler, used by every kind that fires the rule — benign look-alike and suspicious
typology alike — draws from the case's RNG, before and without looking at the story:

- the subject (person or company, at a fixed rate per rule) and its KYC file: occupation or
  business type, declared income or turnover, incorporation date and address (formation-agent
  addresses and no-staff companies occur in both classes), directors, risk rating, PEP role,
  expected activity (stale, noisy, never the label);
- the alerted transactions: memo text, amounts and their formatting, channels, counts, timing,
  window, branches, depositors, counterparties and their countries, and the alert figures;
- the ledger around them: background banking, whether the same routine runs through the
  history, the wire that follows the alerted cash, the trade documents behind trade payments;
- `company_like`: the one factory for every other company the story may add (counterparties,
  the subject's holdings, a trace's last party, a device's co-user), so no story writes a
  company that looks different from the ones the surface wrote.

The story (`scenarios.story`) then writes the rest of the world — source-of-funds documents,
traces beyond the bank, device logins, registry links, watchlist entries, market prices — and
decides, only there, whether those views corroborate the surface or expose a cover story.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta

from memex.scenarios import vocab
from memex.scenarios.background import business_banking, personal_banking
from memex.scenarios.builder import BY_TIME, CaseBuilder
from memex.scenarios.difficulty import ALERT_WINDOW_DAYS
from memex.scenarios.manual import CTR_THRESHOLD_USD, ELDER_ACTIVITY_MULTIPLE
from memex.scenarios.model import Account, AlertRule, Entity, Transaction
from memex.scenarios.rules import (
    CASH_AGGREGATE,
    ELDER_ACTIVITY,
    FUNDS_FANOUT,
    FUNNEL_DEPOSITS,
    HIGH_RISK_TRADE,
    HUB_TRADE,
    LOAN_INFLOW,
    PEP_TRANSFER,
    PROPERTY_PURCHASE,
)
from memex.scenarios.truth import RedFlag


@dataclass
class Surface:
    """What a rule's sampler drew: the alert's content and the handles a story needs."""

    rule: AlertRule
    subject: Entity
    account: Account
    alert_txns: list[Transaction]
    figures: dict[str, float]
    directors: list[Entity]
    counterparties: list[Entity]        # the other side of the alerted transactions
    traced: Transaction                  # the wire a trace cross-check follows
    trace_direction: str                 # "onward" or "origin"
    flow_total: float                    # what a source-of-funds document must explain
    resample_total: Callable[[], float]  # an independent draw of `flow_total`
    doc_kinds: tuple[str, ...]           # supporting-document kinds for this rule and subject
    doc_counterparty: str | None
    company_like: Callable[[], Entity]
    people: list[Entity] = field(default_factory=list)
    flags: list[RedFlag] = field(default_factory=list)
    commodity: str | None = None
    unit_price: float | None = None
    customs_ids: tuple[str, ...] = ()
    partner: Entity | None = None
    payee: Entity | None = None          # the new payee of an older customer's payments


def _log_uniform(b: CaseBuilder, lo: float, hi: float) -> float:
    return math.exp(b.rng.uniform(math.log(lo), math.log(hi)))


def _incorporation(b: CaseBuilder) -> str:
    """Incorporation dates: recent in about a third of companies, whatever their story."""
    return b.past_date(90, 700) if b.rng.random() < 0.35 else b.past_date(1500, 9000)


FANOUT_HEADCOUNT = {name: staff for name, _, staff in vocab.FANOUT_BUSINESSES}


def _headcount(b: CaseBuilder, business_type: str, turnover: float) -> int:
    """Staff plausible for the business: none to a few in a holding or trading shell, the
    sector's size for the large payroll employers, else turnover over sales per employee."""
    if business_type in vocab.HOLDING_BUSINESS_TYPES:
        return b.pick((0, 0, 1, 2, 3))
    if business_type in FANOUT_HEADCOUNT:
        return round(FANOUT_HEADCOUNT[business_type] * b.rng.uniform(0.7, 1.3))
    return max(2, round(turnover / _log_uniform(b, *vocab.SALES_PER_EMPLOYEE_USD)))


def _at_least(b: CaseBuilder, staff: int, floor: int) -> int:
    return staff if staff >= floor else floor + b.pick((0, 1, 3, 8))


def _company_subject(b: CaseBuilder, business: tuple[str, float], *, country: str = "US",
                     expected: dict[str, float], lead: Entity | None = None,
                     risk_rating: str | None = None, min_staff: int = 0,
                     ) -> tuple[Entity, list[Entity]]:
    rng = b.rng
    btype, turnover = business
    turnover = round(turnover * rng.uniform(0.6, 1.6), -3)
    directors = ([lead] if lead else []) + [
        b.person(customer=False, country=rng.choice((country, country, "GB", "CY")))
        for _ in range(1 + (rng.random() < 0.4))]
    agent = rng.random() < 0.3 and country in vocab.FORMATION_AGENT_ADDRESSES
    subject = b.company(
        country=country, shell=rng.random() < 0.3,
        address=vocab.FORMATION_AGENT_ADDRESSES[country] if agent else b.street_address(country),
        incorporation_date=_incorporation(b), customer_since=b.past_date(60, 3000),
        business_type=btype, declared_annual_turnover_usd=turnover,
        employees=_at_least(b, _headcount(b, btype, turnover), min_staff),
        directors=tuple(d.id for d in directors),
        risk_rating=risk_rating or rng.choice(("low", "low", "medium", "high")), **expected)
    return subject, directors


def _person_subject(b: CaseBuilder, occupation: tuple[str, float], *, country: str = "US",
                    **kyc) -> Entity:
    rng = b.rng
    fields = dict(occupation=occupation[0],
                  declared_annual_income_usd=float(round(occupation[1] * rng.uniform(0.8, 1.3),
                                                          -3)),
                  risk_rating=rng.choice(("low", "low", "medium", "high")),
                  customer_since=b.past_date(60, 4000))
    fields.update(kyc)
    if "date_of_birth" not in fields:
        fields["date_of_birth"] = b.dob(*vocab.OCCUPATION_AGES.get(occupation[0],
                                                                  vocab.WORKING_AGES))
    return b.person(country=country, **fields)


def _company_factory(b: CaseBuilder, countries: tuple[str, ...], shell_share: float,
                     styles: tuple[str, ...] = ()) -> Callable[[], Entity]:
    """One maker for every non-customer company of a rule's cases."""

    def make() -> Entity:
        rng = b.rng
        country = rng.choice(countries)
        style = rng.choice(styles) if styles else ""
        name = None
        if style == "escrow":
            name = b._unique(lambda: f"{b.pick(vocab.COMPANY_WORDS_A)} Title & Escrow "
                                     f"{vocab.LEGAL_SUFFIX.get(country, 'Ltd')}")
        elif style == "law":
            name = b._unique(lambda: f"{b.pick(vocab.LAST_NAMES)} & Partners Solicitors")
        shell = style == "shell" or (not styles and rng.random() < shell_share)
        agent = shell and country in vocab.FORMATION_AGENT_ADDRESSES and rng.random() < 0.7
        return b.company(customer=False, country=country, shell=shell, name=name,
                         address=vocab.FORMATION_AGENT_ADDRESSES[country] if agent
                         else b.street_address(country),
                         incorporation_date=_incorporation(b))
    return make


def _expected(b: CaseBuilder, total: float, cash: bool) -> dict[str, float]:
    """Expected monthly activity recorded at onboarding: stale and noisy for everyone."""
    noisy = round(total * _log_uniform(b, 0.4, 2.5), -2)
    return {"expected_monthly_cash_usd": noisy if cash else 0.0,
            "expected_monthly_wires_usd": round(total * _log_uniform(b, 0.3, 2.0), -3)
            if not cash else float(b.pick((0.0, 5_000.0, 20_000.0)))}


# ---- TM-CASH-01 -------------------------------------------------------------------------------

CASH_MEMOS = {"person": ("CASH DEPOSIT",), "company": ("CASH DEPOSIT", "BUSINESS CASH DEPOSIT")}
SELF_EMPLOYED = (("self-employed contractor", 70_000), ("market trader", 45_000),
                 ("taxi owner-operator", 52_000), ("hair salon owner", 60_000),
                 ("used-car dealer", 90_000))
SELF_EMPLOYED_NAMES = frozenset(name for name, _ in SELF_EMPLOYED)


def _cash_amounts(b: CaseBuilder) -> list[float]:
    """One alert's deposits: a just-below-$10,000 style or a takings style, then topped up
    until the rule's $25,000 aggregate is cleared."""
    rng, k = b.rng, b.knobs
    n = b.ri(*k.cash_deposits)
    near = rng.random() < 0.5
    level = _log_uniform(b, 2_800, 9_500)
    out = []
    while len(out) < n or sum(out) <= 26_000:
        if near:
            step = b.pick((10, 50, 100))
            raw = CTR_THRESHOLD_USD - rng.uniform(10, k.threshold_gap_usd)
            out.append(float(min(CTR_THRESHOLD_USD - step, round(raw / step) * step)))
        else:
            out.append(round(level * rng.lognormvariate(0, 0.3), 2))
    return out


def cash_surface(b: CaseBuilder) -> Surface:
    rng, k = b.rng, b.knobs
    person = rng.random() < 0.4
    amounts = _cash_amounts(b)
    total = sum(amounts)
    expected = _expected(b, total, cash=True)
    if person:
        occupation = rng.choice(vocab.OCCUPATIONS_SALARIED + SELF_EMPLOYED)
        subject = _person_subject(b, occupation, employer=b.company_name("US"), **expected)
        directors: list[Entity] = []
        acct = b.account(subject, ours=True)
        personal_banking(b, subject, acct, subject.declared_annual_income_usd or 50_000)
    else:
        subject, directors = _company_subject(b, rng.choice(vocab.CASH_BUSINESSES),
                                              expected=expected)
        acct = b.account(subject, ours=True, kind="business")
        business_banking(b, subject, acct, (subject.declared_annual_turnover_usd or 6e5) / 12,
                         card_share=0.6, staff=max(2, min(subject.employees or 2, 40)))
    first = subject if person else directors[0]
    conductors = [first] + [b.person(customer=False) for _ in range(
        rng.choices((0, 1, 2), (0.55, 0.3, 0.15))[0])]
    branch_city = b.pick(vocab.BRANCHES)
    branches = [branch_city] + rng.sample([x for x in vocab.BRANCHES if x != branch_city],
                                          b.ri(1, k.branches) - 1)
    memo = b.pick(CASH_MEMOS[subject.kind])
    hours = (8, 18) if rng.random() < 0.5 else (15, 20)
    last = b.ri(2, max(2, 28 - k.spread_days))
    deposits = sorted((b.txn(b.days_ago(last + b.ri(0, k.spread_days)), amount, "cash", None,
                             acct, conducted_by=conductors[i % len(conductors)],
                             branch=branches[i % len(branches)], memo=memo, hours=hours)
                       for i, amount in enumerate(amounts)), key=BY_TIME)
    if rng.random() < 0.5:  # the same routine runs through the history, months back
        for d in range(ALERT_WINDOW_DAYS + b.ri(2, 6), ALERT_WINDOW_DAYS + k.history_days,
                       b.ri(3, 7)):
            b.txn(b.days_ago(d), b.pick(amounts) * rng.uniform(0.9, 1.1) if rng.random() < 0.5
                  else b.pick(amounts), "cash", None, acct, conducted_by=first,
                  branch=branch_city, memo=memo, hours=hours)
    company_like = _company_factory(b, ("US", "US", "US", "MX", "DO", "CO", "GB", "AE", "PA",
                                        "CY"), 0.4)
    payee = company_like()
    wire = b.txn(b.days_ago(b.ri(1, last)), total * rng.uniform(0.55, 0.95), "wire", acct,
                 b.account(payee, ours=False),
                 memo=b.pick(("VEHICLE PURCHASE", "PROPERTY DEPOSIT", "INVESTMENT",
                              f"INVOICE {b.ri(1000, 9999)}", "SUPPLIER PAYMENT",
                              "LOAN REPAYMENT")))
    flags = []
    near = [t for t in deposits if CTR_THRESHOLD_USD - 1_500 <= t.amount_usd < CTR_THRESHOLD_USD]
    if len(near) >= 2:
        ids = tuple(t.id for t in near)
        flags.append(RedFlag(code="CASH_BELOW_CTR_THRESHOLD", evidence_ids=ids, carrier_ids=ids))
    if len({t.branch for t in deposits}) > 1:
        ids = tuple(t.id for t in deposits)
        flags.append(RedFlag(code="MULTI_BRANCH_CASH", evidence_ids=ids, carrier_ids=ids))
    others = tuple(t.id for t in deposits if t.conducted_by != first.id)
    if others:
        flags.append(RedFlag(code="MULTIPLE_DEPOSITORS", evidence_ids=others, carrier_ids=others))
    kinds = ("point-of-sale cash summary", "audited accounts extract", "sales tax return") \
        if not person else ("bill of sale", "business income statement") \
        if subject.occupation in SELF_EMPLOYED_NAMES else (
            "bill of sale", "casino cash-out receipt", "inheritance letter")
    return Surface(
        rule=CASH_AGGREGATE, subject=subject, account=acct, alert_txns=deposits,
        figures={"cash_deposits": len(deposits), "cash_total_usd": total,
                 "largest_deposit_usd": max(t.amount_usd for t in deposits)},
        directors=directors, counterparties=[], traced=wire, trace_direction="onward",
        flow_total=total, resample_total=lambda: sum(_cash_amounts(b)), doc_kinds=kinds,
        doc_counterparty=None, company_like=company_like,
        people=[subject, *directors, *conductors[1:]], flags=flags)


# ---- TM-FLOW-02 -------------------------------------------------------------------------------

OUTFLOW_MEMOS = ("INVOICE SETTLEMENT", "SERVICES RENDERED", "PROJECT FEE", "TRADE ADVANCE",
                 "PO SETTLEMENT", "SUPPLIER PAYMENT")
FANOUT_OPERATORS = tuple((b, t) for b, t, _ in vocab.FANOUT_BUSINESSES) + \
    vocab.NON_CASH_BUSINESSES
# Where an operating company's suppliers and contractors sit.
SUPPLIER_COUNTRIES = ("US", "US", "US", "US", "US", "CA", "MX", "GB", "DE")
LOAN_BUSINESSES = FANOUT_OPERATORS + tuple((s, 3_000_000) for s in vocab.SHELL_BUSINESS_TYPES)


def _inflow_amounts(b: CaseBuilder) -> list[float]:
    return [_log_uniform(b, 110_000, 1_600_000) for _ in range(1 + (b.rng.random() < 0.4))]


def flow_surface(b: CaseBuilder) -> Surface:
    rng, k = b.rng, b.knobs
    person = rng.random() < 0.25
    amounts = _inflow_amounts(b)
    total_in = sum(amounts)
    expected = _expected(b, total_in, cash=False)
    n_out = b.ri(4, 7)
    if person:
        subject = _person_subject(b, rng.choice(vocab.OCCUPATIONS_AFFLUENT),
                                  employer=b.company_name("US"), **expected)
        directors: list[Entity] = []
        acct = b.account(subject, ours=True, kind=rng.choice(("checking", "private_banking")))
        personal_banking(b, subject, acct, subject.declared_annual_income_usd or 300_000)
    else:
        # Manual 8.2: an established operating company whose recipients fit its headcount,
        # whatever its story (layering runs through operating fronts as well).
        subject, directors = _company_subject(b, rng.choice(FANOUT_OPERATORS), expected=expected,
                                              min_staff=n_out)
        acct = b.account(subject, ours=True, kind="business")
        business_banking(b, subject, acct, (subject.declared_annual_turnover_usd or 3e6) / 12,
                         card_share=0.05, staff=max(2, min(subject.employees or 2, 40)))
    company_like = _company_factory(b, ("US", "US", "GB", "AE", "HK", "SG", "CY", "VG", "KY",
                                        "SC", "PA", "MY"), 0.5)
    payers = [company_like() for _ in amounts]
    payer_accts = [b.account(p, ours=False) for p in payers]
    supplier_like = company_like if person else _company_factory(b, SUPPLIER_COUNTRIES, 0.1)
    beneficiaries = [supplier_like() for _ in range(n_out)]
    ben_accts = [b.account(x, ours=False) for x in beneficiaries]
    in_memo, doc_kind = b.pick(vocab.INFLOW_PERSON if person else vocab.INFLOW_COMPANY)
    out_memo = b.pick(OUTFLOW_MEMOS)
    day = b.ri(6, 24)

    def cycle(start: int, scale: float) -> tuple[list[Transaction], list[Transaction]]:
        ins = [b.txn(b.days_ago(start + i), a * scale, "wire", src, acct,
                     memo=f"{in_memo} {b.ri(10000, 99999)}" if in_memo == "REMITTANCE INV"
                     else in_memo) for i, (a, src) in enumerate(zip(amounts, payer_accts,
                                                                   strict=True))]
        kept = rng.uniform(0.02, 0.35)
        weights = [rng.uniform(0.5, 1.5) for _ in ben_accts]
        outs = [b.txn(b.days_ago(max(1, start - b.ri(1, 3))),
                      total_in * scale * (1 - kept) * w / sum(weights), "wire", acct, dst,
                      memo=f"PO {b.ri(4000, 9999)} SETTLEMENT" if out_memo == "PO SETTLEMENT"
                      else out_memo) for w, dst in zip(weights, ben_accts, strict=True)]
        return ins, outs

    inflows, outflows = cycle(day, 1.0)
    if rng.random() < 0.5:  # the same cycle repeats through the history
        for start in range(day + 30, ALERT_WINDOW_DAYS + k.history_days, 30):
            cycle(start, rng.uniform(0.8, 1.2))
    else:  # or the recipients are long-standing payees, paid now and then (manual 8.2)
        for t in outflows:
            b.txn(b.history_day(), t.amount_usd * rng.uniform(0.3, 1.0), "wire", acct,
                  b.acct(t.to_account or ""), memo=t.memo)
    ids = tuple(t.id for t in inflows + outflows)
    flags = [RedFlag(code="RAPID_PASS_THROUGH", evidence_ids=ids, carrier_ids=ids)]
    return Surface(
        rule=FUNDS_FANOUT, subject=subject, account=acct, alert_txns=inflows + outflows,
        figures={"inflow_usd": sum(t.amount_usd for t in inflows),
                 "outgoing_transfers": len(outflows),
                 "outflow_usd": sum(t.amount_usd for t in outflows)},
        directors=directors, counterparties=payers + beneficiaries,
        traced=max(outflows, key=lambda t: (t.amount_usd, t.id)), trace_direction="onward",
        flow_total=sum(t.amount_usd for t in inflows),
        resample_total=lambda: sum(_inflow_amounts(b)), doc_kinds=(doc_kind,),
        doc_counterparty=payers[0].name, company_like=company_like,
        people=[subject, *directors], flags=flags)


# ---- TM-TRADE-03 ------------------------------------------------------------------------------

SOLE_TRADERS = (("sole trader, import and export", 140_000),
                ("sole trader, commodity brokerage", 180_000))


def trade_surface(b: CaseBuilder) -> Surface:
    return _trade_like(b, HIGH_RISK_TRADE, vocab.HIGH_RISK_SUPPLIER_COUNTRIES,
                       vocab.SUPPLIER_COMMODITIES, "HIGH_RISK_JURISDICTION")


def hub_trade_surface(b: CaseBuilder) -> Surface:
    """TM-SANC-07: the trade surface with a partner in a transshipment jurisdiction trading
    Common High Priority List goods (FinCEN/BIS alert FIN-2022-A003)."""
    return _trade_like(b, HUB_TRADE, vocab.TRANSSHIPMENT_HUBS, vocab.HUB_COMMODITIES,
                       "TRANSSHIPMENT_HUB")


def _trade_like(b: CaseBuilder, rule: AlertRule, countries: tuple[str, ...],
                commodities_of: dict[str, tuple[str, ...]], surface_code: str) -> Surface:
    rng, k = b.rng, b.knobs
    person = rng.random() < 0.3
    company_like = _company_factory(b, countries, 0.25)
    partner = company_like()
    commodity = rng.choice(commodities_of[partner.country])
    _, unit, low, high, lots = next(c for c in vocab.COMMODITIES if c[0] == commodity)
    # Commodity prices move a lot over two years; the case's level is its own draw.
    price = (low + high) / 2 * _log_uniform(b, 0.55, 1.8)
    n_window = b.ri(1, 3)
    qtys = [float(b.ri(*lots)) for _ in range(n_window)]
    total = sum(q * price for q in qtys)
    expected = _expected(b, total, cash=False)
    if person:
        subject = _person_subject(b, rng.choice(SOLE_TRADERS), **expected)
        directors: list[Entity] = []
        acct = b.account(subject, ours=True)
        personal_banking(b, subject, acct, subject.declared_annual_income_usd or 140_000)
    else:
        subject, directors = _company_subject(
            b, (rng.choice(("import and export", "commodity trading", "wholesale distribution")),
                b.pick((3e6, 5e6, 8e6, 12e6))), expected=expected)
        acct = b.account(subject, ours=True, kind="business")
        business_banking(b, subject, acct, (subject.declared_annual_turnover_usd or 3e6) / 12,
                         card_share=0.02, staff=max(2, min(subject.employees or 2, 40)))
    partner_acct = b.account(partner, ours=False)
    exporting = rng.random() < 0.5
    exporter, importer = (subject, partner) if exporting else (partner, subject)
    payer, payee = (partner_acct, acct) if exporting else (acct, partner_acct)

    def shipment(when, qty: float, unit_price: float):
        ref = f"SHP-{b.rng.getrandbits(32):08X}"
        inv = b.doc("invoice", ref, when, exporter, importer, commodity, qty, unit, unit_price)
        b.doc("bill_of_lading", ref, when + timedelta(days=b.ri(2, 9)), exporter, importer,
              commodity, qty, unit, vessel=b.pick(vocab.VESSELS))
        cus = b.doc("customs_declaration", ref, when + timedelta(days=b.ri(5, 12)), exporter,
                    importer, commodity, qty, unit, unit_price)
        return inv, cus

    for _ in range(k.legit_shipments):  # earlier trade with the same partner
        when = b.history_day()
        inv, _ = shipment(when, float(b.ri(*lots)), price * rng.uniform(0.9, 1.1))
        b.txn(when + timedelta(days=b.ri(1, 5)), inv.total_usd or 0.0, "wire", payer, payee,
              memo=f"PAYMENT INVOICE {inv.id}", reference=inv.id)
    payments, customs = [], []
    for qty in qtys:
        when = b.window_day(8, 28)
        inv, cus = shipment(when, qty, price * rng.uniform(0.985, 1.015))
        customs.append(cus.id)
        payments.append(b.txn(when + timedelta(days=b.ri(1, 6)), inv.total_usd or 0.0, "wire",
                              payer, payee, memo=f"PAYMENT INVOICE {inv.id}", reference=inv.id))
    payments.sort(key=BY_TIME)
    ids = tuple(t.id for t in payments)
    flags = [RedFlag(code=surface_code, evidence_ids=(partner.id, *ids), carrier_ids=ids)]
    return Surface(
        rule=rule, subject=subject, account=acct, alert_txns=payments,
        figures={"trade_payments_usd": sum(t.amount_usd for t in payments),
                 "payments": len(payments)},
        directors=directors, counterparties=[partner], traced=payments[0],
        trace_direction="origin" if exporting else "onward", flow_total=total,
        resample_total=lambda: total, doc_kinds=("sales contract",),
        doc_counterparty=partner.name, company_like=company_like, people=[subject, *directors],
        flags=flags, commodity=commodity, unit_price=price, customs_ids=tuple(customs),
        partner=partner)


# ---- TM-PEP-04 --------------------------------------------------------------------------------

PEP_MEMOS = ("ESCROW CLOSING PROCEEDS", "ESTATE DISTRIBUTION", "CONSULTANCY FEE",
             "ADVISORY SERVICES", "LOAN ADVANCE", "DIVIDEND DISTRIBUTION", "SALE PROCEEDS")


def _pep_amount(b: CaseBuilder) -> float:
    amount = _log_uniform(b, 260_000, 3_000_000)
    return round(amount, -3) if b.rng.random() < 0.5 else amount


def pep_surface(b: CaseBuilder) -> Surface:
    rng = b.rng
    country = rng.choice(vocab.PEP_COUNTRIES)
    person = rng.random() < 0.75
    amount = _pep_amount(b)
    expected = _expected(b, amount / 4, cash=False)
    role = dict(position=rng.choice(vocab.PEP_POSITIONS), country=country,
                since=b.past_date(700, 4000),
                until=None if rng.random() < 0.6 else b.past_date(100, 600))
    if person:
        subject = _person_subject(b, ("public official", float(b.pick((68_000, 95_000, 120_000,
                                                                        150_000)))),
                                  country=country, pep=role,
                                  employer=f"Government of {vocab.COUNTRY_NAMES[country]}",
                                  risk_rating="high", **expected)
        directors: list[Entity] = []
        acct = b.account(subject, ours=True, kind="private_banking")
        personal_banking(b, subject, acct, subject.declared_annual_income_usd or 100_000)
        pep = subject
    else:
        pep = b.person(customer=False, country=country, pep=role, occupation="public official")
        subject, directors = _company_subject(b, ("private investment company", 2e6),
                                              country=country, expected=expected, lead=pep,
                                              risk_rating="high")
        acct = b.account(subject, ours=True, kind="business")
        business_banking(b, subject, acct, (subject.declared_annual_turnover_usd or 2e6) / 12,
                         card_share=0.0, staff=2)
    b.watch("pep", pep.name, country, pep.pep.position if pep.pep else "public official",
            dob=pep.date_of_birth)
    countries = ("US", "GB", "CH", "SG", "AE", "CY", "VG", "PA")
    company_like = _company_factory(b, countries, 0.0, styles=("escrow", "law", "plain", "shell"))
    # The transfer's memo, the document that would evidence it and who pays it belong together
    # (manual 5.3: the amount, date and counterparty of the transfer match the document).
    memo, doc_kind, payer_style = b.pick(vocab.PEP_FUNDING)
    payer = _company_factory(b, countries, 0.0, styles=(payer_style,))()
    src = b.account(payer, ours=False, kind="escrow" if payer_style == "escrow" else "business")
    transfer = b.txn(b.window_day(4, 25), amount, "wire", src, acct, memo=memo)
    # Smaller inflows in the window, below the rule: the alert lists every transfer it counts.
    smaller = [b.txn(b.window_day(2, 28), _log_uniform(b, 20_000, 240_000), "wire",
                     b.account(company_like(), ours=False), acct, memo=b.pick(PEP_MEMOS))
               for _ in range(b.ri(0, 2))]
    if rng.random() < 0.5:  # large spending after the money arrives
        for memo, share in (("PROPERTY PURCHASE ESCROW", 0.45), ("YACHT CHARTER DEPOSIT", 0.12),
                            ("FINE ART AUCTION", 0.08)):
            dealer = company_like()
            b.txn(b.window_day(1, 3), amount * share * rng.uniform(0.8, 1.1), "wire", acct,
                  b.account(dealer, ours=False), memo=memo)
    return Surface(
        rule=PEP_TRANSFER, subject=subject, account=acct,
        alert_txns=sorted([transfer, *smaller], key=BY_TIME),
        figures={"transfer_usd": transfer.amount_usd, "transfers_in_window": 1 + len(smaller)},
        directors=directors, counterparties=[payer], traced=transfer, trace_direction="origin",
        flow_total=amount, resample_total=lambda: _pep_amount(b), doc_kinds=(doc_kind,),
        doc_counterparty=payer.name, company_like=company_like, people=[subject, *directors])


# ---- TM-FUNNEL-05 -----------------------------------------------------------------------------

FUNNEL_IN_MEMOS = ("P2P TRANSFER", "MOBILE DEPOSIT", "ONLINE TRANSFER")
FUNNEL_OUT_MEMOS = ("INVENTORY PURCHASE", "SUPPLIER PAYMENT", "WHOLESALE ORDER",
                    "INVOICE SETTLEMENT", "TRANSFER")


def _funnel_amounts(b: CaseBuilder) -> list[float]:
    """Ten to twenty deposits of a few hundred to a few thousand dollars, over $15,000."""
    level = _log_uniform(b, 900, 3_200)
    out: list[float] = []
    while len(out) < b.ri(10, 14) + b.knobs.branches or sum(out) <= 16_000:
        out.append(round(level * b.rng.lognormvariate(0, 0.35), b.pick((2, 0, -1))))
    return out


def funnel_surface(b: CaseBuilder) -> Surface:
    """TM-FUNNEL-05: deposits arriving from many branches or senders, most of it sent on
    within days (FinCEN FIN-2014-A005 funnel accounts; the same shape as a marketplace
    seller's or a travelling salesperson's receipts)."""
    rng, k = b.rng, b.knobs
    person = rng.random() < 0.6
    amounts = _funnel_amounts(b)
    total = sum(amounts)
    expected = _expected(b, total, cash=True)
    if person:
        subject = _person_subject(b, rng.choice(vocab.DISPERSED_EARNERS),
                                  employer=b.company_name("US"), **expected)
        directors: list[Entity] = []
        acct = b.account(subject, ours=True)
        personal_banking(b, subject, acct, subject.declared_annual_income_usd or 50_000)
    else:
        subject, directors = _company_subject(b, rng.choice(vocab.DISPERSED_BUSINESSES),
                                              expected=expected)
        acct = b.account(subject, ours=True, kind="business")
        business_banking(b, subject, acct, (subject.declared_annual_turnover_usd or 9e5) / 12,
                         card_share=0.3, staff=max(2, min(subject.employees or 2, 40)))
    senders = [b.person(customer=False) for _ in range(b.ri(3, 6 + k.branches))]
    sender_accts = [b.account(p, ours=False) for p in senders]
    branches = rng.sample(vocab.BRANCHES, min(len(vocab.BRANCHES), b.ri(3, 3 + k.branches)))
    cash_share = rng.uniform(0.2, 0.8)
    last = b.ri(2, 8)
    deposits = []
    for i, amount in enumerate(amounts):
        when = b.days_ago(last + b.ri(1, k.spread_days + 6))
        j = i % len(senders)
        if rng.random() < cash_share:
            deposits.append(b.txn(when, amount, "cash", None, acct, conducted_by=senders[j],
                                  branch=branches[i % len(branches)], memo="CASH DEPOSIT"))
        else:
            deposits.append(b.txn(when, amount, "ach", sender_accts[j], acct,
                                  memo=b.pick(FUNNEL_IN_MEMOS)))
    deposits.sort(key=BY_TIME)
    company_like = _company_factory(b, ("US", "US", "US", "MX", "CN", "HK", "AE", "CO", "GB"),
                                    0.4)
    payees = [company_like() for _ in range(b.ri(1, 3))]
    weights = [rng.uniform(0.5, 1.5) for _ in payees]
    sent = total * rng.uniform(0.72, 0.95)
    memo = b.pick(FUNNEL_OUT_MEMOS)
    outflows = [b.txn(b.days_ago(b.ri(1, last)), sent * w / sum(weights), "wire", acct,
                      b.account(p, ours=False), memo=memo)
                for p, w in zip(payees, weights, strict=True)]
    if rng.random() < 0.5:  # the same routine runs through the history, smaller
        for d in range(ALERT_WINDOW_DAYS + b.ri(2, 6), ALERT_WINDOW_DAYS + k.history_days,
                       b.ri(4, 9)):
            j = b.ri(0, len(senders) - 1)
            b.txn(b.days_ago(d), b.pick(amounts) * rng.uniform(0.5, 0.9), "ach",
                  sender_accts[j], acct, memo=b.pick(FUNNEL_IN_MEMOS))
    dep_ids = tuple(t.id for t in deposits)
    out_ids = tuple(t.id for t in outflows)
    flags = [RedFlag(code="FUNNEL_ACCOUNT_ACTIVITY", evidence_ids=dep_ids, carrier_ids=dep_ids),
             RedFlag(code="RAPID_PASS_THROUGH", evidence_ids=dep_ids + out_ids,
                     carrier_ids=out_ids)]
    kinds = (vocab.FUNNEL_DOCS.get(subject.occupation if person else subject.business_type or "",
                             "audited accounts extract"),)
    return Surface(
        rule=FUNNEL_DEPOSITS, subject=subject, account=acct, alert_txns=deposits + outflows,
        figures={"deposits": len(deposits), "deposits_usd": total,
                 "locations_and_senders": len({t.branch or t.from_account for t in deposits}),
                 "sent_on_usd": sum(t.amount_usd for t in outflows)},
        directors=directors, counterparties=payees,
        traced=max(outflows, key=lambda t: (t.amount_usd, t.id)), trace_direction="onward",
        flow_total=total, resample_total=lambda: sum(_funnel_amounts(b)), doc_kinds=kinds,
        doc_counterparty=None, company_like=company_like, people=[subject, *directors],
        flags=flags)


# ---- TM-LOAN-06 -------------------------------------------------------------------------------

LOAN_OUT_MEMOS = ("INVESTMENT", "INTERCOMPANY TRANSFER", "CONSULTANCY FEE", "ADVANCE PAYMENT",
                  "CASH POOL SWEEP")


def _loan_amount(b: CaseBuilder) -> float:
    amount = _log_uniform(b, 160_000, 2_500_000)
    return round(amount, -3) if b.rng.random() < 0.5 else amount


def loan_surface(b: CaseBuilder) -> Surface:
    """TM-LOAN-06: money goes out, and about as much comes back as a loan or a capital
    contribution (the shape of FATF's loan-back and of intra-group funding alike)."""
    rng = b.rng
    person = rng.random() < 0.2
    amount = _loan_amount(b)
    expected = _expected(b, amount / 3, cash=False)
    if person:
        subject = _person_subject(b, rng.choice(vocab.OCCUPATIONS_AFFLUENT),
                                  employer=b.company_name("US"), **expected)
        directors: list[Entity] = []
        acct = b.account(subject, ours=True, kind=rng.choice(("checking", "private_banking")))
        personal_banking(b, subject, acct, subject.declared_annual_income_usd or 400_000)
    else:
        country = rng.choice(("US", "US", "US", "GB", "CY"))
        subject, directors = _company_subject(b, rng.choice(LOAN_BUSINESSES), country=country,
                                              expected=expected)
        acct = b.account(subject, ours=True, kind="business")
        business_banking(b, subject, acct, (subject.declared_annual_turnover_usd or 3e6) / 12,
                         card_share=0.05, staff=max(2, min(subject.employees or 2, 40)))
    company_like = _company_factory(b, ("US", "US", "GB", "CY", "VG", "KY", "LU", "AE", "SG",
                                        "MT"), 0.45)
    recipient, lender = company_like(), company_like()
    loan_memo, doc_kind = b.pick(vocab.LOAN_IN_PERSON if person else vocab.LOAN_IN_COMPANY)
    out_day = b.ri(14, 29)
    out = b.txn(b.days_ago(out_day), amount * rng.uniform(0.8, 1.2), "wire", acct,
                b.account(recipient, ours=False), memo=b.pick(LOAN_OUT_MEMOS))
    loan = b.txn(b.days_ago(max(1, out_day - b.ri(3, 12))), amount, "wire",
                 b.account(lender, ours=False, kind="business"), acct,
                 memo=loan_memo)
    if rng.random() < 0.5:  # an older facility being serviced, from another lender
        other = b.account(company_like(), ours=False, kind="business")
        for d in range(ALERT_WINDOW_DAYS + b.ri(1, 20), ALERT_WINDOW_DAYS + b.knobs.history_days,
                       30):
            b.txn(b.days_ago(d), amount * rng.uniform(0.01, 0.03), "wire", acct, other,
                  memo="LOAN REPAYMENT")
    txns = sorted((out, loan), key=BY_TIME)
    return Surface(
        rule=LOAN_INFLOW, subject=subject, account=acct, alert_txns=txns,
        figures={"loan_usd": loan.amount_usd, "prior_outgoing_usd": out.amount_usd,
                 "days_between": float((date_of(loan) - date_of(out)).days)},
        directors=directors, counterparties=[recipient, lender], traced=loan,
        trace_direction="origin", flow_total=amount, resample_total=lambda: _loan_amount(b),
        doc_kinds=(doc_kind,),
        doc_counterparty=lender.name, company_like=company_like, people=[subject, *directors])


def date_of(t: Transaction) -> date:
    return date.fromisoformat(t.timestamp[:10])


# ---- TM-RE-08 ---------------------------------------------------------------------------------

PROPERTY_BUSINESSES = (("residential property holding", 400_000),
                       ("real-estate investment", 1_500_000), ("family holding company", 800_000))
PURCHASE_MEMOS = ("PROPERTY PURCHASE ESCROW", "CLOSING FUNDS", "PURCHASE OF REAL PROPERTY",
                  "SETTLEMENT FUNDS")


def _purchase_price(b: CaseBuilder) -> float:
    return round(_log_uniform(b, 310_000, 3_500_000), -3)


def property_surface(b: CaseBuilder) -> Surface:
    """TM-RE-08: funds gathered into the buyer's account, then a purchase paid to a title or
    escrow agent with no mortgage lender in the flow (FinCEN geographic targeting orders: a
    $300,000 threshold for legal-entity purchases without bank financing)."""
    rng = b.rng
    person = rng.random() < 0.4
    price = _purchase_price(b)
    expected = _expected(b, price / 6, cash=False)
    if person:
        subject = _person_subject(b, rng.choice(vocab.OCCUPATIONS_AFFLUENT
                                                + vocab.OCCUPATIONS_SALARIED),
                                  employer=b.company_name("US"), **expected)
        directors: list[Entity] = []
        acct = b.account(subject, ours=True, kind=rng.choice(("checking", "private_banking")))
        personal_banking(b, subject, acct, subject.declared_annual_income_usd or 200_000)
    else:
        subject, directors = _company_subject(b, rng.choice(PROPERTY_BUSINESSES),
                                              expected=expected)
        acct = b.account(subject, ours=True, kind="business")
        business_banking(b, subject, acct, (subject.declared_annual_turnover_usd or 5e5) / 12,
                         card_share=0.0, staff=2)
    countries = ("US", "US", "US", "VG", "KY", "PA", "AE", "CY", "GB")
    company_like = _company_factory(b, countries, 0.0, styles=("law", "plain", "shell"))
    escrow = b.company(customer=False, name=b._unique(
        lambda: f"{b.pick(vocab.COMPANY_WORDS_A)} Title & Escrow LLC"))
    # One funding story: the memo, the document that would evidence it and who sends the money
    # belong together (manual 11.9). No mortgage lender: rule TM-RE-08 is the geographic
    # targeting orders' purchase without bank financing (manual 11.8).
    memo, doc_kind, funder_kind = b.pick(vocab.PROPERTY_FUNDING_PERSON if person
                                         else vocab.PROPERTY_FUNDING_COMPANY)
    if funder_kind == "relative":
        surname = subject.name.split()[-1]
        funders = [b.person(customer=False, country=rng.choice(("US", "US", "GB", "CA")),
                            name=b._unique(lambda: f"{b.pick(vocab.FIRST_NAMES)} {surname}"))
                   for _ in range(b.ri(1, 2))]
    elif funder_kind == "member":
        funders = [b.person(customer=False, country=rng.choice(("US", "US", "GB", "CY")))
                   for _ in range(b.ri(1, 3))]
    else:
        maker = _company_factory(b, countries, 0.0, styles=(funder_kind,))
        funders = [maker() for _ in range(b.ri(1, 2))]
    weights = [rng.uniform(0.4, 1.6) for _ in funders]
    funded = price * rng.uniform(1.0, 1.05)
    inflows = sorted((b.txn(b.window_day(8, 28), funded * w / sum(weights), "wire",
                            b.account(f, ours=False), acct, memo=memo)
                      for f, w in zip(funders, weights, strict=True)),
                     key=BY_TIME)
    purchase = b.txn(b.window_day(1, 7), price, "wire", acct,
                     b.account(escrow, ours=False, kind="escrow"), memo=b.pick(PURCHASE_MEMOS))
    kinds = (doc_kind,)
    flags = [RedFlag(code="ALL_CASH_PROPERTY_PURCHASE",
                     evidence_ids=(purchase.id, *(t.id for t in inflows)),
                     carrier_ids=(purchase.id,))]
    return Surface(
        rule=PROPERTY_PURCHASE, subject=subject, account=acct, alert_txns=[*inflows, purchase],
        figures={"purchase_usd": purchase.amount_usd, "funding_transfers": len(inflows),
                 "funding_usd": sum(t.amount_usd for t in inflows)},
        directors=directors,
        counterparties=[*(f for f in funders if f.kind == "company"), escrow],
        traced=max(inflows, key=lambda t: (t.amount_usd, t.id)), trace_direction="origin",
        flow_total=sum(t.amount_usd for t in inflows),
        resample_total=lambda: _purchase_price(b) * b.rng.uniform(1.0, 1.05), doc_kinds=kinds,
        doc_counterparty=funders[0].name, company_like=company_like,
        people=[subject, *directors, *(f for f in funders if f.kind == "person")],
        flags=flags)


# ---- TM-ELDER-09 ------------------------------------------------------------------------------

ELDER_MEMOS = ("HOME CARE SERVICES", "PERSONAL LOAN", "GIFT", "INVESTMENT OPPORTUNITY",
               "HOUSEHOLD EXPENSES", "MEDICAL BILLS")


def _elder_payments(b: CaseBuilder) -> list[float]:
    level = _log_uniform(b, 2_500, 16_000)
    return [round(level * b.rng.lognormvariate(0, 0.3), b.pick((2, -2))) for _ in
            range(b.ri(2, 5))]


def _prior_monthly_outgoing(b: CaseBuilder, acct: Account) -> float:
    """The account's average monthly outgoing over the ledger history before the window."""
    cutoff = b.days_ago(ALERT_WINDOW_DAYS).isoformat()
    out = sum(t.amount_usd for t in b.transactions
              if t.from_account == acct.id and t.timestamp[:10] < cutoff)
    return out / (b.knobs.history_days / 30)


def elder_surface(b: CaseBuilder) -> Surface:
    """TM-ELDER-09: an older customer's outgoing payments jump, to a payee first paid in the
    window (FinCEN advisory FIN-2022-A002; the same shape as documented family support). The
    alert's prior monthly average is the ledger's, and the window's outgoing exceeds it by the
    rule's multiple (manual 11.10)."""
    rng = b.rng
    amounts = _elder_payments(b)
    expected = _expected(b, sum(amounts) / 4, cash=False)
    subject = _person_subject(b, rng.choice(vocab.RETIREMENT_INCOME), date_of_birth=b.dob(66, 92),
                              employer="Social Security Administration", **expected)
    acct = b.account(subject, ours=True, kind=rng.choice(("checking", "savings")))
    personal_banking(b, subject, acct, subject.declared_annual_income_usd or 40_000, retired=True)
    prior = round(_prior_monthly_outgoing(b, acct), -1)
    cash = [float(b.pick((2_000, 2_500, 3_000, 5_000))) for _ in range(b.ri(0, 2))]
    floor = ELDER_ACTIVITY_MULTIPLE * prior * rng.uniform(1.1, 1.6) - sum(cash)
    if sum(amounts) < floor:  # a jump the rule sees, at the draw's own proportions
        amounts = [round(a * floor / sum(amounts), 2) for a in amounts]
    payee = b.person(customer=False, country=rng.choice(("US", "US", "US", "GB", "NG", "CA")))
    payee_acct = b.account(payee, ours=False)
    wire_first = rng.random() < 0.7
    payments = []
    for i, amount in enumerate(amounts):
        channel = "wire" if i == 0 and wire_first else b.pick(("wire", "cheque", "ach"))
        payments.append(b.txn(b.window_day(2, 28), amount, channel, acct, payee_acct,
                              memo=b.pick(ELDER_MEMOS)))
    if not any(t.channel == "wire" for t in payments):
        payments.append(b.txn(b.window_day(2, 28), b.pick(amounts), "wire", acct, payee_acct,
                              memo=b.pick(ELDER_MEMOS)))
    withdrawals = [b.txn(b.window_day(1, 28), amount, "cash", acct, None,
                         branch=b.pick(vocab.BRANCHES), memo="CASH WITHDRAWAL")
                   for amount in cash]
    txns = sorted(payments + withdrawals, key=BY_TIME)
    out = sum(t.amount_usd for t in txns)
    ids = tuple(t.id for t in payments)
    flags = [RedFlag(code="ELDER_ACTIVITY_CHANGE", evidence_ids=tuple(t.id for t in txns),
                     carrier_ids=ids)]
    company_like = _company_factory(b, ("US", "US", "US", "GB", "CA", "NG"), 0.3)
    return Surface(
        rule=ELDER_ACTIVITY, subject=subject, account=acct, alert_txns=txns,
        figures={"outgoing_usd_30d": out, "prior_monthly_outgoing_usd": prior,
                 "payments_to_new_payee": len(payments)},
        directors=[], counterparties=[], traced=max(
            (t for t in payments if t.channel == "wire"), key=lambda t: (t.amount_usd, t.id)),
        trace_direction="onward", flow_total=sum(t.amount_usd for t in payments),
        resample_total=lambda: sum(_elder_payments(b)), doc_kinds=("pension statement",),
        doc_counterparty=None, company_like=company_like, people=[subject], flags=flags,
        payee=payee)


SURFACES: dict[str, Callable[[CaseBuilder], Surface]] = {
    CASH_AGGREGATE.code: cash_surface,
    FUNDS_FANOUT.code: flow_surface,
    HIGH_RISK_TRADE.code: trade_surface,
    PEP_TRANSFER.code: pep_surface,
    FUNNEL_DEPOSITS.code: funnel_surface,
    LOAN_INFLOW.code: loan_surface,
    HUB_TRADE.code: hub_trade_surface,
    PROPERTY_PURCHASE.code: property_surface,
    ELDER_ACTIVITY.code: elder_surface,
}
