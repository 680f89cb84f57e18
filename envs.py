"""Environments as a parameter: the one object the trainer, the evaluation harness, the inference
agent and the demo need to know about an OpenEnv environment.

`train_grpo.py`, `eval_harness.py`, `inference.py` and `demo_eval.py` take `--env NAME`;
`get_adapter(NAME)` returns an `EnvAdapter`. Registered names resolve lazily by import path, so
this module imports no environment until asked: `memex` (this package's AML investigation) and
`committee` (the investment committee, `memex.committee.adapter:ADAPTER`). Any other adapter is
reachable as `--env package.module:ATTRIBUTE`.

An adapter says, in one place per concept:

- identity and grid: `name`, `tasks` (kinds or task names), `difficulties`, `splits` (seeds);
- running: `env_cls` (in process), `client_cls` (WebSocket), `open(base_url)` -> `Session`,
  `server_module` (`python -m <it> --port N` serves the environment);
- TRL: `tool_env_cls`, the `environment_factory` class whose public methods are the tools;
- baselines: `policies` (name -> factory), `eval_policies`, `demonstrator`, `make_policy`;
- the episode grid: `grid(split, ...)` -> `EpisodeSpec`s (task label, difficulty, seed, the
  reset options);
- hidden truth: `case_for(spec)` regenerates the world client-side (for oracles, metrics and
  trace footers), `truth_json(case)`;
- measuring: `metrics(episode)` -> per-episode numbers (`None` where undefined),
  `outcome(episode)`, `success(episode)` (what pass^k counts), and for reports
  `summary_metrics` (measure, label) columns, `metrics_note`, `success_label`;
- LLM prompts: `messages(obs, key)` — the one observation -> prompt renderer — and
  `tool_schemas()`, which like `validate_call` comes from `tool_specs` (name -> the declared
  `ToolSpec`s of `server/declarations.py`); LLM replies: `parse(text)` /
  `parse_call(name, args)` -> `ParsedAction`, `action_call(action)`, `action_text(action)`;
- training: `reward_components(episode)` ("quality", "os"), `timeout_return(case)`.

A policy is any object with `name`, `needs_case`, `reset(obs, case=None)` and
`act(obs) -> Action` (see `memex.baselines.Policy`); `play` runs one over a `Session` and returns
an `Episode` record that every consumer measures, logs and traces the same way.

Implementing another environment: subclass `EnvAdapter`, set the attributes above, implement
the methods the base class leaves open (`case_for`, `truth_json`, `metrics`, `outcome`,
`system_prompt`, `make_action`, `action_call`,
`reward_components`, `timeout_return`), expose an instance and register it
(`register(name, "module:attr")`).
The generic parts — sessions, the seeded grid, JSON tool-call parsing, the observation block —
come from the base class. The last user message of every prompt carries
`<observation episode="KEY">{observation JSON}</observation>` (the convention the test-double
LLM server and AgentOS read); KEY is stable for one episode.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from memex.traces import Trace

_REGISTRY: dict[str, str] = {
    "memex": "memex.envs:MemexAdapter",
    "committee": "memex.committee.adapter:ADAPTER",
}


def register(name: str, target: str) -> None:
    """Make `--env name` resolve to `target` ("package.module:ATTRIBUTE"), imported on first use."""
    _REGISTRY[name] = target
    get_adapter.cache_clear()


def registered() -> tuple[str, ...]:
    return tuple(_REGISTRY)


@functools.cache
def get_adapter(name: str = "memex") -> EnvAdapter:
    """The adapter registered as `name`, or the one at import path `module:attr`."""
    target = _REGISTRY.get(name, name)
    if ":" not in target:
        raise KeyError(f"unknown environment {name!r}; registered: {', '.join(_REGISTRY)} "
                       "(or give an import path 'package.module:ATTRIBUTE')")
    module, attr = target.split(":", 1)
    obj = getattr(importlib.import_module(module), attr)
    return obj() if isinstance(obj, type) else obj


# ---- sessions ---------------------------------------------------------------------------------

class Session(Protocol):
    """One episode at a time on one environment instance, local or remote."""

    def reset(self, **options: Any) -> Any: ...
    def step(self, action: Any) -> Any: ...
    def state(self) -> Any: ...
    def close(self) -> None: ...


class LocalSession:
    """An in-process environment behind the `Session` interface."""

    def __init__(self, env: Any):
        self.env = env

    def reset(self, **options: Any) -> Any:
        return self.env.reset(**options)

    def step(self, action: Any) -> Any:
        return self.env.step(action)

    def state(self) -> Any:
        return self.env.state

    def close(self) -> None:
        self.env.close()


class RemoteSession:
    """A WebSocket session (`/ws`) on a running server, through the environment's typed client."""

    def __init__(self, client_cls: type, base_url: str):
        self._client = client_cls(base_url=base_url).sync()
        self._client.connect()

    def reset(self, **options: Any) -> Any:
        return self._client.reset(**options).observation

    def step(self, action: Any) -> Any:
        return self._client.step(action).observation

    def state(self) -> Any:
        return self._client.state()

    def close(self) -> None:
        self._client.close()


