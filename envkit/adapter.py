"""Environments as a parameter: the one object the trainer, the evaluation harness, the inference
agent and the demo need to know about an OpenEnv environment.

`train_grpo.py`, `inference.py`, `evaluation.harness` and `evaluation.demo` take `--env NAME`;
`memex.registry.get_adapter(NAME)` returns the `EnvAdapter` registered under that name. This
module names no environment: an adapter names its own environment class by import path
(`env_cls`, resolved by `envkit.targets` on first use), so importing an adapter for its prompts
loads no environment.

An adapter says, in one place per concept:

- identity and grid: `name`, `tasks` (kinds or task names), `difficulties`, `splits` (seeds),
  `task_variable` (an environment variable naming a default task, if the environment has one);
- running: `env_cls` (in process: the class, or its import path "package.module:Class"),
  `client_cls` (WebSocket), `open(base_url)` -> `Session`,
  `server_module` (`python -m <it> --port N` serves the environment);
- baselines: `policies` (name -> factory; an `envkit.targets.Targets` names them by import
  path), `eval_policies`, `demonstrator`, `make_policy`;
- the episode grid: `grid(split, ...)` -> `EpisodeSpec`s (task label, difficulty, seed, the
  reset options);
- hidden truth: `case_for(spec)` regenerates the world client-side (for oracles, metrics and
  trace footers), `truth_json(case)`;
- measuring: `metrics(episode)` -> per-episode numbers (`None` where undefined),
  `score(episode)` (the metric named by `score_metric`: the episode's score),
  `outcome(episode)` (`episode_outcome` adds "error": the policy's endpoint failed),
  `success(episode)` (what pass^k counts), and for reports
  `summary_metrics` (measure, label) columns, `metrics_note`, `success_label`;
- LLM prompts: `messages(obs, key)` — the one observation -> prompt renderer — and
  `tool_schemas()`, which like `validate_call` comes from `tool_specs` (name -> the declared
  `ToolSpec`s of `envkit.declarations`); constrained decoding: `closed_sets(obs)` (the IDs and
  values a call may name in that state), from which `state_grammar(obs)` derives the
  call's schema and grammar (`envkit.grammar`); LLM replies: `parse(text)` /
  `parse_call(name, args)` -> `ParsedAction` (strict: a call names a declared tool),
  `action_call(action)`, `action_text(action)`;
- training: `reward_components(episode)` ("quality", "os"), `timeout_return(case)`;
  `gym_spec` (optional): the `envkit.gym.GymSpec` of the environment's Gymnasium face.

A policy is any object with `name`, `needs_case`, `reset(obs, case=None)` and
`act(obs) -> Action` (see `envkit.policy.Policy`); `EnvAdapter.play` runs one over a
`Session` (`envkit.episodes.play`, with the hidden case regenerated when needed) and returns an
`Episode` record that every consumer measures, logs and traces (`EnvAdapter.trace`) the same
way.

Implementing another environment: subclass `EnvAdapter`, set the attributes above, implement
the methods the base class leaves open (`case_for`, `truth_json`, `metrics`, `outcome`,
`system_prompt`, `make_action`, `action_call`,
`reward_components`, `timeout_return`), expose an instance and register it
(`memex.registry.register(name, "module:attr")`).
The generic parts — sessions, the seeded grid, JSON tool-call parsing (`envkit.replies`), the
observation block, traces — come from the base class. The last user message of every prompt carries
`<observation episode="KEY">{observation JSON}</observation>` (the convention the test-double
LLM server and AgentOS read); KEY is stable for one episode.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from pydantic import ValidationError

from memex.envkit.declarations import MAX_ARG_CHARS, ToolSpec
from memex.envkit.episodes import (
    Episode,
    EpisodeSpec,
    LocalSession,
    RemoteSession,
    Session,
    play,
)
from memex.envkit.errors import validation_message
from memex.envkit.grammar import StateGrammar
from memex.envkit.replies import ParsedAction, read_call
from memex.envkit.targets import resolve
from memex.envkit.traces import Trace

# ---- calls ------------------------------------------------------------------------------------

# pydantic's error types for a broken `maxLength` (strings) and `maxItems` (lists, dicts).
BOUND_ERRORS = frozenset({"string_too_long", "too_long"})


def _validation_error(spec: ToolSpec, arguments: dict[str, Any]) -> ValidationError | None:
    try:
        spec.args_model.model_validate(arguments)
    except ValidationError as exc:
        return exc
    return None


def oversized(error: ValidationError, arguments: dict[str, Any]) -> bool:
    """Whether an invalid call is too big to send: it breaks one of its tool's declared bounds
    (`maxLength` / `maxItems`), or its arguments' JSON is longer than any one argument may be
    (`MAX_ARG_CHARS`: a payload in an undeclared or mistyped argument). The server would refuse
    the frame or spend the step echoing it; the step is spent on the malformed action instead."""
    if any(e["type"] in BOUND_ERRORS for e in error.errors(include_url=False,
                                                           include_input=False)):
        return True
    try:
        return len(json.dumps(arguments, default=str)) > MAX_ARG_CHARS
    except (RecursionError, ValueError):  # nested past what JSON encodes: no argument is
        return True


# ---- the adapter ------------------------------------------------------------------------------

class EnvAdapter(ABC):
    """Base class of environment adapters; see the module docstring for the contract."""

    name: str
    tasks: tuple[str, ...]
    difficulties: tuple[str, ...]
    splits: Mapping[str, range]
    env_cls: type | str  # the environment class, or its import path "package.module:Class"
    client_cls: type
    server_module: str
    tool_specs: Mapping[str, ToolSpec]  # name -> the tool's declaration
    policies: Mapping[str, Callable[..., Any]]
    eval_policies: tuple[str, ...]
    demonstrator: str
    summary_metrics: tuple[tuple[str, str], ...] = ()  # report columns; () -> generic ones
    score_metric: str = "score"  # the metric that is the episode's score
    task_variable: str | None = None  # environment variable naming the default task
    metrics_note: str = ""
    success_label: str = "success"
    # The Gymnasium face's spec (`envkit.gym.GymSpec`, or its import path), if the environment
    # has one.
    gym_spec: Any = None

    # -- running --
    def open(self, base_url: str | None = None) -> Session:
        """A session on a new in-process environment, or a WebSocket session on `base_url`."""
        if base_url:
            return RemoteSession(self.client_cls, base_url)
        return LocalSession(self.environment_class()())

    def environment_class(self) -> type:
        """The in-process environment class (`env_cls`, imported on first use when a path)."""
        return resolve(self.env_cls) if isinstance(self.env_cls, str) else self.env_cls

    def play(self, session: Session, policy: Any, spec: EpisodeSpec, *, case: Any = None,
             max_steps: int | None = None,
             on_step: Callable[[Episode], None] | None = None) -> Episode:
        """`envkit.episodes.play`, with the hidden case regenerated from `spec` when the policy
        needs it or the spec names one (for metrics and trace footers)."""
        if case is None and (policy.needs_case or spec.seed is not None or "case" in spec.reset):
            case = self.case_for(spec)
        return play(session, policy, spec, case=case, max_steps=max_steps, on_step=on_step)

    def trace(self, episode: Episode) -> Trace:
        """The `memex-trace/1` record of `episode` (truth in the footer when known)."""
        trace = Trace.start(env=self.name, policy=episode.policy, seed=episode.spec.seed,
                            difficulty=episode.spec.difficulty,
                            case=episode.spec.reset.get("case"), reset=dict(episode.spec.reset))
        trace.add(episode.observations[0])
        replies = episode.replies or [None] * len(episode.actions)
        insights = episode.insights or [None] * len(episode.actions)
        for obs, action, reply, insight in zip(episode.observations[1:], episode.actions,
                                               replies, insights, strict=True):
            trace.add(obs, action, reply, insight)
        if episode.done or episode.error:
            terminal = (episode.final.metadata or {}).get("terminal", {})
            trace.finish(episode_return=episode.episode_return,
                         outcome=self.episode_outcome(episode), terminal=terminal,
                         truth=self.truth_json(episode.case)
                         if episode.case is not None else None, error=episode.error)
        return trace

    def episode_outcome(self, episode: Episode) -> str:
        """"error" for an episode its policy could not finish (`Episode.error`), else
        `outcome(episode)`."""
        return "error" if episode.error and not episode.done else self.outcome(episode)

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

    def closed_sets(self, obs: Any) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """The closed sets of a state, for constrained decoding (`envkit.grammar`): record type
        -> the IDs the agent can see (they close `Ref` parameters), and field name -> allowed
        values. The base class closes nothing beyond the declarations."""
        return {}, {}

    def state_grammar(self, obs: Any) -> StateGrammar:
        """The grammar of a valid reply in the state `obs` (`envkit.grammar`): the JSON schema
        an OpenAI-compatible endpoint takes as `response_format`, or the llguidance grammar a
        local model decodes under."""
        return StateGrammar(self.tool_specs, *self.closed_sets(obs))

    def validate_call(self, name: str, arguments: dict[str, Any]) -> str | None:
        """None if `name(**arguments)` is a well-formed call, else why not."""
        spec = self.tool_specs.get(name)
        if spec is None:
            return f"unknown tool {name!r}; tools: {', '.join(self.tool_specs)}"
        exc = _validation_error(spec, arguments)
        return None if exc is None else validation_message(exc, limit=4)

    @abstractmethod
    def make_action(self, name: str, arguments: dict[str, Any]) -> Any:
        ...

    @abstractmethod
    def action_call(self, action: Any) -> tuple[str, dict[str, Any]]:
        """Inverse of `make_action`: (tool name, arguments) of an action."""

    def trace_action(self, data: Mapping[str, Any]) -> Any:
        """The action a trace's step line records (`Trace.add`): `{tool, arguments}`; an
        environment whose actions are kept whole there reads them back itself."""
        return self.make_action(data["tool"], dict(data.get("arguments") or {}))

    def action_text(self, action: Any) -> str:
        """The canonical text reply for `action` (supervised warm-start targets)."""
        name, arguments = self.action_call(action)
        return json.dumps({"tool": name, "arguments": arguments}, separators=(", ", ": "))

    def parse_call(self, name: str, arguments: dict[str, Any]) -> ParsedAction:
        """A native tool call read strictly: an undeclared tool is no call at all. An invalid
        call is still made into an action (the environment answers it with its typed error),
        unless it is oversized (`oversized`): then it has no action, and never leaves the
        client."""
        spec = self.tool_specs.get(name)
        if spec is None:
            return ParsedAction("unparseable", name=name, arguments=arguments,
                                error=f"{str(name)[:40]!r} is not a declared tool")
        exc = _validation_error(spec, arguments)
        error = None if exc is None else validation_message(exc, limit=4)
        if exc is not None and oversized(exc, arguments):
            return ParsedAction("invalid", None, name, arguments, error)
        try:
            action = self.make_action(name, arguments)
        except Exception as exc:  # the wire model itself refused it
            return ParsedAction("invalid", None, name, arguments, error or str(exc))
        return ParsedAction("invalid" if error else "ok", action, name, arguments, error)

    def parse(self, text: str) -> ParsedAction:
        """A text reply read by `envkit.replies.read_call` against the declared tools."""
        found = read_call(text or "", self.tool_specs)
        if found.call is None:
            return ParsedAction("unparseable", error=f"{found.reason}; reply with one JSON "
                                                     'object {"tool": ..., "arguments": {...}}')
        return self.parse_call(*found.call)

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

    def score(self, episode: Episode) -> float | None:
        """The episode's score (`score_metric` of `metrics`), None while it has none."""
        return self.metrics(episode).get(self.score_metric)

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
