"""AgentOS: many Memex investigations at once, one LLM batch and one environment batch per round.

Each round, for every active episode, the orchestrator builds a prompt from that episode's
memory (`MemoryManager`: L2 scratchpad, L1 turns, L3 recalled facts, the newest observation),
sends all prompts to an OpenAI-compatible endpoint concurrently (a vLLM server batches them),
parses one tool call per reply (retrying malformed replies), and steps every environment in one
batch through the Rust runtime. Finished episodes free their session for the next queued one.

The system prompt is the AML adapter's (`memex.adapter.MemexAdapter.system_prompt`, the one the
inference agent and the trainer use). Tool calls, in the tool modes of the inference agent
(`envkit.llm_options.ToolMode`): with `tool_mode="native"` the request carries the 19 tools as
OpenAI function specs (`MemexAdapter.tool_schemas`) and `tool_choice="required"`, which vLLM
enforces with JSON-constrained decoding; with `tool_mode="text"` it asks for
`{"tool": ..., "arguments": {...}}` text under a JSON-schema `response_format`. Each episode is
a case of the one reset contract, `scenarios.CaseSpec`.

    from memex.agent_os_core.agent_os import AgentOS, LLMConfig
    from memex.scenarios import CaseSpec

    aos = AgentOS(["http://127.0.0.1:8000"], LLMConfig("http://127.0.0.1:8011/v1", "my-model"),
                  concurrency=16)
    outcomes = aos.run([CaseSpec(seed=s, difficulty="hard") for s in range(64)])

`LLMConfig.from_options` builds the config from the shared LLM options (`envkit.llm_options`,
the flags and environment variables of the inference agent and the harness), after
`prepare_endpoint` has checked the endpoint and resolved the tool mode.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from tqdm import tqdm

from memex.adapter import ADAPTER
from memex.agent_os_core.l3_index import L3Index
from memex.agent_os_core.memory_manager import (
    DEFAULT_L1_TOKENS,
    DEFAULT_L2_TOKENS,
    DEFAULT_L3_FACTS,
    Compactor,
    ExtractiveCompactor,
    LLMCompactor,
    MemoryManager,
    TokenCounter,
)
from memex.agent_os_core.runtime import EnvBatch, StepResult
from memex.envkit.llm_options import LLMOptions, ToolMode
from memex.envkit.replies import Reply, read_completion, read_message, reply_call
from memex.models import TOOL_NAMES, MemexObservation
from memex.scenarios import CaseSpec

log = logging.getLogger(__name__)

ACTION_SCHEMA = {
    "type": "object",
    "properties": {"tool": {"type": "string", "enum": list(TOOL_NAMES)},
                   "arguments": {"type": "object"}},
    "required": ["tool", "arguments"],
    "additionalProperties": False,
}


@dataclass(frozen=True)
class LLMConfig:
    """An OpenAI-compatible chat-completions endpoint (`base_url` ends in `/v1`)."""

    base_url: str
    model: str
    api_key: str | None = None
    tool_mode: ToolMode = "native"
    temperature: float = 0.0
    max_tokens: int = 512
    timeout_s: float = 120.0
    max_retries: int = 3
    max_concurrency: int = 64

    @classmethod
    def from_options(cls, opts: LLMOptions, **overrides: Any) -> LLMConfig:
        """The config for the shared LLM options (`envkit.llm_options`, the flags of the
        inference agent and the harness; "auto": resolve its tool mode first with
        `prepare_endpoint`)."""
        opts.require()
        if opts.tool_mode == "auto":
            raise ValueError("resolve tool_mode 'auto' with envkit.llm_options.prepare_endpoint")
        return cls(opts.base_url, opts.model, opts.api_key,
                   opts.tool_mode, opts.temperature,
                   opts.max_tokens, opts.timeout_s, opts.max_retries, **overrides)


@dataclass(frozen=True)
class MemoryConfig:
    l1_tokens: int = DEFAULT_L1_TOKENS
    l2_tokens: int = DEFAULT_L2_TOKENS
    l3_facts: int = DEFAULT_L3_FACTS
    tokenizer: str | None = None
    use_l3: bool = True
    compactor_llm: LLMConfig | None = None  # None: the deterministic extractive compactor


@dataclass
class EpisodeOutcome:
    spec: CaseSpec
    key: str
    steps: int = 0
    episode_return: float = 0.0
    done: bool = False
    outcome: str | None = None          # TP / TN / FP / FN / timeout, or "llm_error"
    terminal: dict[str, Any] = field(default_factory=dict)
    llm_calls: int = 0
    llm_retries: int = 0
    error: str | None = None
    actions: list[dict[str, Any]] = field(default_factory=list)
    max_prompt_tokens: int = 0
    memory: dict[str, int] = field(default_factory=dict)


class MalformedReply(ValueError):
    pass


def parse_tool_call(message: Any) -> dict[str, Any]:
    """One action from a chat-completions message (any JSON value): a native tool call, else the
    tool call written in the text (`envkit.replies.read_message`, then `reply_action`)."""
    return reply_action(read_message(message))


def reply_action(reply: Reply) -> dict[str, Any]:
    """The action a reply calls for (`envkit.replies.reply_call`, the project's one reply
    parser); `MalformedReply` if it calls none, an undeclared tool, or is oversized (over a
    declared bound: `EnvAdapter.parse_call`), so the environment server never receives it."""
    found = reply_call(reply, TOOL_NAMES)
    if found.call is None:
        raise MalformedReply(found.reason or "no tool call found in the reply")
    name, arguments = found.call
    if name not in TOOL_NAMES:
        raise MalformedReply(f"unknown tool {name[:40]!r}")
    parsed = ADAPTER.parse_call(name, arguments)
    if parsed.action is None:  # oversized: it is never sent
        raise MalformedReply(f"oversized call to {name}: {parsed.error}")
    return {"tool": name, "arguments": arguments}


class LLMClient:
    """Concurrent chat completions with retries on malformed replies."""

    def __init__(self, cfg: LLMConfig):
        self.cfg = cfg
        self.tools = ADAPTER.tool_schemas()

    def request_body(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        body: dict[str, Any] = {"model": self.cfg.model, "messages": messages,
                                "temperature": self.cfg.temperature,
                                "max_tokens": self.cfg.max_tokens}
        if self.cfg.tool_mode == "native":
            body["tools"] = self.tools
            body["tool_choice"] = "required"
        else:
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "memex_action", "schema": ACTION_SCHEMA}}
        return body

    async def _one(self, client: httpx.AsyncClient, sem: asyncio.Semaphore,
                   messages: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, int, str | None]:
        """(action or None, retries used, last error)."""
        error = None
        for attempt in range(self.cfg.max_retries + 1):
            msgs = messages
            if error is not None:
                # The observation block must stay in the last user message (the protocol the
                # test double and the prompt share), so the correction goes before it.
                last = dict(msgs[-1])
                last["content"] = (f"Your previous reply was not a valid tool call ({error}). "
                                   "Reply with exactly one tool call.\n\n" + last["content"])
                msgs = [*msgs[:-1], last]
            try:
                async with sem:
                    r = await client.post(f"{self.cfg.base_url.rstrip('/')}/chat/completions",
                                          json=self.request_body(msgs))
                r.raise_for_status()
                # Any body is an outcome: one that is no chat completion raises NotACompletion
                # (a ValueError: retried below), any message in it is a call or MalformedReply.
                return reply_action(read_completion(r.content)), attempt, None
            except MalformedReply as exc:
                error = str(exc)
            except (httpx.HTTPError, KeyError, IndexError, ValueError) as exc:
                error = f"{type(exc).__name__}: {exc}"
                await asyncio.sleep(min(2.0, 0.2 * 2 ** attempt))
        return None, self.cfg.max_retries, error

    async def choose_all(self, prompts: Sequence[list[dict[str, Any]]]
                         ) -> list[tuple[dict[str, Any] | None, int, str | None]]:
        headers = {"Authorization": f"Bearer {self.cfg.api_key}"} if self.cfg.api_key else {}
        sem = asyncio.Semaphore(self.cfg.max_concurrency)
        limits = httpx.Limits(max_connections=self.cfg.max_concurrency)
        async with httpx.AsyncClient(timeout=self.cfg.timeout_s, headers=headers,
                                     limits=limits) as client:
            return list(await asyncio.gather(*(self._one(client, sem, p) for p in prompts)))


@dataclass
class _Active:
    slot: int
    outcome: EpisodeOutcome
    memory: MemoryManager
    last: StepResult
    started: float = field(default_factory=time.monotonic)


class AgentOS:
    """Runs investigations concurrently: `concurrency` sessions over the `env_urls` replicas,
    one shared L3 archive, one memory manager per episode."""

    def __init__(self, env_urls: str | Sequence[str], llm: LLMConfig, concurrency: int = 16,
                 memory: MemoryConfig | None = None, l3: L3Index | None = None,
                 env_timeout_s: float = 60.0):
        self.env_urls = [u.strip() for u in env_urls.split(",") if u.strip()] \
            if isinstance(env_urls, str) else list(env_urls)  # a comma list names replicas
        self.llm_cfg = llm
        self.llm = LLMClient(llm)
        self.concurrency = concurrency
        self.memory_cfg = memory or MemoryConfig()
        self.counter = TokenCounter(self.memory_cfg.tokenizer)
        self._own_l3 = l3 is None and self.memory_cfg.use_l3
        self.l3 = l3 if l3 is not None else (L3Index() if self.memory_cfg.use_l3 else None)
        self.env_timeout_s = env_timeout_s
        self.rounds = 0

    def _compactor(self) -> Compactor:
        c = self.memory_cfg.compactor_llm
        if c is None:
            return ExtractiveCompactor()
        return LLMCompactor(c.base_url, c.model, c.api_key, c.timeout_s)

    def _system(self, observation: dict[str, Any]) -> str:
        """The AML adapter's system prompt (the one the inference agent uses), with the tool
        list when replies are JSON text."""
        return ADAPTER.system_prompt(MemexObservation.model_validate(observation),
                                     tool_list=self.llm_cfg.tool_mode == "text")

    def _start(self, slot: int, spec: CaseSpec, index: int, reply: StepResult) -> _Active:
        key = f"ep{index}-s{spec.seed}"
        mem = MemoryManager(key, self.counter, self.l3, self._compactor(),
                            self.memory_cfg.l1_tokens, self.memory_cfg.l2_tokens,
                            self.memory_cfg.l3_facts, defer_archive=True)
        mem.observe(None, json.loads(reply.observation_json))
        return _Active(slot, EpisodeOutcome(spec, key), mem, reply)

    def _archive(self, active: Sequence[_Active]) -> None:
        if self.l3 is None:
            return
        chunks = [c for a in active for c in a.memory.take_pending_chunks()]
        if chunks:
            self.l3.add(chunks)  # one embedding batch for every episode's evictions

    def _query_vectors(self, active: dict[int, _Active],
                       observations: dict[int, dict[str, Any]]) -> dict[int, Any]:
        """Every episode's L3 query embedded in one batch."""
        if self.l3 is None:
            return {}
        slots = [s for s in observations if active[s].memory.stats.archived_chunks]
        queries = [active[s].memory.query_for(observations[s]) for s in slots]
        vectors = self.l3.embedder.encode(queries, query=True) if queries else []
        return dict(zip(slots, vectors, strict=True))

    def run(self, specs: Sequence[CaseSpec], progress: bool = True) -> list[EpisodeOutcome]:
        """Play every spec to its end; outcomes in the order of `specs`."""
        if not specs:
            return []
        queue = deque(enumerate(specs))
        outcomes: list[EpisodeOutcome | None] = [None] * len(specs)
        n = min(self.concurrency, len(specs))
        bar = tqdm(total=len(specs), desc="episodes", disable=not progress, leave=False)
        with EnvBatch(self.env_urls, sessions=n, timeout_s=self.env_timeout_s) as batch:
            active: dict[int, _Active] = {}
            order: dict[int, int] = {}

            def refill(free: list[int]) -> None:
                starts = []
                while free and queue:
                    starts.append((free.pop(0), *queue.popleft()))
                if not starts:
                    return
                replies = batch.reset([s.options() for _, _, s in starts],
                                      which=[slot for slot, _, _ in starts])
                for (slot, index, spec), reply in zip(starts, replies, strict=True):
                    active[slot] = self._start(slot, spec, index, reply)
                    order[slot] = index

            refill(list(range(n)))
            while active:
                self.rounds += 1
                self._archive(list(active.values()))
                slots = sorted(active)
                observations = {s: json.loads(active[s].last.observation_json) for s in slots}
                vectors = self._query_vectors(active, observations)
                prompts = []
                for slot in slots:
                    a = active[slot]
                    obs = observations[slot]
                    msgs = a.memory.messages(self._system(obs), a.last.observation_json, obs,
                                             query_vector=vectors.get(slot))
                    a.outcome.max_prompt_tokens = max(a.outcome.max_prompt_tokens, sum(
                        self.counter.count(m["content"]) for m in msgs))
                    prompts.append(msgs)
                choices = asyncio.run(self.llm.choose_all(prompts))
                stepping, actions, freed = [], [], []
                for slot, (action, retries, error) in zip(slots, choices, strict=True):
                    a = active[slot]
                    a.outcome.llm_calls += 1 + retries
                    a.outcome.llm_retries += retries
                    if action is None:
                        a.outcome.outcome, a.outcome.error = "llm_error", error
                        freed.append(slot)
                        continue
                    stepping.append(slot)
                    actions.append(action)
                if stepping:
                    replies = batch.step(actions, which=stepping)
                    for slot, action, reply in zip(stepping, actions, replies, strict=True):
                        a = active[slot]
                        a.last = reply
                        a.outcome.actions.append(action)
                        a.outcome.steps += 1
                        a.outcome.episode_return += reply.reward or 0.0
                        a.memory.observe(action, json.loads(reply.observation_json))
                        if reply.done:
                            terminal = reply.metadata.get("terminal", {})
                            a.outcome.done = True
                            a.outcome.terminal = terminal
                            a.outcome.outcome = terminal.get("outcome")
                            freed.append(slot)
                for slot in freed:
                    a = active.pop(slot)
                    a.outcome.episode_return = round(a.outcome.episode_return, 6)
                    a.outcome.memory = dict(a.memory.stats.__dict__)
                    a.memory.take_pending_chunks()
                    outcomes[order.pop(slot)] = a.outcome
                    bar.update(1)
                refill(sorted(freed))
        bar.close()
        return [o for o in outcomes if o is not None]

    def close(self) -> None:
        if self._own_l3 and self.l3 is not None:
            self.l3.close()
