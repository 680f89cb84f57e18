"""Cross-checks: the views a latent story writes beyond the alert, and how they are weighed.

Every check pairs two views and writes the records of both in one of four dispositions
(`DISPOSITIONS`, manual 1.7): `clear` (the views agree), `explained` (they disagree the way the
red flag does, and a record already on file explains it innocently), `explained_rfi` (only the
customer's answer to a request for information explains it: the reply record on the check's
`TOPIC`) and `unexplained` (the red flag: nothing explains it; a request gets an evasive answer
or a document that does not reconcile).

| check | anomaly | innocent explanation |
|---|---|---|
| source_of_funds | document 5-60% off the flow | FX margin and charges on the ledger (5-15%) |
| trace | the last hop is the subject's company | an intra-group agreement disclosed |
| device | a co-user is not an owned company | a household member on the KYC file |
| watchlist | an entry with the same name and date | its ID number (or nationality) differs |
| holdings | an alerted counterparty is owned | a related party disclosed in a filing |
| price | the invoice beyond the FOB band | CIF: freight of 12-20% on the bill of lading |
| aggregate_ownership | listed owners hold >= 50% | one entry's ID number is another person's |
| authority | the power of attorney names another | a successor appointment names the payee |
| payee_watchlist | an entry with the payee's date | its ID number differs |

Every mode writes the same kinds of records with overlapping magnitudes: every case with a
source-of-funds check has an FX-charges line (only an explaining one equals the difference),
CIF invoices occur in explained and unexplained pricing alike, a device co-user may be a person
or a company in either, an entry always carries identifiers. Only the relation between the views
and the explanation decides a check, and only a combination of checks decides a case.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import date, timedelta

from memex.scenarios import vocab
from memex.scenarios.background import NEWS_HEADLINES, SANCTIONS_PROGRAMS, name_variant
from memex.scenarios.builder import CaseBuilder, iso
from memex.scenarios.manual import DOCUMENT_MATCH_TOLERANCE, PRICE_DEVIATION_TOLERANCE
from memex.scenarios.model import Entity, OwnershipLink, SupportingDocument
from memex.scenarios.surfaces import Surface, _incorporation
from memex.scenarios.truth import RedFlag

SOURCE_OF_FUNDS, TRACE, DEVICE, WATCHLIST, HOLDINGS, PRICE = (
    "source_of_funds", "trace", "device", "watchlist", "holdings", "price")
AGGREGATE_OWNERSHIP, AUTHORITY, PAYEE_WATCHLIST = (
    "aggregate_ownership", "authority", "payee_watchlist")
ALL_CHECKS = (SOURCE_OF_FUNDS, TRACE, DEVICE, WATCHLIST, HOLDINGS, PRICE, AGGREGATE_OWNERSHIP,
              AUTHORITY, PAYEE_WATCHLIST)
DOCUMENT_MATCH_FACTOR = 1.0 + DOCUMENT_MATCH_TOLERANCE
MARKET_BAND_HALF_WIDTH = 0.12

# A check's disposition in the latent story (manual 1.7): the views agree; they disagree and a
# record on file explains why; they disagree and only the customer's answer to a request for
# information explains why; they disagree and nothing does (the red flag).
CLEAR, EXPLAINED, EXPLAINED_RFI, UNEXPLAINED = "clear", "explained", "explained_rfi", "unexplained"
DISPOSITIONS = (CLEAR, EXPLAINED, EXPLAINED_RFI, UNEXPLAINED)
# The request-for-information topic that can explain each check's anomaly. Checks on parties
# the bank has no relationship with (a partner's owners, a payee) are cleared by identifiers on
# the registry or not at all.
TOPIC = {SOURCE_OF_FUNDS: "source_of_funds", TRACE: "related_parties",
         HOLDINGS: "related_parties", DEVICE: "device_use", WATCHLIST: "identity",
         PRICE: "trade_terms", AUTHORITY: "authority"}
MODES = {c: DISPOSITIONS if c in TOPIC else (CLEAR, EXPLAINED, UNEXPLAINED) for c in ALL_CHECKS}
# Innocent anomalies: FX margin and charges of 5-15% of the flow; freight of 12-20% of the
# FOB value on a CIF invoice. Unexplained anomalies overlap them in size.
FX_CHARGES_SHARE = (0.05, 0.15)
UNEXPLAINED_DOC_GAP = (0.05, 0.60)
CIF_FREIGHT_SHARE = (0.12, 0.20)
SMALL_FREIGHT_SHARE = (0.01, 0.04)
FX_MEMO = "FX CONVERSION MARGIN AND CHARGES"
RELATED_PARTY_KINDS = ("related-party disclosure", "intra-group services agreement",
                       "group structure declaration")
EVASIVE = ("The customer has not answered the request; the relationship manager chased twice.",
           "The customer declined to provide further information.",
           "The customer said documents would follow; none have been received.")

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
# Due-diligence papers that explain nothing in particular, by the kind of customer that files
# them (a person has no certificate of incorporation).
GENERIC_DOCS = {"person": ("bank reference letter", "salary certificate"),
                "company": ("bank reference letter", "certificate of incorporation")}


# Where a person's own account abroad may sit (a trace that ends at the customer itself).
FOREIGN_ACCOUNT_COUNTRIES = ("GB", "CH", "SG", "HK")
SALARIED = {o for o, _ in vocab.OCCUPATIONS_SALARIED}


def holds_stakes(b: CaseBuilder, subject: Entity) -> bool:
    """Whether the subject's profile makes company stakes plausible: a company, or a person who
    is neither salaried, retired, a student nor 66 or older (a minority of families hold
    equity in a private business, fewer among wage earners and retirees: docs/world.md [O1]).
    """
    if subject.kind == "company":
        return True
    occupation = subject.occupation or ""
    if occupation in SALARIED or occupation.startswith("retired") or occupation == "student":
        return False
    born = subject.date_of_birth
    return born is None or (b.as_of - date.fromisoformat(born)).days // 365 < 66


@dataclass
class Registry:
    """The subject's registry links: who owns it, and what it owns."""

    owner_links: list[OwnershipLink]
    holdings: list[tuple[Entity, OwnershipLink]]
    ubo: Entity | None
    lent: set[str] = field(default_factory=set)

    def has_spare(self) -> bool:
        """Whether a holding no other check has used is left (a subject without stakes owns at
        most the counterparty its holdings check rests on)."""
        return any(h[0].id not in self.lent for h in self.holdings)

    def spare_holding(self, b: CaseBuilder, avoid: set[str]) -> tuple[Entity, OwnershipLink]:
        """A holding no other check has used (the registry always has enough)."""
        free = [h for h in self.holdings if h[0].id not in self.lent | avoid] or self.holdings
        pick = b.pick(free)
        self.lent.add(pick[0].id)
        return pick


