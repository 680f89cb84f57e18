"""Clients: the typed OpenEnv WebSocket client, and the TRL tool environment.

`MemexEnv` is the standard OpenEnv `EnvClient` for `/ws` sessions:

    with MemexEnv(base_url="http://localhost:7860").sync() as env:
        result = env.reset(seed=7, difficulty="hard")
        result = env.step(MemexAction(tool="review_alert"))

`MemexToolEnv` is a class for TRL's `GRPOTrainer(environment_factory=...)`: its public methods
are the 18 tools, generated from the declarations in `server/tools.py` (same names, parameters
and docstrings), backed by an in-process environment or a remote server.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.types import Action, Observation, State

from memex.models import MemexAction, MemexObservation, MemexState
from memex.server.declarations import tool_method
from memex.server.tools import TOOLS


class TypedEnvClient(EnvClient):
    """An OpenEnv WebSocket client that parses the project's typed models. Subclasses name
    their `observation_cls` and `state_cls`; reward and done are copied from the envelope,
    where the server puts them, into both the `StepResult` and the observation."""

    observation_cls: type[Observation]
    state_cls: type[State]

    def _step_payload(self, action: Action) -> dict[str, Any]:
        payload = action.model_dump(exclude={"metadata"}, exclude_none=True)
        return payload | ({"metadata": action.metadata} if action.metadata else {})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult:
        data = dict(payload.get("observation", {}))
        data.pop("reward", None)
        data.pop("done", None)
        data["metadata"] = payload.get("metadata") or data.get("metadata") or {}
        obs = self.observation_cls(**data, reward=payload.get("reward"),
                                   done=bool(payload.get("done", False)))
        return StepResult(observation=obs, reward=payload.get("reward"), done=obs.done,
                          metadata=payload.get("metadata"))

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return self.state_cls(**payload)


class MemexEnv(TypedEnvClient):
    """Typed WebSocket client for a Memex server (one session per client instance)."""

    observation_cls = MemexObservation
    state_cls = MemexState


def render_step(obs: MemexObservation) -> str:
    """Compact text of one step for a tool message: result or error, events, reward."""
    parts = []
    if obs.error is not None:
        parts.append(f"ERROR {obs.error.code}: {obs.error.message}")
    elif obs.result is not None:
        parts.append(json.dumps(obs.result, separators=(",", ":"), default=str))
    parts += [f"[event] {e}" for e in obs.events]
    parts.append(f"[step {obs.step}/{obs.step_budget}, reward {obs.reward}]")
    if obs.done:
        parts.append("[episode over] " + json.dumps(obs.metadata.get("terminal", {}),
                                                    separators=(",", ":")))
    return "\n".join(parts)


class ToolEnvironment(ABC):
    """Base of the TRL `environment_factory` classes: one episode per instance, backed by an
    in-process environment or, with `base_url`, by a server session.

    TRL turns every public method into a tool, so the only public methods are `reset`,
    `get_reward` and the tools, which `_install_tools` generates from the declarations; the
    rest is private. Subclasses set `client_cls` and `reset_options` and implement
    `_environment`, `_action`, `_briefing` and `_render`.
    """

    client_cls: type[TypedEnvClient]
    reset_options: tuple[str, ...]

    def __init__(self, base_url: str | None = None, **reset_defaults: Any):
        self.reset_defaults = reset_defaults
        self.base_url = base_url
        self._env = self._environment() if base_url is None else None
        self._client = None
        if base_url is not None:
            self._client = self.client_cls(base_url=base_url).sync()
            self._client.connect()
        self.episode_return, self.done, self.steps, self.tool_calls = 0.0, False, 0, 0
        self.observations: list[Observation] = []

    def reset(self, **kwargs: Any) -> str:
        options = {k: v for k, v in (self.reset_defaults | kwargs).items()
                   if k in self.reset_options}
        obs = self._env.reset(**options) if self._client is None else \
            self._client.reset(**options).observation
        self.episode_return, self.done, self.steps, self.tool_calls = 0.0, False, 0, 0
        self.observations = [obs]
        return self._briefing(obs)

    def _call(self, name: str, arguments: dict[str, Any]) -> str:
        self.tool_calls += 1
        if self.done:
            return "ERROR episode_done: the episode has ended; no further tools run."
        action = self._action(name, json.loads(json.dumps(arguments, default=str)))
        obs = self._env.step(action) if self._client is None else \
            self._client.step(action).observation
        self.steps += 1
        self.episode_return += obs.reward or 0.0
        self.done = obs.done
        self.observations.append(obs)
        return self._render(obs)

    def get_reward(self) -> float:
        return round(self.episode_return, 6)

    def _close(self) -> None:
        """End a remote session."""
        if self._client is not None:
            self._client.close()

    @classmethod
    def _install_tools(cls, specs: dict[str, Any], returns: str) -> None:
        for spec in specs.values():
            setattr(cls, spec.name, tool_method(spec, returns))

    # -- hooks --
    @abstractmethod
    def _environment(self) -> Any:
        ...

    @abstractmethod
    def _action(self, name: str, arguments: dict[str, Any]) -> Action:
        ...

    @abstractmethod
    def _briefing(self, obs: Any) -> str:
        ...

    @abstractmethod
    def _render(self, obs: Any) -> str:
        ...


class MemexToolEnv(ToolEnvironment):
    """TRL `environment_factory` class for Memex: the 18 tools as methods.

    `reset(**example)` starts an episode (example fields such as `seed`, `difficulty`, `kind`
    are passed to the environment) and returns the alert text to append to the prompt.
    `get_reward()` returns the episode return.
    """

    client_cls = MemexEnv
    reset_options = ("seed", "difficulty", "kind", "variant", "case", "benign_share",
                     "ram_pages", "kernel_capacity")

    def _environment(self) -> Any:
        from memex.server.environment import MemexEnvironment
        return MemexEnvironment()

    def _action(self, name: str, arguments: dict[str, Any]) -> MemexAction:
        return MemexAction(tool=name, arguments=arguments)

    def _briefing(self, obs: MemexObservation) -> str:
        return "\n\nAlert under investigation:\n" + json.dumps(obs.result, separators=(",", ":"))

    def _render(self, obs: MemexObservation) -> str:
        return render_step(obs)


MemexToolEnv._install_tools(TOOLS, "The tool's result, OS events and the step reward, as text.")
