"""Bounds and guards that keep a shared server up: a request-body limit, WebSocket frames
checked before OpenEnv's session loop sees them, separate bounded pools for WebSocket and
HTTP-MCP sessions, and steps with large arguments run off the event loop under a deadline.

OpenEnv's `/ws` loop drops a session on a binary frame, a non-object or 100k-deep JSON message,
and keeps serving a socket whose session its idle reaper has already destroyed (the session
cap then stops holding). Its HTTP `/mcp` `openenv/session/create` shares the WebSocket pool, so
plain HTTP can lock every WebSocket client out. `WebSocketGuard` and `install_session_pools`
fix both without forking the framework: WebSocket sessions are exempt from the framework's
reaper and are instead closed here, socket and all, with close code `WS_IDLE_CLOSE_CODE` and a
reason the client raises (`memex.envkit.client.EpisodeLostError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import hmac
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from fastapi import HTTPException
from openenv.core.env_server.exceptions import SessionCapacityError

DEFAULT_MAX_BODY_BYTES = 256 * 1024
# A read-only tool call that runs longer than this gets a typed `deadline_exceeded` error.
DEFAULT_STEP_DEADLINE_S = 2.0
# Actions whose arguments hold more characters than this run in a worker thread (`run_step`).
# Within it a step costs about what a reset costs, and resets run on the loop too (p50 1.5 ms):
# measured, a SAR whose 2,000-character narrative is dense with amounts, dates and IDs, or whose
# findings bring it to about 4,700 characters, 1.0-1.1 ms; a 2,000-character manual query
# 1-3 ms. The decisions of ordinary episodes (300-800 characters) then stay on the loop: at 64
# sessions the server spent 6% less CPU a step than with 256 (`benchmarks/bench_env.py`'s
# cells, three interleaved repeats).
OFF_LOOP_ARG_CHARS = 4_096
# Longest id shown back in an error message (ids we issue are 16 hex digits).
MAX_ID_CHARS = 64
WS_IDLE_CLOSE_CODE = 4001
WS_IDLE_CLOSE_REASON = "session expired: idle longer than the server's session timeout"

_transport: contextvars.ContextVar[str] = contextvars.ContextVar("transport", default="mcp")


def shown(value: str) -> str:
    """`value` as an error message may echo it: repr'd, at most `MAX_ID_CHARS` characters."""
    return repr(value if len(value) <= MAX_ID_CHARS else value[:MAX_ID_CHARS] + "...")


def encodable(obj: Any) -> bool:
    """Whether `obj` can be written as UTF-8 JSON (a lone surrogate such as "\\ud800" cannot:
    accepting one lets a reply fail after the step was applied)."""
    try:
        json.dumps(obj, ensure_ascii=False).encode("utf-8")
    except (UnicodeEncodeError, ValueError, TypeError, RecursionError):
        return False
    return True


_STEP_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="env-step")


