"""The public data model of an AML case: everything a tool is allowed to read.

A case is a small, self-consistent slice of a bank's world. This module holds only what the
bank (and, through tools, the agent) can legitimately see. The hidden answer to the case lives
in `scenarios.truth`, and the two meet only in `scenarios.case.Case`, so a function that is
handed a `PublicCase` cannot reach ground truth by accident.

Conventions: amounts are USD floats rounded to cents; dates are ISO `YYYY-MM-DD`, timestamps
ISO `YYYY-MM-DDTHH:MM`; countries are ISO 3166-1 alpha-2 codes. Every model is frozen, so a
generated case cannot be mutated after the fact.
"""

from __future__ import annotations

from functools import cached_property
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from memex.envkit.trusted import Trusted

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = get_args(Difficulty)
# The typology labels a SAR may carry: one per suspicious kind (`generator.SUSPICIOUS_KINDS`).
Typology = Literal["structuring", "layering", "trade_based", "funnel_account", "loan_back",
                   "sanctions_evasion", "real_estate", "elder_exploitation"]
TYPOLOGIES: tuple[Typology, ...] = get_args(Typology)

Channel = Literal["cash", "wire", "ach", "card", "cheque"]
RiskRating = Literal["low", "medium", "high"]
WatchlistName = Literal["sanctions", "pep", "adverse_media"]
# What a request for information to the relationship manager may ask about.
InformationTopic = Literal["source_of_funds", "related_parties", "device_use", "identity",
                           "trade_terms", "authority"]
INFORMATION_TOPICS: tuple[InformationTopic, ...] = get_args(InformationTopic)
TradeDocKind = Literal["invoice", "customs_declaration", "bill_of_lading"]


class Frozen(Trusted, BaseModel):
    """A frozen case record. The generator builds records with `Model.trusted(**fields)`
    (`envkit.trusted`): it writes ~150 per case from values it has already typed, and
    `tests/unit/test_generation_golden.py` validates generated cases through the models."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class PepRole(Frozen):
    position: str
    country: str
    since: str
    until: str | None = None


class Entity(Frozen):
    """A person or company. KYC fields are filled only for the bank's own customers."""

    id: str
    kind: Literal["person", "company"]
    name: str
    country: str = Field(description="Residence (person) or jurisdiction of incorporation.")
    address: str
    customer: bool = Field(description="True when the bank holds a KYC file on this entity.")
    customer_since: str | None = None
    risk_rating: RiskRating | None = None
    # persons
    date_of_birth: str | None = None
    nationality: str | None = None
    occupation: str | None = None
    employer: str | None = None
    declared_annual_income_usd: float | None = None
    pep: PepRole | None = None
    household: tuple[str, ...] = Field(
        default=(), description="Entity IDs of household members named on the KYC file.")
    # identifiers: passport or national ID number (person), registration number (company)
    id_number: str | None = None
    # companies
    business_type: str | None = None
    incorporation_date: str | None = None
    declared_annual_turnover_usd: float | None = None
    employees: int | None = None
    directors: tuple[str, ...] = ()
    # expected activity recorded at onboarding
    expected_monthly_cash_usd: float | None = None
    expected_monthly_wires_usd: float | None = None


class Account(Frozen):
    id: str
    owner_id: str
    bank: str
    country: str
    kind: Literal["checking", "savings", "business", "private_banking", "escrow", "payroll"]
    currency: str
    opened: str
    ours: bool = Field(description="Held at the reporting bank (its ledger is visible).")


class Transaction(Frozen):
    """One ledger line. Cash deposits have no source account; cash withdrawals no destination."""

    id: str
    timestamp: str
    amount: float
    currency: str
    amount_usd: float
    channel: Channel
    from_account: str | None
    to_account: str | None
    conducted_by: str | None = Field(default=None, description="Entity who conducted cash.")
    branch: str | None = None
    memo: str = ""
    reference: str | None = Field(default=None, description="Invoice or contract reference.")
    ctr_filed: bool = False


class OwnershipLink(Frozen):
    id: str
    owner_id: str
    company_id: str
    percent: float
    nominee: bool = Field(description="Registered as a nominee holding in the company registry.")
    since: str


class WatchlistEntry(Frozen):
    id: str
    list: WatchlistName
    name: str
    country: str
    date_of_birth: str | None = Field(
        default=None, description="Date of birth (person) or of incorporation (company).")
    nationality: str | None = None
    id_number: str | None = Field(
        default=None, description="Passport or ID number (person), registration (company).")
    detail: str = Field(description="Programme, public function or headline.")
    listed_on: str


class DeviceLogin(Frozen):
    id: str
    entity_id: str
    account_id: str
    device_id: str
    ip_address: str
    timestamp: str


