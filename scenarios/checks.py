"""Cross-checks: the views a latent story writes beyond the alert, corroborating or not.

Every check pairs two views and writes the records of both in either mode:

- `source_of_funds` (the source-of-funds document vs the alerted flow): consistent, the
  document's amount matches the flow; inconsistent, it is an independent draw of the flow's
  size, far from it.
- `trace` (a wire trace vs the registry): consistent, the wire's last hop is a party unrelated
  to the subject; inconsistent, a company the subject owns (the money came back).
- `device` (device overlap vs the registry): consistent, the subject's device also runs a
  company the registry shows it owns; inconsistent, an unrelated company's account.
- `watchlist` (a watchlist entry vs the KYC profile): consistent, a namesake with another date
  of birth or incorporation; inconsistent, the same date (a confirmed match).
- `holdings` (the registry vs the alerted counterparties): consistent, none of the subject's
  holdings is a counterparty; inconsistent, one is.
- `price` (trade documents vs the market band): consistent, the band brackets the invoiced
  price; inconsistent, it sits well below (over-invoicing) or above (under-invoicing) it.
- `aggregate_ownership` (the counterparty's registry owners vs the sanctions list, OFAC 50
  Percent Rule): four owners, each under 50 percent; two of them have sanctions entries.
  Consistent, one entry is a namesake (another date of birth) or the two confirmed owners
  hold under 50 percent together; inconsistent, both are confirmed and hold 50 percent or
  more in aggregate.
- `authority` (a power of attorney on the customer's file vs the alerted payee): consistent,
  the attorney-in-fact named in the document is the payee; inconsistent, someone else.
- `payee_watchlist` (a watchlist entry vs the payee's registry data): the `watchlist` check
  on the alerted payee instead of the subject.

Both modes write the same records with the same distributions, view by view: an inconsistent
document amount is a fresh draw of the flow size, an inconsistent last hop or co-user comes
from the same company factory as a consistent one, an inconsistent date from the same date
distribution. Only the relation between the two views differs, so no single view decides.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, timedelta

from memex.scenarios import vocab
from memex.scenarios.background import NEWS_HEADLINES, SANCTIONS_PROGRAMS, name_variant
from memex.scenarios.builder import CaseBuilder, iso
from memex.scenarios.model import Entity, OwnershipLink
from memex.scenarios.surfaces import Surface, _incorporation
from memex.scenarios.truth import RedFlag

SOURCE_OF_FUNDS, TRACE, DEVICE, WATCHLIST, HOLDINGS, PRICE = (
    "source_of_funds", "trace", "device", "watchlist", "holdings", "price")
AGGREGATE_OWNERSHIP, AUTHORITY, PAYEE_WATCHLIST = (
    "aggregate_ownership", "authority", "payee_watchlist")
ALL_CHECKS = (SOURCE_OF_FUNDS, TRACE, DEVICE, WATCHLIST, HOLDINGS, PRICE, AGGREGATE_OWNERSHIP,
              AUTHORITY, PAYEE_WATCHLIST)
# A document explains the flow when its amount is within this factor of it (fees, gross-ups).
DOCUMENT_MATCH_FACTOR = 1.04
DOCUMENT_MISMATCH_FACTOR = 1.6
MARKET_BAND_HALF_WIDTH = 0.12

DOC_DESCRIPTIONS = {
    "point-of-sale cash summary": "Cash takings recorded by the point-of-sale system",
    "audited accounts extract": "Cash sales for the period, per the audited accounts",
    "sales tax return": "Taxable cash sales declared for the period",
    "bill of sale": "Private sale of a vehicle, paid in cash",
    "casino cash-out receipt": "Casino cash-out, gaming winnings",
    "business income statement": "Cash income from self-employment for the period",
    "inheritance letter": "Cash left by a relative, per the executor's letter",
    "customer contract": "Contract for goods and services, payment schedule",
    "loan agreement": "Loan facility, drawdown",
    "advisory agreement": "Advisory mandate, success fee",
    "board resolution": "Resolution approving the transaction",
    "sale agreement": "Sale of an asset, completion payment",
    "investment statement": "Redemption of an investment",
    "property sale deed": "Sale of real property, completion",
    "grant of probate": "Estate distribution to an heir under probate",
    "share sale agreement": "Sale of a shareholding",
    "dividend resolution": "Dividend declared by a family company",
    "consultancy agreement": "Consultancy fees under a written agreement",
    "sales contract": "Sales contract with the trading partner",
    "marketplace payout statement": "Marketplace payouts and buyer payments for the period",
    "commission statement": "Sales commissions collected from customers on the route",
    "franchise sales report": "Franchise locations' takings remitted to the operator",
    "shareholder loan agreement": "Loan from a shareholder, drawdown schedule",
    "cash pooling agreement": "Group cash-pooling arrangement, sweep and return",
    "subscription agreement": "Subscription for new shares, capital contribution",
    "gift letter": "Gift from a family member toward the purchase, signed by the donor",
    "mortgage commitment": "Bank mortgage commitment for the purchase",
    "capital contribution agreement": "Members' capital contribution to the company",
    "member loan agreement": "Loan from a member to the company for the purchase",
}
GENERIC_DOCS = ("bank reference letter", "salary certificate", "certificate of incorporation")


@dataclass
class Registry:
    """The subject's registry links: who owns it, and what it owns."""

    owner_links: list[OwnershipLink]
    holdings: list[tuple[Entity, OwnershipLink]]
    ubo: Entity | None
    _lent: set[str] = field(default_factory=set)

    def spare_holding(self, b: CaseBuilder, avoid: set[str]) -> tuple[Entity, OwnershipLink]:
        """A holding no other check has used (the registry always has enough)."""
        free = [h for h in self.holdings if h[0].id not in self._lent | avoid] or self.holdings
        pick = b.pick(free)
        self._lent.add(pick[0].id)
        return pick


