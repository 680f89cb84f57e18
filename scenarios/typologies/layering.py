"""Layering: funds pushed through a recently formed company and on through offshore accounts.

Variants:
- `offshore_fanout`: inflow to a shell, fanned out within days to offshore companies; wire
  traces show the money converging on the beneficial owner's private-bank account.
- `round_trip`: the same, but the trail closes back on the originator.
- `pep_conduit`: a politically exposed customer receives "consultancy" money from offshore
  companies with no documented source; origin traces lead back to a state fund.

Difficulty adds ownership layers between the shell and its owner, correspondent hops, and
decoys. The beneficial owner appears in no registry: only traces, devices and the money show it.
"""

from __future__ import annotations

from memex.scenarios import vocab
from memex.scenarios.background import decoys, personal_banking
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.model import Account, Entity, Transaction
from memex.scenarios.rules import FUNDS_FANOUT, PEP_TRANSFER
from memex.scenarios.truth import GroundTruth, RedFlag

PRIVATE_BANK_COUNTRIES = ("CH", "SG", "LU", "MT")


def offshore_company(b: CaseBuilder, *, recent: bool = True) -> Entity:
    country = b.rng.choice(vocab.OFFSHORE_CENTRES)
    dates = {"incorporation_date": b.past_date(90, 700)} if recent else {}
    return b.company(customer=False, country=country, shell=True,
                     address=vocab.FORMATION_AGENT_ADDRESSES[country],
                     business_type=b.rng.choice(vocab.SHELL_BUSINESS_TYPES), **dates)


def _bank(b: CaseBuilder, country: str) -> str:
    return b.rng.choice(vocab.CORRESPONDENT_BANKS[country])


def _onward(b: CaseBuilder, txn: Transaction, first: Account, hops: int,
            final: tuple[str, str, str]) -> tuple[list, list]:
    """Trace an outgoing wire through `hops` onward movements ending at `final`
    (bank, country, beneficiary). Returns (offshore hops, all hops)."""
    rng = b.rng
    legs = [(vocab.BANK_NAME, first.bank, first.country, b.entity(first.owner_id).name,
             txn.amount_usd, 0)]
    prev_bank, amount, lag = first.bank, txn.amount_usd, 0
    for i in range(hops):
        amount *= rng.uniform(0.96, 0.995)
        lag += rng.randint(1, 3)
        if i == hops - 1:
            bank, country, name = final
        else:
            mid = offshore_company(b)
            bank, country, name = _bank(b, mid.country), mid.country, mid.name
        legs.append((prev_bank, bank, country, name, amount, lag))
        prev_bank = bank
    hops_out = b.trace(txn, "onward", legs)
    offshore = [h for h in hops_out[1:] if h.party_country in vocab.OFFSHORE_CENTRES]
    return offshore, hops_out


def _ownership_chain(b: CaseBuilder, shell: Entity) -> list:
    """shell <- holding company x layers <- nominee shareholder. Returns nominee links."""
    current, nominee_links = shell, []
    for _ in range(b.knobs.layers):
        holdco = offshore_company(b, recent=False)
        b.own(holdco, current, 100.0)
        current = holdco
    nominee = b.person(customer=False, country=current.country,
                       occupation="corporate services provider")
    nominee_links.append(b.own(nominee, current, 100.0, nominee=True))
    return nominee_links


