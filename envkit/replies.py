"""Reading an LLM reply as one tool call: the one JSON scanner and reply parser of the project.

`read_completion` reads a chat-completions response body, whatever its shape, into a `Reply`
(text and native tool calls); `json_objects` finds every JSON object embedded in free text;
`read_call` picks the last tool call among them and says why when there is none; `ParsedAction`
is what an adapter makes of it (`EnvAdapter.parse`).

Every body is an outcome, never an exception other than `NotACompletion`: a body that is not a
chat completion at all (not JSON, not an object, an error object, no choices) raises it, and the
caller ends the episode with a one-line reason; inside the first choice anything goes —
`message` null or missing, `content` a number or a list of parts (text parts are joined),
`arguments` a JSON object instead of a string, null names — and what cannot be read as text or
calls becomes a `Reply` with no call and its `problem` said. Only the last `MAX_REPLY_CHARS` of
a text are scanned, so a runaway reply costs bounded time.

The parser is strict: an object is a call only if it names a declared tool (`{"tool": name,
...}` or `{"name": name, ...}`), so an echoed observation object such as `{"name": "Yuki
Petrov", ...}` is not a call to a tool named "Yuki Petrov". A reply that opens a JSON object and
never closes it (cut off by `max_tokens`) is recognised as truncated.

Verdicts (`ParsedAction.verdict`): "valid" (a declared tool, arguments fit its schema),
"invalid" (a declared tool, arguments that break its schema: still sent, so the environment
answers with its typed error — unless the call is oversized, over one of the schema's bounds
(`maxLength`, `maxItems`) or longer than any argument may be: `EnvAdapter.parse_call` builds no
action for it, so it never leaves the client) and "no_call" (nothing that names a declared
tool; `error` says why: no JSON, truncated JSON, or objects that name no declared tool).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

VERDICTS = ("valid", "invalid", "no_call")
# A reply is read from its end (a ReAct reply ends with its call); longer text is a runaway
# generation, and scanning it whole would cost time quadratic in its nesting.
MAX_REPLY_CHARS = 65_536
REASON_TRUNCATED = "truncated JSON: a tool call was opened and never closed (raise max_tokens?)"
REASON_NO_JSON = "no JSON object in the reply"


@dataclass(frozen=True)
class ParsedAction:
    """An LLM reply read as one tool call. `status` is "ok" (a valid call), "invalid" (a call to
    a declared tool with arguments that break its schema) or "unparseable" (no call found;
    `error` says why)."""

    status: Literal["ok", "invalid", "unparseable"]
    action: Any = None
    name: str | None = None
    arguments: dict[str, Any] | None = None
    error: str | None = None

    @property
    def verdict(self) -> str:
        """"valid", "invalid" or "no_call" (what traces, [STEP] lines and summaries count)."""
        return {"ok": "valid", "invalid": "invalid", "unparseable": "no_call"}[self.status]

    @property
    def format_score(self) -> float:
        return {"ok": 1.0, "invalid": 0.5, "unparseable": 0.0}[self.status]


@dataclass(frozen=True)
class CallRead:
    """What `read_call` found: the call (name, arguments), or None and the reason."""

    call: tuple[str, dict[str, Any]] | None
    reason: str | None = None


@dataclass
class Reply:
    """A model's reply as the agent reads it: the message text and its native tool calls as
    (name, arguments as JSON text). `problem` says why a message carried neither (no message,
    content that is not text, tool calls that are not calls); `requests` is how many HTTP
    requests it took (retries included)."""

    text: str = ""
    tool_calls: list[tuple[str, str]] = field(default_factory=list)
    problem: str | None = None
    requests: int = 1


class NotACompletion(ValueError):
    """A response body that is not a chat completion; the message is one line for the user."""


def _kind(value: Any) -> str:
    """What a JSON value is, for a reason ("null", "a number", "a list", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return {str: "a string", list: "a list", dict: "an object"}.get(type(value), "a value")


def _message_text(content: Any) -> tuple[str, str | None]:
    """A message's `content` as text, or "" and why it is not text. OpenAI content parts
    (`[{"type": "text", "text": ...}, ...]`) are joined."""
    if content is None or isinstance(content, str):
        return content or "", None
    if isinstance(content, list):
        parts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"),
                                                                                  str)]
        return ("".join(parts), None) if parts else ("", "content is a list without text parts")
    return "", f"content is {_kind(content)}, not text"


def _message_calls(tool_calls: Any) -> tuple[list[tuple[str, str]], str | None]:
    """A message's `tool_calls` as (name, arguments JSON text), or [] and why there are none.
    Arguments sent as an object (some servers do) are re-encoded; a name that is not a string
    is kept as its JSON text, so it is reported as no declared tool."""
    if tool_calls is None or tool_calls == []:
        return [], None
    if not isinstance(tool_calls, list):
        return [], f"tool_calls is {_kind(tool_calls)}, not a list"
    calls = []
    for item in tool_calls:
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(function, dict):
            continue
        name, arguments = function.get("name"), function.get("arguments")
        try:
            calls.append((name if isinstance(name, str) else json.dumps(name),
                          arguments if isinstance(arguments, str)
                          else "{}" if arguments is None else json.dumps(arguments)))
        except RecursionError:
            return [], "tool call arguments are nested too deeply"
    return calls, None if calls else "tool_calls holds no function call"