@dataclass
class Outcome:
    """What a check wrote: the view groups that decide it, its disposition, the records that
    explain an innocent anomaly (on file), and what the relationship manager's reply on the
    check's topic carries. An unexplained check has its red flag."""

    groups: tuple[tuple[str, ...], ...]
    flag: RedFlag | None = None
    implicated: tuple[str, ...] = ()
    disposition: str = CLEAR
    explanation_ids: tuple[str, ...] = ()
    disclosures: tuple[SupportingDocument, ...] = ()  # filed with the related-party disclosures
    reply_docs: tuple[SupportingDocument, ...] = ()
    evasive: bool = False


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
    # a subject whose profile makes no stake plausible owns only the counterparty the holdings
    # check shows it owning
    n_holdings = n_holdings if holds_stakes(b, s.subject) else 0
    companies = [s.company_like() for _ in range(n_holdings)]
    if counterparty_holding is not None and n_holdings:
        companies[b.ri(0, n_holdings - 1)] = counterparty_holding
    elif counterparty_holding is not None:
        companies = [counterparty_holding]
    holdings = [(c, b.own(s.subject, c, b.pick((25.0, 40.0, 51.0, 60.0, 100.0))))
                for c in companies]
    return Registry(owner_links, holdings, ubo)


def _first_day(s: Surface) -> date:
    return date.fromisoformat(min(t.timestamp for t in s.alert_txns)[:10])


def _reply_or_evasive(b: CaseBuilder, mode: str, explaining: tuple[SupportingDocument, ...],
                      non_explaining) -> dict:
    """The reply fields of an Outcome: the explanation for `explained_rfi`; for `unexplained`
    an evasive answer or a document that does not explain (`non_explaining()`)."""
    if mode == EXPLAINED_RFI:
        return {"reply_docs": explaining}
    if mode == UNEXPLAINED:
        if b.rng.random() < 0.5:
            return {"evasive": True}
        return {"reply_docs": non_explaining()}
    return {}


