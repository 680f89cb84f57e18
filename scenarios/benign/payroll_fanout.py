"""Benign look-alike: an established employer paying staff and suppliers after customers pay.

Fires the same inflow-then-fan-out rule as layering. The difference is in the facts: a company
incorporated decades ago with hundreds of staff, disclosed owners, domestic suppliers it has
paid for months, and the same cycle repeating through the account's history.
"""

from __future__ import annotations

from memex.scenarios import vocab
from memex.scenarios.background import business_banking, decoys
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.difficulty import ALERT_WINDOW_DAYS
from memex.scenarios.kinds import KindSpec
from memex.scenarios.rules import FUNDS_FANOUT
from memex.scenarios.truth import GroundTruth


def build(b: CaseBuilder, variant: str) -> Case:
    rng, k = b.rng, b.knobs
    btype, turnover, staff = rng.choice(vocab.FANOUT_BUSINESSES)
    turnover = round(turnover * rng.uniform(0.85, 1.2), -3)
    staff = int(staff * rng.uniform(0.85, 1.2))
    owners = [b.person(occupation="company executive",
                       declared_annual_income_usd=float(rng.choice((240_000, 380_000))))
              for _ in range(rng.randint(1, 3))]
    young = rng.random() < {"easy": 0.0, "medium": 0.2, "hard": 0.4}[b.difficulty]
    company = b.company(business_type=btype, declared_annual_turnover_usd=turnover,
                        employees=staff, directors=tuple(o.id for o in owners[:2]),
                        incorporation_date=b.past_date(250, 340) if young
                        else b.past_date(3000, 11000),
                        customer_since=b.past_date(200, 240) if young
                        else b.past_date(1800, 5000),
                        expected_monthly_wires_usd=round(turnover / 12 * 0.8, -3),
                        expected_monthly_cash_usd=0.0)
    shares = {1: [100.0], 2: [55.0, 45.0], 3: [40.0, 35.0, 25.0]}[len(owners)]
    for owner, pct in zip(owners, shares, strict=True):
        b.own(owner, company, pct)
    acct = b.account(company, ours=True, kind="business")
    business_banking(b, company, acct, turnover / 12, card_share=0.05, staff=max(5, staff // 20))
    payroll = b.account(company, ours=True, kind="payroll")

    customers = [b.account(b.company(customer=False), ours=False) for _ in range(rng.randint(2, 4))]
    suppliers = [b.account(b.company(customer=False), ours=False) for _ in range(rng.randint(4, 7))]
    monthly = turnover / 12
    cycle = 14 if variant == "payroll_cycle" else 30
    window_in, window_out = [], []
    span = k.history_days + ALERT_WINDOW_DAYS
    for d in range(span - rng.randint(0, cycle - 1), 2, -cycle):
        ins = [b.txn(b.days_ago(d), monthly * cycle / 30 / 2 * rng.uniform(0.6, 1.4),
                     rng.choice(("wire", "ach")), src, acct,
                     memo=f"REMITTANCE INV {rng.randint(10000, 99999)}")
               for src in rng.sample(customers, 2)]
        pay_day = d - rng.randint(1, 2)
        outs = [b.txn(b.days_ago(pay_day), staff * 2_300 * cycle / 14 * rng.uniform(0.97, 1.03),
                      "ach", acct, payroll, memo="TRANSFER TO PAYROLL ACCOUNT")]
        for dst in rng.sample(suppliers, rng.randint(3, min(5, len(suppliers)))):
            outs.append(b.txn(b.days_ago(pay_day), monthly * rng.uniform(0.02, 0.07), "wire",
                              acct, dst, memo=f"PO {rng.randint(4000, 9999)} SETTLEMENT"))
        if d <= ALERT_WINDOW_DAYS and sum(t.amount_usd for t in ins) >= 100_000:
            window_in, window_out = ins, outs
    if not window_in:  # make sure the current cycle is the one that fired
        d = rng.randint(4, 12)
        window_in = [b.txn(b.days_ago(d), rng.uniform(120_000, 400_000), "wire", customers[0],
                           acct, memo=f"REMITTANCE INV {rng.randint(10000, 99999)}")]
        window_out = [b.txn(b.days_ago(d - 1), monthly * rng.uniform(0.03, 0.07), "wire", acct,
                            dst, memo=f"PO {rng.randint(4000, 9999)} SETTLEMENT")
                      for dst in suppliers[:4]]
    device = b.device()
    for owner in owners[:2]:
        b.logins(owner, acct, device, rng.randint(2, 4))
    b.logins(owners[0], acct, b.device(), 2)
    decoys(b, owners, acct)
    alert = b.alert(FUNDS_FANOUT, company, [acct], window_in + window_out,
                    {"inflow_usd": sum(t.amount_usd for t in window_in),
                     "outgoing_transfers": len(window_out),
                     "outflow_usd": sum(t.amount_usd for t in window_out)})
    truth = GroundTruth(kind="payroll_fanout", variant=variant, suspicious=False,
                        decision="close_alert", typology=None, subject_ids=(), red_flags=(),
                        justifying_sections=("8.2", "3.2"), ubo_id=None)
    return b.build(alert, truth)


KIND = KindSpec(name="payroll_fanout", suspicious=False,
                variants=("payroll_cycle", "supplier_cycle"),
                rules=(FUNDS_FANOUT.code,), build=build)
