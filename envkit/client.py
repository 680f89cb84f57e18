"""The typed OpenEnv WebSocket client base both environments' clients derive from.

Reconnect semantics: an episode lives in the server-side session of one WebSocket. OpenEnv's
client reconnects silently when its socket has closed (a server restart, a dropped link, an
idle session the server reaped), and the new socket is a new session without the episode —
whose next step the server answers with a `no_episode` error marked done. A trainer would
record that as a terminal reward of 0. `TypedEnvClient` instead raises `EpisodeLostError` on
the first `step` or `state` after such a reconnect, and whenever the server says it holds no
episode; the client itself stays usable, and `reset()` starts a new episode.

`HttpSession` plays HTTP episodes instead (`POST /reset`, `POST /step`): the transport of a
sealed run, whose server serves no `/ws`.

Replicas: `base_url` may name several servers (a comma-separated string or a list, e.g. the
ports `python -m memex.openenv_server --replicas N` serves). Each new client — one session —
goes to the next of them in turn (round-robin per set of URLs, shared by the whole process)
and stays there: `client.replica` is the one it uses.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.types import Action, Observation, State
from websockets.exceptions import ConnectionClosed

from memex.envkit.episodes import EnvSessionError


def split_urls(urls: str | Sequence[str]) -> list[str]:
    """Server base URLs from a comma-separated string or a sequence (blanks dropped)."""
    items = urls.split(",") if isinstance(urls, str) else list(urls)
    out = [u.strip().rstrip("/") for u in items if u and u.strip()]
    if not out:
        raise ValueError("no server URL given")
    return out


_rotations: dict[tuple[str, ...], Iterator[str]] = {}
_rotations_lock = threading.Lock()


def next_replica(urls: str | Sequence[str]) -> str:
    """The replica the next new session should use: round-robin over `urls`, process-wide."""
    key = tuple(split_urls(urls))
    if len(key) == 1:
        return key[0]
    with _rotations_lock:
        rotation = _rotations.setdefault(key, itertools.cycle(key))
        return next(rotation)


def observation_from(observation_cls: type[Observation], payload: dict[str, Any]) -> Observation:
    """The typed observation of a server envelope (`{observation, reward, done, metadata}`, the
    same over WebSocket and HTTP): reward and done are the envelope's."""
    data = dict(payload.get("observation", {}))
    data.pop("reward", None)
    data.pop("done", None)
    data["metadata"] = payload.get("metadata") or data.get("metadata") or {}
    return observation_cls(**data, reward=payload.get("reward"),
                           done=bool(payload.get("done", False)))


class EpisodeLostError(ConnectionError):
    """The server no longer holds this client's episode (restarted, connection dropped, or
    the session was reaped when idle). Call `reset()` to start a new one."""


class TypedEnvClient(EnvClient):
    """An OpenEnv WebSocket client that parses the project's typed models. Subclasses name
    their `observation_cls` and `state_cls`; reward and done are copied from the envelope,
    where the server puts them, into both the `StepResult` and the observation."""

    observation_cls: type[Observation]
    state_cls: type[State]
    _episode_socket: Any = None   # the socket whose session holds our episode
    _episode_lost: str | None = None

    def __init__(self, base_url: str | Sequence[str] | None = None, *args: Any, **kwargs: Any):
        """`base_url`: one server, or several replicas (comma-separated or a list) of which
        this client's session takes the next in turn."""
        self.replica = next_replica(base_url) if base_url else None
        super().__init__(self.replica, *args, **kwargs)

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        kind = message.get("type")
        if kind in ("step", "state") and self._episode_socket is not None:
            old = self._ws
            reason = getattr(old, "close_reason", None) if old is not None else None
            await self._ensure_connected()
            if self._ws is not self._episode_socket:
                self._episode_socket = None
                self._episode_lost = ("the connection to the server was lost and the episode "
                                      "with it (server restarted, socket dropped or session "
                                      "reaped" + (f": {reason}" if reason else "") + ")")
        if kind in ("step", "state") and self._episode_lost:
            raise EpisodeLostError(f"{self._episode_lost}; call reset() to start a new episode")
        try:
            response = await super()._send_and_receive(message)
        except ConnectionClosed as exc:
            reason = exc.rcvd.reason if exc.rcvd is not None else ""
            self._episode_socket = None
            self._episode_lost = "the server closed the connection" + (
                f" ({reason})" if reason else "")
            raise EpisodeLostError(f"{self._episode_lost}; call reset() to start a new "
                                   "episode") from exc
        if kind == "reset":
            self._episode_socket, self._episode_lost = self._ws, None
        return response

    def _step_payload(self, action: Action) -> dict[str, Any]:
        return action_payload(action)

    def _parse_result(self, payload: dict[str, Any]) -> StepResult:
        error = (payload.get("observation") or {}).get("error")
        if isinstance(error, dict) and error.get("code") == "no_episode":
            raise EpisodeLostError("the server holds no episode for this session (never reset, "
                                   "or lost on reconnect); call reset() to start one")
        obs = observation_from(self.observation_cls, payload)
        return StepResult(observation=obs, reward=payload.get("reward"), done=obs.done,
                          metadata=payload.get("metadata"))

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return self.state_cls(**payload)