def source_of_funds(b: CaseBuilder, s: Surface, mode: str, code: str, *, deep: bool = False,
                    misleading: bool = False, near_band: bool = False) -> Outcome:
    """The document's amount vs the alerted flow. Explained: 5-15% more than the flow, the
    difference being the FX margin and charges, a line on the customer's own ledger (or, for
    `explained_rfi`, the conversion advice the customer sends). Every case with this check has
    an FX-charges line; only an explaining one equals the difference.

    The judgement knobs (`story.Judgement`): `deep` books the explaining line 3-10 days after
    the inflow instead of on its day; `near_band` puts an unexplained document 5-15% above the
    flow; `misleading` makes the reply a conversion advice that names the ledger's FX line and
    points the wrong way: for exactly the difference when the line is another amount
    (unexplained), for another amount when the line explains the difference (explained)."""
    rng, flow = b.rng, s.flow_total
    kind = b.pick(s.doc_kinds)
    if mode == CLEAR:
        amount = flow * rng.uniform(1.0, DOCUMENT_MATCH_FACTOR)
    elif mode == UNEXPLAINED and near_band:
        amount = flow * (1 + rng.uniform(*FX_CHARGES_SHARE))
    elif mode == UNEXPLAINED:
        gap = rng.uniform(*UNEXPLAINED_DOC_GAP)
        amount = flow * (1 + gap) if rng.random() < 0.6 else flow / (1 + gap)
    else:
        amount = flow * (1 + rng.uniform(*FX_CHARGES_SHARE))
    amount = round(amount, 2)
    gap = amount - flow
    first = _first_day(s)
    when = iso(first - timedelta(days=b.ri(2, 20)))
    doc = b.supporting(kind, DOC_DESCRIPTIONS[kind], amount, when, s.doc_counterparty)
    extra = b.supporting(b.pick(GENERIC_DOCS[s.subject.kind]), "Standard due-diligence "
                         "document", None, b.past_date(200, 900))
    sof = b.sof(s.subject, f"{kind} and ordinary income", (doc, extra))

    def unrelated_charge() -> float:
        while True:
            x = flow * rng.uniform(*FX_CHARGES_SHARE)
            if abs(x - gap) > 0.02 * flow:
                return x

    fx = b.shared_counterparty("fx_desk", f"{vocab.BANK_NAME} FX Desk")
    charge = gap if mode == EXPLAINED else unrelated_charge()
    booked = first
    if deep and mode == EXPLAINED:
        booked = min(first + timedelta(days=b.ri(3, 10)), b.as_of - timedelta(days=1))
    line = b.txn(booked, charge, "ach", s.account, fx, memo=FX_MEMO)

    def advice(x: float, reference: str | None = None) -> tuple[SupportingDocument, ...]:
        return (b.supporting("FX conversion advice", "Conversion of the foreign-currency "
                             "proceeds: margin and charges deducted", x, iso(first),
                             vocab.BANK_NAME, reference),)

    groups = ((sof.id, doc.id, extra.id),)
    if mode == UNEXPLAINED:
        flag = RedFlag(code=code, evidence_ids=(sof.id, doc.id, *(t.id for t in s.alert_txns)),
                       carrier_ids=(doc.id,))
        if misleading and gap > 0:
            return Outcome(groups, flag, disposition=mode, reply_docs=advice(gap, line.id))
        return Outcome(groups, flag, disposition=mode,
                       **_reply_or_evasive(b, mode, (), lambda: advice(unrelated_charge())))
    if mode == EXPLAINED and misleading:
        return Outcome(groups, disposition=mode, explanation_ids=(line.id,),
                       reply_docs=advice(unrelated_charge(), line.id))
    if mode == EXPLAINED:
        return Outcome(groups, disposition=mode, explanation_ids=(line.id,))
    return Outcome(groups, disposition=mode,
                   **_reply_or_evasive(b, mode, advice(gap) if mode == EXPLAINED_RFI else (),
                                       tuple))


def generic_source_of_funds(b: CaseBuilder, s: Surface) -> None:
    """A declaration that explains nothing in particular (written for everyone alike)."""
    if b.rng.random() < 0.5:
        doc = b.supporting(b.pick(GENERIC_DOCS[s.subject.kind]), "Standard due-diligence "
                           "document", None, b.past_date(200, 900))
        b.sof(s.subject, "ordinary income and savings", (doc,))


