"""Serving any OpenEnv environment of this project with real sessions on both transports.

`create_env_app` wraps OpenEnv's `create_app` (typed models, `state_cls`, `/ws` sessions with a
session limit and an idle timeout) and replaces the framework's stateless HTTP handlers —
which build a fresh environment per request, so an HTTP user loses the episode between calls —
with session-backed ones: `POST /reset` returns an `episode_id`, `POST /step` with that id
continues the same episode, `GET /state?episode_id=...` reads it, `DELETE /episodes/{id}`
frees it. Unknown or expired ids get a 404 that says so. Used by the AML environment
(`memex.server.app`) and the investment committee (`memex.committee.server.app`).

An `EpisodeWatcher` (sealed evaluation, `envkit.sealed`) sees every reset before it runs and
every episode's end, however it comes: played to the end, deleted, expired or evicted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import os
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from fastapi import Body, FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.serialization import serialize_observation
from openenv.core.env_server.types import Action, ConcurrencyConfig, Observation, State
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memex.envkit.episodes import policy_insight
from memex.envkit.errors import validation_message
from memex.envkit.guards import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_STEP_DEADLINE_S,
    MAX_ID_CHARS,
    BearerAuth,
    BodyLimit,
    WebSocketGuard,
    encodable,
    install_session_pools,
    openenv_server,
    shown,
)
from memex.envkit.mcp import install_mcp_transport
from memex.envkit.tasks import UnknownSplitError

DEFAULT_MAX_SESSIONS = 256
DEFAULT_SESSION_TIMEOUT_S = 900.0
DEFAULT_MAX_MCP_SESSIONS = 16
# An idle live HTTP episode may be evicted for a new one after this long (a full pool).
DEFAULT_EVICT_IDLE_S = 60.0
# The OpenAPI tag of every route on which a server-side policy plays (sealed mode refuses them).
POLICY_ROUTE_TAG = "Built-in agents"
# An episode id as it appears in a /step body that is not valid JSON (see `_step_envelope`).
_EPISODE_ID_IN_TEXT = re.compile(r'"episode_id"\s*:\s*"([A-Za-z0-9_.-]{1,' + str(MAX_ID_CHARS)
                                 + r'})"')
log = logging.getLogger(__name__)


def server_arguments(description: str, port: int) -> argparse.ArgumentParser:
    """The serving flags every environment server shares (host, port, session pool, log level);
    the server adds its own. Loopback by default: a shared server is opted into."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"),
                   help="interface to bind (default loopback only)")
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", port)))
    p.add_argument("--max-sessions", type=int,
                   default=int(os.environ.get("MEMEX_MAX_SESSIONS", DEFAULT_MAX_SESSIONS)))
    p.add_argument("--session-timeout", type=float,
                   default=float(os.environ.get("MEMEX_SESSION_TIMEOUT_S",
                                                DEFAULT_SESSION_TIMEOUT_S)))
    p.add_argument("--log-level", default="info")
    return p


class HttpStepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    episode_id: str = Field(max_length=MAX_ID_CHARS)
    action: Any = Field(description="The environment's action (a JSON object).")


class HttpEpisodeResponse(BaseModel):
    episode_id: str
    observation: dict[str, Any]
    reward: float | None = None
    done: bool = False
    metadata: dict[str, Any] | None = None


@dataclass
class Episode:
    env: Environment
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_used: float = field(default_factory=time.monotonic)
    first: Observation | None = None
    last: Observation | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    finished: bool = False


class EpisodeWatcher(Protocol):
    """Sees every HTTP reset before it runs and every HTTP episode's end (`envkit.sealed`)."""

    def seal(self, options: BaseModel) -> BaseModel:
        """The reset options to play (or an `HTTPException` refusing them)."""

    def opened(self, episode_id: str, ep: Episode, options: BaseModel) -> None:
        """An episode has been reset with `options`."""

    def ended(self, episode_id: str, ep: Episode, reason: str) -> None:
        """An episode leaves the live pool: `finished` (its last observation is done),
        `deleted`, `expired` (idle past the timeout, or evicted idle from a full pool) or
        `abandoned`; called before its environment is closed."""


