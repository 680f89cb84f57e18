"""Benign look-alike: a cash-intensive business depositing its takings.

Fires the same aggregate-cash rule as structuring. What tells it apart is in the data: the
business type and declared turnover explain the volume, the same rhythm runs through months of
history, and deposits over $10,000 are made openly with CTRs filed. The manual's
cash-intensive business guidance (8.1) is what makes closing it correct.
"""

from __future__ import annotations

from memex.scenarios import vocab
from memex.scenarios.background import business_banking, decoys
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.difficulty import ALERT_WINDOW_DAYS
from memex.scenarios.kinds import KindSpec
from memex.scenarios.manual import CTR_THRESHOLD_USD
from memex.scenarios.rules import CASH_AGGREGATE
from memex.scenarios.truth import GroundTruth


def build(b: CaseBuilder, variant: str) -> Case:
    rng, k = b.rng, b.knobs
    btype, turnover = rng.choice(vocab.CASH_BUSINESSES)
    cash_share = rng.uniform(0.35, 0.6)
    # Large enough that the window's takings clear the rule's $25,000 aggregate.
    turnover = round(max(turnover * rng.uniform(0.8, 1.25),
                         rng.uniform(34_000, 48_000) * 12 / cash_share), -3)
    owners = [b.person(occupation="business owner",
                       declared_annual_income_usd=round(turnover * 0.1, -3))
              for _ in range(1 if variant == "daily_takings" else 2)]
    monthly_cash = turnover * cash_share / 12
    subject = b.company(business_type=btype, declared_annual_turnover_usd=turnover,
                        employees=rng.randint(6, 30), directors=tuple(o.id for o in owners),
                        incorporation_date=b.past_date(1500, 7000),
                        customer_since=b.past_date(1100, 4000),
                        expected_monthly_cash_usd=round(monthly_cash * rng.uniform(0.95, 1.2), -2),
                        expected_monthly_wires_usd=0.0)
    shares = [100.0] if len(owners) == 1 else [60.0, 40.0]
    for owner, pct in zip(owners, shares, strict=True):
        b.own(owner, subject, pct)
    acct = b.account(subject, ours=True, kind="business")
    business_banking(b, subject, acct, turnover / 12, card_share=1 - cash_share,
                     staff=subject.employees)

    # Takings are banked on a fixed rhythm through the whole history, not just the window.
    every = 2 if variant == "daily_takings" else rng.choice((5, 6))
    daily = monthly_cash / 30
    window = []
    span = k.history_days + ALERT_WINDOW_DAYS
    for d in range(span, 0, -every):
        amount = round(daily * every * rng.lognormvariate(0, 0.22), 2)
        t = b.txn(b.days_ago(d), amount, "cash", None, acct, conducted_by=owners[0],
                  branch=vocab.BRANCHES[0] if rng.random() < 0.85 else vocab.BRANCHES[1],
                  memo="BUSINESS CASH DEPOSIT", hours=(16, 20))
        if d <= ALERT_WINDOW_DAYS:
            window.append(t)
    if every > 2 and all(t.amount_usd <= CTR_THRESHOLD_USD for t in window):
        # A business banking a week's takings crosses $10,000 in a normal week and files a CTR.
        amount = max(daily * 7 * rng.uniform(1.15, 1.4), CTR_THRESHOLD_USD * rng.uniform(1.05, 1.3))
        window.append(b.txn(b.window_day(1, 20), amount, "cash",
                            None, acct, conducted_by=owners[0], branch=vocab.BRANCHES[0],
                            memo="BUSINESS CASH DEPOSIT", hours=(16, 20)))
    decoys(b, owners + [subject], acct)
    alert = b.alert(CASH_AGGREGATE, subject, [acct], window,
                    {"cash_deposits": len(window),
                     "cash_total_usd": sum(t.amount_usd for t in window),
                     "largest_deposit_usd": max(t.amount_usd for t in window)})
    truth = GroundTruth(kind="cash_business", variant=variant, suspicious=False,
                        decision="close_alert", typology=None, subject_ids=(), red_flags=(),
                        justifying_sections=("8.1", "1.1"), ubo_id=None)
    return b.build(alert, truth)


KIND = KindSpec(name="cash_business", suspicious=False,
                variants=("daily_takings", "weekly_banking"), rules=(CASH_AGGREGATE.code,),
                build=build)