def related_party_document(b: CaseBuilder, company: Entity) -> SupportingDocument:
    """A filed (or sent) document that discloses the customer's relation to `company` (a person
    customer's own account abroad: a related-party disclosure that declares it)."""
    if company.kind == "person":
        return b.supporting("related-party disclosure", "The customer's own account abroad, "
                            "declared", None, b.past_date(30, 700), company.name)
    kind = b.pick(RELATED_PARTY_KINDS)
    return b.supporting(kind, "Dealings with a company the customer owns, disclosed", None,
                        b.past_date(30, 700), company.name)


def _bank(b: CaseBuilder, country: str) -> str:
    return b.pick(vocab.CORRESPONDENT_BANKS.get(country, ("International Commerce Bank",)))


def trace(b: CaseBuilder, s: Surface, mode: str, reg: Registry,
          code: str = "ROUND_TRIP") -> Outcome:
    """The traced wire's far end: an unrelated company (clear), or one the subject owns (for a
    subject without stakes, its own account abroad) — with the relation disclosed on file or in
    the customer's reply, or not at all."""
    rng, t = b.rng, s.traced
    own_account = mode != CLEAR and not reg.has_spare()
    if mode == CLEAR:
        last, link = s.company_like(), None
    elif own_account:
        last, link = s.subject, None
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
        country = b.pick(FOREIGN_ACCOUNT_COUNTRIES) if party is last and own_account \
            else party.country
        bank = _bank(b, country)
        amount *= rng.uniform(0.96, 0.995) if onward else rng.uniform(1.0, 1.04)
        legs.append((prev, bank, country, party.name, amount, i + 1) if onward
                    else (bank, prev, country, party.name, amount, i + 1))
        prev = bank
    hops = b.trace(t, s.trace_direction, legs)
    hop_ids = tuple(h.id for h in hops)
    links = tuple(x.id for _, x in reg.holdings)
    if mode == CLEAR:
        return Outcome((hop_ids, links) if links else (hop_ids,))
    # the customer's own account abroad shows in the trace alone (the hop names the customer)
    groups = (hop_ids, (link.id,)) if link is not None else (hop_ids,)
    if mode == UNEXPLAINED:
        flag = RedFlag(code=code, evidence_ids=tuple(i for g in groups for i in g),
                       carrier_ids=(hops[-1].id,))
        return Outcome(groups, flag, () if own_account else (last.id,), disposition=mode,
                       **_reply_or_evasive(b, mode, (), lambda: (
                           related_party_document(b, s.company_like()),)))
    doc = related_party_document(b, last)
    if mode == EXPLAINED:
        return Outcome(groups, disposition=mode, explanation_ids=(doc.id,), disclosures=(doc,))
    return Outcome(groups, disposition=mode, reply_docs=(doc,))


def household(b: CaseBuilder, actor: Entity, share: float = 0.5) -> Entity:
    """The actor's KYC file names a household member (for `share` of customers)."""
    if actor.household or b.rng.random() >= share:
        return actor
    member = b.person(customer=True, country=actor.country)
    return b.update_entity(actor, household=(member.id,))


def device(b: CaseBuilder, s: Surface, mode: str, reg: Registry, *,
           deep: bool = False) -> Outcome:
    """A device on the subject's account that also runs another account: a company the registry
    shows the subject owns, or for a subject without stakes its own second account (clear), a
    household member named on the KYC file (explained), one the customer names when asked
    (explained_rfi), or an unrelated party (the red flag). With `deep` (`story.Judgement`) an
    explained co-user's own KYC file names the customer's actor as household, the actor's file
    does not name the co-user."""
    actor = s.subject if s.subject.kind == "person" else s.directors[0]
    actor = b.entity(actor.id)
    link = None
    if mode == CLEAR and not reg.has_spare():
        other = actor
    elif mode == CLEAR:
        other, link = reg.spare_holding(b, set())
    elif mode == EXPLAINED and deep:
        other = b.person(customer=True, country=actor.country)
        other = b.update_entity(other, household=(actor.id,))
    elif mode == EXPLAINED:
        actor = household(b, actor, share=1.0)
        other = b.entity(actor.household[0])
    elif mode == EXPLAINED_RFI or b.rng.random() < 0.5:
        other = b.person(customer=True, country=actor.country)
    else:
        other = s.company_like()
    person = other.kind == "person"
    other_acct = b.account(other, ours=True, kind="savings" if other is actor else
                           "checking" if person else "business", opened=b.past_date(200, 2000))
    shared = b.device()
    mine = b.logins(actor, s.account, shared, b.ri(2, 4))
    theirs = b.logins(other, other_acct, shared, b.ri(2, 4))
    log_ids = tuple(x.id for x in mine + theirs)
    if mode == CLEAR:
        return Outcome((log_ids, (link.id if link is not None else other_acct.id,)))

    def declaration(name: str) -> tuple[SupportingDocument, ...]:
        return (b.supporting("household declaration", "Member of the customer's household "
                             "who uses the customer's device", None, b.past_date(5, 40), name),)

    if mode == EXPLAINED:
        return Outcome((log_ids,), disposition=mode, explanation_ids=(other.id,))
    if mode == EXPLAINED_RFI:
        return Outcome((log_ids,), disposition=mode, reply_docs=declaration(other.name))
    flag = RedFlag(code="SHARED_DEVICE_ACROSS_ENTITIES", evidence_ids=log_ids,
                   carrier_ids=tuple(x.id for x in theirs))
    links = tuple(x.id for _, x in reg.holdings)
    return Outcome((log_ids, links) if links else (log_ids,), flag, (other.id,),
                   disposition=mode, **_reply_or_evasive(
                       b, mode, (), lambda: declaration(b.person_name())))


