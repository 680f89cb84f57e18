"""Typed Memex sessions over the Rust runtime: `EnvBatch` runs many episodes at once and hands
back `MemexObservation`s, parsed only when asked for.

    from memex.agent_os_core.runtime import EnvBatch

    with EnvBatch(["http://127.0.0.1:8000"], sessions=16) as batch:
        results = batch.reset([{"seed": i, "difficulty": "hard"} for i in range(16)])
        results = batch.step([MemexAction(tool="review_alert")] * 16)
        results[0].observation.context.ram

The transport is `agent_os_runtime.Runtime` (Rust, Tokio, GIL released while waiting); its
exceptions (`SessionError` and subclasses) pass through unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any

from memex.models import MemexAction, MemexObservation

try:
    import agent_os_runtime as _rt
except ImportError as exc:  # pragma: no cover - exercised only on an unbuilt checkout
    raise ImportError(
        "the AgentOS runtime extension is not built; run the project's set-up "
        "(`make test` builds it) or `.venv/bin/maturin develop --release "
        "-m agent_os_core/Cargo.toml`") from exc

AgentOSError = _rt.AgentOSError
SessionError = _rt.SessionError
ConnectError = _rt.ConnectError
ConnectionLost = _rt.ConnectionLost
CallTimeout = _rt.CallTimeout
ServerError = _rt.ServerError
ProtocolError = _rt.ProtocolError
SessionClosed = _rt.SessionClosed
Runtime = _rt.Runtime
Reply = _rt.Reply


class StepResult:
    """One session's reply: `reward` and `done` at once, the observation parsed on first use."""

    __slots__ = ("__dict__", "reply")

    def __init__(self, reply: Reply):
        self.reply = reply

    @property
    def session(self) -> int:
        return self.reply.session

    @property
    def reward(self) -> float | None:
        return self.reply.reward

    @property
    def done(self) -> bool:
        return self.reply.done

    @property
    def observation_json(self) -> str:
        """The observation exactly as the server sent it (JSON text)."""
        return self.reply.data

    @cached_property
    def observation(self) -> MemexObservation:
        data = json.loads(self.reply.data)
        data.pop("reward", None)
        data.pop("done", None)
        data["metadata"] = self.metadata or data.get("metadata") or {}
        return MemexObservation(**data, reward=self.reply.reward, done=self.reply.done)

    @cached_property
    def metadata(self) -> dict[str, Any]:
        return json.loads(self.reply.metadata) if self.reply.metadata else {}


def action_body(action: MemexAction | Mapping[str, Any]) -> dict[str, Any]:
    """The `step` payload of an action, as OpenEnv's client sends it."""
    if isinstance(action, MemexAction):
        body = {"tool": action.tool, "arguments": action.arguments}
        if action.metadata:
            body["metadata"] = action.metadata
        return body
    return dict(action)


class EnvBatch:
    """A fixed set of Memex sessions (sharded over `urls`) stepped together.

    Args:
        urls: one or more Memex server base URLs (replicas; a list or a comma-separated string).
        sessions: how many sessions to open.
        timeout_s: per-call limit; `max_in_flight`: requests on the wire per server.
    """

    def __init__(self, urls: str | Sequence[str], sessions: int, *, timeout_s: float = 60.0,
                 connect_timeout_s: float = 10.0, max_in_flight: int = 64):
        if isinstance(urls, str):  # "http://h:7860,http://h:7861": one session per replica in turn
            urls = [u.strip() for u in urls.split(",") if u.strip()]
        self.runtime = Runtime(urls, timeout_s=timeout_s, connect_timeout_s=connect_timeout_s,
                               max_in_flight=max_in_flight)
        try:
            self.ids: list[int] = self.runtime.open(sessions)
        except BaseException:
            self.runtime.shutdown()
            raise

    def __len__(self) -> int:
        return len(self.ids)

    def _ids(self, which: Sequence[int] | None, n: int) -> list[int]:
        ids = self.ids if which is None else [self.ids[i] for i in which]
        if len(ids) != n:
            raise ValueError(f"{n} requests for {len(ids)} sessions")
        return ids

    def reset(self, options: Sequence[Mapping[str, Any]], which: Sequence[int] | None = None,
              **kwargs: Any) -> list[StepResult]:
        """Reset sessions (all, or the indices in `which`) with one options dict each."""
        ids = self._ids(which, len(options))
        return [StepResult(r) for r in self.runtime.reset(ids, [dict(o) for o in options],
                                                          **kwargs)]

    def step(self, actions: Sequence[MemexAction | Mapping[str, Any]],
             which: Sequence[int] | None = None, **kwargs: Any) -> list[StepResult]:
        """Step sessions (all, or the indices in `which`) with one action each."""
        ids = self._ids(which, len(actions))
        return [StepResult(r) for r in self.runtime.step(ids, [action_body(a) for a in actions],
                                                         **kwargs)]

    def close(self) -> None:
        self.runtime.shutdown()

    def __enter__(self) -> EnvBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
