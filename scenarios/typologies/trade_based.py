"""Trade-based money laundering: value moved by misdescribing trade.

Variants (the customer is the importer for the first three, the exporter for the last two):
- `over_invoicing`: the customer pays far above market for genuine goods.
- `phantom_shipment`: an invoice is paid for goods that never shipped (no B/L, no customs).
- `multiple_invoicing`: one shipment is invoiced and paid twice.
- `under_invoicing`: the customer sells far below market; the difference moves abroad.
- `third_party_payment`: the customer's invoice is paid by a company that is on no document.

The illicit shipment hides among genuine, fairly priced ones (more with difficulty), and the
mispricing factor shrinks towards the manual's 25 percent tolerance as difficulty rises.
"""

from __future__ import annotations

from memex.scenarios.background import business_banking, decoys
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.rules import HIGH_RISK_TRADE
from memex.scenarios.shipments import (
    fair_price,
    lot,
    partner_country_and_commodity,
    pay,
    ship,
    trader,
)
from memex.scenarios.truth import GroundTruth, RedFlag

SECTION = {"over_invoicing": "6.2", "under_invoicing": "6.2", "phantom_shipment": "6.3",
           "multiple_invoicing": "6.4", "third_party_payment": "6.5"}
CODE = {"over_invoicing": "OVER_INVOICING", "under_invoicing": "UNDER_INVOICING",
        "phantom_shipment": "PHANTOM_SHIPMENT", "multiple_invoicing": "MULTIPLE_INVOICING",
        "third_party_payment": "THIRD_PARTY_PAYMENT"}


def build(b: CaseBuilder, variant: str) -> Case:
    rng, k = b.rng, b.knobs
    exporting = variant in ("under_invoicing", "third_party_payment")
    country, commodity = partner_country_and_commodity(b)
    subject = trader(b, "US", customer=True, established=False)
    partner = trader(b, country, customer=False)
    acct = b.account(subject, ours=True, kind="business")
    partner_acct = b.account(partner, ours=False)
    business_banking(b, subject, acct, (subject.declared_annual_turnover_usd or 3e6) / 12,
                     card_share=0.02, staff=subject.employees or 5)
    exporter, importer = (subject, partner) if exporting else (partner, subject)
    payer, payee = (partner_acct, acct) if exporting else (acct, partner_acct)
    market = b.price(commodity)

    window_payments = []
    for _ in range(k.legit_shipments):  # genuine, fairly priced trade
        when = b.history_day() if rng.random() < 0.6 else b.window_day(8, 30)
        price = fair_price(b, commodity)
        s = ship(b, when, exporter, importer, commodity, lot(b, commodity, price), price)
        t = pay(b, when, s.invoice, payer, payee)
        if when >= b.window_start:
            window_payments.append(t)

    when = b.window_day(6, 26)
    price = fair_price(b, commodity)
    multiple = rng.uniform(*k.price_multiple)
    if variant == "over_invoicing":
        price = market.high_usd * multiple
    elif variant == "under_invoicing":
        price = market.low_usd / multiple ** 1.3
    qty = lot(b, commodity, market.high_usd)
    s = ship(b, when, exporter, importer, commodity, qty, price,
             documents=variant != "phantom_shipment")
    evidence: tuple[str, ...]
    third_party = None
    if variant == "third_party_payment":
        third_party = b.company(customer=False, country=rng.choice(("AE", "HK", "PA", "CY")))
        t = pay(b, b.window_day(1, 5), s.invoice, b.account(third_party, ours=False), acct)
        evidence = (t.id, s.invoice.id, third_party.id)
    else:
        t = pay(b, b.window_day(1, 5), s.invoice, payer, payee)
        if variant in ("over_invoicing", "under_invoicing"):
            evidence = (s.invoice.id, market.id)
        elif variant == "phantom_shipment":
            evidence = (s.invoice.id, t.id)
        else:  # multiple_invoicing: a second invoice for the same shipment, also paid
            dup = b.doc("invoice", s.ref, b.window_day(2, 5), exporter, importer, commodity, qty,
                        s.invoice.unit, price * rng.uniform(0.98, 1.02))
            t2 = pay(b, b.window_day(1, 2), dup, payer, payee)
            window_payments.append(t2)
            evidence = (s.invoice.id, dup.id, t.id, t2.id) + (
                (s.bill_of_lading.id,) if s.bill_of_lading else ())
    window_payments.append(t)
    decoys(b, [subject, partner], acct)

    flags = (RedFlag(code=CODE[variant], evidence_ids=evidence),
             RedFlag(code="HIGH_RISK_JURISDICTION", evidence_ids=(partner.id,)))
    subjects = (subject.id, partner.id) + ((third_party.id,) if third_party else ())
    alert = b.alert(HIGH_RISK_TRADE, subject, [acct], sorted(window_payments,
                                                             key=lambda x: x.timestamp),
                    {"trade_payments_usd": sum(x.amount_usd for x in window_payments),
                     "payments": len(window_payments)})
    truth = GroundTruth(kind="trade_based", variant=variant, suspicious=True, decision="file_sar",
                        typology="trade_based", subject_ids=subjects, red_flags=flags,
                        justifying_sections=(SECTION[variant], "6.7", "6.6"), ubo_id=None)
    return b.build(alert, truth)


KIND = KindSpec(name="trade_based", suspicious=True, variants=tuple(SECTION),
                rules=(HIGH_RISK_TRADE.code,), build=build,
                holdout_variants=("multiple_invoicing",))
