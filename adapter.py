"""The AML investigation behind the environment-adapter protocol (`memex.envkit.adapter`):
`--env memex` (the default) in the trainer, the evaluation harness, the inference agent and the
demo. Holds the AML prompts (`system_prompt` is the one AML system prompt; AgentOS uses it too),
the observation renderer, the per-episode metrics and the training-reward signals (computed by
`graders.training` from the episode record), and the AML policies by name (`POLICIES`).

The environment class and the policies are named by import path and imported on first use, so
importing the prompts loads neither the environment nor the instruments (the surface probes
live with the leak audit in `memex.audit`). Episode specs and hidden cases come from the one
reset contract, `scenarios.CaseSpec`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from memex.client import MemexEnv
from memex.envkit.adapter import EnvAdapter
from memex.envkit.episodes import Episode, EpisodeSpec
from memex.envkit.grammar import Rule
from memex.envkit.targets import Targets
from memex.graders.terminal import timeout_score
from memex.graders.training import OsCounts, os_discipline, quality
from memex.models import MemexAction
from memex.scenarios import DIFFICULTIES, KINDS, SPLITS, CaseSpec, build
from memex.scenarios.cases import FIXED_CASES, resolved
from memex.scenarios.ids import ID_PATTERN, record_type
from memex.scenarios.manual import SECTIONS
from memex.server.tools import TOOLS, prompt_tool_list

# The AML policies by name: baselines, exploit probes, the heuristic and the oracle.
POLICIES = Targets({
    "heuristic": "memex.policies.heuristic:Heuristic",
    "heuristic_documented": "memex.policies.heuristic:DocumentingHeuristic",
    "oracle": "memex.policies.oracle:Oracle",
    "random": "memex.policies.probes:RandomPolicy",
    "always_sar": "memex.policies.probes:AlwaysSar",
    "always_close": "memex.policies.probes:AlwaysClose",
    "all_codes_sar": "memex.policies.probes:AllCodesSar",
    "tool_spam": "memex.policies.probes:ToolSpam",
    "os_farming": "memex.policies.probes:OsFarming",
    "never_decide": "memex.policies.probes:NeverDecide",
    "investigate_then_sar": "memex.policies.probes:InvestigateThenSar",
    "investigate_then_close": "memex.policies.probes:InvestigateThenClose",
    "first_failure_checklist": "memex.policies.probes:FirstFailureChecklist",
    "anomaly_counter": "memex.policies.probes:AnomalyCounter",
    "memorised_closer": "memex.audit.surface_probes:MemorisedCloser",
    "memorised_sar": "memex.audit.surface_probes:MemorisedSar",
    "alert_only": "memex.audit.surface_probes:AlertOnly",
    "one_lookup": "memex.audit.surface_probes:OneLookup",
})
PROBES = ("always_sar", "always_close", "all_codes_sar", "tool_spam", "os_farming",
          "never_decide", "random", "memorised_closer", "memorised_sar", "alert_only",
          "one_lookup", "first_failure_checklist", "anomaly_counter")
# Policies that decide without weighing the evidence: on the default class mix none of them may
# have a positive mean return (`graders.terminal`'s costs; tests/integration/test_baselines.py).
VERDICT_FREE = ("always_sar", "always_close", "investigate_then_sar", "investigate_then_close")

_SYSTEM = """\
You are an anti-money-laundering investigator at a bank. A transaction-monitoring alert fired. \
Investigate with tools, one call per turn, then end the case: file_sar (suspicious activity \
report) or close_alert. Tools return facts, never conclusions; the same rules fire for innocent \
customers.

