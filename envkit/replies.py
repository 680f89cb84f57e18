"""Reading an LLM reply as one tool call: the one JSON scanner and reply parser of the project.

`json_objects` finds every JSON object embedded in free text; `read_call` picks the last tool
call among them and says why when there is none; `ParsedAction` is what an adapter makes of it
(`EnvAdapter.parse`). The parser is strict: an object is a call only if it names a declared tool
(`{"tool": name, ...}` or `{"name": name, ...}`), so an echoed observation object such as
`{"name": "Yuki Petrov", ...}` is not a call to a tool named "Yuki Petrov". A reply that opens a
JSON object and never closes it (cut off by `max_tokens`) is recognised as truncated.

Verdicts (`ParsedAction.verdict`): "valid" (a declared tool, arguments fit its schema),
"invalid" (a declared tool, arguments that break its schema: still sent, so the environment
answers with its typed error) and "no_call" (nothing that names a declared tool; `error` says
why: no JSON, truncated JSON, or objects that name no declared tool).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Any, Literal

VERDICTS = ("valid", "invalid", "no_call")
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


_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_DECODER = json.JSONDecoder()


def json_objects(text: str) -> Iterator[dict[str, Any]]:
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


def is_truncated(text: str) -> bool:
    """True if a JSON object opened in `text` is still open at its end (a reply cut off
    mid-call): the brace depth, outside strings, never returns to zero."""
    start = text.find("{")
    while start != -1:
        depth, in_str, escape = 0, False, False
        for ch in text[start:]:
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
        start = text.find("{", start + 1)
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
        except ValueError:
            return f"arguments of {name!r} are not JSON"
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return f"arguments of {name!r} are not an object"
    return name, args


def read_call(text: str, tools: Collection[str] | None = None) -> CallRead:
    """The last tool call written in `text` — `{"tool": name, "arguments": {...}}` or the
    OpenAI-style `{"name": ..., "arguments": ...}` (arguments may be a JSON string), optionally
    inside `<tool_call>` tags or a code fence, reasoning around it allowed (ReAct) — naming one
    of `tools` (any name when `tools` is None). Otherwise no call, and the reason."""
    if not text or not text.strip():
        return CallRead(None, "empty reply")
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
