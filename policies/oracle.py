"""The AML oracle: reads the ground truth and plays it back efficiently (the practical maximum
return; tests and evaluation only).

It decides from the truth but is paid like anyone else, so it still gathers the evidence: one
record of every decisive view (`GroundTruth.decisive_evidence`) returned by a tool, one carrier
of every red flag returned by a tool and kept on disk, every subject seen, one record that
explains a benign case's anomalies (for its close reason), and the justifying sections loaded.
It picks the cheapest record of each view (alert records cost nothing; a wire trace or a reply
to a request for information costs a call and a wait), requests the trace first, writes
carriers in batches just before their page would leave RAM, and fills the waits with the
section loads it needs anyway.
"""

from __future__ import annotations

from memex.graders.rubric import explanation_ids
from memex.models import MemexAction
from memex.policies.narrative import CaseNotes, close_reason, sar_narrative
from memex.policies.scripted import ScriptedPolicy, act, seen_ids

# Calls a record type costs to reveal (alert records are free); cheaper views are preferred.
REVEAL_COST = {"OWN": 1, "LOG": 1, "SOF": 1, "DOC": 1, "WL": 1, "CUS": 1, "INV": 1, "BOL": 1,
               "MKT": 1, "TXN": 1, "ENT": 1, "HOP": 2}
REPLY_COST = 3  # a reply to a request for information (or a document in it): a call and a wait