def watchlist(b: CaseBuilder, s: Surface, mode: str, party: Entity | None = None) -> Outcome:
    """A hit on the subject's (or `party`'s) name. Clear: screening the subject raises no hit
    (the payee's screening, another date of birth or incorporation). Otherwise the date
    matches and the identifiers decide: the ID number on file differs (explained), the file has
    none and the customer's passport copy shows another (explained_rfi), or they are the listed
    party's (the red flag, a true match)."""
    if mode == CLEAR and party is None:
        return Outcome(())
    subj = b.entity((party or s.subject).id)
    person = subj.kind == "person"
    own_date = subj.date_of_birth if person else subj.incorporation_date
    listed_date = own_date
    while mode == CLEAR and listed_date == own_date:
        listed_date = b.dob() if person else _incorporation(b)
    # The file shows the ID number for most customers; `explained_rfi` needs one it lacks.
    on_file = party is None and (mode == EXPLAINED or (mode != EXPLAINED_RFI
                                                       and b.rng.random() < 0.6))
    if party is None and not on_file:
        subj = b.update_entity(subj, id_number=None)
    true_id = b.entity(subj.id).id_number or b.id_number(person)
    listed_id = true_id if mode == UNEXPLAINED else None  # None: a fresh number
    nationality = subj.nationality
    if mode == EXPLAINED and person and b.rng.random() < 0.5:
        nationality = b.pick(("GB", "CA", "AU", "IE", "NZ", "ZA", "IN", "NG"))
    name = name_variant(b, subj.name) if person and b.rng.random() < 0.3 else subj.name
    adverse = b.rng.random() < 0.6
    detail = (f"{subj.name.split()[-1]} {b.pick(NEWS_HEADLINES)} "
              f"({b.pick(('Daily Courier', 'Financial Ledger', 'Metro Herald'))})") if adverse \
        else f"SDN list, programme {b.pick(SANCTIONS_PROGRAMS)}"
    entry = b.watch("adverse_media" if adverse else "sanctions", name, subj.country, detail,
                    dob=listed_date, nationality=nationality, id_number=listed_id,
                    person=person)
    if mode == CLEAR:
        return Outcome(((entry.id,),))

    def passport(number: str) -> tuple[SupportingDocument, ...]:
        return (b.supporting("passport copy" if person else "certificate of registration",
                             "Identity document sent by the customer", None,
                             b.past_date(5, 40), subj.name, number),)

    if mode == UNEXPLAINED:
        flag = RedFlag(code="ADVERSE_MEDIA" if adverse else "SANCTIONS_MATCH",
                       evidence_ids=(entry.id, subj.id), carrier_ids=(entry.id,))
        return Outcome(((entry.id,),), flag, disposition=mode, **_reply_or_evasive(
            b, mode, (), lambda: passport(true_id) if party is None else ()))
    if mode == EXPLAINED:
        # the entry's identifiers against the party's own record explain the hit
        return Outcome(((entry.id,),), disposition=mode, explanation_ids=(entry.id, subj.id))
    return Outcome(((entry.id,),), disposition=mode, reply_docs=passport(true_id))


