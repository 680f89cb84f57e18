"""MemexEnvironment: one AML investigation under operating-system constraints.

Observation
    `MemexObservation`: the last tool's `result` (or a typed `error`), OS `events`, the step's
    `reward` and `reward_breakdown`, and `context` — the kernel's loaded manual sections, the
    RAM pages in full, the disk notes and the async job table. A prompt built from `context`
    alone holds exactly the memory the environment models. After reset the alert is page 1.

Actions
    `MemexAction(tool, arguments)` for one of 18 tools (`server/tools.py`): 11 investigation
    tools, 5 OS tools (case file, wire traces, manual search, kernel load) and 2 terminal tools
    (`file_sar`, `close_alert`).

Reward
    Each step's reward is that step's only; the episode return is their sum. Non-terminal steps
    carry small penalties (`graders.shaping`); the step that ends the episode carries the
    terminal score in [-1, 1] (`graders.terminal`) and nothing else. Its components appear in
    that final observation's `metadata["terminal"]`, never earlier.

Episode end
    A terminal tool, or the case's step budget running out (a timeout scores as the worst wrong
    decision). Steps after the end return a typed `episode_done` error.

Reset arguments
    `seed`, `difficulty` (easy/medium/hard), `kind` (a kind, "benign", "suspicious" or None),
    `variant`, `case="1mdb"` for the fixed case, `benign_share`, `ram_pages` (default 2) and
    `kernel_capacity` (default 3). `plan` (a `scenarios.plan.CasePlan` dict, or a reference
    "adversarial/INDEX" to an entry of the adversarial split, whose seed it uses unless `seed`
    is given) builds the case from (plan, seed) instead; an invalid plan raises the
    typed `invalid_plan` error. The plan names the failing check, so like the truth it is
    never observed: `plan_if_done()` gives it only after the episode has ended.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import time
from collections import Counter
from typing import Any

import orjson
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import ValidationError

from memex.adversary.splits import resolve as resolve_split_entry
from memex.envkit.errors import CodedError, validation_message
from memex.envkit.guards import run_step
from memex.graders.decision import Decision
from memex.graders.shaping import StepEvents
from memex.graders.terminal import Evidence, TerminalScore, score_decision, timeout_score
from memex.models import (
    ContextView,
    JobView,
    MemexAction,
    MemexObservation,
    MemexState,
    NoteView,
    PageView,
    SectionView,
    ToolError,
)
from memex.scenarios import DEFAULT_BENIGN_SHARE, generate
from memex.scenarios.case import Case
from memex.scenarios.ids import ID_PATTERN, known_ids_in, record_type
from memex.scenarios.manual import SECTIONS
from memex.scenarios.onemdb import CASE_NAME, build_case
from memex.scenarios.plan import CasePlan, parse
from memex.scenarios.plan import build as build_from_plan
from memex.scenarios.truth import GroundTruth
from memex.server.case_index import CaseIndex
from memex.server.tools import TOOLS, ToolInputError, Toolkit
from memex.state_manager import (
    ASYNC_ETA_STEPS,
    DEFAULT_KERNEL_CAPACITY,
    DEFAULT_RAM_PAGES,
    Note,
    OSState,
)

_SYSTEM_RNG = random.SystemRandom()


@functools.cache
def _section_view(section_id: str) -> SectionView:
    return SectionView(section_id=section_id, title=SECTIONS[section_id].title,
                       text=SECTIONS[section_id].text)


class MemexEnvironment(Environment[MemexAction, MemexObservation, MemexState]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._case: Case | None = None
        self._episode_id: str | None = None
        self._counts = Counter()
        self._decision: str | None = None
        self._plan: CasePlan | None = None

    # ---- lifecycle ------------------------------------------------------------------------
    def reset(self, seed: int | None = None, episode_id: str | None = None,
              difficulty: str = "medium", kind: str | None = None, variant: str | None = None,
              case: str | None = None, benign_share: float = DEFAULT_BENIGN_SHARE,
              ram_pages: int = DEFAULT_RAM_PAGES,
              kernel_capacity: int = DEFAULT_KERNEL_CAPACITY, plan: Any = None,
              **_: Any) -> MemexObservation:
        if case is not None and case != CASE_NAME:
            raise ValueError(f"unknown fixed case {case!r}; the fixed case is {CASE_NAME!r}")
        if seed is not None and (type(seed) is not int or seed < 0):
            raise ValueError("seed must be a non-negative integer (not a bool or a string)")
        if isinstance(plan, str) and not plan.lstrip().startswith("{"):
            entry = resolve_split_entry(plan)  # "adversarial/3": a split entry
            plan, seed = entry.plan, entry.seed if seed is None else seed
        if seed is None:
            seed = _SYSTEM_RNG.randrange(1_000_000)
        planned = parse(plan) if plan is not None and case is None else None  # PlanError
        world = build_case() if case == CASE_NAME else build_from_plan(
            planned, int(seed)) if planned is not None else generate(
            int(seed), difficulty, kind, variant=variant, benign_share=float(benign_share))
        self._plan = planned
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
        self._pages: dict[int, PageView] = {}
        self._notes: dict[int, NoteView] = {}
        alert = self._toolkit.review_alert()
        self._os.add_page("review_alert", {}, alert, self._revealed(alert))
        return self._observe(tool=None, result=alert, reward=None, events=[], parts={})

    def _eta_for(self, transaction_id: str) -> int:
        rng = random.Random(f"{self._ix.case.case_id}|{transaction_id}|eta")
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
                args = spec.args_model.model_validate(action.arguments)
            except ValidationError as exc:
                raise CodedError("invalid_arguments", validation_message(exc)) from None
            kwargs = vars(args)  # the validated fields (read only)
            refs = {name: kwargs[name] for name in spec.refs if kwargs[name] is not None}
            if tool == "write_to_case_file":
                ids = set(ID_PATTERN.findall(kwargs["note"])) | set(kwargs["evidence_ids"] or ())
                refs = {f"id {i}": i for i in sorted(ids)}
            for name, value in refs.items():
                self._check_ref(value, spec.refs.get(name))
            _, faults = os.classify(list(refs.values()))
            if faults:
                ev.page_faults = len(faults)
                self._counts["page_faults"] += len(faults)
                events += [f"page fault: {i} was no longer resident" for i in faults]
            # Typed arguments dump in field order, so equal calls give equal keys.
            key = hashlib.blake2b(f"{tool}\n{args.model_dump_json()}".encode("utf-8", "replace"),
                                  digest_size=16).digest()
            if spec.category != "terminal" and key in self._calls:
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
            self._calls.add(key)
        except CodedError as exc:
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
            score = score_decision(self._case.truth, result, evidence)
            return self._finish(tool, {"decision": result.action, "score": score.total}, score,
                                events, result.action)
        if result is not None:
            _, evicted = os.add_page(tool, action.arguments, result, self._revealed(result))
            if evicted is not None:
                events.append(f"page {evicted.page_id} ({evicted.tool}) evicted from RAM")
        for job in os.newly_ready():
            events.append(f"interrupt: {job.job_id} (trace of {job.transaction_id}) is ready")
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

    def _check_ref(self, value: str, record_types: tuple[str, ...] | None) -> None:
        if value not in self._os.seen:
            raise CodedError("unknown_id", f"unknown id {value!r}")
        if record_types and record_type(value) not in record_types:
            raise CodedError("wrong_id_type",
                             f"{value!r} is a {record_type(value)}, not a {record_types[0]}")

    def _finish(self, tool: str, result: Any, score: TerminalScore, events: list[str],
                decision: str, error: ToolError | None = None) -> MemexObservation:
        self._done = True
        self._terminal = score
        self._return += score.total
        self._decision = decision
        meta = {"terminal": {"outcome": score.outcome, "score": score.total,
                             "components": score.components, "measures": score.measures,
                             "range": [-1.0, 1.0]},
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

    def _context(self) -> ContextView:
        # Pages, notes and sections never change once made, so their views are built once.
        os = self._os
        for p in os.ram:
            if p.page_id not in self._pages:
                self._pages[p.page_id] = PageView(
                    page_id=p.page_id, step=p.step, tool=p.tool, arguments=p.arguments,
                    content=p.content, ids=sorted(p.ids))
        if len(self._pages) > len(os.ram):  # drop views of pages evicted from RAM
            resident = {p.page_id for p in os.ram}
            self._pages = {k: v for k, v in self._pages.items() if k in resident}
        return ContextView(
            kernel=[_section_view(s) for s in os.kernel],
            ram=[self._pages[p.page_id] for p in os.ram],
            disk=[self._note_view(n) for n in os.disk],
            jobs=[JobView(job_id=j.job_id, transaction_id=j.transaction_id,
                                          requested_step=j.requested_step,
                                          ready_at_step=j.ready_at_step,
                                          status=j.status(os.step)) for j in os.jobs.values()],
            ram_capacity=os.ram_pages, kernel_capacity=os.kernel_capacity)

    def _note_view(self, note: Note) -> NoteView:
        view = self._notes.get(note.note_id)
        if view is None:
            view = self._notes[note.note_id] = NoteView(
                note_id=note.note_id, step=note.step, text=note.text, ids=sorted(note.ids))
        return view

    def _observe(self, tool: str | None, result: Any, reward: float | None, events: list[str],
                 parts: dict[str, float], error: ToolError | None = None, done: bool = False,
                 metadata: dict[str, Any] | None = None) -> MemexObservation:
        return MemexObservation(
            tool=tool, result=result, error=error, events=events, context=self._context(),
            step=self._os.step, step_budget=self._ix.case.step_budget, reward=reward, done=done,
            reward_breakdown=parts, metadata=metadata or {})

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