class Oracle(ScriptedPolicy):
    """Reads the ground truth; reveals every decisive view and one carrier per red flag, keeps
    the carriers on disk, loads the justifying sections and decides."""

    name = "oracle"
    needs_case = True

    def script(self, obs):
        truth = self.case.truth
        self.obs = obs
        self.notes = CaseNotes()
        self.notes.read(obs)
        self.alert_ids = set(obs.context.ram[-1].ids)
        self.seen = set(seen_ids(obs)) | self.alert_ids
        self.disk: set[str] = set()
        self.jobs: list[dict] = []  # outstanding async jobs (wire traces, information requests)
        planned: list[MemexAction] = []

        def plan(target: str) -> None:
            for action in self._path_to(target):
                if action not in planned:
                    planned.append(action)

        def pick(ids) -> str:
            keys = {a.model_dump_json() for a in planned}
            return min(ids, key=lambda i: (
                0 if i in self.alert_ids else
                1 if all(a.model_dump_json() in keys for a in self._path_to(i)) else
                1 + (REPLY_COST if i in self._replies() else
                     REVEAL_COST.get(i.split("-")[0], 3)), i))

        carriers = {}
        for flag in truth.red_flags if truth.suspicious else ():
            carriers[flag.code] = pick(flag.carrier_ids or flag.evidence_ids)
            plan(carriers[flag.code])
        for view in truth.decisive_evidence:
            plan(pick(view))
        # A benign case's close reason cites a record that explains its anomalies (the
        # cheapest one: a record on file before a reply to a request for information).
        if not truth.suspicious and truth.explanation_ids:
            plan(pick(truth.explanation_ids))
        self.pending = set(carriers.values())
        sections = list(truth.justifying_sections)
        # A counterparty's registry first and traces next (the counterparty and the invoice are
        # named only by the alert page, which leaves RAM after two steps; a trace's result takes
        # steps to arrive), then trade documents, then the rest.
        order = {"query_transactions": 0, "request_wire_trace": 0, "verify_customs_invoice": 1,
                 "request_information": 1.5}
        subject = self.case.public.alert.subject_id
        planned.sort(key=lambda a: -1 if a.tool == "query_beneficial_ownership"
                     and a.arguments.get("entity_id") != subject else order.get(a.tool, 2))
        for action in planned:
            yield from self._do(action)
        for subject in truth.subject_ids if truth.suspicious else ():
            for action in self._path_to(subject):
                if subject in self.seen:
                    break
                yield from self._do(action)
        while self.jobs:  # the async results are the last thing outstanding
            if self._due():
                yield from self._retrieve()
            elif sections:
                yield from self._step(act("update_system_prompt", section_id=sections.pop(0)))
            else:
                yield from self._step(act("search_compliance_manual", query="wire trace"))
        for sid in sections:
            yield from self._step(act("update_system_prompt", section_id=sid))
        yield from self._flush(everything=True)
        cited = list(truth.justifying_sections)
        alerted = list(self.case.public.alert.transaction_ids)
        if not truth.suspicious:
            explained = sorted(explanation_ids(truth) & self.seen - self.alert_ids)
            yield act("close_alert", cited_sections=cited,
                      reason=close_reason(self.notes, explained, alerted))
            return
        findings = [{"code": code, "evidence_ids": [c]} for code, c in carriers.items()
                    if c in self.disk]
        subjects = [s for s in truth.subject_ids if s in self.seen]
        yield act("file_sar", subjects=subjects, typology=truth.typology, findings=findings,
                  cited_sections=cited, narrative=sar_narrative(
                      self.notes, subjects, truth.typology,
                      [c for f in findings for c in f["evidence_ids"]], alerted))

    # ---- stepping ---------------------------------------------------------------------------
    def _step(self, action: MemexAction):
        """One action; then, if a pending carrier sits only in the page the next action would
        evict from RAM, write every resident pending carrier to disk."""
        self.obs = result = yield action
        self.notes.read(self.obs)
        self.seen.update(seen_ids(self.obs))
        yield from self._flush()
        return result

    def _flush(self, everything: bool = False):
        ram = self.obs.context.ram
        newest = set(ram[-1].ids) if ram else set()
        resident = {i for p in ram for i in p.ids} | self.alert_ids | self.disk
        pending = [i for i in sorted(self.pending) if i in resident and i not in self.disk]
        at_risk = [i for i in pending if i not in newest and i not in self.alert_ids]
        if pending and (at_risk or everything):
            self.obs = yield act("write_to_case_file", note="Evidence: " + ", ".join(pending),
                                 evidence_ids=pending)
            if self.obs.error is None:
                self.disk |= set(pending)
                self.pending -= set(pending)

    def _due(self) -> bool:
        """Whether the trace is ready for the next action to collect."""
        return bool(self.jobs) and self.obs.step + 1 >= self.jobs[0]["ready_at_step"]

    def _do(self, action: MemexAction):
        """Run a planned action, collecting the trace first whenever it is due."""
        if self._due():
            yield from self._retrieve()
        result = yield from self._step(action)
        if action.tool in ("request_wire_trace", "request_information") \
                and result.error is None:
            self.jobs = sorted([*self.jobs, result.result], key=lambda j: j["ready_at_step"])

    def _retrieve(self):
        job = self.jobs.pop(0)
        yield from self._step(act("retrieve_async_result", job_id=job["job_id"]))

    # ---- where each record is revealed --------------------------------------------------
    def _is_counterparty(self, entity_id: str) -> bool:
        """Whether `entity_id` is the other side of an alerted transaction (not the subject)."""
        pub = self.case.public
        accounts = {a.id: a.owner_id for a in pub.accounts}
        alerted = [t for t in pub.transactions if t.id in set(pub.alert.transaction_ids)]
        return entity_id != pub.alert.subject_id and any(
            accounts.get(t.from_account or "") == entity_id
            or accounts.get(t.to_account or "") == entity_id for t in alerted)

    def _replies(self) -> dict:
        """The replies to requests for information by their ID and their documents' IDs."""
        return {i: r for r in self.case.public.information_replies
                for i in (r.id, *(d.id for d in r.documents))}

    def _path_to(self, target: str) -> list[MemexAction]:
        """Tool calls that reveal `target`, starting from what the alert shows."""
        pub = self.case.public
        prefix, subject = target.split("-")[0], pub.alert.subject_id
        if target in self.alert_ids:
            return []
        replies = self._replies()
        if prefix == "TXN":
            t = next(t for t in pub.transactions if t.id == target)
            ours = {a.id for a in pub.accounts if a.ours}
            acct = t.to_account if t.to_account in ours else t.from_account
            day = t.timestamp[:10]
            return [act("query_transactions", account_id=acct, start_date=day, end_date=day,
                        limit=100)]
        if prefix == "HOP":
            txn = next(h.transaction_id for h in pub.correspondent_hops if h.id == target)
            return [*self._path_to(txn), act("request_wire_trace", transaction_id=txn)]
        if prefix == "OWN":
            # A link above a counterparty (its owners) is read from that counterparty.
            link = next(o for o in pub.ownership if o.id == target)
            if link.owner_id != subject and self._is_counterparty(link.company_id):
                return [act("query_beneficial_ownership", entity_id=link.company_id)]
            return [act("query_beneficial_ownership", entity_id=subject)]
        if prefix == "LOG":
            return [act("check_device_overlap", entity_id=subject)]
        if prefix in ("INV", "BOL", "CUS"):
            shipment = next(d.shipment_ref for d in pub.trade_documents if d.id == target)
            invoice = next(t.reference for t in pub.transactions if t.reference and any(
                d.id == t.reference and d.shipment_ref == shipment for d in pub.trade_documents))
            return [act("verify_customs_invoice", invoice_id=invoice)]
        if prefix == "MKT":
            commodity = next(m.commodity for m in pub.market_prices if m.id == target)
            return [act("check_market_price", commodity=commodity)]
        if prefix == "RFI" or (prefix == "DOC" and target in replies):
            reply = replies[target]
            return [act("request_information", entity_id=reply.entity_id, topic=reply.topic)]
        if prefix in ("SOF", "DOC"):
            return [act("check_source_of_funds", entity_id=subject)]
        if prefix == "WL":
            return [act("check_watchlist", name=next(w.name for w in pub.watchlist
                                                      if w.id == target))]
        if prefix == "ENT":
            return [act("query_beneficial_ownership", entity_id=subject),
                    act("check_device_overlap", entity_id=subject),
                    act("trace_network", entity_id=subject)]
        return []
