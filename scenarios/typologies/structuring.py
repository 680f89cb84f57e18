"""Structuring: cash broken into deposits just under the $10,000 CTR threshold (31 USC 5324).

Variants:
- `single_depositor`: a salaried customer deposits the cash personally.
- `smurfing`: several people deposit into the customer's account.
- `front_business`: a small business deposits far more cash than its profile, always under
  the threshold.

Evasion grows with difficulty: amounts closer to $10,000, more deposits over more days and
branches, and (hard) a few mid-sized deposits that break the obvious pattern.
"""

from __future__ import annotations

from memex.scenarios import vocab
from memex.scenarios.background import business_banking, decoys, personal_banking
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.kinds import KindSpec
from memex.scenarios.manual import CTR_THRESHOLD_USD
from memex.scenarios.rules import CASH_AGGREGATE
from memex.scenarios.truth import GroundTruth, RedFlag


def _structured_amount(b: CaseBuilder) -> float:
    raw = CTR_THRESHOLD_USD - b.rng.uniform(10, b.knobs.threshold_gap_usd)
    step = b.rng.choice((10, 50, 100))
    return min(CTR_THRESHOLD_USD - step, round(raw / step) * step)


def build(b: CaseBuilder, variant: str) -> Case:
    rng, k = b.rng, b.knobs
    parties = []
    if variant == "front_business":
        btype, turnover = rng.choice(vocab.CASH_BUSINESSES)
        turnover = round(turnover * rng.uniform(0.25, 0.4), -3)
        owner = b.person(occupation="business owner", declared_annual_income_usd=round(
            turnover * 0.12, -3))
        subject = b.company(business_type=btype, declared_annual_turnover_usd=turnover,
                            employees=rng.randint(3, 9), directors=(owner.id,),
                            expected_monthly_cash_usd=round(turnover * 0.3 / 12, -2),
                            expected_monthly_wires_usd=0.0)
        b.own(owner, subject, 100.0)
        acct = b.account(subject, ours=True, kind="business")
        business_banking(b, subject, acct, turnover / 12, card_share=0.7, staff=subject.employees)
        conductors = [owner]
        parties = [subject, owner]
    else:
        occupation, income = rng.choice(vocab.OCCUPATIONS_SALARIED)
        subject = b.person(occupation=occupation, employer=b.company_name("US"),
                           declared_annual_income_usd=float(income),
                           expected_monthly_cash_usd=float(rng.choice((0, 200, 500))),
                           expected_monthly_wires_usd=0.0)
        acct = b.account(subject, ours=True)
        personal_banking(b, subject, acct, income)
        conductors = [subject]
        parties = [subject]
        if variant == "smurfing":
            smurfs = [b.person(customer=False) for _ in range(rng.randint(2, 4))]
            conductors = smurfs + [subject] if rng.random() < 0.5 else smurfs
            parties += smurfs

    branches = rng.sample(vocab.BRANCHES, k.branches)
    last_day = rng.randint(2, max(2, 29 - k.spread_days))
    n = rng.randint(*k.structured_deposits)
    near, fillers = [], []
    for i in range(n):
        day = b.days_ago(last_day + rng.randint(0, k.spread_days))
        near.append(b.txn(day, _structured_amount(b), "cash", None, acct,
                          conducted_by=conductors[i % len(conductors)],
                          branch=branches[i % len(branches)], memo="CASH DEPOSIT"))
    if b.difficulty == "hard":
        for _ in range(rng.randint(1, 2)):
            day = b.days_ago(last_day + rng.randint(0, k.spread_days))
            fillers.append(b.txn(day, round(rng.uniform(3_000, 7_000), -2), "cash", None, acct,
                                 conducted_by=rng.choice(conductors),
                                 branch=rng.choice(branches), memo="CASH DEPOSIT"))
    if rng.random() < {"easy": 0.0, "medium": 0.15, "hard": 0.35}[b.difficulty]:
        # Evasion: one deposit over the threshold, reported, to look like ordinary takings.
        fillers.append(b.txn(b.days_ago(last_day + rng.randint(0, k.spread_days)),
                             round(rng.uniform(10_500, 12_500), -2), "cash", None, acct,
                             conducted_by=rng.choice(conductors), branch=rng.choice(branches),
                             memo="CASH DEPOSIT"))
    deposits = near + fillers
    total = sum(t.amount_usd for t in deposits)
    if rng.random() < 0.6:  # consolidation: the cash leaves by wire soon after
        payee = b.company(customer=False, country=rng.choice(("US", "US", "DO", "MX", "CO")))
        dst = b.account(payee, ours=False)
        b.txn(b.days_ago(rng.randint(1, last_day)), total * rng.uniform(0.7, 0.95), "wire",
              acct, dst, memo=rng.choice(("VEHICLE PURCHASE", "INVOICE 2291", "PROPERTY DEPOSIT",
                                          "INVESTMENT")))
    decoys(b, parties, acct)

    flags = [RedFlag(code="CASH_BELOW_CTR_THRESHOLD", evidence_ids=tuple(t.id for t in near)),
             RedFlag(code="CASH_INCONSISTENT_WITH_PROFILE",
                     evidence_ids=(subject.id,) + tuple(t.id for t in deposits))]
    if len({t.branch for t in deposits}) > 1:
        flags.append(RedFlag(code="MULTI_BRANCH_CASH", evidence_ids=tuple(t.id for t in deposits)))
    others = [t.id for t in deposits if t.conducted_by not in (subject.id, *subject.directors)]
    if others:
        flags.append(RedFlag(code="MULTIPLE_DEPOSITORS", evidence_ids=tuple(others)))
    depositor_ids = {t.conducted_by for t in deposits}
    subjects = [subject.id] + [p.id for p in parties[1:] if p.id in depositor_ids
                               or variant == "front_business"]
    alert = b.alert(CASH_AGGREGATE, subject, [acct], sorted(deposits, key=lambda t: t.timestamp),
                    {"cash_deposits": len(deposits), "cash_total_usd": total,
                     "largest_deposit_usd": max(t.amount_usd for t in deposits)})
    truth = GroundTruth(kind="structuring", variant=variant, suspicious=True, decision="file_sar",
                        typology="structuring", subject_ids=tuple(subjects),
                        red_flags=tuple(flags), justifying_sections=("2.1", "2.2", "2.3"),
                        ubo_id=None)
    return b.build(alert, truth)


KIND = KindSpec(name="structuring", suspicious=True,
                variants=("single_depositor", "smurfing", "front_business"),
                rules=(CASH_AGGREGATE.code,), build=build, holdout_variants=("front_business",))
