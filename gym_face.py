"""The AML investigation's Gymnasium spec (`envkit.gym.GymSpec`): what the menu aims at, how a
slot's call is completed, and the numeric features of what the agent has read.

**Targets.** Records by kind (entity, account, transaction, invoice) in the order the agent first
saw them, each page read in its JSON order (so the alert's subject is entity 0 and its first
account is account 0), a ledger page's lines outgoing wires first, largest first; a record is
aimed at only while it is resident (alert, RAM, disk), so the menu never page-faults.
`request_wire_trace` aims at transactions a page showed as wires,
`check_watchlist` at an entity by its name, `check_market_price` at a commodity an invoice
named, `retrieve_async_result` at a job (a trace or a customer's answer) once it is due
(polling early is a penalised no-op); `request_information` at an entity, one slot per topic of
its closed set.

**Completion.** `query_transactions` lists the account's wires from the alert window's start,
or every line of the window's first day (where an FX-charges line explains a document's excess);
`write_to_case_file` writes the resident IDs (newest page first) not yet under its note, the note
being one of the manual's red-flag codes (a tagged note) or "evidence"; `file_sar` files what the
agent has read and kept: one finding per cross-check whose anomaly stays unexplained (its code and
carrier records), per red flag the alert itself shows and per tagged note, each with its records
on disk as evidence (none on disk: left out); the customer, the parties those checks implicate,
the ultimate owner the registry shows and the entities of the tagged notes as subjects; the
loaded sections; `close_alert` cites the loaded sections. `search_compliance_manual`
(free text) is left out: `update_system_prompt` is offered for the sections the manual's table
of contents gives the rules' decisions and the cross-checks (the analyst's map the heuristic
uses: 28 of the manual's 68).

**Features** (all read from observations, none from the hidden case): the alert's rule, what its
cash deposits show (near the CTR threshold, several branches, other depositors) and the subject's
kind; the share of the step budget used; whether the last call failed; the trace job's
state; which tools' pages sit in RAM with IDs not yet on disk; for each cross-check the
heuristic investigator runs (`policies.heuristic`: documents vs the alerted inflow, the trace's
last hop vs the registry, device co-users vs the registry, watchlist dates vs KYC dates, holdings
vs alerted counterparties, invoice price vs the market band), once both views have been read,
its disposition: clear, anomaly explained (on file or by the customer's answer, as
`policies.heuristic` weighs it), or anomaly unexplained; the tags on disk; the kernel's sections.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any, ClassVar, NamedTuple

import numpy as np

from memex.envkit.gym import Call, GymSpec, Reader
from memex.models import TOOL_NAMES
from memex.policies.heuristic import (
    CHARGES_MATCH_SHARE,
    CLOSE_SECTION,
    DOCUMENT_MATCH_FACTOR,
    FAIL_SECTION,
    HELD_SECTION,
    PRICE_FACTOR,
    SAR_SECTION,
    SOF_CODE,
    TRACE_CODE,
    TYPOLOGY,
    Heuristic,
)
from memex.scenarios.ids import ID_PATTERN, record_type
from memex.scenarios.manual import RED_FLAG_CODES, SECTIONS
from memex.state_manager import MAX_NOTES

RULES = tuple(TYPOLOGY)
CODES = tuple(RED_FLAG_CODES)
NOTES = (*CODES, "evidence")  # a tagged note, or plain evidence
# The sections the manual's table of contents gives each rule's decisions and each cross-check
# (the analyst's map `policies.heuristic` uses), in manual order: the ones the menu loads.
SECTION_IDS = tuple(s for s in SECTIONS if s in {*SAR_SECTION.values(), *CLOSE_SECTION.values(),
                                                 *FAIL_SECTION.values(), *HELD_SECTION.values()})
SURFACE = ("CASH_BELOW_CTR_THRESHOLD", "MULTI_BRANCH_CASH", "MULTIPLE_DEPOSITORS")
CHECKS = ("source_of_funds", "trace", "device", "watchlist", "holdings", "price")
MAX_EVIDENCE = 64  # `declarations.MAX_ARG_ITEMS`
MAX_FINDING_IDS = 40  # `graders.decision.Finding.evidence_ids`
FEATURE_SIZE = (len(RULES) + len(SURFACE) + 1 + 1 + 1 + 2 + len(TOOL_NAMES) + 3 * len(CHECKS)
                + len(NOTES) + len(SECTION_IDS))


class Check(NamedTuple):
    """One cross-check as the heuristic weighs it: its views read, whether they disagree,
    whether an explanation was found, and — for an anomaly — the red-flag code it carries, its
    carrier records and the parties it implicates (as `policies.heuristic.CheckResult`)."""

    read: bool
    anomaly: bool = False
    explained: bool = False
    code: str = ""
    carriers: tuple[str, ...] = ()
    implicated: tuple[str, ...] = ()

    @property
    def unexplained(self) -> bool:
        return self.read and self.anomaly and not self.explained


def _ids_in_order(result: Any, ids: set[str]) -> list[str]:
    """The page's IDs in the order its JSON names them."""
    text = json.dumps(result, default=str)
    return list(dict.fromkeys(i for i in ID_PATTERN.findall(text) if i in ids))


