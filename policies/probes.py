"""AML baselines and exploit probes; each must score clearly below the heuristic investigator.

`always_sar` and `always_close` decide at step 1; `all_codes_sar` files a SAR with every
red-flag code and every seen ID; `tool_spam` repeats one cheap tool; `os_farming` farms the disk
and the kernel, then files; `never_decide` investigates plausibly into the timeout; `random`
picks tools and arguments at random from what the observation shows. `first_failure_checklist`
files at the first cross-check whose views disagree and `anomaly_counter` when two disagree,
neither looking for the innocent explanation (manual 1.7).

The verdict-free probes decide without weighing anything: `always_sar` and `always_close` at
step 1, `investigate_then_sar` and `investigate_then_close` after the heuristic's whole
investigation, with its findings, subjects and sections and a well-formed narrative or reason.
On the default class mix none of them may have a positive mean return (`docs/scoring.md`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from memex.envkit.policy import Policy, SeededPolicy
from memex.models import TOOL_NAMES, MemexAction, MemexObservation
from memex.policies.heuristic import Heuristic
from memex.policies.narrative import CaseNotes, close_reason, sar_narrative
from memex.policies.scripted import ScriptedPolicy, act, seen_ids
from memex.scenarios import vocab
from memex.scenarios.manual import RED_FLAG_CODES, SECTIONS
from memex.scenarios.model import TYPOLOGIES


class AlwaysSar(ScriptedPolicy):
    """Files a SAR at step 1 naming the alert subject, typology guessed from the rule."""

    name = "always_sar"
    RULE_TYPOLOGY: ClassVar[dict[str, str]] = {
        "TM-CASH-01": "structuring", "TM-FLOW-02": "layering", "TM-TRADE-03": "trade_based",
        "TM-PEP-04": "layering", "TM-FUNNEL-05": "funnel_account", "TM-LOAN-06": "loan_back",
        "TM-SANC-07": "sanctions_evasion", "TM-RE-08": "real_estate",
        "TM-ELDER-09": "elder_exploitation"}

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
        sections = list(SECTIONS)
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


class RandomPolicy(SeededPolicy[MemexObservation, MemexAction]):
    """Uniformly random tool with arguments drawn from what the observation shows (IDs seen,
    section numbers, red-flag codes); about one action in ten is terminal."""

    name = "random"

    def act(self, obs):
        rng = self.rng
        ids = seen_ids(obs) or ["ENT-000000"]
        tool = rng.choice(TOOL_NAMES)
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
            "update_system_prompt": lambda: {"section_id": rng.choice(list(SECTIONS))},
            "file_sar": lambda: {"subjects": [pick("ENT")],
                                 "typology": rng.choice(TYPOLOGIES),
                                 "findings": [{"code": rng.choice(list(RED_FLAG_CODES)),
                                               "evidence_ids": [pick("")]}],
                                 "cited_sections": [], "narrative": "random"},
            "close_alert": lambda: {"reason": "random", "cited_sections": []},
        }.get(tool, dict)()
        return MemexAction(tool=tool, arguments=args)


class InvestigateThen(Policy[MemexObservation, MemexAction]):
    """Verdict-free: runs the heuristic's whole investigation, then always takes `verdict`,
    with the heuristic's subjects, findings and sections where it reached the same verdict and
    a well-formed narrative or reason (`policies.narrative`) either way."""

    verdict: ClassVar[str]

    def reset(self, obs: MemexObservation, case: Any = None) -> None:
        self.inner = Heuristic()
        self.inner.reset(obs, case=None)
        self.alert = obs.result
        self.notes = CaseNotes()

    def act(self, obs: MemexObservation) -> MemexAction:
        self.notes.read(obs)
        action = self.inner.act(obs)
        if action.tool not in ("file_sar", "close_alert"):
            return action
        args = action.arguments
        alerted = [t["id"] for t in self.alert["transactions"]]
        subject = self.alert["subject"]["entity_id"]
        if self.verdict == "close_alert":
            own = args.get("reason", "") if action.tool == "close_alert" else ""
            return act("close_alert", cited_sections=args["cited_sections"],
                       reason=close_reason(self.notes, self.notes.evidence(), alerted, own))
        if action.tool == "file_sar":
            evidence = [i for f in args["findings"] for i in f["evidence_ids"]]
            return act("file_sar", **{**args, "narrative": sar_narrative(
                self.notes, args["subjects"], args["typology"], evidence, alerted,
                args["narrative"])})
        typology = AlwaysSar.RULE_TYPOLOGY[self.alert["rule"]["code"]]
        return act("file_sar", subjects=[subject], typology=typology, findings=[],
                   cited_sections=args["cited_sections"],
                   narrative=sar_narrative(self.notes, [subject], typology,
                                           self.notes.evidence(), alerted))


class InvestigateThenSar(InvestigateThen):
    name = "investigate_then_sar"
    verdict = "file_sar"


class InvestigateThenClose(InvestigateThen):
    name = "investigate_then_close"
    verdict = "close_alert"


class FirstFailureChecklist(Heuristic):
    """A script written from the manual's check lists alone: runs the rule's cross-checks in
    order and files a SAR at the first whose views disagree, without looking for an
    explanation. The world is a weighing problem only if this scores well below the
    heuristic (docs/baselines.md)."""

    name = "first_failure_checklist"
    seeks_explanations = False
    stops_at_first_anomaly = True
    sar_min_findings = 1


class AnomalyCounter(Heuristic):
    """Runs every cross-check and files a SAR when at least `SAR_MIN_UNEXPLAINED` views
    disagree, counting anomalies as findings without looking for their explanations."""

    name = "anomaly_counter"
    seeks_explanations = False