Your memory is bounded, like a small computer:
- ALERT: the alert's header (its ID, rule, subject, accounts, counterparties and transactions) \
is pinned in context; its IDs are always usable.
- RAM holds only the last {ram} tool results (pages); older pages are evicted.
- DISK is your case file: write_to_case_file(note, evidence_ids). IDs on disk stay usable, and \
only evidence you saw and wrote to disk counts for SAR findings.
- Using an ID you saw that is no longer in RAM or on disk is a page fault (penalty); IDs you \
never saw are unknown.
- request_wire_trace(transaction_id) starts an asynchronous trace (job id, ready step). Keep \
working and call retrieve_async_result(job_id) once the job is ready; polling early is penalised.
- KERNEL: search_compliance_manual(query), then update_system_prompt(section_id) loads a \
section below (at most {kernel}; the oldest is evicted). Only loaded sections count as citations.
- Budget: {budget} steps. Running out counts as the worst wrong decision.
"""
_SYSTEM_COMPACT = """\
You are an AML investigator. Investigate the alert with tools, one call per turn, then \
file_sar or close_alert. The alert header stays pinned in context. RAM keeps the last {ram} \
results; write evidence IDs to the case file (write_to_case_file) to keep them. Wire traces \
are asynchronous. Load manual sections (update_system_prompt) before citing them. Budget: \
{budget} steps.
"""
_REPLY_TEXT = ("Reply with exactly one tool call as JSON, after any brief reasoning: "
               '{"tool": "<name>", "arguments": {...}}')
_REPLY_NATIVE = "Call exactly one tool per turn."


class MemexAdapter(EnvAdapter):
    """Adapter of the AML investigation environment (this package)."""

    name = "memex"

    tasks = tuple(KINDS)
    difficulties = tuple(DIFFICULTIES)
    score_metric = "terminal_score"
    splits = SPLITS
    env_cls = "memex.server.environment:MemexEnvironment"
    client_cls = MemexEnv
    server_module = "memex.openenv_server"
    tool_specs = TOOLS
    policies = POLICIES
    eval_policies = ("heuristic", "oracle", "random", "always_sar", "always_close")
    demonstrator = "heuristic"
    gym_spec = "memex.gym_face:SPEC"
    success_label = "decision accuracy"
    summary_metrics = (
        ("decision_accuracy", "decision acc"), ("sar_precision", "SAR P"),
        ("sar_recall", "SAR R"), ("subject_f1", "subject F1"),
        ("findings_precision", "findings P"), ("findings_recall", "findings R"),
        ("typology_accuracy", "typology acc"), ("return", "mean return"),
        ("page_faults", "page faults"), ("async_timeouts", "async timeouts"),
        ("kernel_loads", "kernel loads"), ("steps", "steps"))
    metrics_note = (
        "SAR precision and findings precision are over filed SARs; SAR recall, subject F1, "
        "findings recall and typology accuracy over suspicious cases (the alert rule hints "
        "at the typology family, so a blind SAR names it correctly). Kernel loads: "
        "distinct manual sections loaded.")

    def reset_options(self, task: str, difficulty: str, seed: int | None) -> dict[str, Any]:
        if task in FIXED_CASES:
            return CaseSpec(case=task).options()
        return CaseSpec(seed=seed, difficulty=difficulty, kind=task).options()

    # -- prompting --
    def system_prompt(self, obs: Any, *, tool_list: bool, compact: bool = False) -> str:
        """The AML system prompt (the one both the inference agent and AgentOS use): the task,
        the OS rules with this episode's sizes, how to reply, the tool list when replies are
        text, and the kernel's loaded sections."""
        ctx = obs.context
        text = (_SYSTEM_COMPACT if compact else _SYSTEM).format(
            ram=ctx.ram_capacity, kernel=ctx.kernel_capacity, budget=obs.step_budget)
        text += "\n" + (_REPLY_TEXT if tool_list else _REPLY_NATIVE) + "\n"
        if tool_list:
            if compact:
                lines = [f"- {spec.name}({self._signature(spec)})"
                         for spec in self.tool_specs.values()]
                text += "\nTools:\n" + "\n".join(lines) + "\n"
            else:
                text += "\nTools:\n" + prompt_tool_list() + "\n"
        if ctx.kernel:
            text += "\nKERNEL (loaded compliance manual sections):\n"
            text += "\n".join(f"§{s.section_id} {s.title}\n{s.text}" for s in ctx.kernel) + "\n"
        return text

    @staticmethod
    def _signature(spec: Any) -> str:
        return ", ".join(n if f.is_required() else f"{n}?"
                         for n, f in spec.args_model.model_fields.items())

    def observation_payload(self, obs: Any) -> dict[str, Any]:
        """The observation minus what the prompt already holds elsewhere: kernel texts (in the
        system prompt) and the newest RAM page's content (identical to `result`)."""
        data = obs.model_dump(mode="json", exclude={"metadata", "reward_breakdown"})
        for section in data["context"]["kernel"]:
            section["text"] = "(loaded in the system prompt)"
        ram = data["context"]["ram"]
        if ram and obs.result is not None and ram[-1]["content"] == data["result"]:
            ram[-1]["content"] = "(same as result)"
        return data

    def user_prompt(self, obs: Any, key: str, *, max_chars: int | None = None) -> str:
        data = self.observation_payload(obs)
        payload = json.dumps(data, separators=(",", ":"), default=str)
        # Over budget: drop the contents of the oldest RAM pages first (their IDs stay listed).
        for page in data["context"]["ram"]:
            if max_chars is None or len(payload) <= max_chars:
                break
            if isinstance(page["content"], str):
                continue
            page["content"] = "(content elided to fit the prompt; re-run the tool to read it)"
            payload = json.dumps(data, separators=(",", ":"), default=str)
        head = f"Step {obs.step} of {obs.step_budget}."
        if obs.events:
            head += " Events: " + "; ".join(obs.events) + "."
        return (f"{head}\n<observation episode=\"{key}\">{payload}</observation>\n"
                "Reply with your next tool call.")

    # -- constrained decoding --
    def closed_sets(self, obs: Any) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """What a call may name in this state, from `context` alone: the IDs the agent can see
        (the pinned alert header, RAM pages, disk notes) by record type; subjects and evidence
        among them; cited sections among those loaded in the kernel; a section to load from
        the manual; a job from the job table (not yet retrieved). Typologies and red-flag codes
        are closed by their declarations."""
        ctx = obs.context
        visible = set(_header_ids(ctx.alert)) if ctx.alert is not None else set()
        for page in ctx.ram:
            visible.update(page.ids)
        for note in ctx.disk:
            visible.update(note.ids)
        ids: dict[str, list[str]] = {}
        for i in sorted(visible):
            ids.setdefault(record_type(i) or "", []).append(i)
        note = _note_pattern(sorted(visible))
        closed = {"subjects": ids.get("entity", []), "evidence_ids": sorted(visible),
                  "cited_sections": [s.section_id for s in ctx.kernel],
                  "section_id": list(SECTIONS),
                  "job_id": [j.job_id for j in ctx.jobs if j.status != "retrieved"],
                  "commodity": sorted(_values_of("commodity", [p.content for p in ctx.ram])),
                  # What the tools check beyond the schema: a note names only IDs the agent
                  # has seen (here: can see), a query and a note are not blank, a name has
                  # three letters, dates are dates, a limit is 1-100.
                  "note": Rule(pattern=note),
                  "query": Rule(pattern=f"^[A-Za-z][A-Za-z0-9 ,.']{{0,{NOTE_CHARS - 1}}}$"),
                  "name": Rule(pattern=NAME_PATTERN),
                  "start_date": Rule(pattern=DATE_PATTERN),
                  "end_date": Rule(pattern=DATE_PATTERN),
                  "limit": Rule(minimum=1, maximum=100)}
        return ids, closed

    # -- replies --
    def make_action(self, name: str, arguments: dict[str, Any]) -> Any:
        return MemexAction(tool=name, arguments=arguments)

    def action_call(self, action: Any) -> tuple[str, dict[str, Any]]:
        return action.tool, dict(action.arguments)

    # -- truth and measurement --
    def case_for(self, spec: EpisodeSpec) -> Any:
        """The case the spec's reset options name, or None when the environment draws it (no
        seed): what the server builds, built here from the same `CaseSpec`."""
        case = resolved(CaseSpec.of(spec.reset))
        return None if case.seed is None and case.case is None else build(case)

    def truth_json(self, case: Any) -> Any:
        return case.truth.model_dump(mode="json")

    def outcome(self, episode: Episode) -> str:
        if not episode.done:
            return "unfinished"
        terminal = (episode.final.metadata or {}).get("terminal") or {}
        return terminal.get("outcome", "error")

    def metrics(self, episode: Episode) -> dict[str, float | None]:
        truth = episode.case.truth if episode.case is not None else None
        outcome = self.outcome(episode)
        terminal = (episode.final.metadata or {}).get("terminal") or {}
        measures = terminal.get("measures") or {}
        last = episode.actions[-1] if episode.actions else None
        filed = episode.done and last is not None and last.tool == "file_sar" and \
            outcome in ("TP", "FP")
        suspicious = truth.suspicious if truth is not None else None
        state = episode.state
        m: dict[str, float | None] = {
            "decision_accuracy": float(outcome in ("TP", "TN")),
            "episode_return": episode.episode_return,
            "terminal_score": terminal.get("score"),
            "timeout_rate": float(outcome == "timeout"),
            "steps": float(episode.steps),
            "page_faults": float(getattr(state, "page_faults", 0) or 0),
            "async_timeouts": float(getattr(state, "async_timeouts", 0) or 0),
            "invalid_actions": float(getattr(state, "invalid_actions", 0) or 0),
            "kernel_loads": float(len({s.section_id for o in episode.observations
                                       for s in o.context.kernel})),
            "citation_share": (measures["citations_valid"] / measures["citations_needed"]
                               if measures.get("citations_needed") else None),
            "evidence_share": measures.get("evidence_share"),
            "sar_precision": None, "sar_recall": None, "subject_f1": None,
            "findings_precision": None, "findings_recall": None, "typology_accuracy": None,
        }
        if suspicious is None:
            return m
        if filed:
            m["sar_precision"] = float(suspicious)
            m["findings_precision"] = measures.get("findings_precision", 0.0) \
                if outcome == "TP" else 0.0
        if suspicious:
            m["sar_recall"] = float(filed)
            tp = outcome == "TP"
            p, r = measures.get("subjects_precision", 0.0), measures.get("subjects_recall", 0.0)
            m["subject_f1"] = 2 * p * r / (p + r) if tp and p + r else 0.0
            m["findings_recall"] = measures.get("findings_recall", 0.0) if tp else 0.0
            m["typology_accuracy"] = float(tp and last.arguments.get("typology") ==
                                           truth.typology)
        return m

    # -- training signals --
    def reward_components(self, episode: Episode) -> dict[str, float]:
        """`graders.training`'s `quality` and `os` signals, from the episode record: the IDs
        its pages and notes carry, the sections loaded, and the state's structured counts."""
        truth = episode.case.truth
        obs = episode.observations
        disk = {i for n in episode.final.context.disk for i in n.ids}
        seen = {i for o in obs for p in o.context.ram for i in p.ids} | disk
        loaded = {s.section_id for o in obs for s in o.context.kernel}
        counts = None
        last = episode.actions[-1] if episode.actions else None
        if episode.done and last is not None and last.tool in ("file_sar", "close_alert"):
            state = episode.state
            counts = OsCounts(
                page_faults=state.page_faults, async_timeouts=state.async_timeouts,
                id_calls=sum(bool(ID_PATTERN.search(json.dumps(a.arguments)))
                             for a in episode.actions),
                traces_requested=sum(o.tool == "request_wire_trace" and o.error is None
                                     for o in obs[1:]),
                traces_collected=sum(o.tool == "retrieve_async_result" and o.error is None
                                     for o in obs[1:]),
                cited=frozenset(last.arguments.get("cited_sections") or ()),
                loaded=frozenset(s.section_id for s in episode.final.context.kernel))
        return {"quality": quality(truth, seen=seen, on_disk=disk, loaded=loaded),
                "os": os_discipline(counts)}

    def timeout_return(self, case: Any) -> float:
        return timeout_score(case.truth).total


