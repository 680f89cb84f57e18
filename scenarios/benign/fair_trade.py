"""Benign look-alike: fairly priced, fully documented trade with a high-risk-country partner.

Fires the same high-risk trade rule as trade-based laundering. Every invoice is matched by a
bill of lading and a customs declaration, prices sit inside the market band (up to a small
quality premium on harder cases, still within the manual's 25 percent tolerance), and the
customer pays or is paid by its trading partner directly. Manual 6.6 says to close.
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
from memex.scenarios.truth import GroundTruth


def build(b: CaseBuilder, variant: str) -> Case:
    rng, k = b.rng, b.knobs
    exporting = variant == "exporting_customer"
    country, commodity = partner_country_and_commodity(b)
    subject = trader(b, "US", customer=True)
    partner = trader(b, country, customer=False)
    acct = b.account(subject, ours=True, kind="business")
    partner_acct = b.account(partner, ours=False)
    business_banking(b, subject, acct, (subject.declared_annual_turnover_usd or 3e6) / 12,
                     card_share=0.02, staff=subject.employees or 5)
    exporter, importer = (subject, partner) if exporting else (partner, subject)
    payer, payee = (partner_acct, acct) if exporting else (acct, partner_acct)
    window_payments = []
    n = k.legit_shipments + rng.randint(1, 2)
    for i in range(n):
        when = b.window_day(6, 26) if i < 2 else b.history_day()
        price = fair_price(b, commodity, rng.uniform(*k.fair_price_premium))
        s = ship(b, when, exporter, importer, commodity, lot(b, commodity, price), price)
        t = pay(b, b.window_day(1, 5) if when >= b.window_start else when, s.invoice, payer, payee)
        if t.timestamp[:10] >= b.window_start.isoformat():
            window_payments.append(t)
    decoys(b, [subject, partner], acct)
    alert = b.alert(HIGH_RISK_TRADE, subject, [acct],
                    sorted(window_payments, key=lambda x: x.timestamp),
                    {"trade_payments_usd": sum(x.amount_usd for x in window_payments),
                     "payments": len(window_payments)})
    truth = GroundTruth(kind="fair_trade", variant=variant, suspicious=False,
                        decision="close_alert", typology=None, subject_ids=(), red_flags=(),
                        justifying_sections=("6.6", "6.2", "6.7"), ubo_id=None)
    return b.build(alert, truth)


KIND = KindSpec(name="fair_trade", suspicious=False,
                variants=("importing_customer", "exporting_customer"),
                rules=(HIGH_RISK_TRADE.code,), build=build)