class HttpEpisodes:
    """HTTP episodes by id: a bounded pool of live ones and a bounded store of finished ones.

    A live episode holds a slot until it ends, is deleted, or sits idle past `idle_timeout_s`;
    only steps extend its life (reads of /state or /truth do not). An episode that ends moves at
    once to the finished store (the `finished_capacity` most recent ones, for /state, /truth and
    replay), freeing its slot. When every slot is taken, the least recently used episode idle for
    at least `evict_idle_s` is evicted; if none is, `open` answers 503 with `Retry-After`.
    """

    def __init__(self, factory: Callable[[], Environment], capacity: int, idle_timeout_s: float,
                 finished_capacity: int | None = None, evict_idle_s: float | None = None):
        self.factory = factory
        self.capacity = capacity
        self.idle_timeout_s = idle_timeout_s
        self.finished_capacity = finished_capacity or capacity
        self.evict_idle_s = min(idle_timeout_s, DEFAULT_EVICT_IDLE_S) if evict_idle_s is None \
            else evict_idle_s
        self._episodes: OrderedDict[str, Episode] = OrderedDict()   # live, LRU first
        self._finished: OrderedDict[str, Episode] = OrderedDict()   # oldest first
        self.watcher: EpisodeWatcher | None = None

    def _drop(self, episode_id: str, reason: str) -> Episode:
        """A live episode leaves the pool unfinished: the watcher sees it, then it is closed."""
        ep = self._episodes.pop(episode_id)
        try:
            if self.watcher is not None:
                self.watcher.ended(episode_id, ep, reason)
        finally:
            ep.env.close()
        return ep

    def reap(self) -> int:
        cutoff = time.monotonic() - self.idle_timeout_s
        stale = [k for k, ep in self._episodes.items()
                 if ep.last_used < cutoff and not ep.lock.locked()]
        for k in stale:
            self._drop(k, "expired")
        return len(stale)

    def _evict_one(self) -> bool:
        cutoff = time.monotonic() - self.evict_idle_s
        for k, ep in self._episodes.items():  # least recently used first
            if ep.last_used > cutoff:
                return False
            if not ep.lock.locked():
                self._drop(k, "expired")
                return True
        return False

    def open(self, episode_id: str | None) -> tuple[str, Episode]:
        self.reap()
        if episode_id is not None and (episode_id in self._episodes
                                       or episode_id in self._finished):
            raise HTTPException(409, f"episode_id {episode_id!r} is already in use")
        if len(self._episodes) >= self.capacity and not self._evict_one():
            oldest = next(iter(self._episodes.values()))
            retry_s = oldest.last_used + self.evict_idle_s - time.monotonic()
            raise HTTPException(503, f"server at capacity ({self.capacity} live HTTP episodes); "
                                     "retry later or DELETE /episodes/{id} unfinished ones",
                                headers={"Retry-After": str(max(1, math.ceil(retry_s)))})
        episode_id = episode_id or secrets.token_hex(8)
        ep = Episode(self.factory())
        self._episodes[episode_id] = ep
        return episode_id, ep

    def get(self, episode_id: str, touch: bool = True) -> Episode:
        """The episode, live or finished; `touch` (a step) extends a live one's life."""
        ep = self._episodes.get(episode_id) or self._finished.get(episode_id)
        expired = ep is not None and not ep.finished and \
            time.monotonic() - ep.last_used > self.idle_timeout_s
        if expired and not ep.lock.locked():
            self._drop(episode_id, "expired")
        if ep is None or expired:
            raise HTTPException(404, f"unknown or expired episode_id {shown(episode_id)}; "
                                     "start one with POST /reset")
        if touch and not ep.finished:
            ep.last_used = time.monotonic()
            self._episodes.move_to_end(episode_id)
        return ep

    def settle(self, episode_id: str, ep: Episode) -> None:
        """After a step: the idle clock restarts (a step may have waited for the episode's
        lock), and an episode that has ended leaves the live pool for the finished store."""
        ep.last_used = time.monotonic()
        if ep.last is not None and ep.last.done and not ep.finished:
            ep.finished = True
            ep.extras.clear()
            self._episodes.pop(episode_id, None)
            self._finished[episode_id] = ep
            if self.watcher is not None:
                self.watcher.ended(episode_id, ep, "finished")
            while len(self._finished) > self.finished_capacity:
                self._finished.popitem(last=False)[1].env.close()

    def close(self, episode_id: str, reason: str = "deleted") -> None:
        """End and free an episode: a live one leaves the pool for `reason` (the watcher sees
        it), a finished one leaves the store."""
        if episode_id in self._episodes:
            self._drop(episode_id, reason)
            return
        ep = self._finished.pop(episode_id, None)
        if ep is None:
            raise HTTPException(404, f"unknown or expired episode_id {shown(episode_id)}")
        ep.env.close()

    def peek(self, episode_id: str) -> Episode | None:
        """The episode, live or finished, without touching or expiring it."""
        return self._episodes.get(episode_id) or self._finished.get(episode_id)

    def live_ids(self) -> list[str]:
        return list(self._episodes)

    @property
    def finished(self) -> int:
        return len(self._finished)

    def __len__(self) -> int:
        return len(self._episodes)


