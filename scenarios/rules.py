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

ALERT_RULES: dict[str, AlertRule] = {
    r.code: r for r in (CASH_AGGREGATE, FUNDS_FANOUT, HIGH_RISK_TRADE, PEP_TRANSFER)
}