def read_completion(body: bytes | str) -> Reply:
    """The first choice of a chat-completions response body as a `Reply`; `NotACompletion` if
    the body is not a chat completion (see the module docstring for what is tolerated)."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        start = body[:40].decode(errors="replace") if isinstance(body, bytes) else body[:40]
        raise NotACompletion(f"the body is not JSON ({len(body)} bytes, starting {start!r})"
                             if body else "the body is empty") from None
    if not isinstance(data, dict):
        raise NotACompletion(f"the body is {_kind(data)}, not a chat completion object")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        if data.get("error") is not None:
            detail = data["error"].get("message") if isinstance(data["error"], dict) \
                else data["error"]
            raise NotACompletion(f"the body is an error: {' '.join(str(detail).split())[:200]}")
        raise NotACompletion("the body has no choices" if choices in (None, [])
                             else f"choices is {_kind(choices)}, not a list")
    choice = choices[0]
    return read_message(choice.get("message") if isinstance(choice, dict) else None)


def read_message(message: Any) -> Reply:
    """A chat-completions `message` (any JSON value) as a `Reply`."""
    if not isinstance(message, dict):
        return Reply(problem=f"the reply has no message (it is {_kind(message)})")
    text, text_problem = _message_text(message.get("content"))
    calls, calls_problem = _message_calls(message.get("tool_calls"))
    problem = None if calls or text.strip() else text_problem or calls_problem
    return Reply(text, calls, problem)


def reply_call(reply: Reply, tools: Collection[str] | None = None) -> CallRead:
    """The call a `Reply` makes: its first native tool call (arguments decoded; the name is
    not checked here), else the last call its text writes (`read_call`), or why there is
    none."""
    if reply.tool_calls:
        name, raw = reply.tool_calls[0]
        try:
            arguments = json.loads(raw) if raw.strip() else {}
        except (ValueError, RecursionError):
            return CallRead(None, f"tool call arguments are not JSON: {raw[:80]!r}")
        if not isinstance(arguments, dict):
            return CallRead(None, "tool call arguments must be an object")
        return CallRead((name, arguments))
    if reply.problem is not None:
        return CallRead(None, reply.problem)
    return read_call(reply.text, tools)


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_DECODER = json.JSONDecoder()


def json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every JSON object embedded in `text`, in order (nested ones are skipped)."""
    i = 0
    while (i := text.find("{", i)) != -1:
        try:
            obj, end = _DECODER.raw_decode(text, i)
        except (ValueError, RecursionError):  # deep nesting exhausts the C decoder's stack
            i += 1
            continue
        if isinstance(obj, dict):
            yield obj
        i = end


def is_truncated(text: str) -> bool:
    """True if a JSON object opened in `text` is still open at its end (a reply cut off
    mid-call): the brace depth, outside strings, never returns to zero. Scanning resumes after
    each object that closes, so the cost is linear in the text."""
    start = text.find("{")
    while start != -1:
        depth, in_str, escape = 0, False, False
        end = start
        for end in range(start, len(text)):
            ch = text[end]
            if in_str:
                if escape:
                    escape = False
                elif ch == "\\":
                    escape = True
                elif ch == '"':
                    in_str = False
                continue
            if ch == '"':
                in_str = True
            elif ch in "{[":
                depth += 1
            elif ch in "}]":
                depth -= 1
                if depth == 0:
                    break
        else:
            return depth > 0 or in_str
        start = text.find("{", end + 1)
    return False


def _as_call(obj: dict[str, Any], tools: Collection[str] | None
             ) -> tuple[str, dict[str, Any]] | str:
    """(name, arguments) if `obj` is a call to a declared tool, else why not."""
    if "function" in obj and isinstance(obj["function"], dict):
        obj = obj["function"]
    name = obj.get("tool", obj.get("name"))
    if not isinstance(name, str):
        return "an object without a tool name"
    if tools is not None and name not in tools:
        return f"{name[:40]!r} is not a declared tool"
    args = obj.get("arguments", obj.get("args", obj.get("parameters", {})))
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except (ValueError, RecursionError):
            return f"arguments of {name[:40]!r} are not JSON"
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return f"arguments of {name[:40]!r} are not an object"
    return name, args


def read_call(text: str, tools: Collection[str] | None = None) -> CallRead:
    """The last tool call written in `text` — `{"tool": name, "arguments": {...}}` or the
    OpenAI-style `{"name": ..., "arguments": ...}` (arguments may be a JSON string), optionally
    inside `<tool_call>` tags or a code fence, reasoning around it allowed (ReAct) — naming one
    of `tools` (any name when `tools` is None). Otherwise no call, and the reason."""
    if not text or not text.strip():
        return CallRead(None, "empty reply")
    text = text[-MAX_REPLY_CHARS:]
    tagged = _TAGGED.findall(text)
    candidates = [o for chunk in tagged for o in json_objects(chunk)] or list(json_objects(text))
    rejected: list[str] = []
    for obj in reversed(candidates):
        found = _as_call(obj, tools)
        if isinstance(found, tuple):
            return CallRead(found)
        rejected.append(found)
    if is_truncated(text):
        return CallRead(None, REASON_TRUNCATED)
    if not candidates:
        return CallRead(None, REASON_NO_JSON)
    return CallRead(None, "no call to a declared tool: " + "; ".join(rejected[:3]))


def extract_call(text: str, tools: Collection[str] | None = None
                 ) -> tuple[str, dict[str, Any]] | None:
    """`read_call(text, tools).call`: the call, or None."""
    return read_call(text, tools).call