def argument_chars(value: Any) -> int:
    """Characters of text (and items) in an action's arguments: what a tool's work scales with."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, dict):
        return sum(len(k) + argument_chars(v) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return len(value) + sum(argument_chars(v) for v in value)
    return 1


async def run_step(step: Callable[..., Any], action: Any, deadline_s: float | None) -> Any:
    """`step(action, timeout_s=deadline_s)` for an async server. A step with small arguments
    costs less than a thread hop and runs on the event loop; one with large arguments (more
    than `OFF_LOOP_ARG_CHARS` characters) runs in a worker thread, so the loop keeps serving
    every other session meanwhile. `deadline_s` is passed to the environment, which answers
    a read-only call that ran past it with a typed `deadline_exceeded` error."""
    if argument_chars(getattr(action, "arguments", None) or {}) <= OFF_LOOP_ARG_CHARS:
        return step(action, timeout_s=deadline_s)
    return await asyncio.get_running_loop().run_in_executor(
        _STEP_POOL, functools.partial(step, action, timeout_s=deadline_s))


class BearerAuth:
    """ASGI middleware: with a token set (`MEMEX_API_TOKEN`), every HTTP route and `/ws` needs
    `Authorization: Bearer <token>` (or `?access_token=<token>`, for browsers' WebSockets).
    Open without it: `/health` (container health checks) and the Glass Box's page and static
    assets (`GET /`, `/assets/...`: code, no data — the page then sends the token on every API
    call). Otherwise 401 (HTTP) or a close with code 4401 before the socket is accepted."""

    OPEN_PATHS = frozenset({"/health"})
    OPEN_PAGES = frozenset({"/"})  # GET/HEAD only
    OPEN_PREFIX = "/assets/"

    def __init__(self, app, token: str):
        self.app = app
        self.token = token.encode()

    def _static(self, scope) -> bool:
        return scope["type"] == "http" and scope.get("method") in ("GET", "HEAD") and (
            scope["path"] in self.OPEN_PAGES or scope["path"].startswith(self.OPEN_PREFIX))

    def _authorised(self, scope) -> bool:
        header = dict(scope.get("headers") or ()).get(b"authorization", b"")
        if hmac.compare_digest(header, b"Bearer " + self.token):
            return True
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        return any(hmac.compare_digest(v.encode(), self.token)
                   for v in query.get("access_token", ()))

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket") or scope["path"] in self.OPEN_PATHS \
                or self._static(scope) or self._authorised(scope):
            return await self.app(scope, receive, send)
        if scope["type"] == "websocket":
            return await send({"type": "websocket.close", "code": 4401,
                               "reason": "missing or wrong bearer token"})
        body = b'{"detail": "missing or wrong bearer token"}'
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"),
                                (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": body})


class BodyLimit:
    """ASGI middleware: HTTP request bodies over `max_bytes` get 413 before any work is done."""

    def __init__(self, app, max_bytes: int = DEFAULT_MAX_BODY_BYTES):
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or ()).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            return await self._reject(send)
        received = 0

        async def limited_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:  # chunked upload without a length
                    raise HTTPException(413, self._message())
            return message

        return await self.app(scope, limited_receive, send)

    def _message(self) -> str:
        return f"request body exceeds {self.max_bytes} bytes"

    async def _reject(self, send) -> None:
        body = json.dumps({"detail": self._message()}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"),
                                (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})


@dataclass(eq=False)
class _Connection:
    send: Any
    last: float = field(default_factory=time.monotonic)
    closed: bool = False

    async def close(self, code: int, reason: str) -> None:
        if not self.closed:
            self.closed = True
            with contextlib.suppress(Exception):  # the peer may already be gone
                await self.send({"type": "websocket.close", "code": code, "reason": reason})


def _rewrite(text: str) -> str | None:
    """A replacement for a text frame OpenEnv's loop cannot survive, or None if it is fine."""
    if len(text) < 512 and text.isascii() and "\\u" not in text and text.lstrip()[:1] == "{":
        return None  # the usual step: too short to nest too deeply, and no surrogate escape
    try:
        parsed = json.loads(text)
    except RecursionError:
        return json.dumps({"type": "message nested too deeply"})
    except ValueError:
        return None  # not JSON at all: the framework answers INVALID_JSON itself
    if not isinstance(parsed, dict):
        return json.dumps({"type": f"non-object JSON message ({type(parsed).__name__})"})
    if not encodable(parsed):
        return json.dumps({"type": "message with text that is not valid Unicode "
                                   "(e.g. a lone surrogate escape)"})
    return None


class WebSocketGuard:
    """ASGI middleware for `/ws`: frames OpenEnv's session loop would die on (binary, non-object
    or too deeply nested JSON, lone surrogates) become a message of unknown type, which the
    framework answers with a typed `UNKNOWN_TYPE` error while the session lives on; a socket
    idle longer than `idle_timeout_s` is closed with `WS_IDLE_CLOSE_CODE` (its session is freed
    as the framework sees the disconnect), checked on its next frame and by a periodic sweep."""

    def __init__(self, app, idle_timeout_s: float | None = None):
        self.app = app
        self.idle_timeout_s = idle_timeout_s
        self.connections: set[_Connection] = set()
        self._sweeper: asyncio.Task | None = None

    def _expired(self, conn: _Connection) -> bool:
        return (self.idle_timeout_s is not None
                and time.monotonic() - conn.last > self.idle_timeout_s)

    async def _sweep(self) -> None:
        while self.connections:
            await asyncio.sleep(max(0.5, self.idle_timeout_s / 4))
            for conn in [c for c in self.connections if self._expired(c)]:
                await conn.close(WS_IDLE_CLOSE_CODE, WS_IDLE_CLOSE_REASON)
        self._sweeper = None

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return await self.app(scope, receive, send)
        conn = _Connection(send)

        async def guarded_send(message):
            if conn.closed:
                return  # we closed it; the framework's own close/error frames go nowhere
            if message["type"] == "websocket.send":
                conn.last = time.monotonic()
            await send(message)

        async def guarded_receive():
            message = await receive()
            if message["type"] != "websocket.receive":
                return message
            if conn.closed or self._expired(conn):
                await conn.close(WS_IDLE_CLOSE_CODE, WS_IDLE_CLOSE_REASON)
                return {"type": "websocket.disconnect", "code": WS_IDLE_CLOSE_CODE}
            conn.last = time.monotonic()
            text = message.get("text")
            if text is None:
                replacement = json.dumps({"type": "binary frame (send JSON text frames)"})
            else:
                replacement = _rewrite(text)
            if replacement is not None:
                message = {"type": "websocket.receive", "text": replacement}
            return message

        self.connections.add(conn)
        if self.idle_timeout_s is not None and self._sweeper is None:
            self._sweeper = asyncio.create_task(self._sweep())
        token = _transport.set("ws")
        try:
            return await self.app(scope, guarded_receive, guarded_send)
        finally:
            _transport.reset(token)
            self.connections.discard(conn)


def openenv_server(app) -> Any:
    """The `HTTPEnvServer` behind an app made by OpenEnv's `create_app` (which does not keep a
    reference to it): found in the closure of its `/ws` endpoint."""
    from openenv.core.env_server.http_server import HTTPEnvServer

    for route in app.router.routes:
        if getattr(route, "path", None) == "/ws":
            for cell in getattr(route.endpoint, "__closure__", None) or ():
                if isinstance(cell.cell_contents, HTTPEnvServer):
                    return cell.cell_contents
    raise LookupError("no OpenEnv /ws endpoint on this app")


@dataclass
class SessionPools:
    """Live OpenEnv sessions by transport: `ws` (one per `/ws` socket) and `mcp` (HTTP
    `openenv/session/create`), each with its own cap."""

    caps: dict[str, int]
    kinds: dict[str, str] = field(default_factory=dict)
    reserved: dict[str, int] = field(default_factory=dict)

    def live(self, kind: str) -> int:
        return sum(1 for k in self.kinds.values() if k == kind)


def install_session_pools(server: Any, ws_cap: int, mcp_cap: int) -> SessionPools:
    """Give WebSocket and HTTP-MCP sessions separate caps on OpenEnv's `server`, and exempt
    WebSocket sessions from its idle reaper (`WebSocketGuard` closes idle sockets instead, so
    a reaped session never leaves a working socket behind)."""
    pools = SessionPools({"ws": ws_cap, "mcp": mcp_cap})
    server._max_concurrent_envs = ws_cap + mcp_cap
    create, destroy = server._create_session, server._destroy_session

    async def create_session():
        kind = _transport.get()
        active = pools.live(kind) + pools.reserved.get(kind, 0)
        if active >= pools.caps[kind]:
            raise SessionCapacityError(active_sessions=active, max_sessions=pools.caps[kind])
        pools.reserved[kind] = pools.reserved.get(kind, 0) + 1
        try:
            session_id, env = await create()
        finally:
            pools.reserved[kind] -= 1
        pools.kinds[session_id] = kind
        if kind == "ws":
            server._session_websocket_attachments.add(session_id)
        return session_id, env

    async def destroy_session(session_id: str) -> None:
        pools.kinds.pop(session_id, None)
        await destroy(session_id)

    server._create_session, server._destroy_session = create_session, destroy_session
    return pools