def holdings(b: CaseBuilder, s: Surface, mode: str, reg: Registry,
             counterparty: Entity | None) -> Outcome:
    """Whether the registry shows the subject owning one of its counterparties, and whether
    that relation is disclosed (on file, or in the customer's reply)."""
    if mode == CLEAR or counterparty is None:
        links = tuple(x.id for _, x in reg.holdings)
        return Outcome((links,) if links else ())  # no stake at all: nothing on the registry
    link = next(x for c, x in reg.holdings if c.id == counterparty.id)
    txns = tuple(t.id for t in s.alert_txns)
    if mode == UNEXPLAINED:
        flag = RedFlag(code="UNDISCLOSED_RELATED_PARTY", evidence_ids=(link.id, *txns),
                       carrier_ids=(link.id,))
        return Outcome(((link.id,),), flag, (counterparty.id,), disposition=mode,
                       **_reply_or_evasive(b, mode, (), lambda: (
                           related_party_document(b, s.company_like()),)))
    doc = related_party_document(b, counterparty)
    if mode == EXPLAINED:
        return Outcome(((link.id,),), disposition=mode, explanation_ids=(doc.id,),
                       disclosures=(doc,))
    return Outcome(((link.id,),), disposition=mode, reply_docs=(doc,))


def _alerted_shipments(b: CaseBuilder, s: Surface) -> list[tuple[int, int]]:
    """(invoice, bill of lading) positions in the builder of the alerted shipments."""
    invoices = {t.reference for t in s.alert_txns if t.reference}
    docs = b.trade_documents
    out = []
    for i, d in enumerate(docs):
        if d.id in invoices:
            j = next(j for j, x in enumerate(docs)
                     if x.kind == "bill_of_lading" and x.shipment_ref == d.shipment_ref)
            out.append((i, j))
    return out