# ---- episodes ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class EpisodeSpec:
    """One cell of an evaluation or training grid: what to pass to `reset`, and its labels."""

    task: str
    difficulty: str
    seed: int | None
    reset: Mapping[str, Any]
    repeat: int = 0

    @property
    def key(self) -> str:
        """Stable episode key (prompts, trace file names, the test double's agent table)."""
        seed = "none" if self.seed is None else str(self.seed)
        return f"{self.task}-{self.difficulty}-{seed}-r{self.repeat}"

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "difficulty": self.difficulty, "seed": self.seed,
                "reset": dict(self.reset), "repeat": self.repeat}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EpisodeSpec:
        return cls(data["task"], data["difficulty"], data["seed"], dict(data["reset"]),
                   int(data.get("repeat", 0)))


@dataclass
class Episode:
    """A played episode: observations o_0..o_T, actions a_1..a_T, the final state and — when the
    runner could regenerate it — the hidden case (never shown to the policy unless it is an
    oracle)."""

    spec: EpisodeSpec
    policy: str
    observations: list[Any] = field(default_factory=list)
    actions: list[Any] = field(default_factory=list)
    state: Any = None
    case: Any = None
    wall_s: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def final(self) -> Any:
        return self.observations[-1]

    @property
    def done(self) -> bool:
        return bool(self.observations and self.final.done)

    @property
    def rewards(self) -> list[float]:
        return [float(o.reward or 0.0) for o in self.observations[1:]]

    @property
    def episode_return(self) -> float:
        return round(sum(self.rewards), 6)

    @property
    def steps(self) -> int:
        return len(self.actions)

    def trace(self, adapter: EnvAdapter) -> Trace:
        """The `memex-trace/1` record of this episode (truth in the footer when known)."""
        trace = Trace.start(env=adapter.name, policy=self.policy, seed=self.spec.seed,
                            difficulty=self.spec.difficulty, case=self.spec.reset.get("case"),
                            reset=dict(self.spec.reset))
        trace.add(self.observations[0])
        for obs, action in zip(self.observations[1:], self.actions, strict=True):
            trace.add(obs, action)
        if self.done:
            terminal = (self.final.metadata or {}).get("terminal", {})
            trace.finish(episode_return=self.episode_return, outcome=adapter.outcome(self),
                         terminal=terminal,
                         truth=adapter.truth_json(self.case) if self.case is not None else None)
        return trace