@dataclass
class Outcome:
    """What a check wrote: the view groups that decide it, and when it fails, its red flag."""

    groups: tuple[tuple[str, ...], ...]
    flag: RedFlag | None = None
    implicated: tuple[str, ...] = ()


def write_registry(b: CaseBuilder, s: Surface, n_holdings: int,
                   counterparty_holding: Entity | None) -> Registry:
    """Ownership above a company subject (`layers` deep, sometimes through a nominee) and the
    subject's own holdings; the same shape for every story."""
    rng = b.rng
    owner_links, ubo = [], None
    if s.subject.kind == "company":
        current = s.subject
        for _ in range(b.knobs.layers - 1):
            holdco = s.company_like()
            owner_links.append(b.own(holdco, current, b.pick((100.0, 100.0, 75.0))))
            current = holdco
        ubo = s.directors[0] if rng.random() < 0.5 else b.person(
            customer=False, country=rng.choice((s.subject.country, "GB", "AE", "CY")))
        owner_links.append(b.own(ubo, current, b.pick((100.0, 80.0, 60.0)),
                                 nominee=rng.random() < 0.35))
    companies = [s.company_like() for _ in range(n_holdings)]
    if counterparty_holding is not None:
        companies[b.ri(0, n_holdings - 1)] = counterparty_holding
    holdings = [(c, b.own(s.subject, c, b.pick((25.0, 40.0, 51.0, 60.0, 100.0))))
                for c in companies]
    return Registry(owner_links, holdings, ubo)


def _first_day(s: Surface) -> date:
    return date.fromisoformat(min(t.timestamp for t in s.alert_txns)[:10])


def _far_total(b: CaseBuilder, s: Surface) -> float:
    total = s.flow_total
    for _ in range(12):
        x = s.resample_total()
        if not 1 / DOCUMENT_MISMATCH_FACTOR <= x / total <= DOCUMENT_MISMATCH_FACTOR:
            return x
    return total * b.pick((0.4, 2.5))


def source_of_funds(b: CaseBuilder, s: Surface, ok: bool, code: str) -> Outcome:
    kind = b.pick(s.doc_kinds)
    amount = s.flow_total * b.rng.uniform(1.0, DOCUMENT_MATCH_FACTOR) if ok else _far_total(b, s)
    when = iso(_first_day(s) - timedelta(days=b.ri(2, 20)))
    doc = b.supporting(kind, DOC_DESCRIPTIONS[kind], amount, when, s.doc_counterparty)
    extra = b.supporting(b.pick(GENERIC_DOCS), "Standard due-diligence document", None,
                         b.past_date(200, 900))
    sof = b.sof(s.subject, f"{kind} and ordinary income", (doc, extra))
    flag = None if ok else RedFlag(
        code=code, evidence_ids=(sof.id, doc.id, *(t.id for t in s.alert_txns)),
        carrier_ids=(doc.id,))
    return Outcome(((sof.id, doc.id, extra.id),), flag)


def generic_source_of_funds(b: CaseBuilder, s: Surface) -> None:
    """A declaration that explains nothing in particular (written for everyone alike)."""
    if b.rng.random() < 0.5:
        doc = b.supporting(b.pick(GENERIC_DOCS), "Standard due-diligence document", None,
                           b.past_date(200, 900))
        b.sof(s.subject, "ordinary income and savings", (doc,))


