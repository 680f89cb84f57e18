"""The one set of LLM-endpoint options: `inference.py`, the harness's `llm:` policies, the demo
and AgentOS read the same flags and environment variables into one `LLMOptions`.

No silent defaults for where requests go: without an explicit base URL and model nothing starts
(`EndpointError`), and `prepare_endpoint` checks `GET /models` before the first episode (a
wrong URL, a server pinned to another model or a missing key fails in one line, not after the
first episode). It also chooses the tool mode honestly: a chat template that drops `tools=`
(SmolLM2's does) renders the same prompt with and without them, so `auto` and `native` compare
the prompt token counts the server reports for one tiny request with and without a tool and
fall back to text mode (the tool list in the system prompt) with a warning.

Endpoint failures are episode outcomes, not crashes: `EndpointError` is a `PolicyFailure`,
which `envkit.episodes.play` turns into an episode with outcome "error". `describe_error` turns
an `openai`/`httpx` exception into the one line a user sees (the server's own message included,
e.g. "Server is pinned to ...").

`OPTIONS` below is the table docs/inference.md shows (`options_markdown()`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

import httpx

from memex.envkit.errors import PolicyFailure
from memex.envkit.tokens import TokenCounter

# How a model is asked for a tool call: "native" sends the tools as function specs (the server
# enforces the call), "text" lists them in the prompt and reads a JSON call out of the reply.
ToolMode = Literal["native", "text"]
TOOL_MODES: tuple[str, ...] = ("auto", *get_args(ToolMode))  # "auto": resolved per endpoint
KEY_VARIABLES = ("API_KEY", "OPENAI_API_KEY", "HF_TOKEN")
# A server may load its model on the first request (`transformers serve` does), so the
# tool-mode probe, often that first request, waits at least this long.
PROBE_TIMEOUT_S = 120.0
CHECK_TIMEOUT_S = 30.0  # GET /models at most waits this long


class EndpointError(PolicyFailure):
    """The model endpoint could not answer (after retries), or is not configured; the message
    is one line meant for the user. `requests` is how many HTTP requests were sent for it."""

    def __init__(self, message: str, requests: int = 0):
        super().__init__(message)
        self.requests = requests


@dataclass(frozen=True)
class LLMOptions:
    """Where LLM requests go and how they are bounded (see `OPTIONS` for flags and variables)."""

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    timeout_s: float = 60.0
    max_retries: int = 2
    max_tokens: int = 256
    temperature: float = 0.0
    max_steps: int | None = None
    tool_mode: str = "auto"
    prompt_tokens: int | None = None
    tokenizer: str | None = None
    reply_retries: int = 3
    run_token: bool = False
    constrained: bool = False

    def replace(self, **changes: Any) -> LLMOptions:
        return dataclasses.replace(self, **changes)

    def require(self) -> None:
        """Raise `EndpointError` unless a base URL and a model were given explicitly."""
        missing = [f for f, v in (("--api-base-url / API_BASE_URL", self.base_url),
                                  ("--model / MODEL_NAME", self.model)) if not v]
        if missing:
            raise EndpointError("no LLM endpoint configured: set " + " and ".join(missing) +
                                " (nothing defaults to a public API)")

    @property
    def key(self) -> str:
        return self.api_key or "EMPTY"  # local servers ignore it; the client needs a string


@dataclass(frozen=True)
class Option:
    flag: str
    field: str
    env: str | None
    type: Callable[[str], Any]
    help: str


OPTIONS: tuple[Option, ...] = (
    Option("--api-base-url", "base_url", "API_BASE_URL", str,
           "OpenAI-compatible base URL ending in /v1 (required)"),
    Option("--model", "model", "MODEL_NAME", str, "model id the server serves (required)"),
    Option("--api-key", "api_key", "API_KEY", str,
           "bearer key (also read from OPENAI_API_KEY, HF_TOKEN); local servers need none"),
    Option("--timeout", "timeout_s", "LLM_TIMEOUT_S", float,
           "seconds per request; a timed-out request is not retried"),
    Option("--max-retries", "max_retries", "LLM_MAX_RETRIES", int,
           "retries (with backoff) of a request that failed to connect or got 408/429/5xx; "
           "not of a 500 to a native tool call at temperature 0 (it would fail the same way)"),
    Option("--max-tokens", "max_tokens", "LLM_MAX_TOKENS", int, "tokens per reply"),
    Option("--temperature", "temperature", "LLM_TEMPERATURE", float, "sampling temperature"),
    Option("--max-steps", "max_steps", "LLM_MAX_STEPS", int,
           "steps per episode (default: the environment's budget)"),
    Option("--tool-mode", "tool_mode", "LLM_TOOL_MODE", str,
           "auto, native or text; auto and native fall back to text when the server's chat "
           "template drops tools"),
    Option("--prompt-tokens", "prompt_tokens", "LLM_PROMPT_TOKENS", int,
           "prompt budget in tokens (context minus --max-tokens); oldest RAM page contents "
           "are elided first, then the text tool list shortened; a prompt still over it goes "
           "out with a warning"),
    Option("--tokenizer", "tokenizer", "LLM_TOKENIZER", str,
           "local tokenizer dir for counting prompt tokens (default tiktoken cl100k)"),
    Option("--reply-retries", "reply_retries", "LLM_REPLY_RETRIES", int,
           "re-asks after a reply with no valid call, before the step is spent on it"),
)


def _env_default(opt: Option) -> Any:
    names = (opt.env, *KEY_VARIABLES[1:]) if opt.field == "api_key" else (opt.env,)
    for name in names:
        if name and os.environ.get(name):
            return opt.type(os.environ[name])
    return None


def add_llm_arguments(parser: argparse.ArgumentParser, *, model: bool = True) -> None:
    """Register the LLM flags (defaults from the environment variables, then `LLMOptions`).
    `model=False` leaves out `--model` (the harness names models in `llm:MODEL`)."""
    group = parser.add_argument_group("LLM endpoint")
    defaults = LLMOptions()
    for opt in OPTIONS:
        if opt.field == "model" and not model:
            continue
        value = _env_default(opt)
        kwargs: dict[str, Any] = {"dest": f"llm_{opt.field}", "type": opt.type,
                                  "default": getattr(defaults, opt.field) if value is None
                                  else value,
                                  "help": f"{opt.help} [env {opt.env}]"}
        if opt.field == "tool_mode":
            kwargs["choices"] = TOOL_MODES
        group.add_argument(opt.flag, **kwargs)
    group.add_argument("--run-token", dest="llm_run_token", action="store_true",
                       help="add a per-run random token to episode keys in prompts "
                            "(off: prompts are identical run to run)")
    group.add_argument("--constrained", dest="llm_constrained", action="store_true",
                       help="constrained decoding (text tool mode): every reply is a valid call "
                            "in the state, by the state's grammar (envkit.grammar); a local "
                            "model decodes under it, an endpoint gets it as a guided-JSON "
                            "response_format (vLLM and compatible servers enforce it)")


def options_from_args(args: argparse.Namespace, **overrides: Any) -> LLMOptions:
    """The `LLMOptions` the flags of `add_llm_arguments` parsed into."""
    values = {f.name: getattr(args, f"llm_{f.name}") for f in dataclasses.fields(LLMOptions)
              if hasattr(args, f"llm_{f.name}")}
    return LLMOptions(**{**values, **overrides})


def options_markdown() -> str:
    """The options table of docs/inference.md."""
    rows = ["| flag | environment variable | default | meaning |", "|---|---|---|---|"]
    defaults = LLMOptions()
    for opt in OPTIONS:
        default = getattr(defaults, opt.field)
        rows.append(f"| `{opt.flag}` | `{opt.env}` | "
                    f"{'—' if default is None else f'`{default}`'} | {opt.help} |")
    return "\n".join(rows)


# ---- talking to the endpoint ------------------------------------------------------------------

def server_message(body: Any) -> str | None:
    """The human-readable message in an error response body (FastAPI `detail`, OpenAI
    `error.message`)."""
    if isinstance(body, dict):
        for key in ("detail", "message"):
            if isinstance(body.get(key), str):
                return body[key]
        if isinstance(body.get("error"), dict | str):
            return server_message(body["error"]) if isinstance(body["error"], dict) \
                else body["error"]
    return body if isinstance(body, str) and body else None


def describe_error(exc: BaseException, opts: LLMOptions | None = None,
                   timeout_s: float | None = None) -> str:
    """One line for a failed request, with the server's own message when it sent one;
    `timeout_s` is the limit the request ran under (default `opts.timeout_s`)."""
    where = f" from {opts.base_url}" if opts is not None and opts.base_url else ""
    status = getattr(exc, "status_code", None)
    if status is None and isinstance(exc, httpx.HTTPStatusError):
        status = exc.response.status_code
    if status is not None:
        body = getattr(exc, "body", None)
        if body is None and getattr(exc, "response", None) is not None:
            try:
                body = exc.response.json()
            except (ValueError, RecursionError):  # not JSON, or nested past the decoder
                body = exc.response.text[:300]
        detail = server_message(body) or type(exc).__name__
        return f"HTTP {status}{where}: {' '.join(str(detail).split())[:300]}"
    name = type(exc).__name__
    if "Timeout" in name:
        if timeout_s is None and opts is not None:
            timeout_s = opts.timeout_s
        limit = "" if timeout_s is None else f" after {timeout_s:g}s"
        return (f"request timed out{limit}{where} (raise --timeout or lower --max-tokens; "
                "the server may still be generating)")
    if "Connection" in name or isinstance(exc, httpx.TransportError | OSError):
        return f"cannot reach the model server{where} ({name}); is it running?"
    return f"{name}{where}: {' '.join(str(exc).split())[:300]}"


def _client(opts: LLMOptions, timeout_s: float) -> httpx.Client:
    return httpx.Client(base_url=opts.base_url.rstrip("/"), timeout=timeout_s,
                        headers={"Authorization": f"Bearer {opts.key}"})


def served_models(body: Any) -> list[str]:
    """The model ids in a `GET /models` body: OpenAI's `{"data": [{"id": ...}, ...]}`, or a bare
    list of such entries or of ids; [] for any other shape (the model is then not checked)."""
    entries = body.get("data") if isinstance(body, dict) else body
    if not isinstance(entries, list):
        return []
    ids = [e.get("id") if isinstance(e, dict) else e for e in entries]
    return [i for i in ids if isinstance(i, str)]


def check_endpoint(opts: LLMOptions) -> list[str]:
    """The served model ids (`GET /models`); `EndpointError` if the endpoint is not configured,
    unreachable, refuses the key, answers something that is not JSON, or does not serve
    `opts.model`."""
    opts.require()
    timeout_s = min(opts.timeout_s, CHECK_TIMEOUT_S)
    try:
        with _client(opts, timeout_s) as client:
            response = client.get("/models")
            response.raise_for_status()
            body = response.json()
    except httpx.HTTPError as exc:
        raise EndpointError(f"endpoint check failed: {describe_error(exc, opts, timeout_s)}") \
            from None
    except (ValueError, RecursionError):
        raise EndpointError(f"endpoint check failed: GET {opts.base_url}/models did not answer "
                            f"JSON (it sent {response.text[:60]!r})") from None
    ids = served_models(body)
    if ids and opts.model not in ids:
        raise EndpointError(f"{opts.base_url} does not serve model {opts.model!r}; it serves: "
                            + ", ".join(ids[:8]))
    return ids


_PROBE_TOOL = {"type": "function", "function": {
    "name": "lookup_record", "description": "Look up one record by its identifier.",
    "parameters": {"type": "object", "properties": {"record_id": {"type": "string"}},
                   "required": ["record_id"]}}}


def template_renders_tools(opts: LLMOptions) -> bool | None:
    """Whether the server's chat template puts `tools=` into the prompt: the prompt token count
    it reports for one tiny request with a tool must exceed the count without. None when the
    server reports no usage (unknown). Each probe waits `max(--timeout, PROBE_TIMEOUT_S)`."""
    counts = []
    timeout_s = max(opts.timeout_s, PROBE_TIMEOUT_S)
    with _client(opts, timeout_s) as client:
        for tools in (None, [_PROBE_TOOL]):
            body: dict[str, Any] = {"model": opts.model, "max_tokens": 1, "temperature": 0.0,
                                    "messages": [{"role": "user", "content": "Say OK."}]}
            if tools:
                body["tools"] = tools
            try:
                response = client.post("/chat/completions", json=body)
                response.raise_for_status()
                answer = response.json()
            except httpx.TimeoutException:
                raise EndpointError(
                    f"tool-mode probe failed: no answer from {opts.base_url} to a 1-token "
                    f"request in {timeout_s:g}s (the probe waits max(--timeout, "
                    f"{PROBE_TIMEOUT_S:g}s); --tool-mode text skips it)") from None
            except httpx.HTTPError as exc:
                raise EndpointError(f"tool-mode probe failed: "
                                    f"{describe_error(exc, opts, timeout_s)}") from None
            except (ValueError, RecursionError):
                raise EndpointError(f"tool-mode probe failed: {opts.base_url} answered a chat "
                                    f"request with something that is not JSON "
                                    f"({response.text[:60]!r})") from None
            usage = answer.get("usage") if isinstance(answer, dict) else None
            tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
            counts.append(tokens if isinstance(tokens, int) and not isinstance(tokens, bool)
                          else None)
    if None in counts:
        return None
    return counts[1] > counts[0]


def prepare_endpoint(opts: LLMOptions, *, warn: Callable[[str], None] | None = None
                     ) -> LLMOptions:
    """Check the endpoint and resolve the tool mode: the options to run with (`tool_mode`
    "native" or "text"). Raises `EndpointError` with a one-line message."""
    warn = warn or (lambda msg: print(msg, file=sys.stderr))
    check_endpoint(opts)
    if opts.tool_mode == "text":
        return opts
    renders = template_renders_tools(opts)
    if renders is False:
        warn(f"# warning: {opts.model}'s chat template drops tools= (same prompt with and "
             "without them); using --tool-mode text (tools listed in the system prompt)")
        return opts.replace(tool_mode="text")
    if renders is None and opts.tool_mode == "auto":
        warn("# warning: the server reports no token usage, so whether its chat template "
             "renders tools is unknown; using --tool-mode text")
        return opts.replace(tool_mode="text")
    return opts.replace(tool_mode="native")


def token_counter(tokenizer: str | None = None) -> Callable[[str], int]:
    """Token count of a text: the local tokenizer `tokenizer` when given, else tiktoken's
    cl100k (offline copy) — the counter AgentOS's memory manager uses (`envkit.tokens`)."""
    return TokenCounter(tokenizer).count