def action_payload(action: Action) -> dict[str, Any]:
    """An action as the servers take it: its fields without defaults left unset, and its
    metadata only when it has some."""
    payload = action.model_dump(exclude={"metadata"}, exclude_none=True)
    return payload | ({"metadata": action.metadata} if action.metadata else {})


def _detail(response: httpx.Response) -> str:
    try:
        detail = response.json().get("detail", response.text)
    except (ValueError, AttributeError):
        detail = response.text
    if isinstance(detail, dict) and "message" in detail:
        detail = f"{detail.get('code', 'error')}: {detail['message']}"
    return " ".join(str(detail).split())[:300]


class HttpSession:
    """HTTP episodes on a running server behind the `envkit.episodes.Session` interface, one at
    a time: `POST /reset`, `POST /step`, `GET /state` and `DELETE /episodes/{id}`. Starting an
    episode, `end()` and `close()` first end an unfinished one with DELETE (a sealed server
    scores it as unfinished). A server failure or an error answer raises `EnvSessionError`;
    `MEMEX_API_TOKEN`, when set, is sent as the bearer token."""

    def __init__(self, client_cls: type[TypedEnvClient], base_url: str,
                 timeout_s: float = 120.0):
        self.base_url = next_replica(base_url)
        self.observation_cls = client_cls.observation_cls
        self.state_cls = client_cls.state_cls
        token = os.environ.get("MEMEX_API_TOKEN")
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout_s,
                                  headers={"authorization": f"Bearer {token}"} if token else {})
        self.episode_id: str | None = None
        self._running = False

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """One call to the server; its JSON answer, or `EnvSessionError`."""
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise EnvSessionError(f"environment server {self.base_url}: "
                                  f"{' '.join(str(exc).split())[:300]}") from exc
        if response.is_error:
            raise EnvSessionError(f"environment server {self.base_url}: {method} {path} -> "
                                  f"{response.status_code} {_detail(response)}")
        return response.json()

    def _observe(self, payload: dict[str, Any]) -> Observation:
        obs = observation_from(self.observation_cls, payload)
        self._running = not obs.done
        return obs

    def reset(self, **options: Any) -> Observation:
        self.end()
        payload = self.request("POST", "/reset", json=options)
        self.episode_id = payload["episode_id"]
        return self._observe(payload)

    def step(self, action: Action) -> Observation:
        return self._observe(self.request("POST", "/step", json={
            "episode_id": self.episode_id, "action": action_payload(action)}))

    def state(self) -> State:
        return self.state_cls(**self.request("GET", "/state",
                                              params={"episode_id": self.episode_id}))

    def end(self) -> None:
        """End the current episode if it has not ended (DELETE)."""
        if self._running and self.episode_id is not None:
            self._running = False
            self.request("DELETE", f"/episodes/{self.episode_id}")

    def close(self) -> None:
        with contextlib.suppress(EnvSessionError):  # a dead server has nothing to end
            self.end()
        self._http.close()
