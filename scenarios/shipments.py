"""Trade shipments: the invoice, customs declaration and bill of lading for one movement of
goods, plus the payment that settles the invoice. Shared by the trade typology and its benign
look-alike so both produce documents of exactly the same shape."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from memex.scenarios import vocab
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.model import Account, Entity, TradeDocument, Transaction


@dataclass
class Shipment:
    ref: str
    invoice: TradeDocument
    customs: TradeDocument | None
    bill_of_lading: TradeDocument | None


def lot(b: CaseBuilder, commodity: str, fair_price: float, min_total_usd: float = 60_000) -> float:
    """A plausible quantity for one shipment of `commodity`."""
    lo, hi = next(c[4] for c in vocab.COMMODITIES if c[0] == commodity)
    qty = b.rng.randint(lo, hi)
    return float(max(qty, int(min_total_usd / fair_price) + 1))


def ship(b: CaseBuilder, when: date, exporter: Entity, importer: Entity, commodity: str,
         quantity: float, unit_price: float, *, documents: bool = True) -> Shipment:
    """Create a shipment. Without `documents` only the invoice exists (nothing moved)."""
    unit = b.price(commodity).unit
    ref = f"SHP-{b.rng.getrandbits(32):08X}"
    invoice = b.doc("invoice", ref, when, exporter, importer, commodity, quantity, unit,
                    unit_price)
    customs = bol = None
    if documents:
        vessel = b.rng.choice(vocab.VESSELS)
        bol = b.doc("bill_of_lading", ref, when + timedelta(days=b.rng.randint(2, 9)), exporter,
                    importer, commodity, quantity, unit, vessel=vessel)
        customs = b.doc("customs_declaration", ref, when + timedelta(days=b.rng.randint(18, 34)),
                        exporter, importer, commodity, quantity, unit, unit_price)
    return Shipment(ref, invoice, customs, bol)


def pay(b: CaseBuilder, when: date, invoice: TradeDocument, src: Account,
        dst: Account) -> Transaction:
    return b.txn(when, invoice.total_usd or 0.0, "wire", src, dst,
                 memo=f"PAYMENT INVOICE {invoice.id}", reference=invoice.id)


def fair_price(b: CaseBuilder, commodity: str, premium: float = 0.0) -> float:
    """A unit price inside the market band (optionally up to `premium` above its top)."""
    mp = b.price(commodity)
    return b.rng.uniform(mp.low_usd, mp.high_usd * (1 + premium))


def trader(b: CaseBuilder, country: str, *, customer: bool, established: bool = True) -> Entity:
    kyc = {}
    if customer:
        kyc = dict(business_type=b.rng.choice(("import and export", "commodity trading",
                                               "wholesale distribution")),
                   employees=b.rng.randint(3, 25),
                   declared_annual_turnover_usd=float(b.rng.choice((3, 5, 8, 12))) * 1e6,
                   expected_monthly_wires_usd=float(b.rng.choice((150_000, 300_000, 500_000))),
                   expected_monthly_cash_usd=0.0)
    return b.company(customer=customer, country=country,
                     incorporation_date=b.past_date(900 if established else 300, 6000), **kyc)


def partner_country_and_commodity(b: CaseBuilder) -> tuple[str, str]:
    country = b.rng.choice(vocab.HIGH_RISK_SUPPLIER_COUNTRIES)
    return country, b.rng.choice(vocab.SUPPLIER_COMMODITIES[country])