def price(b: CaseBuilder, s: Surface, mode: str, over: bool, *, deep: bool = False,
          misleading: bool = False, near_band: bool = False) -> Outcome:
    """The invoiced price vs the commodity's FOB market band. Clear: an FOB price inside it.
    Explained: a CIF price above the band by the freight (12-20%) the bill of lading shows (or,
    for explained_rfi, the freight invoice the customer sends). Unexplained: well beyond it, FOB,
    or CIF with freight far too small to account for it.

    The judgement knobs (`story.Judgement`), over-invoicing only: `deep` files the explaining
    freight invoices with the customer's declarations instead of on the bills of lading;
    `near_band` writes an unexplained price CIF, 10-23% above the band's top; `misleading`
    makes the reply a freight invoice per shipment that points the wrong way: an unexplained
    price is written CIF with the small freight on the bill of lading and the invoice claims
    enough freight to bring it inside the band; an explained one's invoice claims a freight of
    1-4%, too small to explain it (the explanation stays on file)."""
    rng, p = b.rng, s.unit_price or 1.0
    false_freight = misleading and over and mode == UNEXPLAINED
    half = MARKET_BAND_HALF_WIDTH
    cif, freight = False, 0.0
    if mode == CLEAR:
        centre = p * math.exp(rng.uniform(math.log(0.94), math.log(1.06)))
    elif mode in (EXPLAINED, EXPLAINED_RFI):
        over, cif = True, True
        freight = rng.uniform(*CIF_FREIGHT_SHARE)
        fob = p / (1 + freight)
        # FOB inside the band, the CIF price clearly above its top (beyond the tolerance); the
        # margins leave room for each invoice's own price, within 1.5% of the shipment price
        x = rng.uniform((1 + half) * (1 + PRICE_DEVIATION_TOLERANCE + 0.03) / (1 + freight),
                        1 + half - 0.02)
        centre = fob / x
    else:
        cif = over and (near_band or false_freight or rng.random() < 0.5)
        lo, hi = b.knobs.price_multiple
        if cif:
            freight = rng.uniform(*SMALL_FREIGHT_SHARE)
            m = rng.uniform(1.10, 1.23 if near_band else hi)
        else:
            m = rng.uniform(lo, hi)
        centre = p / ((1 + half) * m) if over else p * m / (1 - half)
    band = b.set_price(s.commodity or "", centre * (1 - half), centre * (1 + half))
    freight_docs = []
    for i, j in _alerted_shipments(b, s):
        inv, bol = b.trade_documents[i], b.trade_documents[j]
        total = round(inv.quantity * (inv.unit_price_usd or 0.0) * freight / (1 + freight), 2)
        b.trade_documents[i] = inv.model_copy(update={"price_basis": "CIF" if cif else "FOB"})
        if false_freight:
            # the bill of lading shows the small freight; the invoice sent claims the freight
            # that would bring the price to 95% of the band's top
            b.trade_documents[j] = bol.model_copy(update={"freight_usd": total})
            claimed = round(inv.quantity * ((inv.unit_price_usd or 0.0)
                                            - 0.95 * centre * (1 + half)), 2)
            freight_docs.append(b.supporting("freight invoice", "Carrier's freight charge for "
                                             "the shipment", claimed, bol.date, bol.vessel,
                                             bol.shipment_ref))
        elif cif and ((mode == EXPLAINED and not deep)
                      or (mode == UNEXPLAINED and rng.random() < 0.5)):
            b.trade_documents[j] = bol.model_copy(update={"freight_usd": total})
        elif cif:
            freight_docs.append(b.supporting("freight invoice", "Carrier's freight charge for "
                                             "the shipment", total, bol.date, bol.vessel,
                                             bol.shipment_ref))
    groups = (s.customs_ids, (band.id,))
    if mode == CLEAR:
        return Outcome(groups)
    wrong = ()
    if mode == EXPLAINED and misleading:
        wrong = tuple(b.supporting("freight invoice", "Carrier's freight charge for the "
                                   "shipment", round(inv.quantity * (inv.unit_price_usd or 0.0)
                                                     * rng.uniform(*SMALL_FREIGHT_SHARE), 2),
                                   bol.date, bol.vessel, bol.shipment_ref)
                      for inv, bol in ((b.trade_documents[i], b.trade_documents[j])
                                       for i, j in _alerted_shipments(b, s)))
    if mode == EXPLAINED and deep and freight_docs:
        b.sof(s.subject, "freight invoices for the shipments on file", tuple(freight_docs))
        return Outcome(groups, disposition=mode, reply_docs=wrong,
                       explanation_ids=tuple(d.id for d in freight_docs))
    if mode == EXPLAINED:
        bols = tuple(b.trade_documents[j].id for _, j in _alerted_shipments(b, s))
        return Outcome(groups, disposition=mode, explanation_ids=bols, reply_docs=wrong)
    if mode == EXPLAINED_RFI:
        return Outcome(groups, disposition=mode, reply_docs=tuple(freight_docs))
    invoices = tuple(t.reference for t in s.alert_txns if t.reference)
    flag = RedFlag(code="OVER_INVOICING" if over else "UNDER_INVOICING",
                   evidence_ids=(*invoices, *s.customs_ids, band.id),
                   carrier_ids=(*s.customs_ids, band.id))
    implicated = (s.partner.id,) if s.partner is not None else ()
    if false_freight:
        return Outcome(groups, flag, implicated, disposition=mode,
                       reply_docs=tuple(freight_docs))
    return Outcome(groups, flag, implicated,
                   disposition=mode, **_reply_or_evasive(b, mode, (), lambda: tuple(freight_docs)))