def wire_errors(exc: ValidationError) -> list[dict[str, Any]]:
    """A validation error's details as a 422 shows them: no input echoed, no URL, and no
    context (a validator's own exception object is no JSON)."""
    return exc.errors(include_url=False, include_input=False, include_context=False)


def envelope(episode_id: str, obs: Observation) -> HttpEpisodeResponse:
    return HttpEpisodeResponse(episode_id=episode_id, **serialize_observation(obs))


class AgentStepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    policy: str = "heuristic"


class AgentStepResponse(HttpEpisodeResponse):
    action: dict[str, Any]
    policy: str
    insight: dict[str, Any] | None = Field(
        default=None, description="What the agent believes after choosing the action, when it "
                                  "shows it (`Policy.insight`: e.g. the committee heuristic's "
                                  "regime belief).")


@dataclass(frozen=True)
class ServerSettings:
    """The serving limits of one app: arguments first, then the environment variables."""

    max_sessions: int
    idle_timeout_s: float
    step_deadline_s: float
    max_mcp_sessions: int
    max_body_bytes: int
    api_token: str | None

    @classmethod
    def resolve(cls, max_sessions: int | None = None, idle_timeout_s: float | None = None,
                step_deadline_s: float | None = None) -> ServerSettings:
        env = os.environ
        return cls(
            max_sessions=max_sessions or int(env.get("MEMEX_MAX_SESSIONS",
                                                     DEFAULT_MAX_SESSIONS)),
            idle_timeout_s=idle_timeout_s or float(env.get("MEMEX_SESSION_TIMEOUT_S",
                                                           DEFAULT_SESSION_TIMEOUT_S)),
            step_deadline_s=step_deadline_s or float(env.get("MEMEX_STEP_DEADLINE_S",
                                                             DEFAULT_STEP_DEADLINE_S)),
            max_mcp_sessions=int(env.get("MEMEX_MAX_MCP_SESSIONS", DEFAULT_MAX_MCP_SESSIONS)),
            max_body_bytes=int(env.get("MEMEX_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES)),
            api_token=env.get("MEMEX_API_TOKEN") or None)

    def public(self, agent_policies: Mapping[str, Any] | None) -> dict[str, Any]:
        """What `/info` shows (never the token)."""
        return {"max_sessions": self.max_sessions, "idle_timeout_s": self.idle_timeout_s,
                "step_deadline_s": self.step_deadline_s,
                "max_mcp_sessions": self.max_mcp_sessions, "max_body_bytes": self.max_body_bytes,
                "agent_policies": list(agent_policies or ())}


def create_env_app(env_cls: type[Environment], action_cls: type[Action],
                   observation_cls: type[Observation], state_cls: type[State], *, name: str,
                   reset_model: type[BaseModel], title: str, max_sessions: int | None = None,
                   idle_timeout_s: float | None = None,
                   agent_policies: Mapping[str, Callable[[], Any]] | None = None,
                   action_schema_extra: Mapping[str, Any] | None = None,
                   step_deadline_s: float | None = None) -> FastAPI:
    """An OpenEnv app with WS sessions and stateful HTTP episodes for `env_cls`.

    `reset_model` is the body of `POST /reset`: its fields (minus `episode_id`) are passed to
    `env.reset` as keyword arguments. The live episodes are on `app.state.http_episodes`.
    `max_sessions` and `idle_timeout_s` default to `MEMEX_MAX_SESSIONS` (256) and
    `MEMEX_SESSION_TIMEOUT_S` (900); HTTP-MCP sessions have their own pool of
    `MEMEX_MAX_MCP_SESSIONS` (16); request bodies over `MEMEX_MAX_BODY_BYTES` (256 KiB) get
    413; with `MEMEX_API_TOKEN` set, every route but `/health` needs that bearer token; a
    read-only tool call running past `step_deadline_s` (`MEMEX_STEP_DEADLINE_S`, 2 s) gets a
    typed `deadline_exceeded` error, and steps with large arguments run off the event loop.
    With `agent_policies` (name -> policy factory; a policy
    has `name`, `reset(obs)` and `act(obs)`), `POST /episodes/{id}/agent-step` lets a built-in
    baseline take the next step of an HTTP episode — no API key needed. `action_schema_extra`
    is merged into the `action` entry of `GET /schema` (e.g. the per-tool argument schemas
    derived from the tool declarations, which the wire model itself need not import).
    """
    settings = ServerSettings.resolve(max_sessions, idle_timeout_s, step_deadline_s)
    env_cls = with_step_deadline(env_cls, settings.step_deadline_s)
    app = create_app(
        env_cls, action_cls, observation_cls, env_name=name,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=settings.max_sessions,
                                             session_timeout=settings.idle_timeout_s),
        state_cls=state_cls)
    app.title = title
    replaced = {("/reset", "POST"), ("/step", "POST"), ("/state", "GET")}
    if action_schema_extra:
        replaced.add(("/schema", "GET"))
    _drop_routes(app, replaced)
    episodes = HttpEpisodes(env_cls, settings.max_sessions, settings.idle_timeout_s)
    app.state.http_episodes = episodes
    app.state.session_pools = install_session_pools(openenv_server(app), settings.max_sessions,
                                                    settings.max_mcp_sessions)
    install_mcp_transport(app, openenv_server(app), name=name)
    _install_error_handlers(app)
    _install_episode_routes(app, episodes, action_cls, state_cls, reset_model)
    if action_schema_extra:
        _install_schema_route(app, action_cls, observation_cls, state_cls, action_schema_extra)
    if agent_policies:
        _install_agent_step(app, episodes, agent_policies)
    app.state.settings = settings.public(agent_policies)
    app.state.env_name = name
    _install_reaper(app, episodes, settings.idle_timeout_s)
    _install_middleware(app, settings)
    return app


def with_step_deadline(env_cls: type[Environment], step_deadline_s: float
                       ) -> type[Environment]:
    """`env_cls` carrying this app's step deadline: a subclass of the same name and module,
    so OpenEnv's class checks and the schema names see the environment unchanged."""
    return type(env_cls.__name__, (env_cls,), {"step_deadline_s": step_deadline_s,
                                               "__module__": env_cls.__module__})


def _drop_routes(app: FastAPI, replaced: set[tuple[str, str]]) -> None:
    """Remove the framework's (stateless) handlers of the `(path, method)` pairs replaced."""
    app.router.routes[:] = [r for r in app.router.routes if not (
        isinstance(r, APIRoute) and any((r.path, m) in replaced for m in r.methods))]


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def _invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's default echoes every invalid input back, whatever its size.
        errors = [{k: v for k, v in e.items() if k in ("type", "loc", "msg")}
                  for e in exc.errors()[:20]]
        return JSONResponse({"detail": errors}, status_code=422)

    @app.exception_handler(RecursionError)
    async def _too_deep(request: Request, exc: RecursionError) -> JSONResponse:
        return JSONResponse({"detail": "JSON nested too deeply"}, status_code=422)

    @app.exception_handler(UnknownSplitError)
    async def _unknown_split(request: Request, exc: UnknownSplitError) -> JSONResponse:
        # OpenEnv's Task API routes map only a bad index (400); a split is a 404 that names them.
        return JSONResponse({"detail": str(exc.args[0])}, status_code=404)


def _install_episode_routes(app: FastAPI, episodes: HttpEpisodes, action_cls: type[Action],
                            state_cls: type[State], reset_model: type[BaseModel]) -> None:
    """`POST /reset`, `POST /step`, `GET /state` and `DELETE /episodes/{id}` on `episodes`."""

    async def reset(request: dict[str, Any] | None = Body(default=None)) -> HttpEpisodeResponse:
        try:
            options = reset_model.model_validate(request or {})
        except ValidationError as exc:
            raise HTTPException(422, wire_errors(exc)) from None
        watcher = episodes.watcher
        if watcher is not None:
            options = watcher.seal(options)  # sealed evaluation (`envkit/sealed.py`): the seed
        episode_id, ep = episodes.open(getattr(options, "episode_id", None))
        async with ep.lock:
            try:
                obs = ep.env.reset(**options.model_dump(exclude={"episode_id"}),
                                   episode_id=episode_id)
            except ValueError as exc:
                episodes.close(episode_id)
                raise HTTPException(422, str(exc)) from None
            ep.first = ep.last = obs
            if watcher is not None:
                watcher.opened(episode_id, ep, options)
        return envelope(episode_id, obs)

    reset.__doc__ = f"Start an HTTP episode. Body: {reset_model.__name__} (all optional)."
    app.post("/reset", response_model=HttpEpisodeResponse, tags=["Environment Control"],
             summary="Start an HTTP episode; returns its episode_id",
             openapi_extra={"requestBody": {"content": {"application/json": {
                 "schema": reset_model.model_json_schema()}}}})(reset)

    # An environment with `step_malformed(message)` answers an envelope whose action cannot be
    # read (not an object, a wrong `action_type`, a body that is not JSON but names its
    # episode) with a typed error observation, as it answers a malformed argument; any other
    # environment gets a 422 for it.
    malformed_steps = callable(getattr(episodes.factory, "step_malformed", None))

    @app.post("/step", response_model=HttpEpisodeResponse, tags=["Environment Control"],
              summary="Take one action in an HTTP episode",
              openapi_extra={"requestBody": {"required": True, "content": {"application/json": {
                  "schema": HttpStepRequest.model_json_schema()}}}})
    async def step(request: Request) -> HttpEpisodeResponse:
        episode_id, action, problem = _step_envelope(await request.body(), action_cls,
                                                     readable_id=malformed_steps)
        ep = episodes.get(episode_id)
        if isinstance(problem, list):
            raise HTTPException(422, problem)
        async with ep.lock:
            if problem is None:
                ep.last = await ep.env.step_async(action)
            else:
                ep.last = ep.env.step_malformed(problem)
            episodes.settle(episode_id, ep)
        return envelope(episode_id, ep.last)

    @app.get("/state", response_model=state_cls, tags=["State Management"],
             summary="State of an HTTP episode")
    async def state(episode_id: str = Query(...)) -> State:
        ep = episodes.get(episode_id, touch=False)
        async with ep.lock:  # never mid-step (a step with large arguments runs in a thread)
            return ep.env.state

    @app.delete("/episodes/{episode_id}", tags=["Environment Control"],
                summary="Close an HTTP episode and free its slot")
    async def close_episode(episode_id: str) -> dict[str, str]:
        ep = episodes.peek(episode_id)
        if ep is None:
            episodes.close(episode_id)  # the 404
        async with ep.lock:  # never mid-step: the step's result is what the episode ends on
            episodes.close(episode_id)
        return {"closed": episode_id}


def _step_envelope(raw: bytes, action_cls: type[Action], readable_id: bool
                   ) -> tuple[str, Action | None, str | list[dict[str, Any]] | None]:
    """A `/step` body read as (episode_id, action, problem): problem None (the action is
    valid), a one-line reason the action cannot be read (the episode is known: a malformed
    step), or a list of validation errors (a 422). With `readable_id`, the episode id of a body
    that is not JSON is read from its text when it names one, so that step is answered too.
    An envelope with no readable episode id is a 422; text that is not valid Unicode is a 422
    that applies nothing."""
    try:
        body: Any = json.loads(raw)
    except RecursionError:
        raise HTTPException(422, "JSON nested too deeply") from None
    except ValueError:  # UnicodeDecodeError included
        found = _EPISODE_ID_IN_TEXT.findall(raw.decode("utf-8", "replace")) if readable_id \
            else []
        if len(found) != 1:
            raise HTTPException(422, [{"type": "json_invalid", "loc": ["body"],
                                       "msg": "the request body is not valid JSON"}]) from None
        return found[0], None, "the request body is not valid JSON; nothing of it was read"
    try:
        envelope_ = HttpStepRequest.model_validate(body)
    except ValidationError as exc:
        errors = wire_errors(exc)
        episode_id = body.get("episode_id") if isinstance(body, dict) else None
        if not readable_id or not isinstance(episode_id, str) or not episode_id \
                or len(episode_id) > MAX_ID_CHARS:
            raise HTTPException(422, errors) from None
        return episode_id, None, f"malformed envelope: {validation_message(exc, root='body')}"
    if not encodable(envelope_.action):
        raise HTTPException(422, "the action holds text that is not valid Unicode (e.g. a "
                                 "lone surrogate escape); nothing was applied")
    try:
        return envelope_.episode_id, action_cls.model_validate(envelope_.action), None
    except ValidationError as exc:
        if readable_id:
            return envelope_.episode_id, None, ("malformed action: "
                                                + validation_message(exc, root="action"))
        return envelope_.episode_id, None, wire_errors(exc)


def _install_schema_route(app: FastAPI, action_cls: type[Action],
                          observation_cls: type[Observation], state_cls: type[State],
                          action_schema_extra: Mapping[str, Any]) -> None:
    """`GET /schema` with `action_schema_extra` merged into the action's schema."""

    @app.get("/schema", tags=["Schema"], summary="Get all JSON schemas")
    async def schema() -> dict[str, Any]:
        observation = observation_cls.model_json_schema()
        return {"action": action_cls.model_json_schema() | dict(action_schema_extra),
                "observation": observation, "reset_observation": observation,
                "state": state_cls.model_json_schema()}


def _install_agent_step(app: FastAPI, episodes: HttpEpisodes,
                        agent_policies: Mapping[str, Callable[[], Any]]) -> None:
    """`POST /episodes/{id}/agent-step`: a built-in baseline takes the episode's next step."""

    @app.post("/episodes/{episode_id}/agent-step", response_model=AgentStepResponse,
              tags=[POLICY_ROUTE_TAG],
              summary="Let a built-in baseline agent take the next step")
    async def agent_step(episode_id: str, request: AgentStepRequest | None = None
                         ) -> AgentStepResponse:
        request = request or AgentStepRequest()
        if request.policy not in agent_policies:
            raise HTTPException(422, f"unknown policy {request.policy!r}; built-in: "
                                     f"{', '.join(agent_policies)}")
        ep = episodes.get(episode_id)
        async with ep.lock:
            if ep.last is None:
                raise HTTPException(409, "reset the episode first")
            action = _agent_action(ep, request.policy, agent_policies)
            insight = policy_insight(ep.extras["agent"])
            ep.last = await ep.env.step_async(action)
            ep.extras["agent_obs"] = ep.last
            episodes.settle(episode_id, ep)
        return AgentStepResponse(**envelope(episode_id, ep.last).model_dump(),
                                 action=action.model_dump(exclude={"metadata"},
                                                          exclude_none=True),
                                 policy=request.policy, insight=insight)


def _install_reaper(app: FastAPI, episodes: HttpEpisodes, idle_timeout_s: float) -> None:
    """A background task, started with the app, that closes idle HTTP episodes."""

    async def _reaper() -> None:
        while True:
            await asyncio.sleep(max(1.0, idle_timeout_s / 4))
            try:
                episodes.reap()
            except Exception:  # one episode that fails to end must not stop the reaping
                log.exception("reaping idle HTTP episodes")

    async def _start_reaper() -> None:
        app.state.reaper = asyncio.create_task(_reaper())

    app.router.on_startup.append(_start_reaper)


def _install_middleware(app: FastAPI, settings: ServerSettings) -> None:
    """Idle WebSockets closed, request bodies bounded, and the bearer token when one is set."""
    app.add_middleware(WebSocketGuard, idle_timeout_s=settings.idle_timeout_s)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    if settings.api_token:
        app.add_middleware(BearerAuth, token=settings.api_token)


def _agent_action(ep: Episode, policy: str,
                  agent_policies: Mapping[str, Callable[[], Any]]) -> Action:
    """The built-in agent's next action. A policy reads each result as the answer to its own
    last call, so after a manual step (or a policy switch) a fresh agent starts over from the
    first observation rather than misreading the manual step's result."""
    agent = ep.extras.get("agent")
    if agent is not None and agent.name == policy and ep.extras.get("agent_obs") is ep.last:
        with contextlib.suppress(Exception):  # a confused agent restarts below, never a 500
            return agent.act(ep.last)
    agent = agent_policies[policy]()
    agent.reset(ep.first)
    ep.extras["agent"] = agent
    try:
        return agent.act(ep.first)
    except Exception as exc:
        raise HTTPException(409, f"the built-in {policy!r} agent cannot continue this "
                                 f"episode ({type(exc).__name__})") from None


class ResetFields(BaseModel):
    """Base for `reset_model`s: an optional client-chosen episode id. Strict: `seed: true` or
    `seed: "7"` is a 422, not a silent conversion."""

    model_config = ConfigDict(extra="forbid", strict=True)
    episode_id: str | None = Field(default=None, min_length=4, max_length=64,
                                   pattern=r"^[A-Za-z0-9_.-]+$")
