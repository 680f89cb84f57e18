"""Latent stories: one assembly for every kind, benign or suspicious.

`build_case(b, kind, variant)` does, in this order:

1. draws the rule's shared surface (`scenarios.surfaces`) — the alert and the ledger around it,
   identical in distribution for every kind that fires the rule;
2. chooses the cross-checks written into the case: the variant's *anchor* check plus
   `knobs.cross_checks - 1` others from the rule's pool, uniformly among the checks other than
   the watchlist (which fills in when they run out) and, for a subject whose profile makes no
   company stake plausible, the holdings check (`_draw_checks`). A suspicious variant's anchor
   is where its cover story fails; a benign variant's anchor is its main explanation. Anchors
   are spread over a rule's pool in the same proportions for both classes (the variant lists
   are built that way), except the watchlist, which a benign story rests on more often than a
   suspicious one (`LISTED_ANCHOR_WEIGHT`: namesakes are common, true matches rare); a clear
   watchlist check writes nothing, so which checks exist never tells the label;
3. draws each present check's disposition (`dispositions`: clear, explained on file,
   explained by a request for information, unexplained). A suspicious story leaves its anchor
   and one more check unexplained (`SAR_MIN_UNEXPLAINED`, manual 1.7) and covers the rest; a
   benign story explains its anomalies and leaves at most one unexplained (noise);
4. writes each check in its disposition (`scenarios.checks`), files the related-party
   disclosures and writes the relationship manager's reply on every topic;
5. adds decoys, then freezes the alert and the ground truth: red flags with their carriers,
   the decisive evidence (the checks' view groups), subjects, justifying sections, the
   dispositions and the records that explain the innocent anomalies.
"""

from __future__ import annotations

from dataclasses import dataclass

from memex.scenarios import checks as ck
from memex.scenarios.background import decoys
from memex.scenarios.builder import CaseBuilder, weighted
from memex.scenarios.case import Case
from memex.scenarios.model import INFORMATION_TOPICS, Entity
from memex.scenarios.rules import (
    CASH_AGGREGATE,
    ELDER_ACTIVITY,
    FUNDS_FANOUT,
    FUNNEL_DEPOSITS,
    HIGH_RISK_TRADE,
    HUB_TRADE,
    LOAN_INFLOW,
    PEP_TRANSFER,
    PROPERTY_PURCHASE,
)
from memex.scenarios.surfaces import SURFACES, Surface
from memex.scenarios.truth import GroundTruth, RedFlag

CASH, FLOW, TRADE, PEP = (r.code for r in (CASH_AGGREGATE, FUNDS_FANOUT, HIGH_RISK_TRADE,
                                          PEP_TRANSFER))
POOLS: dict[str, tuple[str, ...]] = {
    CASH: (ck.SOURCE_OF_FUNDS, ck.TRACE, ck.DEVICE, ck.WATCHLIST),
    FLOW: (ck.SOURCE_OF_FUNDS, ck.TRACE, ck.DEVICE, ck.WATCHLIST, ck.HOLDINGS),
    TRADE: (ck.PRICE, ck.TRACE, ck.DEVICE, ck.WATCHLIST, ck.HOLDINGS),
    PEP: (ck.SOURCE_OF_FUNDS, ck.TRACE, ck.DEVICE, ck.WATCHLIST, ck.HOLDINGS),
}
FUNNEL, LOAN, HUB, PROPERTY, ELDER = (r.code for r in (
    FUNNEL_DEPOSITS, LOAN_INFLOW, HUB_TRADE, PROPERTY_PURCHASE, ELDER_ACTIVITY))
POOLS.update({
    FUNNEL: (ck.SOURCE_OF_FUNDS, ck.TRACE, ck.DEVICE, ck.WATCHLIST),
    LOAN: (ck.SOURCE_OF_FUNDS, ck.TRACE, ck.DEVICE, ck.WATCHLIST, ck.HOLDINGS),
    HUB: (ck.AGGREGATE_OWNERSHIP, ck.TRACE, ck.DEVICE, ck.WATCHLIST, ck.HOLDINGS),
    PROPERTY: (ck.SOURCE_OF_FUNDS, ck.TRACE, ck.DEVICE, ck.WATCHLIST, ck.HOLDINGS),
    ELDER: (ck.AUTHORITY, ck.DEVICE, ck.PAYEE_WATCHLIST),
})
# Checks whose failure shows in one view only; a second failing check joins them.
SINGLE_VIEW = {ck.SOURCE_OF_FUNDS, ck.WATCHLIST, ck.HOLDINGS, ck.AGGREGATE_OWNERSHIP,
               ck.AUTHORITY, ck.PAYEE_WATCHLIST}
