"""Serving any OpenEnv environment of this project with real sessions on both transports.

`create_env_app` wraps OpenEnv's `create_app` (typed models, `state_cls`, `/ws` sessions with a
session limit and an idle timeout) and replaces the framework's stateless HTTP handlers —
which build a fresh environment per request, so an HTTP user loses the episode between calls —
with session-backed ones: `POST /reset` returns an `episode_id`, `POST /step` with that id
continues the same episode, `GET /state?episode_id=...` reads it, `DELETE /episodes/{id}`
frees it. Unknown or expired ids get a 404 that says so. Used by the AML environment
(`server/app.py`) and the investment committee (`committee/server.py`).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import Body, FastAPI, HTTPException, Query
from fastapi.routing import APIRoute
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.serialization import serialize_observation
from openenv.core.env_server.types import Action, ConcurrencyConfig, Observation, State
from pydantic import BaseModel, ConfigDict, Field, ValidationError

DEFAULT_MAX_SESSIONS = 256
DEFAULT_SESSION_TIMEOUT_S = 900.0


class HttpStepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    episode_id: str
    action: dict[str, Any]


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


class HttpEpisodes:
    """Live HTTP episodes by id, bounded in number and reaped when idle."""

    def __init__(self, factory: Callable[[], Environment], capacity: int, idle_timeout_s: float):
        self.factory = factory
        self.capacity = capacity
        self.idle_timeout_s = idle_timeout_s
        self._episodes: dict[str, Episode] = {}

    def reap(self) -> int:
        cutoff = time.monotonic() - self.idle_timeout_s
        stale = [k for k, ep in self._episodes.items()
                 if ep.last_used < cutoff and not ep.lock.locked()]
        for k in stale:
            self._episodes.pop(k).env.close()
        return len(stale)

    def open(self, episode_id: str | None) -> tuple[str, Episode]:
        self.reap()
        if episode_id is not None and episode_id in self._episodes:
            raise HTTPException(409, f"episode_id {episode_id!r} is already in use")
        if len(self._episodes) >= self.capacity:
            raise HTTPException(503, f"server at capacity ({self.capacity} live HTTP episodes); "
                                     "retry later or DELETE /episodes/{id} finished ones")
        episode_id = episode_id or secrets.token_hex(8)
        ep = Episode(self.factory())
        self._episodes[episode_id] = ep
        return episode_id, ep

    def get(self, episode_id: str) -> Episode:
        ep = self._episodes.get(episode_id)
        if ep is None or time.monotonic() - ep.last_used > self.idle_timeout_s:
            raise HTTPException(404, f"unknown or expired episode_id {episode_id!r}; "
                                     "start one with POST /reset")
        ep.last_used = time.monotonic()
        return ep

    def close(self, episode_id: str) -> None:
        ep = self._episodes.pop(episode_id, None)
        if ep is None:
            raise HTTPException(404, f"unknown or expired episode_id {episode_id!r}")
        ep.env.close()

    def __len__(self) -> int:
        return len(self._episodes)


class WebSocketMessageGuard:
    """ASGI middleware: a `/ws` text frame that is valid JSON but not an object (e.g. `0` or
    `[]`) makes OpenEnv's session loop raise outside its error handling and drop the session.
    Such frames are rewritten into a message of unknown type, which the framework answers with
    a typed `UNKNOWN_TYPE` error while the session lives on."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "websocket":
            return await self.app(scope, receive, send)

        async def guarded_receive():
            message = await receive()
            text = message.get("text") if message.get("type") == "websocket.receive" else None
            if text is not None:
                try:
                    parsed = json.loads(text)
                except ValueError:
                    parsed = {}  # not JSON at all: the framework already answers INVALID_JSON
                if not isinstance(parsed, dict):
                    message = {**message, "text": json.dumps(
                        {"type": f"non-object JSON message ({type(parsed).__name__})"})}
            return message

        return await self.app(scope, guarded_receive, send)


def envelope(episode_id: str, obs: Observation) -> HttpEpisodeResponse:
    return HttpEpisodeResponse(episode_id=episode_id, **serialize_observation(obs))


class AgentStepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    policy: str = "heuristic"


class AgentStepResponse(HttpEpisodeResponse):
    action: dict[str, Any]
    policy: str


