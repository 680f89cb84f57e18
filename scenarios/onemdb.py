"""The fixed 1MDB-shaped case: grand corruption laundered through a look-alike shell.

The shape follows the public record of the 1MDB affair (US DOJ civil forfeiture complaints,
2016-2017): bond proceeds raised by a sovereign development fund are paid to a BVI company
whose name imitates a genuine Gulf sovereign investor; the money moves through a Swiss private
bank and a Seychelles company to a US film-production company owned by a prime minister's
stepson and a financier, and is spent on a film, a Manhattan condominium and a yacht; part of
it is sent back to the fund dressed as an investment return. Every name, amount and identifier
here is fictional; amounts are scaled down.

What the bank sees: its customer, the film company, receives large wires from an offshore
company and fans them out within days. Wire traces reveal the origin (the fund and the
look-alike shell) and the round trip. The genuine sovereign investor exists in the registry
too, as a decoy: its name differs by one word and it is in Abu Dhabi, not Tortola.
"""

from __future__ import annotations

import random

from memex.scenarios import vocab
from memex.scenarios.background import business_banking, personal_banking
from memex.scenarios.builder import CaseBuilder, iso
from memex.scenarios.case import Case
from memex.scenarios.model import INFORMATION_TOPICS
from memex.scenarios.rules import FUNDS_FANOUT
from memex.scenarios.truth import GroundTruth, RedFlag

ONEMDB_SEED = 1_000_000_007
CASE_NAME = "1mdb"


