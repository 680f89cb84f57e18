"""AgentOS runtime: many OpenEnv WebSocket sessions driven concurrently from one Python process.

The I/O runs on one Rust thread (Tokio); every batch call releases the GIL while it waits, and
returns one result per listed session, in order.

    from agent_os_runtime import Runtime

    with Runtime(["http://127.0.0.1:8000", "http://127.0.0.1:8001"]) as rt:
        ids = rt.open(64)                          # sharded round-robin over the two servers
        rt.reset(ids, [{"seed": i, "difficulty": "hard"} for i in ids])
        replies = rt.step(ids, [{"tool": "review_alert", "arguments": {}}] * len(ids))
        replies[0].reward, replies[0].done, replies[0].json()["step"]

Errors name the session, the server and the cause (`SessionError` and its subclasses). A
connection that drops fails the call in flight with `ConnectionLost`; a later `step` on that
session raises `ConnectionLost` again (its episode is gone) and `reset` reconnects.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

__version__: str

class AgentOSError(Exception):
    """Base class of every error raised by the runtime."""

class SessionError(AgentOSError):
    """A call on one session failed."""

    session: int | None
    url: str
    kind: Literal["connect", "connection_lost", "timeout", "server", "protocol", "closed",
                  "invalid_argument", "internal"]
    cause: str

class ConnectError(SessionError):
    """The WebSocket to the server could not be opened (refused, handshake, connect timeout)."""

class ConnectionLost(SessionError):
    """The connection dropped (server killed, restarted or unreachable); the episode is lost.
    `reset` on the session reconnects."""

class CallTimeout(SessionError):
    """No reply within the call's timeout. The request may still be applied server-side; the
    session stays usable (the late reply is discarded)."""

class ServerError(SessionError):
    """The server answered with an error frame (`code`: e.g. "CAPACITY_REACHED")."""

    code: str

class ProtocolError(SessionError):
    """The reply does not follow the OpenEnv WebSocket protocol."""

class SessionClosed(SessionError):
    """The session was closed (or never opened) by this runtime."""

class Reply:
    """The server's reply to one request."""

    @property
    def session(self) -> int: ...
    @property
    def kind(self) -> Literal["observation", "state"]: ...
    @property
    def reward(self) -> float | None:
        """The step's reward (None after reset and for state replies)."""
    @property
    def done(self) -> bool: ...
    @property
    def data(self) -> str:
        """Raw JSON of the observation (reset, step) or of the state (state)."""
    @property
    def metadata(self) -> str | None:
        """Raw JSON of the observation reply's metadata (e.g. the terminal score), or None."""
    @property
    def latency_s(self) -> float:
        """Round-trip time in seconds (excludes waiting for an in-flight slot)."""
    def json(self) -> dict[str, Any]:
        """`data` parsed: the observation (or state) as a dict."""
    def payload(self) -> dict[str, Any]:
        """`{"observation", "reward", "done", "metadata"}` as OpenEnv's client receives it."""

Body = Mapping[str, Any] | str
"""A request body: a dict of JSON values, or a str holding a JSON object."""

class Runtime:
    """Many OpenEnv sessions to one or more servers (replicas).

    Args:
        urls: server base URL(s), `http://host:port` or `ws://host:port[/path]`.
        timeout_s: default limit for one request/reply round trip.
        connect_timeout_s: limit for opening one WebSocket.
        max_in_flight: requests on the wire at once, per server; the rest wait (backpressure).
        reconnect_attempts: tries to re-open a dropped connection when `reset` needs it.
    """

    def __init__(self, urls: str | Sequence[str], *, timeout_s: float = 60.0,
                 connect_timeout_s: float = 10.0, max_in_flight: int = 64,
                 reconnect_attempts: int = 3) -> None: ...
    def open(self, n: int) -> list[int]:
        """Open `n` sessions, sharded round-robin over the URLs; all or nothing."""
    @overload
    def reset(self, sessions: Sequence[int], options: Body | Sequence[Body] | None = None, *,
              timeout_s: float | None = None, return_exceptions: Literal[False] = False
              ) -> list[Reply]: ...
    @overload
    def reset(self, sessions: Sequence[int], options: Body | Sequence[Body] | None = None, *,
              timeout_s: float | None = None, return_exceptions: Literal[True]
              ) -> list[Reply | SessionError]: ...
    @overload
    def step(self, sessions: Sequence[int], actions: Sequence[Body], *,
             timeout_s: float | None = None, return_exceptions: Literal[False] = False
             ) -> list[Reply]: ...
    @overload
    def step(self, sessions: Sequence[int], actions: Sequence[Body], *,
             timeout_s: float | None = None, return_exceptions: Literal[True]
             ) -> list[Reply | SessionError]: ...
    @overload
    def state(self, sessions: Sequence[int], *, timeout_s: float | None = None,
              return_exceptions: Literal[False] = False) -> list[Reply]: ...
    @overload
    def state(self, sessions: Sequence[int], *, timeout_s: float | None = None,
              return_exceptions: Literal[True]) -> list[Reply | SessionError]: ...
    def close(self, sessions: Sequence[int] | None = None) -> None:
        """Close the listed sessions (all when None)."""
    def shutdown(self) -> None:
        """Close every session and stop the I/O thread. Idempotent."""
    def url_of(self, session: int) -> str: ...
    @property
    def sessions(self) -> list[int]: ...
    @property
    def urls(self) -> list[str]: ...
    def stats(self) -> dict[str, int]:
        """requests, errors, timeouts, reconnects, bytes_sent, bytes_received, in_flight,
        peak_in_flight, max_in_flight."""
    def __len__(self) -> int: ...
    def __enter__(self) -> Runtime: ...
    def __exit__(self, *exc: object) -> bool: ...
