"""Latent stories: one assembly for every kind, benign or suspicious.

`build_case(b, kind, variant)` does, in this order:

1. draws the rule's shared surface (`scenarios.surfaces`) — the alert and the ledger around it,
   identical in distribution for every kind that fires the rule;
2. chooses the cross-checks written into the case: the variant's *anchor* check plus
   `knobs.cross_checks - 1` others from the rule's pool, uniformly. A suspicious variant's
   anchor is where its cover story fails; a benign variant's anchor is its main explanation.
   Anchors are spread over a rule's pool in the same proportions for both classes (the variant
   lists are built that way), so which checks exist never tells the label;
3. writes each check (`scenarios.checks`): consistent for benign cases; for suspicious ones
   the anchor fails — and, when the anchor's failure lives in one view only, one more present
   check fails too, so the failure always spans two views;
4. adds decoys, then freezes the alert and the ground truth: red flags with their carriers,
   the decisive evidence (the checks' view groups), subjects, justifying sections.
"""

from __future__ import annotations

from dataclasses import dataclass

from memex.scenarios import checks as ck
from memex.scenarios.background import decoys
from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
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
from memex.scenarios.surfaces import SURFACES
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


@dataclass(frozen=True)
class Scheme:
    """What a variant means: the rule it fires and its anchor check (`over` for pricing)."""

    rule: str
    anchor: str
    over: bool = True


def build_case(b: CaseBuilder, *, kind: str, variant: str, scheme: Scheme, suspicious: bool,
               typology: str | None, layout: tuple[tuple[str, ...], str | None] | None = None,
               ) -> Case:
    """`layout` (from `scenarios.plan`, already validated there) fixes step 2 instead of drawing
    it: (the checks present after the anchor, the second failing check or None)."""
    rng = b.rng
    rule = scheme.rule
    s = SURFACES[rule](b)
    pool = POOLS[rule]
    others = [c for c in pool if c != scheme.anchor]
    present = [scheme.anchor, *(layout[0] if layout is not None else rng.sample(
        others, min(len(others), b.knobs.cross_checks - 1)))]
    failing = {scheme.anchor} if suspicious else set()
    if suspicious and scheme.anchor in SINGLE_VIEW:
        second = [c for c in present[1:] if c not in SINGLE_VIEW] or present[1:]
        failing.add(layout[1] if layout is not None and layout[1] in second else b.pick(second))

    counterparty = None
    if ck.HOLDINGS in failing and s.counterparties:
        counterparty = b.pick(s.counterparties)
    reg = ck.write_registry(b, s, b.ri(1, 2) + 2, counterparty)
    outcomes: dict[str, ck.Outcome] = {}
    for check in pool:
        ok = check not in failing
        if check == ck.PRICE:  # the band always exists; it decides only when present
            outcomes[check] = ck.price(b, s, ok, scheme.over)
        elif check not in present:
            if check == ck.SOURCE_OF_FUNDS:
                ck.generic_source_of_funds(b, s)
        elif check == ck.SOURCE_OF_FUNDS:
            outcomes[check] = ck.source_of_funds(b, s, ok, SOF_FLAG[rule])
        elif check == ck.TRACE:
            outcomes[check] = ck.trace(b, s, ok, reg, TRACE_FLAG.get(rule, "ROUND_TRIP"))
        elif check == ck.DEVICE:
            outcomes[check] = ck.device(b, s, ok, reg)
        elif check == ck.WATCHLIST:
            outcomes[check] = ck.watchlist(b, s, ok)
        elif check == ck.HOLDINGS:
            outcomes[check] = ck.holdings(s, ok, reg, counterparty)
        elif check == ck.AGGREGATE_OWNERSHIP:
            outcomes[check] = ck.aggregate_ownership(b, s, ok)
        elif check == ck.AUTHORITY:
            outcomes[check] = ck.authority(b, s, ok)
        elif check == ck.PAYEE_WATCHLIST:
            outcomes[check] = ck.watchlist(b, s, ok, s.payee)
    if ck.SOURCE_OF_FUNDS not in pool:
        ck.generic_source_of_funds(b, s)
    # Everyone banks online from a device of their own.
    actor = s.subject if s.subject.kind == "person" else s.directors[0]
    b.logins(actor, s.account, b.device(), 2)
    decoys(b, s.people, s.account)

    alert = b.alert(s.rule, s.subject, [s.account], s.alert_txns, s.figures)
    deciding = [c for c in present if (c in failing) == suspicious] if suspicious else present
    groups = tuple(dict.fromkeys(g for c in deciding for g in outcomes[c].groups))
    if suspicious:
        flags = [*s.flags, *(outcomes[c].flag for c in present if c in failing)]
        implicated = [i for c in present if c in failing for i in outcomes[c].implicated]
        ubo = reg.ubo.id if reg.ubo is not None else None
        subjects = tuple(dict.fromkeys([s.subject.id, *implicated, *([ubo] if ubo else [])]))
        sections = tuple(dict.fromkeys([SAR_SECTION[rule],
                                        *(FAIL_SECTION[c] for c in present if c in failing)]))
        truth = GroundTruth(kind=kind, variant=variant, suspicious=True, decision="file_sar",
                            typology=typology, subject_ids=subjects,
                            red_flags=tuple(_merge(f for f in flags if f is not None)),
                            justifying_sections=sections[:3], decisive_evidence=groups,
                            ubo_id=ubo)
    else:
        sections = tuple(dict.fromkeys([CLOSE_SECTION[rule], OK_SECTION[scheme.anchor],
                                        *(OK_SECTION[c] for c in present)]))
        truth = GroundTruth(kind=kind, variant=variant, suspicious=False, decision="close_alert",
                            typology=None, subject_ids=(), red_flags=(),
                            justifying_sections=sections[:3], decisive_evidence=groups)
    return b.build(alert, truth)


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
