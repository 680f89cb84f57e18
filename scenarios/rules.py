"""Transaction-monitoring rules. A rule is a pattern over activity, not a typology: every rule
fires for at least one suspicious kind and at least one benign look-alike."""

from __future__ import annotations

from memex.scenarios.model import AlertRule

CASH_AGGREGATE = AlertRule(
    code="TM-CASH-01",
    name="Aggregate cash deposits",
    description="Five or more cash deposits totalling more than $25,000 into one customer's "
                "accounts within 30 days.",
)
FUNDS_FANOUT = AlertRule(
    code="TM-FLOW-02",
    name="Inflow followed by fan-out",
    description="Incoming funds of $100,000 or more followed within 5 days by outgoing "
                "transfers to four or more beneficiaries.",
)
HIGH_RISK_TRADE = AlertRule(
    code="TM-TRADE-03",
    name="Trade payment, high-risk jurisdiction",
    description="Trade-related payments of $50,000 or more in 30 days with a counterparty in a "
                "jurisdiction on a FATF list.",
)
PEP_TRANSFER = AlertRule(
    code="TM-PEP-04",
    name="Large transfer, politically exposed customer",
    description="A single transfer of $250,000 or more to or from a customer flagged as a "
                "politically exposed person.",
)
FUNNEL_DEPOSITS = AlertRule(
    code="TM-FUNNEL-05",
    name="Dispersed deposits, rapid outflow",
    description="Ten or more deposits from three or more branches or senders totalling more "
                "than $15,000 within 30 days, with at least 70 percent sent on within 5 days.",
)
LOAN_INFLOW = AlertRule(
    code="TM-LOAN-06",
    name="Loan or capital received after a large outgoing transfer",
    description="A loan drawdown or capital contribution of $150,000 or more received within "
                "45 days of an outgoing transfer of at least half that amount.",
)
HUB_TRADE = AlertRule(
    code="TM-SANC-07",
    name="High-priority goods, transshipment jurisdiction",
    description="Trade payments of $25,000 or more in 30 days for goods on the Common High "
                "Priority List with a counterparty in a known transshipment jurisdiction.",
)
PROPERTY_PURCHASE = AlertRule(
    code="TM-RE-08",
    name="Residential real-estate purchase without bank financing",
    description="A payment of $300,000 or more to a title, escrow or settlement agent, funded "
                "by transfers into the buyer's account within 30 days.",
)
ELDER_ACTIVITY = AlertRule(
    code="TM-ELDER-09",
    name="Change in activity, older customer",
    description="A customer aged 65 or over whose outgoing payments in 30 days exceed three "
                "times the monthly average of the prior six months, to a payee first paid in "
                "the window.",
)

ALERT_RULES: dict[str, AlertRule] = {
    r.code: r for r in (CASH_AGGREGATE, FUNDS_FANOUT, HIGH_RISK_TRADE, PEP_TRANSFER,
                        FUNNEL_DEPOSITS, LOAN_INFLOW, HUB_TRADE, PROPERTY_PURCHASE, ELDER_ACTIVITY)
}