def play(adapter: EnvAdapter, session: Session, policy: Any, spec: EpisodeSpec, *,
         case: Any = None, max_steps: int | None = None,
         on_step: Callable[[Episode], None] | None = None) -> Episode:
    """Run `policy` for one episode of `spec` on `session` (until done, or `max_steps`)."""
    start = time.perf_counter()
    if case is None and (policy.needs_case or spec.seed is not None or "case" in spec.reset):
        case = adapter.case_for(spec)
    obs = session.reset(**spec.reset)
    episode = Episode(spec, policy.name, [obs], case=case)
    policy.reset(obs, case=case if policy.needs_case else None)
    while not obs.done and (max_steps is None or episode.steps < max_steps):
        action = policy.act(obs)
        obs = session.step(action)
        episode.actions.append(action)
        episode.observations.append(obs)
        if on_step is not None:
            on_step(episode)
    episode.state = session.state()
    episode.wall_s = time.perf_counter() - start
    return episode


# ---- parsing LLM replies --------------------------------------------------------------------

@dataclass(frozen=True)
class ParsedAction:
    """An LLM reply read as one tool call. `status` is "ok" (a valid call), "invalid" (a call,
    but to an unknown tool or with arguments that break its schema: still sent, so the
    environment answers with its typed error) or "unparseable" (no call found)."""

    status: Literal["ok", "invalid", "unparseable"]
    action: Any = None
    name: str | None = None
    arguments: dict[str, Any] | None = None
    error: str | None = None

    @property
    def format_score(self) -> float:
        return {"ok": 1.0, "invalid": 0.5, "unparseable": 0.0}[self.status]


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_DECODER = json.JSONDecoder()


def _json_objects(text: str) -> Iterable[dict[str, Any]]:
    """Every JSON object embedded in `text`, in order (nested ones are skipped)."""
    i = 0
    while (i := text.find("{", i)) != -1:
        try:
            obj, end = _DECODER.raw_decode(text, i)
        except ValueError:
            i += 1
            continue
        if isinstance(obj, dict):
            yield obj
        i = end


def extract_call(text: str) -> tuple[str, dict[str, Any]] | None:
    """The last tool call written in `text`: `{"tool": name, "arguments": {...}}`, the
    OpenAI-style `{"name": ..., "arguments": ...}` (arguments may be a JSON string), optionally
    inside `<tool_call>` tags or a code fence. Reasoning text around it is allowed (ReAct)."""
    if not text:
        return None
    tagged = _TAGGED.findall(text)
    candidates = [o for chunk in tagged for o in _json_objects(chunk)] or list(_json_objects(text))
    for obj in reversed(candidates):
        if "function" in obj and isinstance(obj["function"], dict):
            obj = obj["function"]
        name = obj.get("tool", obj.get("name"))
        if not isinstance(name, str):
            continue
        args = obj.get("arguments", obj.get("args", obj.get("parameters", {})))
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                continue
        if args is None:
            args = {}
        if isinstance(args, dict):
            return name, args
    return None


# ---- the adapter ------------------------------------------------------------------------------