SOF_FLAG = {CASH: "UNSUPPORTED_SOURCE_OF_FUNDS", FLOW: "UNSUPPORTED_SOURCE_OF_FUNDS",
            PEP: "PEP_UNEXPLAINED_WEALTH", TRADE: "UNSUPPORTED_SOURCE_OF_FUNDS",
            FUNNEL: "UNSUPPORTED_SOURCE_OF_FUNDS", LOAN: "UNSUPPORTED_SOURCE_OF_FUNDS",
            PROPERTY: "UNEXPLAINED_PURCHASE_FUNDS"}
# A trace that ends at the customer's own company: round-tripping, or, for an inbound loan,
# a loan-back.
TRACE_FLAG = {LOAN: "LOAN_BACK"}
SAR_SECTION = {CASH: "2.1", FLOW: "7.1", TRADE: "6.1", PEP: "5.4", FUNNEL: "11.1",
               LOAN: "11.3", HUB: "11.5", PROPERTY: "11.8", ELDER: "11.10"}
CLOSE_SECTION = {CASH: "8.1", FLOW: "8.2", TRADE: "6.6", PEP: "5.3", FUNNEL: "11.2",
                 LOAN: "11.4", HUB: "11.7", PROPERTY: "11.9", ELDER: "11.11"}
FAIL_SECTION = {ck.SOURCE_OF_FUNDS: "5.2", ck.TRACE: "7.3", ck.DEVICE: "3.6",
                ck.WATCHLIST: "4.4", ck.HOLDINGS: "3.2", ck.PRICE: "6.2",
                ck.AGGREGATE_OWNERSHIP: "11.6", ck.AUTHORITY: "11.12",
                ck.PAYEE_WATCHLIST: "4.4"}
OK_SECTION = {ck.SOURCE_OF_FUNDS: "5.2", ck.TRACE: "7.6", ck.DEVICE: "3.6",
              ck.WATCHLIST: "4.3", ck.HOLDINGS: "3.2", ck.PRICE: "6.2",
              ck.AGGREGATE_OWNERSHIP: "11.6", ck.AUTHORITY: "11.12", ck.PAYEE_WATCHLIST: "4.3"}


# The weighing rule (manual 1.7 and 9.1, `SAR_MIN_UNEXPLAINED`): a suspicious story leaves its
# anchor and one more check unexplained; a benign one at most one (noise), for
# BENIGN_NOISE_SHARE of benign cases.
BENIGN_NOISE_SHARE = 0.35
# How the checks that are not unexplained are written: a benign story's innocent anomalies, and
# a suspicious story's cover (clean views, or well-made documents that explain an anomaly).
BENIGN_MODES = {ck.CLEAR: 0.20, ck.EXPLAINED: 0.50, ck.EXPLAINED_RFI: 0.30}
COVER_MODES = {ck.CLEAR: 0.50, ck.EXPLAINED: 0.30, ck.EXPLAINED_RFI: 0.20}
# Screening the customer's name raises a hit for a few percent of customers, nearly always a
# namesake cleared by identifiers (docs/world.md, [S1]-[S3]). A watchlist check the story does
# not rest on is written in the same modes whatever the label (clear: no hit at all), is never
# the story's unexplained check, and is drawn only when the rule's other checks run out.
SCREENING_MODES = {ck.CLEAR: 0.93, ck.EXPLAINED: 0.05, ck.EXPLAINED_RFI: 0.02}
# How often a variant resting on the watchlist check is drawn, against 1 for every other
# variant of its kind (`generator`): a namesake cleared by identifiers is the common innocent
# story among them; a true list match (a suspicious story resting on the hit) is rare.
LISTED_ANCHOR_WEIGHT = {False: 0.25, True: 0.02}
NEUTRAL_REPLIES = ("The customer confirms the activity is as described on file.",
                   "The customer has nothing to add to the information on file.")
# Customers are often slow to answer whatever the story: an evasive answer on a topic with
# nothing at stake is common, so evasion alone does not tell the label.
EVASIVE_NOISE_SHARE = 0.3


