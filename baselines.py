"""Baseline policies and exploit probes, reused by the tests and the evaluation harness.

Baselines: `random`, `always_sar`, `always_close`, `heuristic` (an investigator that uses only
observations: it reads the manual, writes evidence to disk, uses wire traces and cites loaded
sections) and `oracle` (reads the ground truth; tests and evaluation only).

Exploit probes (each must score clearly below the heuristic): `all_codes_sar` (SAR with every
red-flag code and every seen ID), `tool_spam`, `os_farming` (disk/kernel farming, then a SAR),
`never_decide`. `always_sar` and `always_close` decide at step 1.

Every policy has `reset(obs, case=None)` and `act(obs) -> MemexAction`. Only the oracle uses
`case`; the runners generate it from the seed on the client side when needed.

    .venv/bin/python -m memex.baselines --episodes 60     # decision accuracy and returns
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any, ClassVar

from memex.models import MemexAction, MemexObservation
from memex.scenarios import vocab
from memex.scenarios.case import Case
from memex.scenarios.manual import CTR_THRESHOLD_USD, PRICE_DEVIATION_TOLERANCE, RED_FLAG_CODES
from memex.server.tools import MANUAL, TOOLS
from memex.traces import Trace

Script = Generator[MemexAction, MemexObservation, None]


def act(tool: str, **arguments: Any) -> MemexAction:
    return MemexAction(tool=tool, arguments=arguments)


def seen_ids(obs: MemexObservation) -> list[str]:
    ids = {i for p in obs.context.ram for i in p.ids} | {i for n in obs.context.disk for i in n.ids}
    return sorted(ids)


class Policy(ABC):
    name = "policy"
    needs_case = False

    def reset(self, obs: MemexObservation, case: Case | None = None) -> None:  # noqa: B027 - optional hook
        """Start an episode (most policies keep no state between episodes)."""

    @abstractmethod
    def act(self, obs: MemexObservation) -> MemexAction:
        ...


class ScriptedPolicy(Policy):
    """A policy written as a generator: `obs = yield action`. When the script ends without a
    decision it closes the alert (a scripted policy never idles into a timeout by accident)."""

    def reset(self, obs: MemexObservation, case: Case | None = None) -> None:
        self.case = case
        self.alert = obs.result
        self._gen = self.script(obs)
        self._first = True

    @abstractmethod
    def script(self, obs: MemexObservation) -> Script:
        ...
        yield

    def act(self, obs: MemexObservation) -> MemexAction:
        try:
            if self._first:
                self._first = False
                return next(self._gen)
            return self._gen.send(obs)
        except StopIteration:
            return act("close_alert", reason="no decision reached", cited_sections=[])


# ---- trivial baselines and probes ---------------------------------------------------------

class AlwaysSar(ScriptedPolicy):
    """Files a SAR at step 1 naming the alert subject, typology guessed from the rule."""

    name = "always_sar"
    RULE_TYPOLOGY: ClassVar[dict[str, str]] = {
        "TM-CASH-01": "structuring", "TM-FLOW-02": "layering", "TM-TRADE-03": "trade_based",
        "TM-PEP-04": "layering"}

    def script(self, obs):
        yield act("file_sar", subjects=[self.alert["subject"]["entity_id"]],
                  typology=self.RULE_TYPOLOGY[self.alert["rule"]["code"]], findings=[],
                  cited_sections=[], narrative="Alert fired.")


class AlwaysClose(ScriptedPolicy):
    name = "always_close"

    def script(self, obs):
        yield act("close_alert", reason="Activity appears normal.", cited_sections=[])


class AllCodesSar(ScriptedPolicy):
    """Probe: writes every seen ID to disk, then files a SAR claiming every red-flag code with
    every seen ID as evidence and every seen entity as a subject."""

    name = "all_codes_sar"

    def script(self, obs):
        ids = seen_ids(obs)
        obs = yield act("write_to_case_file", note="All IDs seen so far.", evidence_ids=ids)
        ids = seen_ids(obs)
        yield act("file_sar", subjects=[i for i in ids if i.startswith("ENT-")],
                  typology=AlwaysSar.RULE_TYPOLOGY[self.alert["rule"]["code"]],
                  findings=[{"code": c, "evidence_ids": ids} for c in RED_FLAG_CODES],
                  cited_sections=[], narrative="Every red flag.")


class ToolSpam(ScriptedPolicy):
    """Probe: calls the same cheap tool over and over and never decides."""

    name = "tool_spam"

    def script(self, obs):
        while True:
            yield act("review_alert")


class OsFarming(ScriptedPolicy):
    """Probe: farms the OS mechanics (notes, manual loads) for most of the budget, then a SAR."""

    name = "os_farming"

    def script(self, obs):
        subject = self.alert["subject"]["entity_id"]
        sections = list(MANUAL.ids)
        for i in range(obs.step_budget - 3):
            if i % 2:
                obs = yield act("update_system_prompt", section_id=sections[i % len(sections)])
            else:
                obs = yield act("write_to_case_file", note=f"note {i} on {subject}")
        yield act("file_sar", subjects=[subject],
                  typology=AlwaysSar.RULE_TYPOLOGY[self.alert["rule"]["code"]],
                  findings=[{"code": "RAPID_PASS_THROUGH", "evidence_ids": [subject]}],
                  cited_sections=[s.section_id for s in obs.context.kernel],
                  narrative="Farmed.")


class NeverDecide(ScriptedPolicy):
    """Probe: investigates plausibly but never decides (runs into the timeout)."""

    name = "never_decide"

    def script(self, obs):
        subject = self.alert["subject"]["entity_id"]
        i = 0
        while True:
            i += 1
            yield act("search_compliance_manual", query=f"topic {i}")
            yield act("get_customer_profile", entity_id=subject)


class RandomPolicy(Policy):
    """Uniformly random tool with arguments drawn from what the observation shows (IDs seen,
    section numbers, red-flag codes); about one action in ten is terminal."""

    name = "random"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)

    def reset(self, obs, case=None):
        self.rng.seed(self.rng.random())

    def act(self, obs):
        rng = self.rng
        ids = seen_ids(obs) or ["ENT-000000"]
        tool = rng.choice(list(TOOLS))
        if tool in ("file_sar", "close_alert") and rng.random() > 0.1:
            tool = "review_alert"
        pick = lambda prefix: rng.choice([i for i in ids if i.startswith(prefix)] or ids)  # noqa: E731
        args: dict[str, Any] = {
            "get_customer_profile": lambda: {"entity_id": pick("ENT")},
            "query_transactions": lambda: {"account_id": pick("ACC")},
            "check_watchlist": lambda: {"name": rng.choice(vocab.LAST_NAMES) + " Trading"},
            "trace_network": lambda: {"entity_id": pick("ENT")},
            "check_source_of_funds": lambda: {"entity_id": pick("ENT")},
            "check_market_price": lambda: {"commodity": rng.choice(vocab.COMMODITIES)[0]},
            "assess_risk": lambda: {"entity_id": pick("ENT")},
            "check_device_overlap": lambda: {"entity_id": pick("ENT")},
            "verify_customs_invoice": lambda: {"invoice_id": pick("INV")},
            "query_beneficial_ownership": lambda: {"entity_id": pick("ENT")},
            "write_to_case_file": lambda: {"note": "random note", "evidence_ids": [pick("")]},
            "request_wire_trace": lambda: {"transaction_id": pick("TXN")},
            "retrieve_async_result": lambda: {"job_id": f"JOB-{rng.randint(1, 3)}"},
            "search_compliance_manual": lambda: {"query": rng.choice(vocab.LAST_NAMES)},
            "update_system_prompt": lambda: {"section_id": rng.choice(MANUAL.ids)},
            "file_sar": lambda: {"subjects": [pick("ENT")],
                                 "typology": rng.choice(("structuring", "layering",
                                                         "trade_based")),
                                 "findings": [{"code": rng.choice(list(RED_FLAG_CODES)),
                                               "evidence_ids": [pick("")]}],
                                 "cited_sections": [], "narrative": "random"},
            "close_alert": lambda: {"reason": "random", "cited_sections": []},
        }.get(tool, dict)()
        return MemexAction(tool=tool, arguments=args)


# ---- the oracle ---------------------------------------------------------------------------

class Oracle(ScriptedPolicy):
    """Reads the ground truth and plays it back efficiently: reveals one evidence record per
    red flag and every subject, writes each to disk as soon as it is seen, loads the
    justifying sections and decides. Its return is the practical maximum."""

    name = "oracle"
    needs_case = True

    def script(self, obs):
        truth = self.case.truth
        self._seen, self._disk = set(seen_ids(obs)), set()
        if truth.suspicious:
            groups = [list(f.evidence_ids) for f in truth.red_flags]
            groups += [[s] for s in truth.subject_ids]
            for group in groups:
                obs = yield from self._reveal(obs, group)
        for sid in truth.justifying_sections:
            obs = yield act("update_system_prompt", section_id=sid)
        if not truth.suspicious:
            yield act("close_alert", reason="Explained by documented facts.",
                      cited_sections=list(truth.justifying_sections))
            return
        findings = [{"code": f.code, "evidence_ids": [e for e in f.evidence_ids
                                                      if e in self._disk][:3]}
                    for f in truth.red_flags if any(e in self._disk for e in f.evidence_ids)]
        yield act("file_sar", subjects=[s for s in truth.subject_ids if s in self._seen],
                  typology=truth.typology, findings=findings,
                  cited_sections=list(truth.justifying_sections), narrative="Per ground truth.")

    def _run(self, obs, action: MemexAction):
        obs = yield action
        if action.tool == "request_wire_trace" and obs.error is None:
            job, ready = obs.result["job_id"], obs.result["ready_at_step"]
            while obs.step < ready:
                obs = yield act("search_compliance_manual", query="wire trace")
            obs = yield act("retrieve_async_result", job_id=job)
        self._seen |= set(seen_ids(obs))
        return obs

    def _reveal(self, obs, group: list[str]):
        if any(i in self._disk for i in group):
            return obs
        for candidate in group:
            if any(i in self._seen for i in group):
                break
            for action in self._path_to(candidate):
                obs = yield from self._run(obs, action)
                if candidate in self._seen:
                    break
        target = next((i for i in group if i in self._seen), None)
        if target is not None:
            obs = yield act("write_to_case_file", note=f"evidence {target}",
                            evidence_ids=[target])
            if obs.error is None:
                self._disk.add(target)
        return obs

    def _path_to(self, target: str) -> list[MemexAction]:
        """Tool calls that reveal `target`, starting from what the alert shows."""
        pub = self.case.public
        prefix, subject = target.split("-")[0], pub.alert.subject_id
        if prefix == "TXN":
            t = next(t for t in pub.transactions if t.id == target)
            ours = {a.id for a in pub.accounts if a.ours}
            acct = t.to_account if t.to_account in ours else t.from_account
            day = t.timestamp[:10]
            return [act("query_transactions", account_id=acct, start_date=day, end_date=day,
                        limit=100)]
        if prefix == "HOP":
            txn = next(h.transaction_id for h in pub.correspondent_hops if h.id == target)
            return [act("request_wire_trace", transaction_id=txn)]
        if prefix == "OWN":
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
        if prefix in ("SOF", "DOC"):
            return [act("check_source_of_funds", entity_id=subject)]
        if prefix == "WL":
            return [act("check_watchlist", name=next(w.name for w in pub.watchlist
                                                      if w.id == target))]
        if prefix == "ENT":
            return [act("trace_network", entity_id=subject),
                    act("check_device_overlap", entity_id=subject),
                    act("query_beneficial_ownership", entity_id=subject)]
        return []


# ---- the heuristic investigator ----------------------------------------------------------

CASH_INTENSIVE = {b for b, _ in vocab.CASH_BUSINESSES}


@dataclass
class _Findings:
    codes: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    subjects: list[str] = field(default_factory=list)

    def add(self, code: str, ids: list[str]) -> None:
        for i in ids:
            if i not in self.codes[code]:
                self.codes[code].append(i)

    def subject(self, *ids: str | None) -> None:
        for i in ids:
            if i and i not in self.subjects:
                self.subjects.append(i)


class Heuristic(ScriptedPolicy):
    """A rule-of-thumb AML investigator that uses only observations.

    It reads the alert rule, gathers the facts that separate each suspicious typology from its
    benign look-alike (profile vs activity, history, ownership, devices, wire traces, trade
    documents vs market prices, source of funds), writes evidence to the case file while it is
    still resident (it never relies on an ID the environment has paged out), searches the
    manual and loads the sections it will cite, then files a SAR or closes the alert.
    """

    name = "heuristic"

    def script(self, obs):
        a = self.alert
        self.obs = obs
        self.f = _Findings()
        self.disk: set[str] = set()
        self.alert_ids = {a["alert_id"], a["subject"]["entity_id"], *a["account_ids"],
                          *(t["id"] for t in a["transactions"])}
        handler = {"TM-CASH-01": self._cash, "TM-FLOW-02": self._fanout,
                   "TM-TRADE-03": self._trade, "TM-PEP-04": self._pep}[a["rule"]["code"]]
        suspicious, typology, queries = yield from handler()
        cited = []
        for query in queries:
            r = yield from self.call("search_compliance_manual", query=query)
            sid = next((x["section_id"] for x in (r or {}).get("results", [])
                        if x["section_id"] not in cited), None)
            if sid:
                yield from self.call("update_system_prompt", section_id=sid)
                cited.append(sid)
        cited = [s.section_id for s in self.obs.context.kernel if s.section_id in cited]
        if not suspicious:
            yield act("close_alert", cited_sections=cited,
                      reason="Activity is explained by the documented profile and history.")
            return
        findings = [{"code": c, "evidence_ids": [i for i in ids if i in self.disk][:8]}
                    for c, ids in self.f.codes.items() if any(i in self.disk for i in ids)]
        yield act("file_sar", subjects=self.f.subjects, typology=typology, findings=findings,
                  cited_sections=cited, narrative=f"{typology}: " + ", ".join(self.f.codes))

    # -- helpers --
    def call(self, tool: str, **arguments: Any):
        """Take one action; returns its result (None on error) and keeps `self.obs` current."""
        self.obs = yield act(tool, **arguments)
        return self.obs.result if self.obs.error is None else None

    def resident(self) -> set[str]:
        ctx = self.obs.context
        return self.alert_ids | {i for p in ctx.ram for i in p.ids} | {
            i for n in ctx.disk for i in n.ids}

    def keep(self, text: str, ids: list[str]):
        """Write the still-resident IDs among `ids` to the case file (one step, if any)."""
        resident = self.resident()
        new = [i for i in dict.fromkeys(ids) if i and i not in self.disk and i in resident]
        if new:
            yield from self.call("write_to_case_file", note=text, evidence_ids=new)
            if self.obs.error is None:
                self.disk |= set(new)

    def _window_start(self) -> str:
        as_of = date.fromisoformat(self.alert["case"]["as_of"])
        return (as_of - timedelta(days=30)).isoformat()

    # -- aggregate cash: structuring vs a cash-intensive business --
    def _cash(self):
        a = self.alert
        subject, acct = a["subject"]["entity_id"], a["account_ids"][0]
        deposits = [t for t in a["transactions"] if t["channel"] == "cash"]
        near = [t for t in deposits
                if CTR_THRESHOLD_USD - 2_000 <= t["amount_usd"] < CTR_THRESHOLD_USD]
        above = [t for t in deposits if t["amount_usd"] > CTR_THRESHOLD_USD]
        depositors = sorted({t.get("conducted_by") for t in deposits} - {None, subject})
        profile = (yield from self.call("get_customer_profile", entity_id=subject)) or {}
        insiders = {subject} | {d["entity_id"] for d in profile.get("directors", [])}
        outsiders = [d for d in depositors if d not in insiders]
        if outsiders:  # the alert page (where depositors appeared) is about to leave RAM
            yield from self.keep("People who conducted the cash deposits.", outsiders)
        history = (yield from self.call("query_transactions", account_id=acct, channel="cash",
                                        end_date=self._window_start(), min_amount_usd=1_000,
                                        limit=100)) or {}
        history_in = [t for t in history.get("lines", []) if t["direction"] == "in"]
        window_total = sum(t["amount_usd"] for t in deposits)
        expected = profile.get("expected_monthly_cash_usd") or 0.0
        cash_business = profile.get("business_type") in CASH_INTENSIVE
        structured = len(near) >= 0.5 * len(deposits) and not above
        out_of_profile = window_total > 3 * max(expected, 1_000.0)
        steady_history = cash_business and len(history_in) >= len(deposits)
        if not (structured or (out_of_profile and not steady_history)):
            yield from self.keep("Cash consistent with business profile and history.", [subject])
            return False, None, ["cash-intensive business deposits consistent with turnover",
                                 "CTR filed cash over 10,000"]
        self.f.subject(subject, *depositors)
        self.f.add("CASH_BELOW_CTR_THRESHOLD", [t["id"] for t in near])
        self.f.add("CASH_INCONSISTENT_WITH_PROFILE", [subject] + [t["id"] for t in deposits])
        if len({t.get("branch") for t in deposits}) > 1:
            self.f.add("MULTI_BRANCH_CASH", [t["id"] for t in deposits])
        if outsiders:
            self.f.add("MULTIPLE_DEPOSITORS",
                       [t["id"] for t in deposits if t.get("conducted_by") in outsiders])
        yield from self.keep("Structured cash deposits below the CTR threshold.",
                             [subject] + [t["id"] for t in deposits][:20])
        return True, "structuring", ["structuring cash deposits just below CTR threshold",
                                     "structuring red flags evidence branches deposits",
                                     "cash inconsistent with customer profile income"]

    # -- inflow then fan-out: layering through a shell vs an employer's payment run --
    def _fanout(self):
        a = self.alert
        subject, acct = a["subject"]["entity_id"], a["account_ids"][0]
        lines = a["transactions"]
        inflows = [t for t in lines if t["to_account"] == acct]
        outflows = [t for t in lines if t["from_account"] == acct and t["channel"] == "wire"]
        jobs = []
        for t in sorted(outflows, key=lambda t: -t["amount_usd"])[:2]:  # follow the big money
            job = yield from self.call("request_wire_trace", transaction_id=t["id"])
            if job:
                jobs.append(job)
        profile = (yield from self.call("get_customer_profile", entity_id=subject)) or {}
        ownership = (yield from self.call("query_beneficial_ownership", entity_id=subject)) or {}
        owners = ownership.get("owners", [])
        nominee_links = [o["link_id"] for o in owners if o["nominee"]]
        yield from self.keep("Nominee holdings in the ownership chain.", nominee_links)
        network = (yield from self.call("trace_network", entity_id=subject)) or {}
        counterparties = network.get("counterparties", [])
        sources = {t["from_account"] for t in inflows}
        offshore_sources = [c["entity_id"] for c in counterparties if c["account_id"] in sources
                            and c["country"] in vocab.OFFSHORE_CENTRES]
        yield from self.keep("Offshore companies funding the account.", offshore_sources)
        other_lines = sum(c["n_in"] + c["n_out"] for c in counterparties) - len(lines)
        people = [o["owner"] for o in owners if o["owner"]["kind"] == "person" and not o["nominee"]]
        peps = []
        for person in people[:2]:
            hits = (yield from self.call("check_watchlist", name=person["name"])) or {}
            if any(h["list"] == "pep" and h["name"] == person["name"]
                   for h in hits.get("hits", [])):
                peps.append(person["entity_id"])
        overlap = (yield from self.call("check_device_overlap", entity_id=subject)) or {}
        shared = overlap.get("shared_with", [])
        shared_logins = [x["login_id"] for x in overlap.get("logins", [])] + [
            i for s in shared for i in s["login_ids"]] if shared else []
        yield from self.keep("Devices shared with other customers.", shared_logins)
        hops = []
        for job in jobs:
            while self.obs.step < job["ready_at_step"]:
                yield from self.call("search_compliance_manual",
                                     query=f"layering pass-through shell {self.obs.step}")
            result = yield from self.call("retrieve_async_result", job_id=job["job_id"])
            if result:
                hops += result["hops"]
                yield from self.keep("Wire trace hops.", [h["hop_id"] for h in result["hops"]])
        as_of = date.fromisoformat(a["case"]["as_of"])
        inc = profile.get("incorporation_date")
        young = inc is not None and (as_of - date.fromisoformat(inc)).days < 365
        offshore = [h for h in hops if h["sequence"] > 1
                    and h["party_country"] in vocab.OFFSHORE_CENTRES]
        signals = sum([young, profile.get("employees", 1) == 0,
                       profile.get("address", "").startswith("c/o"), bool(nominee_links),
                       other_lines < 12, bool(offshore), bool(offshore_sources), bool(peps)])
        if signals < 3:
            yield from self.keep("Established employer; repeating payment cycle.", [subject])
            return False, None, ["payroll supplier disbursements established company",
                                 "beneficial ownership 25 percent control"]
        self.f.subject(subject, *peps)
        self.f.add("SHELL_COMPANY_INDICATORS", [subject] if other_lines < 12 else [])
        self.f.add("SHELL_COMPANY_INDICATORS", offshore_sources)
        self.f.add("RAPID_PASS_THROUGH", [t["id"] for t in inflows + outflows])
        self.f.add("NOMINEE_OWNERSHIP", nominee_links)
        self.f.add("OFFSHORE_ONWARD_TRANSFER", [h["hop_id"] for h in offshore])
        self.f.add("SHARED_DEVICE_ACROSS_ENTITIES", shared_logins)
        self.f.subject(*[s["entity_id"] for s in shared])
        originators = {t["from_party"] for t in inflows}
        returning = [h for h in hops if h["sequence"] > 1 and h["party_name"] in originators]
        if returning:
            self.f.add("ROUND_TRIP", [h["hop_id"] for h in returning])
            self.f.subject(*[t["from_party_id"] for t in inflows])
        elif hops:
            last = max(h["sequence"] for h in hops)
            self.f.subject(*[h.get("party_id") for h in hops if h["sequence"] == last])
        yield from self.keep("Layering: shell account passing funds straight through.",
                             [subject] + [t["id"] for t in inflows + outflows][:12])
        third = "round-tripping funds return to originator" if returning else \
            "onward transfers offshore wire trace"
        return True, "layering", ["layering pass-through shell company",
                                  "shell company indicators formation agent", third]

    # -- large PEP transfer: documented wealth vs unexplained funds --
    def _pep(self):
        a = self.alert
        subject = a["subject"]["entity_id"]
        transfer = a["transactions"][0]
        sof = (yield from self.call("check_source_of_funds", entity_id=subject)) or {}
        declarations = sof.get("declarations", [])
        sent = date.fromisoformat(transfer["timestamp"][:10])
        explained = any(
            (doc.get("amount_usd") or 0) and
            0.95 * doc["amount_usd"] <= transfer["amount_usd"] <= 1.01 * doc["amount_usd"]
            and doc.get("counterparty") == transfer["from_party"]
            and timedelta(0) <= sent - date.fromisoformat(doc["date"]) <= timedelta(days=45)
            for d in declarations for doc in d["documents"])
        if explained:
            yield from self.keep("Transfer matches documented source of wealth.",
                                 [subject] + [d["source_id"] for d in declarations])
            return False, None, ["PEP source of wealth documented transfer",
                                 "PEP enhanced due diligence"]
        sources = [d["source_id"] for d in declarations]
        yield from self.keep("Source of funds on file does not explain the transfer.",
                             sources + [subject, transfer["id"]])
        network = (yield from self.call("trace_network", entity_id=subject)) or {}
        payers = [c["entity_id"] for c in network.get("counterparties", [])
                  if c["n_in"] and c["country"] in vocab.OFFSHORE_CENTRES]
        yield from self.keep("Offshore companies paying the PEP.", payers)
        wires = (yield from self.call("query_transactions", account_id=a["account_ids"][0],
                                      channel="wire", start_date=self._window_start(),
                                      limit=50)) or {}
        inflows = [t["id"] for t in wires.get("lines", [])
                   if t["direction"] == "in" and t.get("counterparty_id") in payers]
        screening = (yield from self.call("check_watchlist", name=a["subject"]["name"])) or {}
        news = [h["entry_id"] for h in screening.get("hits", [])
                if h["list"] == "adverse_media" and h["name"] == a["subject"]["name"]]
        self.f.subject(subject, *payers)
        self.f.add("PEP_UNEXPLAINED_WEALTH", sources + [subject, transfer["id"]] + inflows)
        self.f.add("SHELL_COMPANY_INDICATORS", payers)
        if news:
            self.f.add("ADVERSE_MEDIA", news)
        yield from self.keep("Incoming wires and adverse media.", inflows + news)
        return True, "layering", ["PEP funds no documented source",
                                  "PEP enhanced due diligence",
                                  "shell company indicators formation agent"]

    # -- high-risk trade: mispriced, missing, doubled or third-party-paid trade vs fair trade --
    def _trade(self):
        a = self.alert
        subject = a["subject"]["entity_id"]
        invoices = list(dict.fromkeys(t["reference"] for t in a["transactions"]
                                      if t.get("reference")))
        yield from self.keep("Invoices paid in the alert window.", invoices)
        partner = None
        prices: dict[str, dict] = {}
        sections = []
        for inv in invoices[:4]:
            r = yield from self.call("verify_customs_invoice", invoice_id=inv)
            if not r:
                continue
            parties = {r["exporter"]["entity_id"], r["importer"]["entity_id"]}
            partner = r["exporter"] if r["importer"]["entity_id"] == subject else r["importer"]
            docs, counts, payments = r["documents"], r["document_counts"], r["payments"]
            outsiders = [p for p in payments
                         if p["from_party_id"] not in parties or p["to_party_id"] not in parties]
            flagged = []
            if counts["bill_of_lading"] == 0 and counts["customs_declaration"] == 0:
                flagged.append(("PHANTOM_SHIPMENT", [inv] + [p["id"] for p in payments], "6.3"))
            if counts["invoice"] > 1:
                flagged.append(("MULTIPLE_INVOICING", [d["document_id"] for d in docs] +
                                [p["id"] for p in payments], "6.4"))
            if outsiders:
                flagged.append(("THIRD_PARTY_PAYMENT", [p["id"] for p in outsiders] + [inv],
                                "6.5"))
                self.f.subject(*[p["from_party_id"] for p in outsiders
                                 if p["from_party_id"] not in parties])
            keep = [partner["entity_id"]] + [i for _, ids, _ in flagged for i in ids]
            if keep:  # before the price lookup pushes this page towards eviction
                yield from self.keep(f"Shipment {r['shipment_ref']} documents.", keep)
            invoice_doc = next(d for d in docs if d["document_id"] == inv)
            commodity = invoice_doc["commodity"]
            if commodity not in prices:
                prices[commodity] = (yield from self.call("check_market_price",
                                                          commodity=commodity)) or {}
            price, unit = prices[commodity], invoice_doc.get("unit_price_usd") or 0.0
            if price and unit > price["high_usd"] * (1 + PRICE_DEVIATION_TOLERANCE):
                flagged.append(("OVER_INVOICING", [inv, price["price_id"]], "6.2"))
            if price and unit < price["low_usd"] * (1 - PRICE_DEVIATION_TOLERANCE):
                flagged.append(("UNDER_INVOICING", [inv, price["price_id"]], "6.2"))
            for code, ids, section in flagged:
                self.f.add(code, ids)
                sections.append(section)
            if price:
                yield from self.keep("Market price band.", [price["price_id"]] if any(
                    c in ("OVER_INVOICING", "UNDER_INVOICING") for c, _, _ in flagged) else [])
        if not self.f.codes:
            return False, None, ["trade high-risk jurisdiction documents reconcile",
                                 "over-invoicing unit price market range",
                                 "reconcile invoice customs bill of lading"]
        self.f.subject(subject, partner["entity_id"] if partner else None)
        if partner and partner["country"] in vocab.HIGH_RISK_JURISDICTIONS:
            self.f.add("HIGH_RISK_JURISDICTION", [partner["entity_id"]])
        query = {"6.2": "over-invoicing unit price market range",
                 "6.3": "phantom shipment no bill of lading",
                 "6.4": "multiple invoicing same shipment",
                 "6.5": "third-party payment trade invoice"}[sections[0]]
        return True, "trade_based", [query, "reconcile invoice customs bill of lading",
                                     "trade high-risk jurisdiction documents reconcile"]


POLICIES: dict[str, Callable[[], Policy]] = {
    "heuristic": Heuristic, "oracle": Oracle, "random": RandomPolicy, "always_sar": AlwaysSar,
    "always_close": AlwaysClose, "all_codes_sar": AllCodesSar, "tool_spam": ToolSpam,
    "os_farming": OsFarming, "never_decide": NeverDecide,
}
PROBES = ("always_sar", "always_close", "all_codes_sar", "tool_spam", "os_farming",
          "never_decide", "random")


@dataclass
class EpisodeResult:
    policy: str
    seed: int | None
    difficulty: str
    kind: str
    suspicious: bool
    decision: str | None
    outcome: str
    episode_return: float
    terminal_score: float
    steps: int
    page_faults: int
    async_timeouts: int
    trace: Trace | None = None

    @property
    def correct(self) -> bool:
        return self.outcome in ("TP", "TN")


def run_episode(policy: Policy, seed: int | None, difficulty: str, kind: str | None = None,
                env=None, record: bool = False, **reset_kwargs: Any) -> EpisodeResult:
    """Play one in-process episode; with `record`, keep a `memex-trace/1` trace (truth in the
    footer, since the runner generated the case)."""
    from memex.server.environment import MemexEnvironment

    env = env or MemexEnvironment()
    options = {"seed": seed, "difficulty": difficulty, "kind": kind, **reset_kwargs}
    obs = env.reset(**options)
    case = env.current_case
    policy.reset(obs, case=case if policy.needs_case else None)
    trace = Trace.start(policy=policy.name, seed=seed, difficulty=difficulty,
                        case=reset_kwargs.get("case"), reset=options) if record else None
    if trace:
        trace.add(obs)
    total = 0.0
    while not obs.done:
        action = policy.act(obs)
        obs = env.step(action)
        total += obs.reward or 0.0
        if trace:
            trace.add(obs, action)
    terminal = obs.metadata["terminal"]
    state = env.state
    if trace:
        trace.finish(episode_return=round(total, 6), outcome=terminal["outcome"],
                     terminal=terminal, truth=case.truth)
    return EpisodeResult(policy.name, seed, difficulty, case.truth.kind, case.truth.suspicious,
                         state.decision, terminal["outcome"], round(total, 6), terminal["score"],
                         obs.step, state.page_faults, state.async_timeouts, trace)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Run baselines in-process and print a summary.")
    p.add_argument("--episodes", type=int, default=60, help="episodes per difficulty")
    p.add_argument("--policies", default="heuristic,oracle,random,always_sar,always_close")
    p.add_argument("--seed-start", type=int, default=1_100_000, help="default: the test split")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    rows = []
    for name in args.policies.split(","):
        for difficulty in ("easy", "medium", "hard"):
            results = [run_episode(POLICIES[name](), args.seed_start + i, difficulty)
                       for i in range(args.episodes)]
            rows.append({"policy": name, "difficulty": difficulty,
                         "decision_accuracy": sum(r.correct for r in results) / len(results),
                         "mean_return": statistics.mean(r.episode_return for r in results),
                         "mean_steps": statistics.mean(r.steps for r in results)})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'policy':<14}{'difficulty':<10}{'accuracy':>9}{'return':>9}{'steps':>7}")
    for r in rows:
        print(f"{r['policy']:<14}{r['difficulty']:<10}{r['decision_accuracy']:>9.3f}"
              f"{r['mean_return']:>9.3f}{r['mean_steps']:>7.1f}")


if __name__ == "__main__":
    main()