class EnvAdapter(ABC):
    """Base class of environment adapters; see the module docstring for the contract."""

    name: str
    tasks: tuple[str, ...]
    difficulties: tuple[str, ...]
    splits: Mapping[str, range]
    env_cls: type
    client_cls: type
    server_module: str
    tool_env_cls: type
    tool_specs: Mapping[str, Any]  # name -> server.declarations.ToolSpec, declared once
    policies: Mapping[str, Callable[..., Any]]
    eval_policies: tuple[str, ...]
    demonstrator: str
    summary_metrics: tuple[tuple[str, str], ...] = ()  # report columns; () -> generic ones
    metrics_note: str = ""
    success_label: str = "success"

    # -- running --
    def open(self, base_url: str | None = None) -> Session:
        """A session on a new in-process environment, or a WebSocket session on `base_url`."""
        if base_url:
            return RemoteSession(self.client_cls, base_url)
        return LocalSession(self.env_cls())

    def make_policy(self, name: str, seed: int = 0) -> Any:
        """A baseline policy by name; stochastic ones take `seed`."""
        factory = self.policies[name]
        try:
            return factory(seed=seed)
        except TypeError:
            return factory()

    def reset_options(self, task: str, difficulty: str, seed: int | None) -> dict[str, Any]:
        return {"seed": seed, "difficulty": difficulty, "task": task}

    def grid(self, split: str, tasks: Iterable[str] | None = None,
             difficulties: Iterable[str] | None = None, episodes: int = 1, repeats: int = 1,
             seed_offset: int = 0) -> list[EpisodeSpec]:
        """Seeded grid task x difficulty x episode x repeat. Episode e of every cell uses seed
        `splits[split].start + seed_offset + e`; repeats replay the same case."""
        seeds = self.splits[split]
        out = []
        for task in tasks or self.tasks:
            for difficulty in difficulties or self.difficulties:
                for e in range(episodes):
                    seed = seeds.start + seed_offset + e
                    if seed not in seeds:
                        raise ValueError(f"seed {seed} is outside the {split} split")
                    for r in range(repeats):
                        out.append(EpisodeSpec(task, difficulty, seed,
                                               self.reset_options(task, difficulty, seed), r))
        return out

    # -- prompting (one renderer for inference, training and evaluation) --
    @abstractmethod
    def system_prompt(self, obs: Any, *, tool_list: bool, compact: bool = False) -> str:
        ...

    def observation_payload(self, obs: Any) -> dict[str, Any]:
        """The observation JSON placed in the prompt's `<observation>` block."""
        return obs.model_dump(mode="json", exclude={"metadata"})

    def user_prompt(self, obs: Any, key: str, *, max_chars: int | None = None) -> str:
        payload = json.dumps(self.observation_payload(obs), separators=(",", ":"), default=str)
        return (f'<observation episode="{key}">{payload}</observation>\n'
                "Reply with your next tool call.")

    def messages(self, obs: Any, key: str, *, tool_list: bool = True, compact: bool = False,
                 max_chars: int | None = None, note: str | None = None) -> list[dict[str, str]]:
        """The whole prompt for one decision: built from this observation alone (its bounded
        context), never from earlier turns. `note` (e.g. why the last reply was rejected) goes
        before the observation block."""
        user = self.user_prompt(obs, key, max_chars=max_chars)
        if note:
            user = f"{note}\n{user}"
        return [{"role": "system",
                 "content": self.system_prompt(obs, tool_list=tool_list, compact=compact)},
                {"role": "user", "content": user}]

    # -- replies --
    def tool_schemas(self) -> list[dict[str, Any]]:
        """Tools in OpenAI function-calling format."""
        return [spec.openai_tool() for spec in self.tool_specs.values()]

    def validate_call(self, name: str, arguments: dict[str, Any]) -> str | None:
        """None if `name(**arguments)` is a well-formed call, else why not."""
        from pydantic import ValidationError

        spec = self.tool_specs.get(name)
        if spec is None:
            return f"unknown tool {name!r}; tools: {', '.join(self.tool_specs)}"
        try:
            spec.args_model.model_validate(arguments)
        except ValidationError as exc:
            return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}"
                             for e in exc.errors(include_url=False)[:4])
        return None

    @abstractmethod
    def make_action(self, name: str, arguments: dict[str, Any]) -> Any:
        ...

    @abstractmethod
    def action_call(self, action: Any) -> tuple[str, dict[str, Any]]:
        """Inverse of `make_action`: (tool name, arguments) of an action."""

    def action_text(self, action: Any) -> str:
        """The canonical text reply for `action` (supervised warm-start targets)."""
        name, arguments = self.action_call(action)
        return json.dumps({"tool": name, "arguments": arguments}, separators=(", ", ": "))

    def parse_call(self, name: str, arguments: dict[str, Any]) -> ParsedAction:
        error = self.validate_call(name, arguments)
        try:
            action = self.make_action(name, arguments)
        except Exception as exc:  # the wire model itself refused it
            return ParsedAction("invalid", None, name, arguments, error or str(exc))
        return ParsedAction("invalid" if error else "ok", action, name, arguments, error)

    def parse(self, text: str) -> ParsedAction:
        call = extract_call(text or "")
        if call is None:
            return ParsedAction("unparseable", error="no tool call found: reply with one JSON "
                                                     'object {"tool": ..., "arguments": {...}}')
        return self.parse_call(*call)

    def malformed_action(self) -> Any:
        """What a trainer sends for an unparseable reply: an action the environment rejects with
        its typed malformed-action error (so it costs a step and the invalid-action penalty)."""
        return self.make_action("", {})

    # -- truth, measurement, training signals --
    @abstractmethod
    def case_for(self, spec: EpisodeSpec) -> Any:
        ...

    @abstractmethod
    def truth_json(self, case: Any) -> Any:
        ...

    @abstractmethod
    def outcome(self, episode: Episode) -> str:
        ...

    @abstractmethod
    def metrics(self, episode: Episode) -> dict[str, float | None]:
        """Per-episode measurements; `None` where a measure is undefined for this episode (an
        aggregate is the mean over episodes where it is defined)."""

    def success(self, episode: Episode) -> bool:
        """The per-trial success that pass^k counts."""
        return bool(self.metrics(episode).get("decision_accuracy"))

    @abstractmethod
    def reward_components(self, episode: Episode) -> dict[str, float]:
        """Training signals in [0, 1] from a finished episode: "quality" and "os"."""

    @abstractmethod
    def timeout_return(self, case: Any) -> float:
        """Terminal reward the environment gives a timeout on `case` (used when a trainer caps
        an episode's turns below the environment's own budget)."""