def _owner_split(b: CaseBuilder) -> list[int]:
    """Four holdings, each under 50 percent; the two largest always hold more than half."""
    p1 = b.ri(30, 46)
    p2 = b.ri(22, p1)
    rest = 100 - p1 - p2
    p3 = b.ri((rest + 1) // 2, rest - 4)
    return [p1, p2, p3, rest - p3]


def aggregate_ownership(b: CaseBuilder, s: Surface, mode: str) -> Outcome:
    """The counterparty's owners and the sanctions entries on two of them (OFAC 50 Percent
    Rule: holdings of blocked persons add up). Clear: one entry is a namesake by date of birth,
    or the two hold under 50 percent together. Explained: they hold 50 percent or more and
    both dates match, but one entry's ID number is not the owner's (a namesake cleared by
    identifiers). Unexplained: both confirmed, 50 percent or more."""
    partner = s.partner or s.counterparties[0]
    shares = _owner_split(b)
    owners = [b.person(customer=False, country=b.pick(vocab.HUB_OWNER_COUNTRIES))
              for _ in shares]
    order = list(range(4))
    b.rng.shuffle(order)
    links = {i: b.own(owners[i], partner, float(shares[i])) for i in order}
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    namesake = mode == CLEAR and b.rng.random() < 0.5
    if mode == CLEAR and not namesake:
        pairs = [p for p in pairs if shares[p[0]] + shares[p[1]] < 50]
    elif mode != CLEAR:
        pairs = [p for p in pairs if shares[p[0]] + shares[p[1]] >= 50]
    listed = list(b.pick(pairs))
    b.rng.shuffle(listed)
    other = listed[0] if namesake else None
    cleared = listed[0] if mode == EXPLAINED else None
    entries = []
    for i in listed:
        owner = owners[i]
        dob = owner.date_of_birth
        while i == other and dob == owner.date_of_birth:
            dob = b.dob(30, 75)
        entries.append(b.watch("sanctions", owner.name, owner.country,
                               f"SDN list, programme {b.pick(SANCTIONS_PROGRAMS)}", dob=dob,
                               id_number=None if i in (cleared, other) else owner.id_number))
    link_ids = tuple(links[i].id for i in order)
    entry_ids = tuple(e.id for e in entries)
    if mode == CLEAR:
        return Outcome((link_ids, entry_ids))
    if mode == EXPLAINED:
        return Outcome((link_ids, entry_ids), disposition=mode,
                       explanation_ids=(owners[cleared].id,))
    listed_links = tuple(links[i].id for i in listed)
    flag = RedFlag(code="BLOCKED_AGGREGATE_OWNERSHIP", evidence_ids=(*listed_links, *entry_ids),
                   carrier_ids=(*listed_links, *entry_ids))
    return Outcome((link_ids, entry_ids), flag, (partner.id,), disposition=mode)


def authority(b: CaseBuilder, s: Surface, mode: str) -> Outcome:
    """A durable power of attorney on the customer's file: does it name the alerted payee?
    Explained: it names an earlier attorney, and a successor appointment on file (or sent on
    request) names the payee."""
    payee = s.payee or s.subject
    agent = payee.name if mode == CLEAR else b.person_name()
    poa = b.supporting("durable power of attorney",
                       "Attorney-in-fact appointed to act on the customer's accounts", None,
                       b.past_date(120, 1800), agent)

    def successor(name: str) -> SupportingDocument:
        return b.supporting("successor attorney appointment", "Successor attorney-in-fact "
                            "appointed under the power of attorney", None, b.past_date(20, 110),
                            name)

    docs = [poa]
    if mode == EXPLAINED:
        docs.append(successor(payee.name))
    docs.append(b.supporting(b.pick(("pension statement", "bank reference letter")),
                             "Standard due-diligence document", None, b.past_date(200, 900)))
    sof = b.sof(s.subject, "pension and savings; authorities on file", tuple(docs))
    groups = ((sof.id, *(d.id for d in docs)),)
    if mode == CLEAR:
        return Outcome(groups)
    if mode == EXPLAINED:
        return Outcome(groups, disposition=mode, explanation_ids=(docs[1].id,))
    if mode == EXPLAINED_RFI:
        return Outcome(groups, disposition=mode, reply_docs=(successor(payee.name),))
    paid = tuple(t.id for t in s.alert_txns if t.channel != "cash")
    flag = RedFlag(code="PAYEE_NOT_AUTHORISED", evidence_ids=(sof.id, poa.id, *paid),
                   carrier_ids=(poa.id,))
    return Outcome(groups, flag, (payee.id,), disposition=mode, **_reply_or_evasive(
        b, mode, (), lambda: (successor(b.person_name()),)))


def wrong_way_reply(b: CaseBuilder, s: Surface, topic: str) -> tuple[SupportingDocument, ...]:
    """A reply document of the kind that would explain an anomaly on `topic`, about the wrong
    party or amount (`story.Judgement.misleading_reply`, for an anomaly whose own check wrote no
    reply document): a conversion advice for another amount, a disclosure of another company,
    a household declaration or a successor appointment naming someone else. Identity and
    trade terms have none here (their checks write their own)."""
    if topic == "source_of_funds":
        return (b.supporting("FX conversion advice", "Conversion of the foreign-currency "
                             "proceeds: margin and charges deducted",
                             s.flow_total * b.rng.uniform(*FX_CHARGES_SHARE),
                             iso(_first_day(s)), vocab.BANK_NAME),)
    if topic == "related_parties":
        return (related_party_document(b, s.company_like()),)
    if topic == "device_use":
        return (b.supporting("household declaration", "Member of the customer's household "
                             "who uses the customer's device", None, b.past_date(5, 40),
                             b.person_name()),)
    if topic == "authority":
        return (b.supporting("successor attorney appointment", "Successor attorney-in-fact "
                             "appointed under the power of attorney", None,
                             b.past_date(20, 110), b.person_name()),)
    return ()
