"""Benign look-alike: a politically exposed customer receiving a large, documented sum.

Fires the same large-PEP-transfer rule as the PEP-conduit layering variant. Here the source of
funds on file explains the money: a sale deed or probate record whose amount, date and
counterparty match the incoming wire, paid by an escrow agent or law firm. Manual 5.3 closes it.
"""

from __future__ import annotations

from datetime import timedelta

from memex.scenarios import vocab
from memex.scenarios.background import decoys, personal_banking
from memex.scenarios.builder import CaseBuilder, iso
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.rules import PEP_TRANSFER
from memex.scenarios.truth import GroundTruth


def build(b: CaseBuilder, variant: str) -> Case:
    rng = b.rng
    country = rng.choice(vocab.PEP_COUNTRIES)
    position = rng.choice(vocab.PEP_POSITIONS)
    pep = b.person(country=country, occupation="public official",
                   employer=f"Government of {vocab.COUNTRY_NAMES[country]}",
                   declared_annual_income_usd=float(rng.choice((85_000, 110_000, 150_000))),
                   pep=dict(position=position, country=country, since=b.past_date(900, 4000),
                            until=None if rng.random() < 0.5 else b.past_date(100, 800)),
                   risk_rating="high", customer_since=b.past_date(700, 3000),
                   expected_monthly_wires_usd=float(rng.choice((25_000, 60_000))))
    acct = b.account(pep, ours=True, kind="private_banking")
    personal_banking(b, pep, acct, pep.declared_annual_income_usd or 100_000)
    amount = round(rng.uniform(300_000, 2_800_000), -3)
    wire_day = b.window_day(4, 25)
    if variant == "property_sale":
        payer = b.company(customer=False, country=rng.choice(("US", "GB", "CH")),
                          name=f"{rng.choice(vocab.COMPANY_WORDS_A)} Title & Escrow "
                               f"{vocab.LEGAL_SUFFIX['US']}", business_type="escrow agent")
        doc_kind, what = "property sale deed", (f"Sale of residential property at "
                                                f"{b.street_address(country)}")
        memo = "ESCROW CLOSING PROCEEDS"
    else:
        payer = b.company(customer=False, country=rng.choice(("GB", "CH", "SG")),
                          name=f"{rng.choice(vocab.LAST_NAMES)} & Partners Solicitors",
                          business_type="law firm")
        doc_kind, what = "grant of probate", "Estate distribution to heir under probate"
        memo = "ESTATE DISTRIBUTION"
    src = b.account(payer, ours=False, kind="escrow")
    doc_date = wire_day - timedelta(days=rng.randint(2, 12))
    gross = amount / rng.uniform(0.97, 1.0)  # the deed shows gross; fees come off the wire
    doc = b.supporting(doc_kind, what, gross, iso(doc_date), payer.name)
    extra = b.supporting("salary certificate", f"Official salary as {position}",
                         pep.declared_annual_income_usd, b.past_date(100, 500),
                         pep.employer)
    b.sof(pep, "proceeds of " + ("property sale" if variant == "property_sale" else "inheritance")
          + " and official salary", (doc, extra))
    t = b.txn(wire_day, amount, "wire", src, acct, memo=memo)
    b.watch("pep", pep.name, country, position, dob=pep.date_of_birth)
    b.logins(pep, acct, b.device(), rng.randint(2, 4))
    decoys(b, [pep], acct)
    alert = b.alert(PEP_TRANSFER, pep, [acct], [t],
                    {"transfer_usd": t.amount_usd, "transfers_in_window": 1})
    truth = GroundTruth(kind="pep_wealth", variant=variant, suspicious=False,
                        decision="close_alert", typology=None, subject_ids=(), red_flags=(),
                        justifying_sections=("5.3", "5.2"), ubo_id=None)
    return b.build(alert, truth)


KIND = KindSpec(name="pep_wealth", suspicious=False,
                variants=("property_sale", "estate_distribution"),
                rules=(PEP_TRANSFER.code,), build=build)