# ---- Memex ------------------------------------------------------------------------------------

_SYSTEM = """\
You are an anti-money-laundering investigator at a bank. A transaction-monitoring alert fired. \
Investigate with tools, one call per turn, then end the case: file_sar (suspicious activity \
report) or close_alert. Tools return facts, never conclusions; the same rules fire for innocent \
customers.

Your memory is bounded, like a small computer:
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
file_sar or close_alert. RAM keeps the last {ram} results; write evidence IDs to the case file \
(write_to_case_file) to keep them. Wire traces are asynchronous. Load manual sections \
(update_system_prompt) before citing them. Budget: {budget} steps.
"""
_REPLY_TEXT = ("Reply with exactly one tool call as JSON, after any brief reasoning: "
               '{"tool": "<name>", "arguments": {...}}')
_REPLY_NATIVE = "Call exactly one tool per turn."


class MemexAdapter(EnvAdapter):
    """Adapter of the AML investigation environment (this package)."""

    name = "memex"

    def __init__(self) -> None:
        from memex import baselines
        from memex.client import MemexEnv, MemexToolEnv
        from memex.scenarios import DIFFICULTIES, KINDS, SPLITS
        from memex.server.environment import MemexEnvironment
        from memex.server.tools import TOOLS

        self.tasks = tuple(KINDS)
        self.difficulties = tuple(DIFFICULTIES)
        self.splits = SPLITS
        self.env_cls = MemexEnvironment
        self.client_cls = MemexEnv
        self.server_module = "memex.openenv_server"
        self.tool_env_cls = MemexToolEnv
        self.policies = baselines.POLICIES
        self.eval_policies = ("heuristic", "oracle", "random", "always_sar", "always_close")
        self.demonstrator = "heuristic"
        self.success_label = "decision accuracy"
        self.summary_metrics = (
            ("decision_accuracy", "decision acc"), ("sar_precision", "SAR P"),
            ("sar_recall", "SAR R"), ("subject_f1", "subject F1"),
            ("findings_precision", "findings P"), ("findings_recall", "findings R"),
            ("typology_accuracy", "typology acc"), ("return", "mean return"),
            ("page_faults", "page faults"), ("async_timeouts", "async timeouts"),
            ("kernel_loads", "kernel loads"), ("steps", "steps"))
        self.metrics_note = (
            "SAR precision and findings precision are over filed SARs; SAR recall, subject F1, "
            "findings recall and typology accuracy over suspicious cases (the alert rule hints "
            "at the typology family, so a blind SAR names it correctly). Kernel loads: "
            "distinct manual sections loaded.")
        self.tool_specs = TOOLS

    def reset_options(self, task: str, difficulty: str, seed: int | None) -> dict[str, Any]:
        if task == "1mdb":
            return {"case": "1mdb"}
        return {"seed": seed, "difficulty": difficulty, "kind": task}

    # -- prompting --
    def system_prompt(self, obs: Any, *, tool_list: bool, compact: bool = False) -> str:
        from memex.server.tools import prompt_tool_list

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

    # -- replies --
    def make_action(self, name: str, arguments: dict[str, Any]) -> Any:
        from memex.models import MemexAction

        return MemexAction(tool=name, arguments=arguments)

    def action_call(self, action: Any) -> tuple[str, dict[str, Any]]:
        return action.tool, dict(action.arguments)

    # -- truth and measurement --
    def case_for(self, spec: EpisodeSpec) -> Any:
        from memex.scenarios import generate
        from memex.scenarios.onemdb import CASE_NAME, build_case

        if spec.reset.get("case") == CASE_NAME:
            return build_case()
        if spec.reset.get("seed") is None:
            return None
        r = spec.reset
        kwargs = {k: r[k] for k in ("variant", "benign_share") if r.get(k) is not None}
        return generate(int(r["seed"]), r.get("difficulty", "medium"), r.get("kind"), **kwargs)

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
        """`quality`: coverage of the evidence that matters for this case — share of true red
        flags with an evidence record revealed, and with one kept on disk; share of true
        subjects revealed; share of the justifying manual sections ever loaded (the only part
        for benign cases). Repeating tools adds nothing, so it cannot be farmed by tool count.
        `os`: for episodes that reached a decision, the mean of fault-free use of IDs (1 - page
        faults per ID-using call), wire traces collected (retrieved / requested + early polls)
        and citations loaded in the kernel (cited and loaded / cited); undefined parts are
        skipped. Both in [0, 1]."""
        from memex.server.tools import ID_PATTERN

        truth = episode.case.truth
        obs = episode.observations
        seen = {i for o in obs for p in o.context.ram for i in p.ids}
        disk = {i for n in episode.final.context.disk for i in n.ids} if obs else set()
        seen |= disk
        loaded = {s.section_id for o in obs for s in o.context.kernel}
        parts = []
        if truth.suspicious:
            flags = truth.red_flags
            parts.append(sum(any(e in seen for e in f.evidence_ids) for f in flags) / len(flags))
            parts.append(sum(any(e in disk for e in f.evidence_ids) for f in flags) / len(flags))
            parts.append(sum(s in seen for s in truth.subject_ids) / len(truth.subject_ids))
        parts.append(sum(s in loaded for s in truth.justifying_sections)
                     / len(truth.justifying_sections))
        quality = sum(parts) / len(parts)

        os_parts = []
        if episode.done and episode.actions and episode.actions[-1].tool in (
                "file_sar", "close_alert"):
            faults = sum(e.startswith("page fault") for o in obs for e in o.events)
            id_calls = sum(bool(ID_PATTERN.search(json.dumps(a.arguments)))
                           for a in episode.actions)
            if id_calls:
                os_parts.append(max(0.0, 1.0 - faults / id_calls))
            requested = sum(o.tool == "request_wire_trace" and o.error is None for o in obs[1:])
            collected = sum(o.tool == "retrieve_async_result" and o.error is None
                            for o in obs[1:])
            early = sum(e.startswith("async timeout") for o in obs for e in o.events)
            if requested:
                os_parts.append(min(1.0, collected / (requested + early)))
            cited = set(episode.actions[-1].arguments.get("cited_sections") or ())
            if cited:
                kernel = {s.section_id for s in episode.final.context.kernel}
                os_parts.append(len(cited & kernel) / len(cited))
        os_score = sum(os_parts) / len(os_parts) if os_parts else 0.0
        return {"quality": round(quality, 6), "os": round(os_score, 6)}

    def timeout_return(self, case: Any) -> float:
        from memex.graders.terminal import timeout_score

        return timeout_score(case.truth).total

