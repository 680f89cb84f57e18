"""Read-only lookups over one `PublicCase`, built once per episode so tools stay O(result)."""

from __future__ import annotations

from collections import defaultdict

from memex.scenarios.model import (
    Account,
    CorrespondentHop,
    DeviceLogin,
    Entity,
    OwnershipLink,
    PublicCase,
    TradeDocument,
    Transaction,
)


class CaseIndex:
    """Indexes the public case by ID and by relation. Holds no ground truth."""

    def __init__(self, case: PublicCase):
        self.case = case
        self.entities: dict[str, Entity] = {e.id: e for e in case.entities}
        self.accounts: dict[str, Account] = {a.id: a for a in case.accounts}
        self.transactions: dict[str, Transaction] = {t.id: t for t in case.transactions}
        self.documents: dict[str, TradeDocument] = {d.id: d for d in case.trade_documents}
        self.ids: frozenset[str] = frozenset(case.all_ids())
        self.accounts_of: dict[str, list[Account]] = defaultdict(list)
        for a in case.accounts:
            self.accounts_of[a.owner_id].append(a)
        self.txns_of_account: dict[str, list[Transaction]] = defaultdict(list)
        for t in case.transactions:
            for acct in {t.from_account, t.to_account} - {None}:
                self.txns_of_account[acct].append(t)
        self.owners_of: dict[str, list[OwnershipLink]] = defaultdict(list)
        self.holdings_of: dict[str, list[OwnershipLink]] = defaultdict(list)
        for o in case.ownership:
            self.owners_of[o.company_id].append(o)
            self.holdings_of[o.owner_id].append(o)
        self.docs_of_shipment: dict[str, list[TradeDocument]] = defaultdict(list)
        for d in case.trade_documents:
            self.docs_of_shipment[d.shipment_ref].append(d)
        self.payments_of_invoice: dict[str, list[Transaction]] = defaultdict(list)
        for t in case.transactions:
            if t.reference:
                self.payments_of_invoice[t.reference].append(t)
        self.hops_of: dict[str, list[CorrespondentHop]] = defaultdict(list)
        for h in case.correspondent_hops:
            self.hops_of[h.transaction_id].append(h)
        self.logins_by_device: dict[str, list[DeviceLogin]] = defaultdict(list)
        self.logins_by_ip: dict[str, list[DeviceLogin]] = defaultdict(list)
        for d in case.devices:
            self.logins_by_device[d.device_id].append(d)
            self.logins_by_ip[d.ip_address].append(d)
        self.prices = {m.commodity.lower(): m for m in case.market_prices}
        self.sof_of = defaultdict(list)
        for s in case.source_of_funds:
            self.sof_of[s.entity_id].append(s)
        self.replies = {(r.entity_id, r.topic): r for r in case.information_replies}

    def owner_id(self, account_id: str | None) -> str | None:
        return None if account_id is None else self.accounts[account_id].owner_id

    def owner_name(self, account_id: str | None) -> str:
        if account_id is None:
            return "cash"
        return self.entities[self.accounts[account_id].owner_id].name

    def alert_ids(self) -> frozenset[str]:
        """The IDs the alert shows (`PublicCase.alert_shown_ids`), always resident."""
        return self.case.alert_shown_ids