class AmlReader(Reader):
    """One AML episode as the agent has read it."""

    def __init__(self, alert: dict[str, Any]):
        self.alert = alert
        self.subject = alert["subject"]["entity_id"]
        self.accounts = set(alert["account_ids"])
        self.alert_ids = {alert["alert_id"], self.subject, *alert["account_ids"],
                          *(t["id"] for t in alert["transactions"])}
        self.order: dict[str, list[str]] = {}
        self.names: dict[str, str] = {}
        self.commodities: list[str] = []
        self.wires: set[str] = set()
        self.results: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        self.obs: Any = None

    # -- reading --
    def observe(self, obs: Any, call: Call | None) -> None:
        self.obs = obs
        ctx = obs.context
        self.loaded = [s.section_id for s in ctx.kernel]
        self.disk = {i for n in ctx.disk for i in n.ids}
        self.resident = self.alert_ids | {i for p in ctx.ram for i in p.ids} | self.disk
        self._visible: dict[str, list[str | None]] = {}
        self._cache: dict[str, Any] = {}
        if obs.error is not None or obs.result is None or not obs.context.ram:
            return
        tool = obs.tool or "review_alert"
        arguments = call[1] if call else {}
        self.results.setdefault(tool, []).append((arguments, obs.result))
        result = obs.result
        if tool == "query_transactions":
            lines = sorted(result.get("lines", []), key=lambda t: (
                not (t.get("direction") == "out" and t["channel"] == "wire"), -t["amount_usd"]))
            result = {**result, "lines": lines}
        for ident in _ids_in_order(result, set(obs.context.ram[-1].ids)):
            kind = record_type(ident)
            seen = self.order.setdefault(kind, [])
            if ident not in seen:
                seen.append(ident)
        self._collect(obs.result)

    def _collect(self, node: Any) -> None:
        """Entity names and invoice commodities, wherever a result shows them."""
        if isinstance(node, dict):
            if isinstance(node.get("entity_id"), str) and isinstance(node.get("name"), str):
                self.names.setdefault(node["entity_id"], node["name"])
            if node.get("channel") == "wire" and isinstance(node.get("id"), str):
                self.wires.add(node["id"])
            commodity = node.get("commodity")
            if isinstance(commodity, str) and commodity not in self.commodities:
                self.commodities.append(commodity)
            for value in node.values():
                self._collect(value)
        elif isinstance(node, list):
            for value in node:
                self._collect(value)

    def visible(self, kind: str) -> Sequence[str | None]:
        if kind == "job":
            return [j.job_id if j.status == "ready" else None for j in self.obs.context.jobs]
        if kind == "commodity":
            return self.commodities
        if kind not in self._visible:
            if kind == "wire":
                records = [i for i in self.order.get("transaction", []) if i in self.wires]
            else:
                records = self.order.get("entity" if kind == "entity_name" else kind, [])
            self._visible[kind] = [i if i in self.resident else None for i in records]
        return self._visible[kind]

    def value(self, kind: str, ident: str) -> Any:
        if kind == "entity_name":
            return self.names.get(ident)
        return ident

    def last(self, tool: str, **match: Any) -> Any:
        """The newest result of `tool` whose arguments include `match`, or None."""
        for arguments, result in reversed(self.results.get(tool, [])):
            if all(arguments.get(k) == v for k, v in match.items()):
                return result
        return None

    # -- completion --
    def complete(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        ctx, loaded = self.obs.context, self.loaded
        if tool == "update_system_prompt":
            return None if arguments["section_id"] in loaded else arguments
        if tool == "query_transactions":
            start = self.alert["window"]["start"]
            if "channel" in arguments:
                return {**arguments, "start_date": start, "limit": 20}
            return {**arguments, "start_date": start, "end_date": start, "limit": 100}
        if tool == "write_to_case_file":
            if len(ctx.disk) >= MAX_NOTES:
                return None
            filed = self._once("filed", self._filed)
            fresh = self._once("fresh", lambda: list(dict.fromkeys(
                [i for p in reversed(ctx.ram) for i in sorted(p.ids)] + sorted(self.alert_ids))))
            done = filed.get(arguments["note"], ())
            evidence = [i for i in fresh if i not in done][:MAX_EVIDENCE]
            return {**arguments, "evidence_ids": evidence} if evidence else None
        if tool == "file_sar":
            filing = self._once("sar", self._filing)
            typology = arguments["typology"].replace("_", " ")
            return {**arguments, **filing,
                    "narrative": f"Suspected {typology}. {filing['narrative']}"}
        if tool == "close_alert":
            return {**arguments, "cited_sections": loaded,
                    "reason": "The cross-checks reviewed explain the alerted activity."}
        return arguments

    def _once(self, name: str, make) -> Any:
        """`make()`, computed once per observation."""
        if name not in self._cache:
            self._cache[name] = make()
        return self._cache[name]

    def _filed(self) -> dict[str, set[str]]:
        """The IDs on disk under each note text."""
        out: dict[str, set[str]] = {}
        for note in self.obs.context.disk:
            out.setdefault(note.text, set()).update(note.ids)
        return out

    def _filing(self) -> dict[str, Any]:
        """A SAR's arguments but its typology, from what the agent has read and kept: one
        finding per red flag — each unexplained cross-check's code, the alert's own flags, each
        tagged note — with its records on disk as evidence (a flag with none on disk is left
        out: evidence counts only once kept); as subjects the customer, the parties the
        unexplained checks implicate, the natural person at the top of the registry's ownership
        chain and the entities of the tagged notes; the loaded sections; a narrative naming
        the findings' records."""
        disk = self.disk
        findings: dict[str, list[str]] = {}

        def add(code: str, ids: Sequence[str]) -> None:
            kept = [i for i in ids if i in disk]
            if kept:
                evidence = findings.setdefault(code, [])
                evidence += [i for i in kept if i not in evidence]

        failed = {n: c for n, c in self.checks().items() if c.unexplained}
        for check in failed.values():
            add(check.code, check.carriers)
        for code, ids in self.flags().items():
            add(code, ids)
        tagged = [n for n in self.obs.context.disk if n.text in RED_FLAG_CODES]
        for note in tagged:
            add(note.text, note.ids)
        owners = self.last("query_beneficial_ownership", entity_id=self.subject) or {}
        subjects = [self.subject, *(i for c in failed.values() for i in c.implicated),
                    *filter(None, [Heuristic._ultimate_owner(owners)]),
                    *(i for n in tagged for i in n.ids if record_type(i) == "entity")]
        subjects = list(dict.fromkeys(subjects))
        narrative = ("Subjects " + ", ".join(subjects) + ". " + (" ".join(
            f"{code}: {', '.join(ids[:5])}." for code, ids in findings.items())
            or "No red flag on file."))
        return {"subjects": subjects,
                "findings": [{"code": c, "evidence_ids": ids[:MAX_FINDING_IDS]}
                             for c, ids in findings.items()],
                "cited_sections": self.loaded, "narrative": narrative}

    # -- features --
    def _documents(self, tool: str = "check_source_of_funds") -> list[dict[str, Any]]:
        """The customer's declared documents (newest source-of-funds page)."""
        sof = self.last(tool, entity_id=self.subject) or {}
        return [d for s in sof.get("declarations", []) for d in s["documents"]]

    def _replies(self, topic: str) -> list[dict[str, Any]]:
        """The documents of the customer's answers on `topic` collected so far."""
        return [d for _, r in self.results.get("retrieve_async_result", [])
                if r.get("topic") == topic for d in r.get("documents", [])]

    def checks(self) -> dict[str, Check]:
        """Each cross-check of `CHECKS` as the heuristic weighs it (`Check`): its views read,
        whether they disagree, whether an explanation was found on file or in the customer's
        answer, and an anomaly's code, carriers and implicated parties."""
        return self._once("checks", self._checks)

    def _checks(self) -> dict[str, Check]:
        subject, name = self.subject, self.alert["subject"]["name"]
        rule = self.alert["rule"]["code"]
        txns = self.alert["transactions"]
        owners = self.last("query_beneficial_ownership", entity_id=subject)
        holdings = {h["company"]["entity_id"]: h for h in (owners or {}).get("holdings", [])}
        directors = [d["entity_id"] for d in (owners or {}).get("directors", [])]
        declared = self._documents()
        out: dict[str, Check] = {}

        sof = self.last("check_source_of_funds", entity_id=subject)
        flow = sum(t["amount_usd"] for t in txns if t["to_account"] in self.accounts)
        docs = [d for d in declared if d.get("amount_usd")]
        anomaly = bool(docs) and flow > 0 and not any(
            1 / DOCUMENT_MATCH_FACTOR <= d["amount_usd"] / flow <= DOCUMENT_MATCH_FACTOR
            for d in docs)
        explained = False
        if anomaly:
            gap = min(docs, key=lambda d: abs(d["amount_usd"] - flow))["amount_usd"] - flow
            ledger = [x for _, r in self.results.get("query_transactions", [])
                      for x in r.get("lines", []) if x.get("direction") == "out"]
            explained = gap > 0 and any(
                abs(x["amount_usd"] - gap) <= CHARGES_MATCH_SHARE * flow
                for x in ledger + [d for d in self._replies("source_of_funds")
                                   if d.get("amount_usd")])
        out["source_of_funds"] = Check(
            sof is not None, anomaly, explained, SOF_CODE.get(rule, "UNSUPPORTED_SOURCE_OF_FUNDS"),
            tuple(d["id"] for d in docs) if anomaly else ())

        trace = next((r for _, r in reversed(self.results.get("retrieve_async_result", []))
                      if "hops" in r), None)
        hops = sorted((trace or {}).get("hops", []), key=lambda h: h["sequence"])
        anomaly = explained = False
        carriers: tuple[str, ...] = ()
        implicated: tuple[str, ...] = ()
        if len(hops) > 1:
            last = hops[-1]
            own_names = {h["company"]["name"] for h in holdings.values()} | {name}
            anomaly = last.get("party_id") in holdings or last.get("party_id") == subject or \
                last["party_name"] in own_names
            explained = anomaly and any(Heuristic._disclosure(last["party_name"], d) for d in (
                declared, self._replies("related_parties")))
            if anomaly:
                party = last.get("party_id")
                carriers = (last["hop_id"],)
                implicated = (party,) if party and party != subject else ()
        out["trace"] = Check(trace is not None and owners is not None, anomaly, explained,
                             TRACE_CODE.get(rule, "ROUND_TRIP"), carriers, implicated)

        device = self.last("check_device_overlap", entity_id=subject)
        insiders = {subject, *holdings, *directors}
        unrelated = [s for s in (device or {}).get("shared_with", [])
                     if s["entity_id"] not in insiders]
        actor = subject if self.alert["subject"]["kind"] == "person" or not directors \
            else directors[0]
        household = {m["entity_id"] for m in (self.last("get_customer_profile", entity_id=actor)
                                              or {}).get("household", [])}
        named = {d.get("counterparty") for d in self._replies("device_use")
                 if d.get("kind") == "household declaration"}
        out["device"] = Check(
            device is not None and owners is not None, bool(unrelated),
            bool(unrelated) and (all(s["entity_id"] in household for s in unrelated)
                                 or all(s["name"] in named for s in unrelated)),
            "SHARED_DEVICE_ACROSS_ENTITIES",
            tuple(i for s in unrelated for i in s.get("login_ids", [])),
            tuple(s["entity_id"] for s in unrelated))

        screen = self.last("check_watchlist", name=name)
        hits = [h for h in (screen or {}).get("hits", []) if h["list"] != "pep"]
        profile = self.last("get_customer_profile", entity_id=subject) or {}
        own_date = profile.get("date_of_birth") or profile.get("incorporation_date")
        same = [h for h in hits if own_date and h.get("date_of_birth") == own_date]
        refs = {d.get("reference") for d in self._replies("identity") if d.get("reference")}
        cleared = all(Heuristic._identifiers_clear(h, profile) for h in same) or (
            bool(refs) and all(h.get("id_number") and h["id_number"] not in refs for h in same))
        out["watchlist"] = Check(
            screen is not None and (not hits or bool(profile)), bool(same), bool(same) and cleared,
            "ADVERSE_MEDIA" if same and same[0]["list"] == "adverse_media" else "SANCTIONS_MATCH",
            tuple(h["entry_id"] for h in same))

        counterparties = {p for t in txns for p in (t.get("from_party_id"), t.get("to_party_id"))
                          if p and p != subject}
        related = [h for c, h in holdings.items() if c in counterparties]
        names = [h["company"]["name"] for h in related]
        out["holdings"] = Check(
            owners is not None, bool(related), bool(related) and any(
                all(Heuristic._disclosure(n, d) for n in names)
                for d in (declared, self._replies("related_parties"))),
            "UNDISCLOSED_RELATED_PARTY", tuple(h["link_id"] for h in related),
            tuple(h["company"]["entity_id"] for h in related))

        out["price"] = self._price_check()
        return out

    def _price_check(self) -> Check:
        """The invoice's unit price vs the market band; a CIF price is compared net of the
        freight on the bill of lading or on a freight invoice the customer sent."""
        shipment = next((r for _, r in reversed(self.results.get("verify_customs_invoice", []))),
                        None) or {}
        documents = shipment.get("documents", [])
        invoice = next((d for d in documents if d.get("unit_price_usd")), None)
        band = self.last("check_market_price", commodity=invoice["commodity"]) \
            if invoice else None
        if not band:
            return Check(band is not None)
        unit, qty = invoice["unit_price_usd"], invoice.get("quantity") or 1
        low, high = band["low_usd"] / PRICE_FACTOR, band["high_usd"] * PRICE_FACTOR
        if low <= unit <= high:
            return Check(True)
        ref = invoice.get("shipment_ref") or shipment.get("shipment_ref")
        freights = [d.get("freight_usd") for d in documents if d.get("kind") == "bill_of_lading"]
        freights += [d.get("amount_usd") for d in self._replies("trade_terms")
                     if d.get("reference") == ref]
        customs = [d["document_id"] for d in documents if d.get("kind") == "customs_declaration"]
        parties = [p["entity_id"] for p in (shipment.get("exporter"), shipment.get("importer"))
                   if p and p["entity_id"] != self.subject]
        return Check(True, True, invoice.get("price_basis") == "CIF" and any(
            low <= unit - f / qty <= high for f in freights if f),
            "OVER_INVOICING" if unit > high else "UNDER_INVOICING",
            (*customs, band["price_id"], invoice["document_id"]), tuple(parties))

    def flags(self) -> dict[str, list[str]]:
        """The red flags the alert itself shows, with their records (`policies.heuristic`'s
        reading of the alert; a company's first director is the account holder once the
        registry was read)."""
        owners = self.last("query_beneficial_ownership", entity_id=self.subject) or {}
        directors = [d["entity_id"] for d in owners.get("directors", [])]
        return Heuristic._surface_flags(SimpleNamespace(alert=self.alert),
                                        self.alert["rule"]["code"], self.alert["transactions"],
                                        directors)

    def surface(self) -> list[float]:
        """Which of the cash deposits' flags (`SURFACE`) the alert shows: two or more just
        below the CTR threshold, several branches, depositors other than the account holder."""
        flags = self.flags()
        return [float(code in flags) for code in SURFACE]

    def features(self) -> np.ndarray:
        obs, ctx = self.obs, self.obs.context
        f: list[float] = [float(self.alert["rule"]["code"] == r) for r in RULES]
        f += self.surface()
        f.append(float(self.alert["subject"]["kind"] == "person"))
        f.append(obs.step / max(obs.step_budget, 1))
        f.append(float(obs.error is not None))
        f += [float(any(j.status == "pending" for j in ctx.jobs)),
              float(any(j.status == "ready" for j in ctx.jobs))]
        disk = {i for n in ctx.disk for i in n.ids}
        unsaved = {p.tool for p in ctx.ram if set(p.ids) - disk}
        f += [float(t in unsaved) for t in TOOL_NAMES]
        for c in self.checks().values():
            f += [float(c.unexplained), float(c.read and c.explained),
                  float(c.read and not c.anomaly)]
        tags = {n.text for n in ctx.disk}
        f += [float(t in tags) for t in NOTES]
        loaded = {s.section_id for s in ctx.kernel}
        f += [float(s in loaded) for s in SECTION_IDS]
        return np.asarray(f, np.float32)


class AmlGymSpec(GymSpec):
    widths: ClassVar[dict[str, int]] = {
        "entity": 4, "entity_name": 2, "account": 1, "transaction": 2, "wire": 2, "invoice": 1,
        "job": 4, "commodity": 1}
    targets: ClassVar[dict[str, tuple[str, str]]] = {
        "check_watchlist": ("name", "entity_name"),
        "check_market_price": ("commodity", "commodity"),
        "retrieve_async_result": ("job_id", "job"),
        "request_wire_trace": ("transaction_id", "wire")}
    excluded = ("search_compliance_manual",)
    feature_size = FEATURE_SIZE

    def variants(self, tool: str) -> list[dict[str, Any]] | None:
        if tool == "query_transactions":
            return [{"channel": "wire"}, {}]  # the wires since the window, or its first day
        if tool == "write_to_case_file":
            return [{"note": n} for n in NOTES]
        if tool == "update_system_prompt":
            return [{"section_id": s} for s in SECTION_IDS]
        return None

    def reader(self, obs: Any) -> AmlReader:
        return AmlReader(obs.result)


SPEC = AmlGymSpec()
