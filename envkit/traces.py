"""Episode traces: one JSONL file per episode, written by the evaluation harness and the demo,
replayed by the Glass Box.

Format `memex-trace/1`, one JSON object per line:

1. header: `{"type": "header", "format": "memex-trace/1", "env": "memex", "policy": str,
   "seed": int | null, "difficulty": str | null, "case": str | null, "reset": {...}}`
   (`reset` holds the reset options; `case` is "1mdb" for the fixed case).
2. one step line per observation, starting with the reset observation (step 0, no action):
   `{"type": "step", "step": int, "action": {"tool": str, "arguments": {...}} | null,
   (other environments: their action's fields, e.g. `{"action_type": ..., ...}`)
   "observation": <observation JSON as the server sends it, plus "reward" and "done">,
   "reply": {...}, "insight": {...}}` — `reply` only for LLM policies: the raw reply
   (truncated), its `verdict` (valid / invalid / no_call), the `reason`, attempts, the prompt's
   token count and budget, and `render` (the prompt's rendering settings, which
   `EnvAdapter.messages` turns back into the prompt the model saw); `insight` only for policies
   that expose what they believe (`Policy.insight`, e.g. the committee heuristic's
   `regime_belief`).
3. footer: `{"type": "footer", "episode_return": float, "outcome": str, "terminal": {...},
   "truth": {...} | null}`. `terminal` is the final observation's `metadata["terminal"]`.
   `truth` (the case's ground truth) is written only by evaluation code that generated the
   case itself, after the episode ended; the Glass Box shows it as the post-episode overlay.
   An episode the policy could not finish (its model endpoint failed) ends with a footer of
   outcome "error" and an `error` message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

TRACE_FORMAT = "memex-trace/1"


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    return value


@dataclass
class Trace:
    header: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    footer: dict[str, Any] | None = None

    @classmethod
    def start(cls, *, env: str = "memex", policy: str, seed: int | None = None,
              difficulty: str | None = None, case: str | None = None,
              reset: dict[str, Any] | None = None) -> Trace:
        return cls({"type": "header", "format": TRACE_FORMAT, "env": env, "policy": policy,
                    "seed": seed, "difficulty": difficulty, "case": case,
                    "reset": reset or {}})

    def add(self, observation: Any, action: Any = None, reply: dict[str, Any] | None = None,
            insight: dict[str, Any] | None = None) -> None:
        obs = _jsonable(observation)
        step = obs.get("step", len(self.steps)) if isinstance(obs, dict) else len(self.steps)
        act = _jsonable(action)
        if isinstance(act, dict):
            # AML actions are {tool, arguments}; other environments' actions are kept whole.
            act = {"tool": act["tool"], "arguments": act.get("arguments", {})} if "tool" in act \
                else {k: v for k, v in act.items() if k != "metadata" and v is not None}
        line = {"type": "step", "step": step, "action": act, "observation": obs}
        if reply is not None:
            line["reply"] = reply
        if insight is not None:
            line["insight"] = insight
        self.steps.append(line)

    def finish(self, *, episode_return: float, outcome: str, terminal: dict[str, Any],
               truth: Any = None, error: str | None = None) -> None:
        self.footer = {"type": "footer", "episode_return": episode_return, "outcome": outcome,
                       "terminal": terminal, "truth": _jsonable(truth)}
        if error is not None:
            self.footer["error"] = error

    def write(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [self.header, *self.steps] + ([self.footer] if self.footer else [])
        path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))
        return path


def read_trace(path: str | Path) -> Trace:
    lines = [json.loads(x) for x in Path(path).read_text().splitlines() if x.strip()]
    if not lines or lines[0].get("type") != "header" or lines[0].get("format") != TRACE_FORMAT:
        raise ValueError(f"{path} is not a {TRACE_FORMAT} trace")
    footer = lines[-1] if lines[-1].get("type") == "footer" else None
    steps = [x for x in lines[1:] if x.get("type") == "step"]
    return Trace(lines[0], steps, footer)