def _shell_fanout(b: CaseBuilder, variant: str) -> Case:
    rng, k = b.rng, b.knobs
    ubo_occupation, ubo_income = rng.choice(vocab.OCCUPATIONS_AFFLUENT)
    ubo_is_customer = rng.random() < 0.7
    ubo = b.person(customer=ubo_is_customer, country=rng.choice(("US", "GB", "AE", "MY", "CY")),
                   occupation=ubo_occupation if ubo_is_customer else None,
                   employer=b.company_name("US") if ubo_is_customer else None,
                   declared_annual_income_usd=float(ubo_income) if ubo_is_customer else None)
    director = b.person(customer=False, country=rng.choice(vocab.OFFSHORE_CENTRES),
                        occupation="corporate services provider")
    shell_country = rng.choice(("US", "US", "VG", "SC", "CY"))
    # Evasion: an aged shelf company with a virtual-office address and a token employee.
    aged = rng.random() < {"easy": 0.0, "medium": 0.3, "hard": 0.6}[b.difficulty]
    shell = b.company(country=shell_country, shell=True,
                      address=b.street_address(shell_country) if aged
                      else vocab.FORMATION_AGENT_ADDRESSES[shell_country],
                      incorporation_date=b.past_date(400, 900) if aged else b.past_date(60, 250),
                      customer_since=b.past_date(35, 120),
                      business_type=rng.choice(vocab.SHELL_BUSINESS_TYPES),
                      employees=rng.randint(1, 2) if aged else 0,
                      directors=(director.id,), risk_rating="medium",
                      expected_monthly_wires_usd=float(rng.choice((25_000, 40_000, 60_000))),
                      expected_monthly_cash_usd=0.0)
    acct = b.account(shell, ours=True, kind="business")
    nominee_links = _ownership_chain(b, shell)

    originator = offshore_company(b, recent=False) if variant == "offshore_fanout" else \
        b.company(customer=False, country=rng.choice(("AE", "HK", "MY", "CY")))
    org_acct = b.account(originator, ours=False)
    inflow_day = rng.randint(6, 24)
    inflows = [b.txn(b.days_ago(inflow_day + i), rng.uniform(250_000, 1_400_000), "wire", org_acct,
                     acct, memo=rng.choice(("CONSULTANCY AGREEMENT", "LOAN DRAWDOWN",
                                            "ADVISORY SERVICES", "COMMISSION")))
               for i in range(rng.randint(1, 2))]
    total_in = sum(t.amount_usd for t in inflows)
    n_out = rng.randint(4, 6)
    weights = [rng.uniform(0.6, 1.4) for _ in range(n_out)]
    retained = rng.uniform(0.02, 0.06)
    outflows, offshore_hops, closing_hops = [], [], []
    pb_country = rng.choice(PRIVATE_BANK_COUNTRIES)
    ubo_final_bank = (_bank(b, pb_country), pb_country)
    for w in weights:
        payee = offshore_company(b)
        dst = b.account(payee, ours=False)
        t = b.txn(b.days_ago(inflow_day - rng.randint(1, 3)),
                  total_in * (1 - retained) * w / sum(weights), "wire", acct, dst,
                  memo=rng.choice(("INVOICE SETTLEMENT", "SERVICES RENDERED", "PROJECT FEE",
                                   "TRADE ADVANCE")))
        outflows.append(t)
        if variant == "round_trip":
            final = (org_acct.bank, org_acct.country, originator.name)
        else:
            final = (ubo_final_bank[0], ubo_final_bank[1], ubo.name)
        offshore, hops = _onward(b, t, dst, k.hops, final)
        offshore_hops += offshore
        closing_hops.append(hops[-1])
    for _ in range(rng.randint(2, 4)):  # the only "operations": formation and agent fees
        agent = b.shared_counterparty("agent", "Registered Agents Inc.")
        b.txn(b.days_ago(rng.randint(30, 120)), rng.choice((450.0, 895.0, 1_250.0)), "ach", acct,
              agent, memo="REGISTERED AGENT FEE")

    flags = [RedFlag(code="SHELL_COMPANY_INDICATORS", evidence_ids=(shell.id,)),
             RedFlag(code="RAPID_PASS_THROUGH",
                     evidence_ids=tuple(t.id for t in inflows + outflows)),
             RedFlag(code="NOMINEE_OWNERSHIP", evidence_ids=tuple(x.id for x in nominee_links))]
    if offshore_hops:
        flags.append(RedFlag(code="OFFSHORE_ONWARD_TRANSFER",
                             evidence_ids=tuple(h.id for h in offshore_hops)))
    if variant == "round_trip":
        flags.append(RedFlag(code="ROUND_TRIP", evidence_ids=tuple(h.id for h in closing_hops)))

    # Common control shows in online banking: the owner's device runs the shell's account.
    if ubo_is_customer:
        ubo_acct = b.account(ubo, ours=True, kind="private_banking")
        personal_banking(b, ubo, ubo_acct, ubo_income)
    if ubo_is_customer and rng.random() < (0.9 if b.difficulty != "hard" else 0.6):
        device = b.device()
        shared = b.logins(director, acct, device, rng.randint(2, 4)) + \
            b.logins(ubo, ubo_acct, device, rng.randint(2, 5))
        b.logins(ubo, ubo_acct, b.device(), 2)
        flags.append(RedFlag(code="SHARED_DEVICE_ACROSS_ENTITIES",
                             evidence_ids=tuple(x.id for x in shared)))
    else:
        b.logins(director, acct, b.device(), rng.randint(2, 4))
    if rng.random() < 0.4:
        news = b.watch("adverse_media", ubo.name, ubo.country,
                       f"{ubo.name} questioned by prosecutors over misappropriated public funds",
                       dob=ubo.date_of_birth)
        flags.append(RedFlag(code="ADVERSE_MEDIA", evidence_ids=(news.id,)))
    if b.difficulty != "easy" and offshore_hops and rng.random() < 0.25:
        hop = rng.choice(offshore_hops)
        listed = b.watch("sanctions", hop.party_name, hop.party_country,
                         "SDN list, programme RUSSIA-EO14024 (front company)")
        flags.append(RedFlag(code="SANCTIONS_MATCH", evidence_ids=(listed.id, hop.id)))
    decoys(b, [ubo, director], acct)

    subjects = [shell.id, ubo.id] + ([originator.id] if variant == "round_trip" else [])
    alert = b.alert(FUNDS_FANOUT, shell, [acct], inflows + outflows,
                    {"inflow_usd": total_in, "outgoing_transfers": len(outflows),
                     "outflow_usd": sum(t.amount_usd for t in outflows)})
    third = "7.3" if variant == "round_trip" else "7.2"
    truth = GroundTruth(kind="layering", variant=variant, suspicious=True, decision="file_sar",
                        typology="layering", subject_ids=tuple(subjects), red_flags=tuple(flags),
                        justifying_sections=("7.1", "3.4", third), ubo_id=ubo.id)
    return b.build(alert, truth)