def _bank(b: CaseBuilder, country: str) -> str:
    return b.pick(vocab.CORRESPONDENT_BANKS.get(country, ("International Commerce Bank",)))


def trace(b: CaseBuilder, s: Surface, ok: bool, reg: Registry,
          code: str = "ROUND_TRIP") -> Outcome:
    """The traced wire's far end: an unrelated company, or one the subject owns."""
    rng, t = b.rng, s.traced
    if ok:
        last, link = s.company_like(), None
    else:
        last, link = reg.spare_holding(b, set())
    onward = s.trace_direction == "onward"
    near = b.acct(t.to_account if onward else t.from_account)
    near_party = b.entity(near.owner_id)
    amount = t.amount_usd
    legs = [(vocab.BANK_NAME, near.bank, near.country, near_party.name, amount, 0) if onward
            else (near.bank, vocab.BANK_NAME, near.country, near_party.name, amount, 0)]
    prev = near.bank
    for i in range(b.knobs.hops):
        party = last if i == b.knobs.hops - 1 else s.company_like()
        bank = _bank(b, party.country)
        amount *= rng.uniform(0.96, 0.995) if onward else rng.uniform(1.0, 1.04)
        legs.append((prev, bank, party.country, party.name, amount, i + 1) if onward
                    else (bank, prev, party.country, party.name, amount, i + 1))
        prev = bank
    hops = b.trace(t, s.trace_direction, legs)
    hop_ids = tuple(h.id for h in hops)
    links = tuple(x.id for _, x in reg.holdings)
    if ok:
        return Outcome((hop_ids, links))
    flag = RedFlag(code=code, evidence_ids=(*hop_ids, link.id), carrier_ids=(hops[-1].id,))
    return Outcome((hop_ids, (link.id,)), flag, (last.id,))


def device(b: CaseBuilder, s: Surface, ok: bool, reg: Registry) -> Outcome:
    """A device on the subject's account that also runs another company's account."""
    actor = s.subject if s.subject.kind == "person" else s.directors[0]
    if ok:
        other, link = reg.spare_holding(b, set())
    else:
        other, link = s.company_like(), None
    other_acct = b.account(other, ours=True, kind="business",
                           opened=b.past_date(200, 2000))
    shared = b.device()
    mine = b.logins(actor, s.account, shared, b.ri(2, 4))
    theirs = b.logins(other, other_acct, shared, b.ri(2, 4))
    log_ids = tuple(x.id for x in mine + theirs)
    if ok:
        return Outcome((log_ids, (link.id,)))
    flag = RedFlag(code="SHARED_DEVICE_ACROSS_ENTITIES", evidence_ids=log_ids,
                   carrier_ids=tuple(x.id for x in theirs))
    return Outcome((log_ids, tuple(x.id for _, x in reg.holdings)), flag, (other.id,))


def watchlist(b: CaseBuilder, s: Surface, ok: bool, party: Entity | None = None) -> Outcome:
    """A hit on the subject's (or `party`'s) name; only its date tells a namesake from it."""
    subj = party or s.subject
    person = subj.kind == "person"
    own_date = subj.date_of_birth if person else subj.incorporation_date
    listed_date = own_date
    while ok and listed_date == own_date:
        listed_date = b.dob() if person else _incorporation(b)
    name = name_variant(b, subj.name) if person and b.rng.random() < 0.3 else subj.name
    adverse = b.rng.random() < 0.6
    detail = (f"{subj.name.split()[-1]} {b.pick(NEWS_HEADLINES)} "
              f"({b.pick(('Daily Courier', 'Financial Ledger', 'Metro Herald'))})") if adverse \
        else f"SDN list, programme {b.pick(SANCTIONS_PROGRAMS)}"
    entry = b.watch("adverse_media" if adverse else "sanctions", name, subj.country, detail,
                    dob=listed_date)
    flag = None if ok else RedFlag(code="ADVERSE_MEDIA" if adverse else "SANCTIONS_MATCH",
                                   evidence_ids=(entry.id, subj.id), carrier_ids=(entry.id,))
    return Outcome(((entry.id,),), flag)


def holdings(s: Surface, ok: bool, reg: Registry, counterparty: Entity | None) -> Outcome:
    """Whether the registry shows the subject owning one of its counterparties."""
    if ok or counterparty is None:
        return Outcome((tuple(x.id for _, x in reg.holdings),))
    link = next(x for c, x in reg.holdings if c.id == counterparty.id)
    txns = tuple(t.id for t in s.alert_txns)
    flag = RedFlag(code="UNDISCLOSED_RELATED_PARTY", evidence_ids=(link.id, *txns),
                   carrier_ids=(link.id,))
    return Outcome(((link.id,),), flag, (counterparty.id,))