# Grammar rules of free text (`closed_sets`): a note or query this long at most, and a date.
NOTE_CHARS = 160
# Every calendar day a month can have (29 February in any year: the tool itself refuses it in a
# common year, with a typed error).
DATE_PATTERN = ("^20[0-9]{2}-(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-9])"
                "|(?:0[13-9]|1[0-2])-30|(?:0[13578]|1[02])-31)$")
# At least three letters or digits (what the watchlist check counts), up to 200 characters.
NAME_PATTERN = '^(?:[^A-Za-z0-9\\x00-\\x1f"\\\\]*[A-Za-z0-9]){3}[^\\x00-\\x1f"\\\\]{0,120}$'


def _note_pattern(visible: list[str]) -> str:
    """A note that names no ID but the visible ones, not blank: units of text where a hyphen
    never follows a run of capitals (an ID's prefix) unless the unit is a visible ID."""
    ids = "|".join(re.escape(i) for i in visible)
    safe = '[^A-Z\\-\\x00-\\x1f"\\\\]'
    first = f"(?:{ids}|[A-Z]*[^A-Z\\-\\s\\x00-\\x1f\"\\\\])" if ids else \
        '[A-Z]*[^A-Z\\-\\s\\x00-\\x1f"\\\\]'
    unit = f"(?:{ids}|[A-Z]*{safe}|-)" if ids else f"(?:[A-Z]*{safe}|-)"
    return f"^{first}{unit}{{0,{NOTE_CHARS - 1}}}[A-Z]*$"


def _values_of(key: str, nodes: list[Any]) -> set[str]:
    """Every string value under `key` anywhere in the JSON values `nodes`."""
    found: set[str] = set()
    stack = list(nodes)
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if k == key and isinstance(v, str):
                    found.add(v)
                else:
                    stack.append(v)
        elif isinstance(node, list):
            stack.extend(node)
    return found


def _header_ids(header: Any) -> list[str]:
    ids = [header.alert_id, header.subject.entity_id, *header.subject.account_ids,
           *header.transaction_ids, *header.related_ids]
    for party in header.counterparties:
        ids += [party.entity_id, *party.account_ids]
    return ids


ADAPTER = MemexAdapter()