def create_env_app(env_cls: type[Environment], action_cls: type[Action],
                   observation_cls: type[Observation], state_cls: type[State], *, name: str,
                   reset_model: type[BaseModel], title: str, max_sessions: int | None = None,
                   idle_timeout_s: float | None = None,
                   agent_policies: Mapping[str, Callable[[], Any]] | None = None) -> FastAPI:
    """An OpenEnv app with WS sessions and stateful HTTP episodes for `env_cls`.

    `reset_model` is the body of `POST /reset`: its fields (minus `episode_id`) are passed to
    `env.reset` as keyword arguments. The live episodes are on `app.state.http_episodes`.
    `max_sessions` and `idle_timeout_s` default to `MEMEX_MAX_SESSIONS` (256) and
    `MEMEX_SESSION_TIMEOUT_S` (900). With `agent_policies` (name -> policy factory; a policy
    has `name`, `reset(obs)` and `act(obs)`), `POST /episodes/{id}/agent-step` lets a built-in
    baseline take the next step of an HTTP episode — no API key needed.
    """
    max_sessions = max_sessions or int(os.environ.get("MEMEX_MAX_SESSIONS",
                                                      DEFAULT_MAX_SESSIONS))
    idle_timeout_s = idle_timeout_s or float(os.environ.get("MEMEX_SESSION_TIMEOUT_S",
                                                            DEFAULT_SESSION_TIMEOUT_S))
    app = create_app(
        env_cls, action_cls, observation_cls, env_name=name,
        concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                             session_timeout=idle_timeout_s),
        state_cls=state_cls)
    app.title = title
    replaced = {("/reset", "POST"), ("/step", "POST"), ("/state", "GET")}
    app.router.routes[:] = [r for r in app.router.routes if not (
        isinstance(r, APIRoute) and any((r.path, m) in replaced for m in r.methods))]
    episodes = HttpEpisodes(env_cls, max_sessions, idle_timeout_s)
    app.state.http_episodes = episodes

    async def reset(request: dict[str, Any] | None = Body(default=None)) -> HttpEpisodeResponse:
        try:
            options = reset_model.model_validate(request or {})
        except ValidationError as exc:
            raise HTTPException(422, exc.errors(include_url=False, include_input=False)) from None
        episode_id, ep = episodes.open(getattr(options, "episode_id", None))
        async with ep.lock:
            try:
                obs = ep.env.reset(**options.model_dump(exclude={"episode_id"}),
                                   episode_id=episode_id)
            except ValueError as exc:
                episodes.close(episode_id)
                raise HTTPException(422, str(exc)) from None
            ep.first = ep.last = obs
        return envelope(episode_id, obs)

    reset.__doc__ = f"Start an HTTP episode. Body: {reset_model.__name__} (all optional)."
    app.post("/reset", response_model=HttpEpisodeResponse, tags=["Environment Control"],
             summary="Start an HTTP episode; returns its episode_id",
             openapi_extra={"requestBody": {"content": {"application/json": {
                 "schema": reset_model.model_json_schema()}}}})(reset)

    @app.post("/step", response_model=HttpEpisodeResponse, tags=["Environment Control"],
              summary="Take one action in an HTTP episode")
    async def step(request: HttpStepRequest) -> HttpEpisodeResponse:
        ep = episodes.get(request.episode_id)
        try:
            action = action_cls.model_validate(request.action)
        except ValidationError as exc:
            raise HTTPException(422, exc.errors(include_url=False, include_input=False)) from None
        async with ep.lock:
            ep.last = ep.env.step(action)
        return envelope(request.episode_id, ep.last)

    @app.get("/state", response_model=state_cls, tags=["State Management"],
             summary="State of an HTTP episode")
    async def state(episode_id: str = Query(...)) -> State:
        return episodes.get(episode_id).env.state

    @app.delete("/episodes/{episode_id}", tags=["Environment Control"],
                summary="Close an HTTP episode and free its slot")
    async def close_episode(episode_id: str) -> dict[str, str]:
        episodes.close(episode_id)
        return {"closed": episode_id}

    if agent_policies:
        @app.post("/episodes/{episode_id}/agent-step", response_model=AgentStepResponse,
                  tags=["Environment Control"],
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
                agent = ep.extras.get("agent")
                if agent is None or agent.name != request.policy:
                    agent = agent_policies[request.policy]()
                    agent.reset(ep.first)
                    ep.extras["agent"] = agent
                action = agent.act(ep.last)
                ep.last = ep.env.step(action)
            return AgentStepResponse(**envelope(episode_id, ep.last).model_dump(),
                                     action=action.model_dump(exclude={"metadata"},
                                                              exclude_none=True),
                                     policy=request.policy)

    app.state.settings = {"max_sessions": max_sessions, "idle_timeout_s": idle_timeout_s,
                          "agent_policies": list(agent_policies or ())}

    async def _reaper() -> None:
        while True:
            await asyncio.sleep(max(1.0, idle_timeout_s / 4))
            episodes.reap()

    async def _start_reaper() -> None:
        app.state.reaper = asyncio.create_task(_reaper())

    app.router.on_startup.append(_start_reaper)
    app.add_middleware(WebSocketMessageGuard)
    return app


class ResetFields(BaseModel):
    """Base for `reset_model`s: an optional client-chosen episode id."""

    model_config = ConfigDict(extra="forbid")
    episode_id: str | None = Field(default=None, min_length=4, max_length=64,
                                   pattern=r"^[A-Za-z0-9_.-]+$")