@dataclass(frozen=True)
class Judgement:
    """How hard a story is to weigh (the case plan's judgement knobs, `scenarios.plan`); every
    field None (or False) draws the story exactly as `generate` does.

    - `innocent_anomalies`: how many of the checks a story does not leave unexplained show an
      anomaly with an explanation (a benign story's innocent anomalies, a suspicious story's
      documented cover); the others are clear. None: drawn (`BENIGN_MODES`, `COVER_MODES`).
    - `explanation_reach`: where those explanations live: "file" (on file, where the check's
      own views point), "deep" (on file, in a record only a wider view shows: the FX charges
      booked days after the inflow, the freight on an invoice filed with the customer's
      declarations rather than on the bill of lading, the household named on the device
      co-user's own KYC file rather than the customer's; the other checks have no deeper
      place and are explained on file) or "request" (only in the reply to `request_information`,
      where the check has a topic). None: drawn.
    - `benign_noise`: whether a benign story leaves one check unexplained (None: drawn with
      `BENIGN_NOISE_SHARE`); a suspicious story always leaves `SAR_MIN_UNEXPLAINED`.
    - `misleading_reply`: the customer's reply on a source-of-funds or over-invoicing anomaly
      points the wrong way, in both classes alike: an unexplained anomaly gets a document that
      looks explanatory but contradicts the bank's own records (a conversion advice for exactly
      the difference that names the ledger's FX line, whose amount is another; a freight
      invoice for far more than the freight the bill of lading shows), an anomaly explained
      on file one that does not explain it (an advice for another amount than the FX line
      it names; a freight invoice for 1-4%). Every other topic with an anomaly explained on
      file or unexplained gets a document of the explaining kind about someone else
      (`checks.wrong_way_reply`), so a reply with documents tells nothing alone. The bank's
      records decide, never the reply.
    - `near_band`: an unexplained anomaly sits inside the innocent band (a document 5-15% above
      the flow, an over-invoiced price 10-23% above the band's top on a CIF invoice).

    None of them moves the label: it stays the count of unexplained checks.
    """

    innocent_anomalies: int | None = None
    explanation_reach: str | None = None
    benign_noise: bool | None = None
    misleading_reply: bool = False
    near_band: bool = False


REACHES = ("file", "deep", "request")


@dataclass(frozen=True)
class Scheme:
    """What a variant means: the rule it fires and its anchor check (`over` for pricing)."""

    rule: str
    anchor: str
    over: bool = True


def dispositions(b: CaseBuilder, present: list[str], suspicious: bool,
                 second: str | None = None, stakes: bool = True,
                 judgement: Judgement | None = None) -> dict[str, str]:
    """Each present check's disposition; `present[0]` is the anchor. A suspicious story leaves
    the anchor and `second` (drawn when None) unexplained; a benign one, sometimes, one check.
    A benign story resting on the watchlist, or on the holdings of a subject without stakes
    (`stakes` False), has the anomaly it rests on: the hit, the stake. `judgement` fixes what
    it sets (see `Judgement`); the default draws as `generate` does."""
    rng = b.rng
    j = judgement or Judgement()
    # a screening hit is unexplained (a true match) only in a suspicious story resting on it
    candidates = [c for c in present[1:] if c != ck.WATCHLIST] or present[1:]
    if suspicious:
        # SAR_MIN_UNEXPLAINED of them: the anchor and one more
        unexplained = {present[0], second if second in present[1:] else b.pick(candidates)}
    elif (rng.random() < BENIGN_NOISE_SHARE) if j.benign_noise is None else j.benign_noise:
        unexplained = {b.pick([c for c in present if c != ck.WATCHLIST] or present)}
    else:
        unexplained = set()
    anomalous = None
    if j.innocent_anomalies is not None:
        others = [c for c in present if c not in unexplained]
        anomalous = set(rng.sample(others, min(j.innocent_anomalies, len(others))))
    out = {}
    for i, c in enumerate(present):
        if c in unexplained:
            out[c] = ck.UNEXPLAINED
            continue
        if anomalous is not None and c not in anomalous:
            out[c] = ck.CLEAR
            continue
        weights = COVER_MODES if suspicious else BENIGN_MODES
        if c == ck.WATCHLIST and i > 0:
            weights = SCREENING_MODES
        elif i == 0 and (c == ck.WATCHLIST or (c == ck.HOLDINGS and not stakes)):
            weights = {m: w for m, w in weights.items() if m != ck.CLEAR}
        modes = [m for m in weights if m in ck.MODES[c]
                 and (anomalous is None or m != ck.CLEAR)]
        mode = weighted(modes, [weights[m] for m in modes], rng.random())
        out[c] = _reached(c, mode, j.explanation_reach)
    return out