class TradeDocument(Frozen):
    id: str
    kind: TradeDocKind
    shipment_ref: str
    date: str
    exporter_id: str
    importer_id: str
    commodity: str
    quantity: float
    unit: str
    unit_price_usd: float | None = None
    total_usd: float | None = None
    origin_country: str
    destination_country: str
    price_basis: Literal["FOB", "CIF"] | None = Field(
        default=None, description="Incoterm of the invoiced price: CIF includes freight.")
    freight_usd: float | None = Field(default=None, description="Freight charged (total).")
    vessel: str | None = None
    port_of_loading: str | None = None
    port_of_discharge: str | None = None


class MarketPrice(Frozen):
    id: str
    commodity: str
    unit: str
    low_usd: float
    high_usd: float
    as_of: str
    source: str
    basis: Literal["FOB"] = "FOB"


class SupportingDocument(Frozen):
    id: str
    kind: str
    description: str
    amount_usd: float | None
    date: str
    counterparty: str | None = None
    reference: str | None = Field(default=None, description="Document or account number.")


class SourceOfFunds(Frozen):
    id: str
    entity_id: str
    declared_source: str
    declared_on: str
    documents: tuple[SupportingDocument, ...] = ()


class CorrespondentHop(Frozen):
    """One movement at another bank, visible only through a wire trace.

    `onward` hops follow a wire after it left the bank: `party_*` is who received the funds.
    `origin` hops follow an incoming wire back to its source: `party_*` is who sent them.
    """

    id: str
    transaction_id: str
    sequence: int = Field(ge=1)
    direction: Literal["onward", "origin"]
    from_bank: str
    to_bank: str
    party_name: str
    party_id: str | None = Field(default=None,
                                 description="The party's entity record, when the bank has one.")
    party_account: str
    party_country: str
    amount_usd: float
    value_date: str


class InformationReply(Frozen):
    """The relationship manager's answer to a request for information on one topic about a
    customer, delivered a few steps after the request (`request_information`)."""

    id: str
    entity_id: str
    topic: InformationTopic
    statement: str
    documents: tuple[SupportingDocument, ...] = ()


class AlertRule(Frozen):
    code: str
    name: str
    description: str


class Alert(Frozen):
    """What the monitoring system raised. It names a rule, never a typology."""

    id: str
    rule: AlertRule
    subject_id: str
    account_ids: tuple[str, ...]
    window_start: str
    window_end: str
    transaction_ids: tuple[str, ...]
    figures: dict[str, float]
    raised_on: str


class PublicCase(Frozen):
    """Everything the bank can see about a case. Tools read this and nothing else."""

    case_id: str
    difficulty: Difficulty
    bank: str
    as_of: str
    step_budget: int
    alert: Alert
    entities: tuple[Entity, ...]
    accounts: tuple[Account, ...]
    transactions: tuple[Transaction, ...]
    ownership: tuple[OwnershipLink, ...]
    watchlist: tuple[WatchlistEntry, ...]
    devices: tuple[DeviceLogin, ...]
    trade_documents: tuple[TradeDocument, ...]
    market_prices: tuple[MarketPrice, ...]
    source_of_funds: tuple[SourceOfFunds, ...]
    correspondent_hops: tuple[CorrespondentHop, ...]
    information_replies: tuple[InformationReply, ...] = ()

    def all_ids(self) -> list[str]:
        """Every object ID in the case, in a stable order (for uniqueness checks)."""
        ids = [self.case_id, self.alert.id]
        for group in (
            self.entities, self.accounts, self.transactions, self.ownership, self.watchlist,
            self.devices, self.trade_documents, self.market_prices, self.source_of_funds,
            self.correspondent_hops, self.information_replies,
        ):
            ids.extend(item.id for item in group)
        ids.extend(doc.id for sof in self.source_of_funds for doc in sof.documents)
        ids.extend(doc.id for r in self.information_replies for doc in r.documents)
        return ids

    @cached_property
    def alert_shown_ids(self) -> frozenset[str]:
        """The IDs the alert shows (the pinned header lists them, always resident): the alert,
        its subject and accounts, the triggering transactions, their parties' accounts and
        owners, who conducted them and the case records they reference. Computed once per case
        (a frozen record; pydantic's equality and dumps ignore the cache)."""
        a = self.alert
        triggering = set(a.transaction_ids)
        owner = {acc.id: acc.owner_id for acc in self.accounts}
        known = set(self.all_ids())
        shown = [a.id, a.subject_id, *a.account_ids, *a.transaction_ids]
        for txn in self.transactions:
            if txn.id not in triggering:
                continue
            for account in (txn.from_account, txn.to_account):
                if account is not None:
                    shown += (account, owner[account])
            shown += (i for i in (txn.conducted_by, txn.reference) if i in known)
        return frozenset(shown)
