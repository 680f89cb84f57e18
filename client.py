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

import functools
import inspect
import json
import operator
import types
import typing
from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from pydantic import BaseModel

from memex.models import MemexAction, MemexObservation, MemexState
from memex.server.tools import TOOLS, ToolSpec


class MemexEnv(EnvClient[MemexAction, MemexObservation, MemexState]):
    """Typed WebSocket client for a Memex server (one session per client instance)."""

    def _step_payload(self, action: MemexAction) -> dict[str, Any]:
        return action.model_dump(exclude={"metadata"}) | (
            {"metadata": action.metadata} if action.metadata else {})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[MemexObservation]:
        # reward and done travel in the envelope, not in the observation dict.
        data = dict(payload.get("observation", {}))
        data.pop("reward", None)
        data.pop("done", None)
        data["metadata"] = payload.get("metadata") or data.get("metadata") or {}
        obs = MemexObservation(**data, reward=payload.get("reward"),
                               done=bool(payload.get("done", False)))
        return StepResult(observation=obs, reward=payload.get("reward"), done=obs.done,
                          metadata=payload.get("metadata"))

    def _parse_state(self, payload: dict[str, Any]) -> MemexState:
        return MemexState(**payload)


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


def _plain(annotation: Any) -> Any:
    """Annotation a TRL / transformers JSON-schema reader understands (no pydantic models,
    no `Annotated` markers)."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _plain(args[0])
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return dict
    if origin is list:
        return list[_plain(args[0])]
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, (_plain(a) for a in args))
    return annotation


def _tool_method(spec: ToolSpec):
    fields = spec.args_model.model_fields
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for name, field in fields.items():
        annotations[name] = _plain(field.annotation)
        default = inspect.Parameter.empty if field.is_required() else field.default
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                        default=default, annotation=annotations[name]))
    annotations["return"] = str

    def method(self, *args, **kwargs) -> str:
        bound = method.__signature__.bind(self, *args, **kwargs)
        arguments = {k: v for k, v in bound.arguments.items() if k != "self"}
        return self._call(spec.name, arguments)

    doc = [spec.description, ""]
    if spec.params:
        doc.append("Args:")
        doc += [f"    {p}: {d or p}" for p, d in spec.params.items()]
        doc.append("")
    doc += ["Returns:", "    The tool's result, OS events and the step reward, as text."]
    method.__name__ = method.__qualname__ = spec.name
    method.__doc__ = "\n".join(doc)
    method.__signature__ = inspect.Signature(params, return_annotation=str)
    method.__annotations__ = annotations
    return method


class MemexToolEnv:
    """TRL `environment_factory` class: one Memex episode per instance, tools as methods.

    `reset(**example)` starts an episode (example fields such as `seed`, `difficulty`, `kind`
    are passed to the environment) and returns the alert text to append to the prompt.
    `get_reward()` returns the episode return. Backed in-process, or by a server when
    `base_url` is given.
    """

    def __init__(self, base_url: str | None = None, **reset_defaults: Any):
        self.reset_defaults = reset_defaults
        self.base_url = base_url
        if base_url is None:
            from memex.server.environment import MemexEnvironment
            self._env = MemexEnvironment()
            self._client = None
        else:
            self._client = MemexEnv(base_url=base_url).sync()
            self._client.connect()
        self.episode_return = 0.0
        self.done = False
        self.steps = 0
        self.tool_calls = 0
        self.observations: list[MemexObservation] = []

    def reset(self, **kwargs: Any) -> str:
        options = {k: v for k, v in (self.reset_defaults | kwargs).items()
                   if k in ("seed", "difficulty", "kind", "variant", "case", "benign_share",
                            "ram_pages", "kernel_capacity")}
        if self._client is None:
            obs = self._env.reset(**options)
        else:
            obs = self._client.reset(**options).observation
        self.episode_return, self.done, self.steps, self.tool_calls = 0.0, False, 0, 0
        self.observations = [obs]
        return "\n\nAlert under investigation:\n" + json.dumps(obs.result, separators=(",", ":"))

    def _call(self, tool: str, arguments: dict[str, Any]) -> str:
        self.tool_calls += 1
        if self.done:
            return "ERROR episode_done: the investigation has ended; no further tools run."
        action = MemexAction(tool=tool, arguments=json.loads(json.dumps(arguments, default=str)))
        if self._client is None:
            obs = self._env.step(action)
        else:
            obs = self._client.step(action).observation
        self.steps += 1
        self.episode_return += obs.reward or 0.0
        self.done = obs.done
        self.observations.append(obs)
        return render_step(obs)

    def get_reward(self) -> float:
        return self.episode_return

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


for _spec in TOOLS.values():
    setattr(MemexToolEnv, _spec.name, _tool_method(_spec))