def price(b: CaseBuilder, s: Surface, ok: bool, over: bool) -> Outcome:
    """The commodity's market band around the invoiced price, or well away from it."""
    p = s.unit_price or 1.0
    if ok:
        centre = p * math.exp(b.rng.uniform(math.log(0.94), math.log(1.06)))
    else:
        m = b.rng.uniform(*b.knobs.price_multiple)
        centre = p / ((1 + MARKET_BAND_HALF_WIDTH) * m) if over \
            else p * m / (1 - MARKET_BAND_HALF_WIDTH)
    band = b.set_price(s.commodity or "", centre * (1 - MARKET_BAND_HALF_WIDTH),
                       centre * (1 + MARKET_BAND_HALF_WIDTH))
    if ok:
        return Outcome((s.customs_ids, (band.id,)))
    invoices = tuple(t.reference for t in s.alert_txns if t.reference)
    flag = RedFlag(code="OVER_INVOICING" if over else "UNDER_INVOICING",
                   evidence_ids=(*invoices, *s.customs_ids, band.id),
                   carrier_ids=(*s.customs_ids, band.id))
    return Outcome((s.customs_ids, (band.id,)), flag,
                   (s.partner.id,) if s.partner is not None else ())


def _owner_split(b: CaseBuilder) -> list[int]:
    """Four holdings, each under 50 percent; the two largest always hold more than half."""
    p1 = b.ri(30, 46)
    p2 = b.ri(22, p1)
    rest = 100 - p1 - p2
    p3 = b.ri((rest + 1) // 2, rest - 4)
    return [p1, p2, p3, rest - p3]


def aggregate_ownership(b: CaseBuilder, s: Surface, ok: bool) -> Outcome:
    """The counterparty's owners and the sanctions entries on two of them (OFAC 50 Percent
    Rule: holdings of blocked persons add up)."""
    partner = s.partner or s.counterparties[0]
    shares = _owner_split(b)
    owners = [b.person(customer=False, country=b.pick(vocab.HUB_OWNER_COUNTRIES))
              for _ in shares]
    order = list(range(4))
    b.rng.shuffle(order)
    links = {i: b.own(owners[i], partner, float(shares[i])) for i in order}
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    namesake = ok and b.rng.random() < 0.5
    if ok and not namesake:
        pairs = [p for p in pairs if shares[p[0]] + shares[p[1]] < 50]
    elif not ok:
        pairs = [p for p in pairs if shares[p[0]] + shares[p[1]] >= 50]
    listed = list(b.pick(pairs))
    b.rng.shuffle(listed)
    other = listed[0] if namesake else None
    entries = []
    for i in listed:
        owner = owners[i]
        dob = owner.date_of_birth
        while i == other and dob == owner.date_of_birth:
            dob = b.dob(30, 75)
        entries.append(b.watch("sanctions", owner.name, owner.country,
                               f"SDN list, programme {b.pick(SANCTIONS_PROGRAMS)}", dob=dob))
    link_ids = tuple(links[i].id for i in order)
    entry_ids = tuple(e.id for e in entries)
    if ok:
        return Outcome((link_ids, entry_ids))
    listed_links = tuple(links[i].id for i in listed)
    flag = RedFlag(code="BLOCKED_AGGREGATE_OWNERSHIP", evidence_ids=(*listed_links, *entry_ids),
                   carrier_ids=(*listed_links, *entry_ids))
    return Outcome((link_ids, entry_ids), flag, (partner.id,))


def authority(b: CaseBuilder, s: Surface, ok: bool) -> Outcome:
    """A durable power of attorney on the customer's file: does it name the alerted payee?"""
    payee = s.payee or s.subject
    agent = payee.name if ok else b.person_name()
    poa = b.supporting("durable power of attorney",
                       "Attorney-in-fact appointed to act on the customer's accounts", None,
                       b.past_date(120, 1800), agent)
    extra = b.supporting(b.pick(("pension statement", "bank reference letter")),
                         "Standard due-diligence document", None, b.past_date(200, 900))
    sof = b.sof(s.subject, "pension and savings; authorities on file", (poa, extra))
    if ok:
        return Outcome(((sof.id, poa.id, extra.id),))
    paid = tuple(t.id for t in s.alert_txns if t.channel != "cash")
    flag = RedFlag(code="PAYEE_NOT_AUTHORISED", evidence_ids=(sof.id, poa.id, *paid),
                   carrier_ids=(poa.id,))
    return Outcome(((sof.id, poa.id, extra.id),), flag, (payee.id,))