def _draw_checks(b: CaseBuilder, scheme: Scheme, subject: Entity) -> list[str]:
    """The checks written after the anchor: `knobs.cross_checks - 1` of the rule's pool, drawn
    uniformly among the checks other than the watchlist, which fills in only when they run out
    (screening runs on everyone; a check drawn that way is written in `SCREENING_MODES`). The
    holdings check is drawn only for a subject whose profile makes stakes plausible
    (`checks.holds_stakes`, read from the surface, before the story)."""
    pool = POOLS[scheme.rule]
    skip = {scheme.anchor, ck.WATCHLIST} | (
        set() if ck.holds_stakes(b, subject) else {ck.HOLDINGS})
    others = [c for c in pool if c not in skip]
    wanted = b.knobs.cross_checks - 1
    drawn = b.rng.sample(others, min(len(others), wanted))
    if wanted > len(others) and ck.WATCHLIST in pool and scheme.anchor != ck.WATCHLIST:
        drawn.append(ck.WATCHLIST)
    return drawn


def _reached(check: str, mode: str, reach: str | None) -> str:
    """An explained check's disposition under `Judgement.explanation_reach`."""
    if reach is None or mode == ck.CLEAR:
        return mode
    if reach == "request" and ck.EXPLAINED_RFI in ck.MODES[check]:
        return ck.EXPLAINED_RFI
    return ck.EXPLAINED


def build_case(b: CaseBuilder, *, kind: str, variant: str, scheme: Scheme, suspicious: bool,
               typology: str | None, layout: tuple[tuple[str, ...], str | None] | None = None,
               judgement: Judgement | None = None) -> Case:
    """`layout` (from `scenarios.plan`, already validated there) fixes step 2 instead of drawing
    it: (the checks present after the anchor, the second unexplained check or None);
    `judgement` (also from the plan) fixes what it sets of steps 3 and 4."""
    rule = scheme.rule
    s = SURFACES[rule](b)
    pool = POOLS[rule]
    drawn = layout[0] if layout is not None else _draw_checks(b, scheme, s.subject)
    present = [scheme.anchor, *drawn]
    modes = dispositions(b, present, suspicious, layout[1] if layout is not None else None,
                         ck.holds_stakes(b, s.subject), judgement)
    j = judgement or Judgement()
    writing = {"deep": j.explanation_reach == "deep", "misleading": j.misleading_reply,
               "near_band": j.near_band}

    actor = s.subject if s.subject.kind == "person" else s.directors[0]
    ck.household(b, b.entity(actor.id))
    counterparty = None
    if modes.get(ck.HOLDINGS, ck.CLEAR) != ck.CLEAR and s.counterparties:
        counterparty = b.pick(s.counterparties)
    reg = ck.write_registry(b, s, b.ri(1, 2) + 2, counterparty)
    if counterparty is not None:  # no other check borrows the related counterparty
        reg.lent.add(counterparty.id)
    outcomes: dict[str, ck.Outcome] = {}
    for check in pool:
        mode = modes.get(check, ck.CLEAR)
        if check == ck.PRICE:  # the band always exists; it decides only when present
            outcomes[check] = ck.price(b, s, mode, scheme.over, **writing)
        elif check not in present:
            if check == ck.SOURCE_OF_FUNDS:
                ck.generic_source_of_funds(b, s)
        elif check == ck.SOURCE_OF_FUNDS:
            outcomes[check] = ck.source_of_funds(b, s, mode, SOF_FLAG[rule], **writing)
        elif check == ck.TRACE:
            outcomes[check] = ck.trace(b, s, mode, reg, TRACE_FLAG.get(rule, "ROUND_TRIP"))
        elif check == ck.DEVICE:
            outcomes[check] = ck.device(b, s, mode, reg, deep=writing["deep"])
        elif check == ck.WATCHLIST:
            outcomes[check] = ck.watchlist(b, s, mode)
        elif check == ck.HOLDINGS:
            outcomes[check] = ck.holdings(b, s, mode, reg, counterparty)
        elif check == ck.AGGREGATE_OWNERSHIP:
            outcomes[check] = ck.aggregate_ownership(b, s, mode)
        elif check == ck.AUTHORITY:
            outcomes[check] = ck.authority(b, s, mode)
        elif check == ck.PAYEE_WATCHLIST:
            outcomes[check] = ck.watchlist(b, s, mode, s.payee)
    if ck.SOURCE_OF_FUNDS not in pool:
        ck.generic_source_of_funds(b, s)
    present_outcomes = {c: outcomes[c] for c in present}
    explanation_ids = _disclose(b, s, reg, present_outcomes, j.misleading_reply)
    # Everyone banks online from a device of their own.
    b.logins(b.entity(actor.id), s.account, b.device(), 2)
    decoys(b, s.people, s.account)

    alert = b.alert(s.rule, s.subject, [s.account], s.alert_txns, s.figures)
    final = {c: o.disposition for c, o in present_outcomes.items()}
    failing = [c for c in present if final[c] == ck.UNEXPLAINED]
    deciding = failing if suspicious else present
    groups = tuple(dict.fromkeys(g for c in deciding for g in outcomes[c].groups))
    if suspicious:
        flags = [*s.flags, *(outcomes[c].flag for c in failing)]
        implicated = [i for c in failing for i in outcomes[c].implicated]
        ubo = reg.ubo.id if reg.ubo is not None else None
        subjects = tuple(dict.fromkeys([s.subject.id, *implicated, *([ubo] if ubo else [])]))
        sections = tuple(dict.fromkeys([SAR_SECTION[rule], *(FAIL_SECTION[c] for c in failing)]))
        truth = GroundTruth(kind=kind, variant=variant, suspicious=True, decision="file_sar",
                            typology=typology, subject_ids=subjects,
                            red_flags=tuple(_merge(f for f in flags if f is not None)),
                            justifying_sections=sections[:3], decisive_evidence=groups,
                            ubo_id=ubo, dispositions=final, explanation_ids=explanation_ids)
    else:
        sections = tuple(dict.fromkeys([CLOSE_SECTION[rule], OK_SECTION[scheme.anchor],
                                        *(OK_SECTION[c] for c in present)]))
        truth = GroundTruth(kind=kind, variant=variant, suspicious=False, decision="close_alert",
                            typology=None, subject_ids=(), red_flags=(),
                            justifying_sections=sections[:3], decisive_evidence=groups,
                            dispositions=final, explanation_ids=explanation_ids)
    return b.build(alert, truth)