def _pep_conduit(b: CaseBuilder) -> Case:
    rng, k = b.rng, b.knobs
    country = rng.choice(vocab.PEP_COUNTRIES)
    pep = b.person(country=country, occupation="public official",
                   declared_annual_income_usd=float(rng.choice((68_000, 95_000, 120_000))),
                   pep=dict(position=rng.choice(vocab.PEP_POSITIONS), country=country,
                            since=b.past_date(700, 3000)),
                   risk_rating="high", customer_since=b.past_date(500, 2500),
                   expected_monthly_wires_usd=float(rng.choice((20_000, 50_000))))
    acct = b.account(pep, ours=True, kind="private_banking")
    personal_banking(b, pep, acct, pep.declared_annual_income_usd or 90_000)
    sof_docs = ()
    if rng.random() < 0.5:
        sof_docs = (b.supporting("consulting agreement", "Advisory agreement with a family "
                                 "company", rng.choice((60_000.0, 90_000.0)), b.past_date(300, 900),
                                 b.company_name(country)),)
    sof = b.sof(pep, "consultancy income and family investments", sof_docs)
    fund = b.company(customer=False, country=country,
                     name=f"{rng.choice(('National', 'State', 'Sovereign'))} Development Fund "
                          f"of {vocab.COUNTRY_NAMES[country]}", incorporation_date=b.past_date(
                         3000, 7000), business_type="sovereign development fund")
    payers, inflows = [], []
    for _ in range(rng.randint(2, 3)):
        payer = offshore_company(b)
        payers.append(payer)
        src = b.account(payer, ours=False)
        for _ in range(rng.randint(1, 2)):
            t = b.txn(b.window_day(3, 28), rng.uniform(260_000, 1_500_000), "wire", src, acct,
                      memo=rng.choice(("CONSULTANCY FEE", "ADVISORY SERVICES", "LOAN ADVANCE")))
            inflows.append(t)
            legs, prev = [], src.bank
            for i in range(k.hops):
                if i == k.hops - 1:
                    name, bank, c = fund.name, _bank(b, "MY") if country == "MY" else \
                        rng.choice(vocab.CORRESPONDENT_BANKS["SG"]), fund.country
                else:
                    mid = offshore_company(b)
                    name, bank, c = mid.name, _bank(b, mid.country), mid.country
                legs.append((bank, prev, c, name, t.amount_usd * rng.uniform(1.0, 1.04), i + 1))
                prev = bank
            b.trace(t, "origin", [(src.bank, vocab.BANK_NAME, src.country, payer.name,
                                   t.amount_usd, 0)] + legs)
    total_in = sum(t.amount_usd for t in inflows)
    for memo, share in (("PROPERTY PURCHASE ESCROW", 0.45), ("YACHT CHARTER DEPOSIT", 0.12),
                        ("FINE ART AUCTION", 0.08)):
        dealer = b.company(customer=False, country=rng.choice(("US", "GB", "CH", "AE")))
        b.txn(b.window_day(1, 3), total_in * share * rng.uniform(0.8, 1.1), "wire", acct,
              b.account(dealer, ours=False), memo=memo)
    device = b.device()
    b.logins(pep, acct, device, rng.randint(2, 4))

    flags = [RedFlag(code="PEP_UNEXPLAINED_WEALTH",
                     evidence_ids=(sof.id, pep.id) + tuple(t.id for t in inflows)),
             RedFlag(code="SHELL_COMPANY_INDICATORS", evidence_ids=tuple(p.id for p in payers))]
    if rng.random() < 0.5:
        news = b.watch("adverse_media", pep.name, pep.country,
                       f"{pep.name} linked to missing state-fund money in opposition dossier",
                       dob=pep.date_of_birth)
        flags.append(RedFlag(code="ADVERSE_MEDIA", evidence_ids=(news.id,)))
    b.watch("pep", pep.name, country, pep.pep.position, dob=pep.date_of_birth)
    decoys(b, [pep], acct)
    largest = max(inflows, key=lambda t: t.amount_usd)
    alert = b.alert(PEP_TRANSFER, pep, [acct], [largest],
                    {"transfer_usd": largest.amount_usd, "transfers_in_window": len(inflows)})
    truth = GroundTruth(kind="layering", variant="pep_conduit", suspicious=True,
                        decision="file_sar", typology="layering",
                        subject_ids=(pep.id,) + tuple(p.id for p in payers),
                        red_flags=tuple(flags), justifying_sections=("5.4", "5.2", "3.4"),
                        ubo_id=pep.id)
    return b.build(alert, truth)


def build(b: CaseBuilder, variant: str) -> Case:
    return _pep_conduit(b) if variant == "pep_conduit" else _shell_fanout(b, variant)


KIND = KindSpec(name="layering", suspicious=True,
                variants=("offshore_fanout", "round_trip", "pep_conduit"),
                rules=(FUNDS_FANOUT.code, PEP_TRANSFER.code), build=build,
                holdout_variants=("round_trip",))