def build_case() -> Case:
    b = CaseBuilder(random.Random(f"memex|{CASE_NAME}|{ONEMDB_SEED}"), "hard")
    # --- parties -------------------------------------------------------------------------
    fund = b.company(customer=False, country="MY", name="Nusantara Strategic Development Berhad",
                     incorporation_date="2009-07-31", business_type="sovereign development fund",
                     address="Menara NSD, Jalan Sultan Ismail, Kuala Lumpur, MY")
    b.company(customer=False, country="AE", name="Petra Gulf Investments PJSC",
                        incorporation_date="1984-03-12", business_type="sovereign investment",
                        address="Petra Tower, Corniche Road, Abu Dhabi, AE")
    lookalike = b.company(customer=False, country="VG", name="Petra Gulf Investments PJS Limited",
                          incorporation_date=b.past_date(70, 110),
                          address=vocab.FORMATION_AGENT_ADDRESSES["VG"],
                          business_type="investment holding")
    conduit = b.company(customer=False, country="SC", name="Brightwater Global Ventures Ltd",
                        incorporation_date=b.past_date(150, 260),
                        address=vocab.FORMATION_AGENT_ADDRESSES["SC"],
                        business_type="business advisory services")
    financier = b.person(customer=True, country="MY", name="Leon Tan Wei Jie",
                         occupation="private investor",
                         declared_annual_income_usd=1_200_000.0, risk_rating="high",
                         customer_since=b.past_date(300, 600),
                         expected_monthly_wires_usd=250_000.0)
    pep = b.person(customer=True, country="MY", name="Arif Hamzah Idris",
                   occupation="film producer", declared_annual_income_usd=350_000.0,
                   pep={"position": "Stepson of the Prime Minister", "country": "MY",
                        "since": "2009-04-03"},
                   risk_rating="high", customer_since=b.past_date(250, 500),
                   expected_monthly_wires_usd=150_000.0)
    nominee = b.person(customer=False, country="SC", name="Marie-Claire Hoareau",
                       occupation="corporate services provider")
    studio = b.company(country="US", name="Crimson Harbor Pictures LLC",
                       business_type="motion picture production",
                       incorporation_date=b.past_date(380, 450),
                       customer_since=b.past_date(330, 360), employees=6,
                       directors=(pep.id, financier.id), risk_rating="medium",
                       declared_annual_turnover_usd=4_000_000.0,
                       expected_monthly_wires_usd=600_000.0, expected_monthly_cash_usd=0.0)
    b.own(pep, studio, 50.0)
    b.own(financier, studio, 50.0)
    b.own(financier, lookalike, 100.0)
    nominee_link = b.own(nominee, conduit, 100.0, nominee=True)

    # --- accounts ------------------------------------------------------------------------
    studio_acct = b.account(studio, ours=True, kind="business")
    pep_acct = b.account(pep, ours=True, kind="private_banking")
    fin_acct = b.account(financier, ours=True, kind="private_banking")
    conduit_acct = b.account(conduit, ours=False, country="SG",
                             bank="Straits Merchant Bank")
    b.account(lookalike, ours=False, country="CH",
                               bank="Banque Privee Lacroix SA")
    b.account(fund, ours=False, country="MY", bank="Bank Seri Perdana")
    business_banking(b, studio, studio_acct, 250_000, card_share=0.0, staff=6)
    personal_banking(b, pep, pep_acct, 350_000)
    personal_banking(b, financier, fin_acct, 1_200_000)

    # --- the money -----------------------------------------------------------------------
    inflows, origin_hops = [], []
    for days, amount in ((22, 11_800_000.0), (19, 9_650_000.0), (16, 7_400_000.0)):
        t = b.txn(b.days_ago(days), amount, "wire", conduit_acct, studio_acct,
                  memo="INVESTMENT IN FILM SLATE")
        inflows.append(t)
        # Origin trace: fund -> look-alike (Swiss private bank) -> conduit (Singapore) -> us.
        origin_hops += b.trace(t, "origin", [
            ("Straits Merchant Bank", vocab.BANK_NAME, "SC", conduit.name, amount, 0),
            ("Banque Privee Lacroix SA", "Straits Merchant Bank", "VG", lookalike.name,
             amount * 1.02, 3),
            ("Bank Seri Perdana", "Banque Privee Lacroix SA", "MY", fund.name, amount * 1.9, 9),
        ])
    total_in = sum(t.amount_usd for t in inflows)
    escrow = b.account(b.company(customer=False, country="US",
                                 name="Park Avenue Title & Escrow LLC",
                                 business_type="escrow agent"), ours=False, kind="escrow")
    yacht = b.account(b.company(customer=False, country="GB", name="Solent Superyacht Brokers Ltd",
                                business_type="yacht broker"), ours=False)
    producers = [b.account(b.company(customer=False, country="US", name=name,
                                     business_type="film production services"), ours=False)
                 for name in ("Westlake Post Production LLC", "Sunset Lot Studios LLC")]
    return_vehicle = b.company(customer=False, country="KY",
                               name="Cayman Atlas Fund Management Ltd",
                               address=vocab.FORMATION_AGENT_ADDRESSES["KY"],
                               incorporation_date=b.past_date(200, 400),
                               business_type="investment holding")
    rv_acct = b.account(return_vehicle, ours=False)
    outflows = [
        b.txn(b.days_ago(18), 6_350_000.0, "wire", studio_acct, escrow,
              memo="PURCHASE 30 PARK PL UNIT 76"),
        b.txn(b.days_ago(17), 4_900_000.0, "wire", studio_acct, yacht,
              memo="DEPOSIT VESSEL SERENITY STAR"),
        b.txn(b.days_ago(15), 2_100_000.0, "wire", studio_acct, producers[0],
              memo="POST PRODUCTION PHASE 2"),
        b.txn(b.days_ago(15), 1_750_000.0, "wire", studio_acct, producers[1],
              memo="STAGE RENTAL AND CREW"),
        b.txn(b.days_ago(14), 3_800_000.0, "wire", studio_acct, fin_acct,
              memo="PRODUCER FEE"),
        b.txn(b.days_ago(13), 7_900_000.0, "wire", studio_acct, rv_acct,
              memo="SUBSCRIPTION ATLAS FUND"),
    ]
    round_trip = b.trace(outflows[-1], "onward", [
        (vocab.BANK_NAME, "Caymanian Fiduciary Bank", "KY", return_vehicle.name,
         outflows[-1].amount_usd, 0),
        ("Caymanian Fiduciary Bank", "Banque Privee Lacroix SA", "VG", lookalike.name,
         outflows[-1].amount_usd * 0.99, 2),
        ("Banque Privee Lacroix SA", "Bank Seri Perdana", "MY", fund.name,
         outflows[-1].amount_usd * 0.98, 5),
    ])
    pep_spend = b.txn(b.days_ago(9), 1_350_000.0, "wire", fin_acct, pep_acct, memo="GIFT")
    b.txn(b.days_ago(6), 1_100_000.0, "wire", pep_acct, b.account(
        b.company(customer=False, country="US", name="Christie Lane Fine Art LLC"), ours=False),
        memo="LOT 41 PAINTING")

    # --- records -------------------------------------------------------------------------
    sof = b.sof(pep, "film production income and family wealth")
    # The studio's file explains the inflows with a subscription agreement for far less than
    # arrived, and no FX charges account for the difference; asked, the customer stalls.
    slate = b.supporting("subscription agreement", "Subscription for film-slate financing",
                         18_500_000.0, iso(b.days_ago(40)), conduit.name)
    studio_sof = b.sof(studio, "investment in the film slate", (slate,))
    for topic in INFORMATION_TOPICS:
        b.reply(studio, topic, "The customer said documents would follow; none have been "
                               "received." if topic == "source_of_funds" else
                "The customer has nothing to add to the information on file.")
    b.sof(financier, "investment income from family office",
          (b.supporting("bank reference letter", "Reference letter, relationship since 2008",
                        None, b.past_date(400, 600), "Bank Seri Perdana"),))
    device = b.device()
    # The financier runs the studio's online banking from his own device: common control, but
    # disclosed (he is a director), so not a red flag by itself.
    b.logins(financier, fin_acct, device, 3)
    b.logins(financier, studio_acct, device, 4)
    b.logins(pep, pep_acct, device, 2)
    b.logins(pep, studio_acct, b.device(), 2)
    news = b.watch("adverse_media", fund.name, "MY",
                   "Auditors unable to verify $1.1bn of fund investments; parliament committee "
                   "opens inquiry (Borneo Ledger)")
    b.watch("pep", pep.name, "MY", "Stepson of the Prime Minister", dob=pep.date_of_birth)
    b.watch("sanctions", "Leon Tan Wei Kiat", "KP", "SDN list, programme DPRK3",
            dob=b.dob(40, 60))
    b.watch("adverse_media", "Arif Hamzah", "ID", "Hamzah cleared in Jakarta fishing-licence case",
            dob=b.dob(50, 70))

    flags = (
        RedFlag(code="PEP_UNEXPLAINED_WEALTH", evidence_ids=(sof.id, pep.id, pep_spend.id),
                carrier_ids=(sof.id, pep_spend.id)),
        RedFlag(code="SHELL_COMPANY_INDICATORS", evidence_ids=(lookalike.id, conduit.id),
                carrier_ids=(lookalike.id, conduit.id)),
        RedFlag(code="RAPID_PASS_THROUGH",
                evidence_ids=tuple(t.id for t in inflows + outflows),
                carrier_ids=tuple(t.id for t in inflows + outflows)),
        RedFlag(code="OFFSHORE_ONWARD_TRANSFER", evidence_ids=(round_trip[0].id,
                                                               round_trip[1].id),
                carrier_ids=(round_trip[0].id, round_trip[1].id)),
        RedFlag(code="ROUND_TRIP", evidence_ids=(round_trip[-1].id,),
                carrier_ids=(round_trip[-1].id,)),
        RedFlag(code="NOMINEE_OWNERSHIP", evidence_ids=(nominee_link.id,),
                carrier_ids=(nominee_link.id,)),
        RedFlag(code="ADVERSE_MEDIA", evidence_ids=(news.id,), carrier_ids=(news.id,)),
        RedFlag(code="UNSUPPORTED_SOURCE_OF_FUNDS",
                evidence_ids=(studio_sof.id, slate.id, *(t.id for t in inflows)),
                carrier_ids=(slate.id,)),
    )
    # What decides it: the origin traces (state fund -> look-alike), the round trip back to the
    # fund, the PEP's empty source-of-funds file, and the news about the fund.
    decisive = (tuple(h.id for h in origin_hops), tuple(h.id for h in round_trip), (sof.id,),
                (news.id,))
    alert = b.alert(FUNDS_FANOUT, studio, [studio_acct], inflows + outflows,
                    {"inflow_usd": total_in, "outgoing_transfers": len(outflows),
                     "outflow_usd": sum(t.amount_usd for t in outflows)})
    truth = GroundTruth(
        kind="layering", variant="1mdb", suspicious=True, decision="file_sar",
        typology="layering",
        subject_ids=(studio.id, pep.id, financier.id, lookalike.id, conduit.id),
        red_flags=flags, justifying_sections=("5.4", "7.3", "3.4"), decisive_evidence=decisive,
        ubo_id=financier.id, dispositions={"trace": "unexplained",
                                           "source_of_funds": "unexplained", "device": "clear"})
    return b.build(alert, truth)
