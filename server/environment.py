"""MemexEnvironment: one AML investigation under operating-system constraints.

Observation
    `MemexObservation`: the last tool's `result` (or a typed `error`), OS `events`, the step's
    `reward` and `reward_breakdown`, and `context` — the kernel's loaded manual sections, the
    RAM pages in full, the disk notes and the async job table, under the pinned `alert`
    header (the alert's ID, rule, subject, accounts, counterparties and transactions, as
    `review_alert` shows them; never evicted, its IDs always resident). A prompt built from
    `context` alone holds exactly the memory the environment models, and always names the
    case. After reset the alert is also page 1.

Actions
    `MemexAction(tool, arguments)` for one of 19 tools (`server/tools.py`): 11 investigation
    tools, 5 OS tools (case file, wire traces, manual search, kernel load) and 2 terminal tools
    (`file_sar`, `close_alert`). The same tools are MCP tools (`envkit.mcp`): a `tools/call`
    is one step of the session's episode.

Reward
    Each step's reward is that step's only; the episode return is their sum. Non-terminal steps
    carry small penalties (`graders.shaping`); the step that ends the episode carries the
    terminal score in [-4.5, 1] (`graders.terminal`) and nothing else. Its components appear in
    that final observation's `metadata["terminal"]`, never earlier.

Episode end
    A terminal tool, or the case's step budget running out (a timeout scores as the worst wrong
    decision). `abandon()` ends an undecided episode as a timeout too (a sealed server does so
    with an episode deleted or left idle). Steps after the end return a typed `episode_done`
    error.

Reset arguments
    The case: the fields of `scenarios.CaseSpec` (its aliases too: `task_id`, `split` + `index`
    from OpenEnv's Task API — `scenarios.tasks`, served by this class — and `parameters`) —
    `seed` (None: drawn), `difficulty`
    (easy/medium/hard), `kind` (a kind, "benign", "suspicious" or None), `variant`,
    `benign_share`, `case="1mdb"` for the fixed case, and `plan` (a `scenarios.plan.CasePlan`
    dict, or a reference "adversarial/INDEX" to an entry of the adversarial split, whose seed
    it uses unless `seed` is given), which builds the case from (plan, seed); an invalid plan
    raises the typed `invalid_plan` error. The plan names the failing check, so like the truth
    it is never observed: `plan_if_done()` gives it only after the episode has ended.
    The machine: `ram_pages` (default 2) and `kernel_capacity` (default 3).
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import time
from collections import Counter, deque
from typing import Any

import orjson
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import BaseModel, ValidationError

from memex.envkit.declarations import ToolSpec
from memex.envkit.errors import CodedError, validation_message
from memex.envkit.guards import run_step
from memex.envkit.mcp import DeclaredToolsMcp
from memex.envkit.tasks import TaskSplits
from memex.graders.decision import Decision
from memex.graders.shaping import StepEvents
from memex.graders.terminal import (
    SCORE_MAX,
    SCORE_MIN,
    Evidence,
    TerminalScore,
    score_decision,
    timeout_score,
)
from memex.models import (
    AlertHeader,
    ContextView,
    JobView,
    MemexAction,
    MemexObservation,
    MemexState,
    NoteView,
    PageView,
    PartyView,
    SectionView,
    ToolError,
)
from memex.scenarios.case import Case
from memex.scenarios.cases import build, plan_of, resolved
from memex.scenarios.ids import ID_PATTERN, known_ids_in, record_type
from memex.scenarios.manual import SECTIONS
from memex.scenarios.plan import CasePlan
from memex.scenarios.spec import CaseSpec
from memex.scenarios.tasks import TASKS
from memex.scenarios.truth import GroundTruth
from memex.server.case_index import CaseIndex
from memex.server.tools import TOOLS, ToolInputError, Toolkit
from memex.state_manager import (
    ASYNC_ETA_STEPS,
    DEFAULT_KERNEL_CAPACITY,
    DEFAULT_RAM_PAGES,
    Job,
    Note,
    OSState,
    Page,
)

_SYSTEM_RNG = random.SystemRandom()


# A call's key is the call itself up to this many bytes, and a digest beyond (a long note).
MAX_RAW_CALL_KEY_BYTES = 64


def _call_key(tool: str, args: BaseModel) -> bytes:
    """A call's identity for the redundancy check: the tool and its typed arguments as JSON, in
    field order, so equal calls give equal keys. A short call is its own key; a longer one is
    a 16-byte digest (after a zero byte, which no call starts with), so a call costs bounded
    memory, and most calls are not hashed (the hash's code is big, and cold once a step).

    The JSON is `model_dump_json`'s, from orjson, which gives the same bytes for plain fields
    (the test suite checks) and runs warm (the step dumps the result with it too); pydantic's
    serializer dumps what orjson cannot (an int beyond 64 bits, a SAR's findings)."""
    try:
        dumped = orjson.dumps(vars(args))
    except orjson.JSONEncodeError:
        dumped = args.__pydantic_serializer__.to_json(args)
    call = tool.encode() + b"\n" + dumped
    if len(call) <= MAX_RAW_CALL_KEY_BYTES:
        return call
    return b"\0" + hashlib.blake2b(call, digest_size=16).digest()


def alert_header(alert: dict[str, Any], known: frozenset[str]) -> AlertHeader:
    """The pinned header of an alert, built from `review_alert`'s result so that it can show
    nothing the alert does not: the subject with the alert's accounts, each other party of the
    triggering transactions (with its accounts there) in order of appearance, and the case
    records (among `known`) the transactions name as conductor or reference."""
    subject = alert["subject"]["entity_id"]
    parties: dict[str, tuple[str, list[str]]] = {
        subject: (alert["subject"]["name"], list(alert["account_ids"]))}
    for line in alert["transactions"]:
        for side in ("from", "to"):
            party, account = line.get(f"{side}_party_id"), line.get(f"{side}_account")
            if party is None:  # cash
                continue
            _, accounts = parties.setdefault(party, (line[f"{side}_party"], []))
            if account not in accounts:
                accounts.append(account)
    views = [PartyView.trusted(entity_id=party, name=name, account_ids=accounts)
             for party, (name, accounts) in parties.items()]
    related = (line.get(key) for line in alert["transactions"]
               for key in ("conducted_by", "reference"))
    return AlertHeader.trusted(
        alert_id=alert["alert_id"], rule=alert["rule"]["code"], rule_name=alert["rule"]["name"],
        subject=views[0], counterparties=views[1:],
        transaction_ids=[line["id"] for line in alert["transactions"]],
        related_ids=[i for i in dict.fromkeys(related)
                     if i is not None and i in known and i not in parties])


@functools.cache
def _section_view(section_id: str) -> SectionView:
    return SectionView.trusted(section_id=section_id, title=SECTIONS[section_id].title,
                               text=SECTIONS[section_id].text)


class MemexEnvironment(DeclaredToolsMcp, TaskSplits,
                       Environment[MemexAction, MemexObservation, MemexState]):
    SUPPORTS_CONCURRENT_SESSIONS = True
    mcp_tools = TOOLS
    task_catalog = TASKS

    def mcp_action(self, name: str, arguments: dict[str, Any]) -> MemexAction:
        return MemexAction(tool=name, arguments=arguments)

    def __init__(self) -> None:
        super().__init__()
        self._case: Case | None = None
        self._episode_id: str | None = None
        self._counts = Counter()
        self._decision: str | None = None
        self._plan: CasePlan | None = None

    # ---- lifecycle ------------------------------------------------------------------------
    def reset(self, seed: int | None = None, episode_id: str | None = None, *,
              ram_pages: int = DEFAULT_RAM_PAGES, kernel_capacity: int = DEFAULT_KERNEL_CAPACITY,
              **options: Any) -> MemexObservation:
        """Start an episode on the case `seed` and `options` name (a `CaseSpec`; keywords it
        does not know are ignored), on a machine of `ram_pages` RAM pages and a
        `kernel_capacity`-section kernel. `ValueError` (a `PlanError` for a bad plan) says what
        is wrong with them."""
        spec = resolved(CaseSpec.of({**options, "seed": seed}))  # a split reference: its entry
        if spec.seed is None and spec.case is None:
            spec = spec.model_copy(update={"seed": _SYSTEM_RNG.randrange(1_000_000)})
        world = build(spec)
        self._plan = plan_of(spec)
        ix = CaseIndex(world.public)
        os = OSState(ix.alert_ids(), int(ram_pages), int(kernel_capacity))  # checks the bounds
        self._case, self._ix, self._os = world, ix, os
        self._toolkit = Toolkit(self._ix, self._os, self._eta_for)
        self._calls: set[bytes] = set()  # digests of (tool, arguments): bounded memory
        self._done = False
        self._terminal: TerminalScore | None = None
        self._return = 0.0
        self._episode_id = episode_id
        self._counts = Counter()
        self._decision = None
        # The views of the pages in RAM, in RAM order: a deque as long as RAM, appended with it.
        self._ram_views: deque[PageView] = deque(maxlen=os.ram_pages)
        self._notes: dict[int, NoteView] = {}
        alert = self._toolkit.review_alert()
        self._header = alert_header(alert, ix.ids)
        self._page_in("review_alert", {}, alert)
        return self._observe(tool=None, result=alert, reward=None, events=[], parts={})

    def _eta_for(self, key: str) -> int:
        """An async job's ETA: seeded by the case and what is asked (a transaction ID, or an
        entity and topic), so the same request always takes as long."""
        rng = random.Random(f"{self._ix.case.case_id}|{key}|eta")
        return rng.randint(*ASYNC_ETA_STEPS)

    @property
    def state(self) -> MemexState:
        if self._case is None:
            return MemexState()
        os, pub = self._os, self._case.public
        return MemexState(
            episode_id=self._episode_id, step_count=os.step, case_id=pub.case_id,
            difficulty=pub.difficulty, step_budget=pub.step_budget, done=self._done,
            decision=self._decision, total_reward=round(self._return, 6),
            page_faults=self._counts["page_faults"], async_timeouts=self._counts["async_timeouts"],
            redundant_calls=self._counts["redundant_calls"],
            invalid_actions=self._counts["invalid_actions"], kernel=list(os.kernel),
            ram_pages=[p.page_id for p in os.ram], disk_notes=len(os.disk),
            jobs_pending=[j.job_id for j in os.jobs.values() if not j.retrieved],
            ids_seen=len(os.seen), ids_resident=len(os.resident()))

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="memex", version="0.1.0",
            description="AML alert investigation under OS constraints: a two-page RAM, a disk "
                        "case file, asynchronous wire traces and an editable kernel prompt.")

    # ---- stepping -------------------------------------------------------------------------
    def step(self, action: MemexAction, timeout_s: float | None = None,
             **_: Any) -> MemexObservation:
        if self._case is None:
            return self._error_only("no_episode", "call reset before step")
        if self._done:
            return self._error_only("episode_done", "the episode has ended; call reset")
        os = self._os
        os.step += 1
        ev = StepEvents()
        events: list[str] = []
        tool, result, error = action.tool, None, None
        try:
            spec = TOOLS.get(tool)
            if spec is None:
                raise CodedError("unknown_tool", f"unknown tool {tool!r}; tools: "
                                                 f"{', '.join(TOOLS)}")
            try:
                # The validator itself: `model_validate` wraps it in a dozen keywords a call.
                args = spec.args_model.__pydantic_validator__.validate_python(action.arguments)
            except ValidationError as exc:
                raise CodedError("invalid_arguments", validation_message(exc)) from None
            kwargs = vars(args)  # the validated fields (read only)
            faults = os.faults(self._checked_refs(tool, spec, kwargs))
            if faults:
                ev.page_faults = len(faults)
                self._counts["page_faults"] += len(faults)
                events += [f"page fault: {i} was no longer resident" for i in faults]
            # A terminal call ends the episode: it is never redundant, and no call follows it.
            key = None if spec.category == "terminal" else _call_key(tool, args)
            if key is not None and key in self._calls:
                ev.redundant = True
                self._counts["redundant_calls"] += 1
                events.append("redundant call: same tool and arguments as an earlier step")
            started = time.monotonic()
            out = getattr(self._toolkit, tool)(**kwargs)
            if timeout_s is not None and spec.category == "investigation" \
                    and time.monotonic() - started > timeout_s:  # read-only: drop the result
                raise CodedError("deadline_exceeded", f"the call ran longer than the server's "
                                 f"step deadline ({timeout_s:g} s); its result was dropped")
            result = out
            if key is not None:
                self._calls.add(key)
        except CodedError as exc:  # validated: the code must be one the wire declares
            error = ToolError(code=exc.code, message=str(exc))
            if isinstance(exc, ToolInputError) and exc.code == "not_ready":
                ev.async_timeout = True
                self._counts["async_timeouts"] += 1
                events.append(f"async timeout: {exc}")
        if error is not None and not ev.async_timeout:
            ev.invalid = True
            self._counts["invalid_actions"] += 1

        if isinstance(result, Decision):
            evidence = Evidence(seen=frozenset(os.seen), revealed=frozenset(os.revealed),
                                on_disk=os.on_disk(), kernel=tuple(os.kernel),
                                steps_used=os.step, step_budget=self._ix.case.step_budget)
            score = score_decision(self._case.truth, result, evidence, self._case.public)
            return self._finish(tool, {"decision": result.action, "score": score.total}, score,
                                events, result.action)
        if result is not None:
            evicted = self._page_in(tool, action.arguments, result)
            if evicted is not None:
                events.append(f"page {evicted.page_id} ({evicted.tool}) evicted from RAM")
        for job in os.newly_ready():
            what = (f"trace of {job.transaction_id}" if job.transaction_id is not None
                    else f"information on {job.entity_id}, {job.topic}")
            events.append(f"interrupt: {job.job_id} ({what}) is ready")
        if os.step >= self._ix.case.step_budget:
            events.append("step budget exhausted: timeout")
            return self._finish(tool, result, timeout_score(self._case.truth), events,
                                "timeout", error)
        reward, parts = ev.reward()
        self._return += reward
        return self._observe(tool, result, reward, events, parts, error)

    # A step costs a fraction of a millisecond of pure Python, less than the thread hop and GIL
    # hand-off of OpenEnv's per-session executor, so the server runs it on the event loop —
    # unless its arguments are large enough to cost more (`envkit.guards.run_step`), under the
    # server's per-step deadline (`step_deadline_s`, set by the app's factory).
    step_deadline_s: float | None = None

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **kwargs: Any) -> MemexObservation:
        return self.reset(seed=seed, episode_id=episode_id, **kwargs)

    async def step_async(self, action: MemexAction, timeout_s: float | None = None,
                         **kwargs: Any) -> MemexObservation:
        return await run_step(self.step, action, timeout_s or self.step_deadline_s)

    def _checked_refs(self, tool: str, spec: ToolSpec, kwargs: dict[str, Any]) -> list[str]:
        """The case IDs a call names, each checked in turn: revealed to the agent (else
        `unknown_id`, whether or not it exists) and of a record type its parameter takes."""
        if tool == "write_to_case_file":  # every ID in the note's text and its evidence list
            ids = set(ID_PATTERN.findall(kwargs["note"])) | set(kwargs["evidence_ids"] or ())
            named = [(i, ()) for i in sorted(ids)]
        else:
            named = [(kwargs[name], types) for name, types in spec.refs.items()]
        refs = []
        for value, types in named:
            if value is None:  # an optional reference not given
                continue
            if value not in self._os.seen:
                raise CodedError("unknown_id", f"unknown id {value!r}")
            if types and record_type(value) not in types:
                raise CodedError("wrong_id_type",
                                 f"{value!r} is a {record_type(value)}, not a {types[0]}")
            refs.append(value)
        return refs

    def _finish(self, tool: str, result: Any, score: TerminalScore, events: list[str],
                decision: str, error: ToolError | None = None) -> MemexObservation:
        self._done = True
        self._terminal = score
        self._return += score.total
        self._decision = decision
        meta = {"terminal": {"outcome": score.outcome, "score": score.total,
                             "components": score.components, "measures": score.measures,
                             "range": [SCORE_MIN, SCORE_MAX]},
                "episode_return": round(self._return, 6)}
        return self._observe(tool, result, score.total, events, {"terminal": score.total},
                             error, done=True, metadata=meta)

    # ---- views ----------------------------------------------------------------------------
    def _revealed(self, content: Any) -> frozenset[str]:
        """The case IDs a tool result contains, anywhere in its JSON (values or text)."""
        try:
            text = orjson.dumps(content).decode()
        except orjson.JSONEncodeError:  # e.g. a lone surrogate in an in-process call's note
            text = json.dumps(content)
        return frozenset(known_ids_in(text, self._ix.ids))

    def _page_in(self, tool: str, arguments: dict[str, Any], content: Any) -> Page | None:
        """Put a tool result in RAM, with its view; returns the page it evicted, if any."""
        page, evicted = self._os.add_page(tool, arguments, content, self._revealed(content))
        # A page never changes, so its view is built once, as validation would build it: the
        # arguments copied, the IDs sorted into a new list.
        self._ram_views.append(PageView.trusted(
            page_id=page.page_id, step=page.step, tool=tool, arguments=dict(arguments),
            content=content, ids=sorted(page.ids)))
        return evicted

    def _note_view(self, note: Note) -> NoteView:
        view = self._notes.get(note.note_id)  # a note never changes either
        if view is None:
            view = self._notes[note.note_id] = NoteView.trusted(
                note_id=note.note_id, step=note.step, text=note.text, ids=sorted(note.ids))
        return view

    def _job_view(self, job: Job) -> JobView:
        return JobView.trusted(job_id=job.job_id, transaction_id=job.transaction_id,
                               entity_id=job.entity_id, topic=job.topic,
                               requested_step=job.requested_step,
                               ready_at_step=job.ready_at_step, status=job.status(self._os.step))

    def _observe(self, tool: str | None, result: Any, reward: float | None, events: list[str],
                 parts: dict[str, float], error: ToolError | None = None, done: bool = False,
                 metadata: dict[str, Any] | None = None) -> MemexObservation:
        # Every value is already of its field's type, and `events`, `parts` and `metadata` are
        # this step's own (validation would have copied them).
        os = self._os
        context = ContextView.trusted(
            alert=self._header, kernel=list(map(_section_view, os.kernel)),
            ram=list(self._ram_views),
            disk=list(map(self._note_view, os.disk)),
            jobs=list(map(self._job_view, os.jobs.values())), ram_capacity=os.ram_pages,
            kernel_capacity=os.kernel_capacity)
        return MemexObservation.trusted(
            done=done, reward=reward, metadata=metadata or {}, tool=tool, result=result,
            error=error, events=events, context=context, step=os.step,
            step_budget=self._ix.case.step_budget, reward_breakdown=parts)

    def _error_only(self, code: str, message: str) -> MemexObservation:
        return MemexObservation(error=ToolError(code=code, message=message), reward=0.0,
                                done=True, events=[],
                                step=self._os.step if self._case is not None else 0,
                                step_budget=self._case.public.step_budget if self._case else 0)

    # ---- for graders, oracles and the post-episode overlay (never sent to clients) ---------
    def ground_truth_if_done(self) -> GroundTruth | None:
        """The case's ground truth, but only once the episode has ended."""
        return self._case.truth if self._case is not None and self._done else None

    def plan_if_done(self) -> dict[str, Any] | None:
        """The plan the case was built from (None if none), but only once the episode ended."""
        return self._plan.to_dict() if self._plan is not None and self._done else None

    @property
    def current_case(self) -> Case | None:
        """In-process access for tests and the oracle baseline; not reachable over the wire."""
        return self._case

    # ---- an episode the agent leaves undecided (sealed evaluation ends it here) -------------
    def abandon(self) -> MemexObservation:
        """End the episode now, without a decision: scored as a timeout
        (`graders.terminal.timeout_score`, the worst wrong decision for the case), as if the
        step budget had run out; the steps it did not take cost nothing. Returns the final
        observation. An episode that has ended, or none, gets its typed error instead."""
        if self._case is None:
            return self._error_only("no_episode", "call reset before abandon")
        if self._done:
            return self._error_only("episode_done", "the episode has ended; call reset")
        return self._finish(None, None, timeout_score(self._case.truth),
                            ["episode ended without a decision: scored as a timeout"], "timeout")

    def episode_result(self) -> dict[str, Any] | None:
        """The ended episode's terminal `outcome` (TP, TN, FP, FN or timeout), its terminal
        `score` and its `return`; None while it runs."""
        if not self._done or self._terminal is None:
            return None
        return {"outcome": self._terminal.outcome, "score": self._terminal.total,
                "return": round(self._return, 6)}