def _disclose(b: CaseBuilder, s: Surface, reg: ck.Registry, outcomes: dict[str, ck.Outcome],
              misleading: bool = False) -> tuple[str, ...]:
    """File the related-party disclosures (the explaining ones, and for half the cases one about
    a holding no check involves) and write the relationship manager's reply on every topic.
    With `misleading` (`Judgement.misleading_reply`) a topic with an anomaly explained on file
    or unexplained always gets a document, the wrong way (`checks.wrong_way_reply`) when its
    check wrote none. Returns the IDs of the records that explain the innocent anomalies."""
    docs = [d for o in outcomes.values() for d in o.disclosures]
    involved = {n for o in outcomes.values() for n in o.implicated}
    spare = [c for c, _ in reg.holdings if c.id not in involved and c.id not in reg.lent]
    if spare and b.rng.random() < 0.5:
        docs.append(ck.related_party_document(b, b.pick(spare)))
    if docs:
        b.sof(s.subject, "related parties disclosed", tuple(docs))
    ids = [i for o in outcomes.values() for i in o.explanation_ids]
    for topic in INFORMATION_TOPICS:
        mine = [o for c, o in outcomes.items() if ck.TOPIC.get(c) == topic]
        docs = tuple(d for o in mine for d in o.reply_docs)
        if misleading and not docs and any(o.disposition in (ck.EXPLAINED, ck.UNEXPLAINED)
                                           for o in mine):
            docs = ck.wrong_way_reply(b, s, topic)
        if docs:
            statement = "The customer sent the documents attached."
        elif any(o.evasive for o in mine) or b.rng.random() < EVASIVE_NOISE_SHARE:
            statement = b.pick(ck.EVASIVE)
        else:
            statement = b.pick(NEUTRAL_REPLIES)
        reply = b.reply(s.subject, topic, statement, docs)
        for o in mine:
            if o.disposition == ck.EXPLAINED_RFI:
                ids += [reply.id, *(d.id for d in o.reply_docs)]
    return tuple(dict.fromkeys(ids))


def _merge(flags) -> list[RedFlag]:
    """One flag per code (two failing checks may raise the same code)."""
    out: dict[str, RedFlag] = {}
    for f in flags:
        if f.code in out:
            g = out[f.code]
            f = RedFlag(code=f.code,
                        evidence_ids=tuple(dict.fromkeys(g.evidence_ids + f.evidence_ids)),
                        carrier_ids=tuple(dict.fromkeys(g.carrier_ids + f.carrier_ids)))
        out[f.code] = f
    return list(out.values())
