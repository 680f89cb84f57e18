"""CaseBuilder: the one mutable object a case is assembled in, then frozen into a `Case`.

It owns the case's single `random.Random`, hands out IDs that are unique by construction, and
offers small constructors for each record type so typology modules read like a description of
the scheme rather than bookkeeping.

The constructors type every value themselves (amounts as floats, collections as tuples, nested
records as models) and build records with `Frozen.trusted`, without per-record validation:
generation must stay within its speed budget (`benchmarks/bench_generation.py`), and the
generated cases are validated through the models by `tests/unit/test_generation_golden.py`.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import date, timedelta
from functools import cache
from operator import attrgetter
from typing import TypeVar

from memex.scenarios import vocab
from memex.scenarios.case import Case
from memex.scenarios.difficulty import ALERT_WINDOW_DAYS, KNOBS
from memex.scenarios.ids import make_id
from memex.scenarios.manual import CTR_THRESHOLD_USD
from memex.scenarios.model import (
    Account,
    Alert,
    AlertRule,
    CorrespondentHop,
    DeviceLogin,
    Difficulty,
    Entity,
    InformationReply,
    MarketPrice,
    OwnershipLink,
    PepRole,
    PublicCase,
    SourceOfFunds,
    SupportingDocument,
    TradeDocument,
    Transaction,
    WatchlistEntry,
)
from memex.scenarios.truth import GroundTruth

T = TypeVar("T")

EPOCH = date(2024, 1, 1)
EPOCH_SPAN_DAYS = 640
# "HH:MM" of every minute of the day, for timestamps.
CLOCK = tuple(f"{m // 60:02d}:{m % 60:02d}" for m in range(24 * 60))
COMMODITY = {c[0]: c for c in vocab.COMMODITIES}
TRADE_DOC_PREFIX = {"invoice": "INV", "customs_declaration": "CUS", "bill_of_lading": "BOL"}
# Ledger order: by time, then ID.
BY_TIME = attrgetter("timestamp", "id")


# Dates and their ISO text are remembered across cases: a case makes a few hundred of each,
# all within a bounded range (the epoch span plus at most 9,000 days of history), and making
# them was a tenth of generation time. A remembered date also keeps its hash.
_date_from_ordinal = cache(date.fromordinal)


def weighted(options: Sequence[T], weights: Sequence[float], u: float) -> T:
    """The option a uniform draw `u` in [0, 1) falls on, each option taking its weight's share
    (the last option when rounding leaves `u` past the end)."""
    x = u * sum(weights)
    for option, w in zip(options, weights, strict=True):
        x -= w
        if x < 0:
            return option
    return options[-1]


@cache
def iso(d: date) -> str:
    return d.isoformat()


class CaseBuilder:
    """Accumulates one case. All randomness goes through `self.rng`."""

    def __init__(self, rng: random.Random, difficulty: Difficulty):
        self.rng = rng
        self.difficulty: Difficulty = difficulty
        self.knobs = KNOBS[difficulty]
        self.as_of = EPOCH + timedelta(days=rng.randrange(EPOCH_SPAN_DAYS))
        self._as_of_ordinal = self.as_of.toordinal()
        self.window_start = self.as_of - timedelta(days=ALERT_WINDOW_DAYS)
        self._ids: set[str] = set()
        self._names: set[str] = set()
        self.entities: list[Entity] = []
        self.accounts: list[Account] = []
        self.transactions: list[Transaction] = []
        self.ownership: list[OwnershipLink] = []
        self.watchlist: list[WatchlistEntry] = []
        self.devices: list[DeviceLogin] = []
        self.trade_documents: list[TradeDocument] = []
        self.market_prices: dict[str, MarketPrice] = {}
        self.source_of_funds: list[SourceOfFunds] = []
        self.hops: list[CorrespondentHop] = []
        self.replies: list[InformationReply] = []
        self._traced: set[str] = set()
        self._entity_by_id: dict[str, Entity] = {}
        self._entity_by_name: dict[str, str] = {}
        self._account_by_id: dict[str, Account] = {}
        self._shared: dict[str, Account] = {}

    # ---- identifiers -------------------------------------------------------------------
    def uid(self, prefix: str) -> str:
        """A fresh ID in the one format of `scenarios.ids`, random digits, unique in the case."""
        while True:
            candidate = make_id(prefix, self.rng.getrandbits(24))
            if candidate not in self._ids:
                self._ids.add(candidate)
                return candidate

    # ---- fast draws (random.randint/choice cost ~4x more; these are on every ledger line) ----
    def ri(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi]."""
        return lo + int(self.rng.random() * (hi - lo + 1))

    def pick(self, seq):
        return seq[int(self.rng.random() * len(seq))]

    # ---- time --------------------------------------------------------------------------
    def days_ago(self, days: int) -> date:
        return _date_from_ordinal(self._as_of_ordinal - days)

    def window_day(self, lo: int = 1, hi: int = ALERT_WINDOW_DAYS) -> date:
        """A day inside the alert window, `lo`..`hi` days before the as-of date."""
        return self.days_ago(self.ri(lo, hi))

    def history_day(self) -> date:
        return self.days_ago(self.ri(ALERT_WINDOW_DAYS + 1,
                                              ALERT_WINDOW_DAYS + self.knobs.history_days))

    def stamp(self, d: date, hours: tuple[int, int] = (8, 18)) -> str:
        return f"{iso(d)}T{CLOCK[self.ri(hours[0] * 60, hours[1] * 60 + 59)]}"

    def past_date(self, min_days: int, max_days: int) -> str:
        return iso(self.days_ago(self.ri(min_days, max_days)))

    # ---- names -------------------------------------------------------------------------
    def _unique(self, make) -> str:
        for _ in range(200):
            name = make()
            if name not in self._names:
                self._names.add(name)
                return name
        raise RuntimeError("name space exhausted")  # pragma: no cover - 1,900 names vs ~60 used

    def person_name(self) -> str:
        return self._unique(lambda: f"{self.pick(vocab.FIRST_NAMES)} "
                                    f"{self.pick(vocab.LAST_NAMES)}")

    def company_name(self, country: str, shell: bool = False) -> str:
        suffix = vocab.LEGAL_SUFFIX.get(country, "Ltd")
        if shell:
            return self._unique(lambda: f"{self.pick(vocab.SHELL_WORDS)} "
                                        f"{self.pick(vocab.SHELL_SUFFIX_WORDS)} {suffix}")
        return self._unique(lambda: f"{self.pick(vocab.COMPANY_WORDS_A)}"
                                    f"{self.pick(vocab.COMPANY_WORDS_B).lower()} "
                                    f"{self.pick(vocab.COMPANY_KINDS)} {suffix}")

    def street_address(self, country: str) -> str:
        city = self.pick(vocab.CITIES.get(country, ("Capital City",)))
        return f"{self.ri(2, 1999)} {self.pick(vocab.STREETS)}, {city}, {country}"

    def id_number(self, person: bool = True) -> str:
        """A passport number (person) or a company registration number."""
        return f"{'P' if person else 'RC'}{self.rng.getrandbits(27):08d}"

    def dob(self, min_age: int = 24, max_age: int = 70) -> str:
        year = self.as_of.year - self.ri(min_age, max_age)
        return f"{year}-{self.ri(1, 12):02d}-{self.ri(1, 28):02d}"

    # ---- parties -----------------------------------------------------------------------
    def _add_entity(self, entity: Entity) -> Entity:
        self.entities.append(entity)
        self._entity_by_id[entity.id] = entity
        self._entity_by_name[entity.name] = entity.id
        return entity

    def entity(self, entity_id: str) -> Entity:
        return self._entity_by_id[entity_id]

    def update_entity(self, entity: Entity, **fields) -> Entity:
        """Replace an entity's record with one whose `fields` differ (the ID stays)."""
        new = entity.model_copy(update=fields)
        i = next(i for i, e in enumerate(self.entities) if e.id == entity.id)
        self.entities[i] = self._entity_by_id[entity.id] = new
        return new

    def person(self, *, customer: bool = True, country: str = "US", name: str | None = None,
               **kyc) -> Entity:
        fields = {"date_of_birth": self.dob(), "address": self.street_address(country),
                  "nationality": country, "id_number": self.id_number()}
        if customer:
            fields["customer_since"] = self.past_date(400, 4000)
            fields["risk_rating"] = "low"
        fields.update(kyc)
        if isinstance(fields.get("pep"), dict):
            fields["pep"] = PepRole(**fields["pep"])
        return self._add_entity(Entity.trusted(id=self.uid("ENT"), kind="person",
                                               name=name or self.person_name(), country=country,
                                               customer=customer, **fields))

    def company(self, *, customer: bool = True, country: str = "US", shell: bool = False,
                name: str | None = None, **kyc) -> Entity:
        fields = {"address": self.street_address(country),
                  "incorporation_date": self.past_date(2000, 9000),
                  "id_number": self.id_number(person=False)}
        if customer:
            fields["customer_since"] = self.past_date(400, 3000)
            fields["risk_rating"] = "low"
        fields.update(kyc)
        return self._add_entity(Entity.trusted(id=self.uid("ENT"), kind="company",
                                               name=name or self.company_name(country, shell),
                                               country=country, customer=customer, **fields))

    def account(self, owner: Entity, *, ours: bool, kind: str = "checking",
                country: str | None = None, bank: str | None = None, currency: str = "USD",
                opened: str | None = None) -> Account:
        country = country or (vocab.BANK_COUNTRY if ours else owner.country)
        if bank is None:
            bank = vocab.BANK_NAME if ours else self.pick(
                vocab.CORRESPONDENT_BANKS.get(country, ("International Commerce Bank",)))
        acct = Account.trusted(id=self.uid("ACC"), owner_id=owner.id, bank=bank, country=country,
                               kind=kind, currency=currency,
                               opened=opened or owner.customer_since or self.past_date(400, 5000),
                               ours=ours)
        self.accounts.append(acct)
        self._account_by_id[acct.id] = acct
        return acct

    def acct(self, account_id: str) -> Account:
        return self._account_by_id[account_id]

    def shared_counterparty(self, role: str, name: str, kind: str = "company",
                            country: str = "US") -> Account:
        """One external account per role (landlord, utility, card processor...) per case."""
        if role not in self._shared:
            maker = self.company if kind == "company" else self.person
            self._names.add(name)
            owner = maker(customer=False, country=country, name=name)
            self._shared[role] = self.account(owner, ours=False, kind="business")
        return self._shared[role]

    # ---- activity ----------------------------------------------------------------------
    def txn(self, when: date, amount: float, channel: str, src: Account | None,
            dst: Account | None, *, memo: str = "", conducted_by: Entity | None = None,
            branch: str | None = None, reference: str | None = None, currency: str = "USD",
            usd_rate: float = 1.0, hours: tuple[int, int] = (8, 18)) -> Transaction:
        amount = round(float(amount), 2)
        amount_usd = amount if usd_rate == 1.0 else round(amount * usd_rate, 2)
        t = Transaction.trusted(
            id=self.uid("TXN"), timestamp=self.stamp(when, hours), amount=amount,
            currency=currency, amount_usd=amount_usd, channel=channel,
            from_account=src.id if src else None, to_account=dst.id if dst else None,
            conducted_by=conducted_by.id if conducted_by else None, branch=branch, memo=memo,
            reference=reference, ctr_filed=channel == "cash" and amount_usd > CTR_THRESHOLD_USD,
        )
        self.transactions.append(t)
        return t

    def trace(self, txn: Transaction, direction: str,
              legs: list[tuple[str, str, str, str, float, int]]) -> list[CorrespondentHop]:
        """Record a wire's correspondent trail. Each leg: (from_bank, to_bank, party_country,
        party_name, amount_usd, days_from_txn); see `CorrespondentHop` for directions."""
        base = date.fromisoformat(txn.timestamp[:10])
        hops = []
        for seq, (from_bank, to_bank, country, party, amount, lag) in enumerate(legs, 1):
            hop = CorrespondentHop.trusted(
                id=self.uid("HOP"), transaction_id=txn.id, sequence=seq, direction=direction,
                from_bank=from_bank, to_bank=to_bank, party_name=party,
                party_id=self._entity_by_name.get(party),
                party_account=f"{country}{self.ri(10, 99)}"
                              f"{self.rng.getrandbits(40):013d}",
                party_country=country,
                amount_usd=round(float(amount), 2),
                value_date=iso(base + timedelta(days=lag if direction == "onward" else -lag)))
            hops.append(hop)
        self.hops.extend(hops)
        self._traced.add(txn.id)
        return hops

    def own(self, owner: Entity, company: Entity, percent: float, *, nominee: bool = False,
            since: str | None = None) -> OwnershipLink:
        link = OwnershipLink.trusted(
            id=self.uid("OWN"), owner_id=owner.id, company_id=company.id, percent=float(percent),
            nominee=nominee, since=since or company.incorporation_date or self.past_date(300, 3000))
        self.ownership.append(link)
        return link

    def device(self) -> tuple[str, str]:
        """A fresh device fingerprint and IP address."""
        ip = (f"{self.ri(23, 212)}.{self.ri(0, 255)}."
              f"{self.ri(0, 255)}.{self.ri(1, 254)}")
        return f"DV{self.rng.getrandbits(48):012X}", ip

    def login(self, entity: Entity, account: Account, device: tuple[str, str],
              when: date) -> DeviceLogin:
        rec = DeviceLogin.trusted(id=self.uid("LOG"), entity_id=entity.id, account_id=account.id,
                                  device_id=device[0], ip_address=device[1],
                                  timestamp=self.stamp(when, (6, 23)))
        self.devices.append(rec)
        return rec

    def logins(self, entity: Entity, account: Account, device: tuple[str, str],
               count: int) -> list[DeviceLogin]:
        return [self.login(entity, account, device, self.window_day(1, 60)) for _ in range(count)]

    def watch(self, listname: str, name: str, country: str, detail: str,
              dob: str | None = None, *, nationality: str | None = None,
              id_number: str | None = None, person: bool = True) -> WatchlistEntry:
        """A list entry; its identifiers are the listed party's (fresh ones unless given)."""
        entry = WatchlistEntry.trusted(
            id=self.uid("WL"), list=listname, name=name, country=country, date_of_birth=dob,
            nationality=(nationality or country) if person else None,
            id_number=id_number or self.id_number(person), detail=detail,
            listed_on=self.past_date(60, 3000))
        self.watchlist.append(entry)
        return entry

    def doc(self, kind: str, shipment_ref: str, when: date, exporter: Entity, importer: Entity,
            commodity: str, quantity: float, unit: str, unit_price: float | None = None,
            vessel: str | None = None) -> TradeDocument:
        has_price = unit_price is not None
        doc = TradeDocument.trusted(
            id=self.uid(TRADE_DOC_PREFIX[kind]),
            kind=kind, shipment_ref=shipment_ref, date=iso(when), exporter_id=exporter.id,
            importer_id=importer.id, commodity=commodity, quantity=float(quantity), unit=unit,
            unit_price_usd=round(unit_price, 2) if has_price else None,
            total_usd=round(unit_price * quantity, 2) if has_price else None,
            origin_country=exporter.country, destination_country=importer.country,
            vessel=vessel if kind == "bill_of_lading" else None,
            port_of_loading=vocab.PORTS.get(exporter.country) if kind != "invoice" else None,
            port_of_discharge=vocab.PORTS.get(importer.country) if kind != "invoice" else None)
        self.trade_documents.append(doc)
        return doc

    def price(self, commodity: str) -> MarketPrice:
        if commodity not in self.market_prices:
            _, unit, low, high, _ = COMMODITY[commodity]
            drift = self.rng.uniform(0.92, 1.08)
            self.market_prices[commodity] = MarketPrice.trusted(
                id=self.uid("MKT"), commodity=commodity, unit=unit,
                low_usd=round(low * drift, 2), high_usd=round(high * drift, 2),
                as_of=iso(self.as_of), source=self.pick(vocab.PRICE_SOURCES))
        return self.market_prices[commodity]

    def set_price(self, commodity: str, low: float, high: float) -> MarketPrice:
        """Fix the market band of `commodity` on the case date (before `price` draws one)."""
        unit = COMMODITY[commodity][1]
        self.market_prices[commodity] = MarketPrice.trusted(
            id=self.uid("MKT"), commodity=commodity, unit=unit, low_usd=round(low, 2),
            high_usd=round(high, 2), as_of=iso(self.as_of), source=self.pick(vocab.PRICE_SOURCES))
        return self.market_prices[commodity]

    def supporting(self, kind: str, description: str, amount: float | None, when: str,
                   counterparty: str | None = None,
                   reference: str | None = None) -> SupportingDocument:
        return SupportingDocument.trusted(
            id=self.uid("DOC"), kind=kind, description=description,
            amount_usd=None if amount is None else round(float(amount), 2), date=when,
            counterparty=counterparty, reference=reference)

    def reply(self, entity: Entity, topic: str, statement: str,
              documents: tuple[SupportingDocument, ...] = ()) -> InformationReply:
        """The relationship manager's answer on `topic` (delivered when it is asked for)."""
        rec = InformationReply.trusted(id=self.uid("RFI"), entity_id=entity.id, topic=topic,
                                       statement=statement, documents=tuple(documents))
        self.replies.append(rec)
        return rec

    def sof(self, entity: Entity, declared: str,
            documents: tuple[SupportingDocument, ...] = ()) -> SourceOfFunds:
        rec = SourceOfFunds.trusted(id=self.uid("SOF"), entity_id=entity.id,
                                    declared_source=declared,
                                    declared_on=entity.customer_since or self.past_date(100, 900),
                                    documents=tuple(documents))
        self.source_of_funds.append(rec)
        return rec

    # ---- assembly ----------------------------------------------------------------------
    def alert(self, rule: AlertRule, subject: Entity, accounts: list[Account],
              txns: list[Transaction], figures: dict[str, float]) -> Alert:
        days = sorted(t.timestamp[:10] for t in txns)
        return Alert.trusted(id=self.uid("ALR"), rule=rule, subject_id=subject.id,
                             account_ids=tuple(a.id for a in accounts), window_start=days[0],
                             window_end=days[-1], transaction_ids=tuple(t.id for t in txns),
                             figures={k: round(float(v), 2) for k, v in figures.items()},
                             raised_on=iso(self.as_of))

    def _default_traces(self) -> None:
        """Every wire can be traced: untraced wires get a single direct hop."""
        for t in self.transactions:
            if t.channel != "wire" or t.id in self._traced:
                continue
            src = self._account_by_id.get(t.from_account or "")
            dst = self._account_by_id.get(t.to_account or "")
            if src is None or dst is None:
                continue
            if dst.ours:
                legs = [(src.bank, dst.bank, src.country, self.entity(src.owner_id).name,
                         t.amount_usd, 0)]
                self.trace(t, "origin", legs)
            else:
                legs = [(src.bank, dst.bank, dst.country, self.entity(dst.owner_id).name,
                         t.amount_usd, self.ri(0, 1))]
                self.trace(t, "onward", legs)

    def build(self, alert: Alert, truth: GroundTruth) -> Case:
        self._default_traces()
        # Market data covers every commodity, not just this case's.
        for commodity in vocab.COMMODITIES:
            self.price(commodity[0])
        public = PublicCase.trusted(
            case_id=self.uid("CASE"), difficulty=self.difficulty, bank=vocab.BANK_NAME,
            as_of=iso(self.as_of), step_budget=self.knobs.step_budget, alert=alert,
            entities=tuple(self.entities), accounts=tuple(self.accounts),
            transactions=tuple(sorted(self.transactions, key=BY_TIME)),
            ownership=tuple(self.ownership), watchlist=tuple(self.watchlist),
            devices=tuple(sorted(self.devices, key=BY_TIME)),
            trade_documents=tuple(self.trade_documents),
            market_prices=tuple(self.market_prices.values()),
            source_of_funds=tuple(self.source_of_funds), correspondent_hops=tuple(self.hops),
            information_replies=tuple(self.replies))
        return Case.trusted(public=public, truth=truth)
