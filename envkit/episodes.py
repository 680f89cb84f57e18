"""Sessions, episodes and the one episode loop.

A `Session` runs one episode at a time on one environment instance, in process
(`LocalSession`) or over a WebSocket (`RemoteSession`). An `EpisodeSpec` is one cell of an
evaluation or training grid; `play` runs a `Policy` over a session and returns an `Episode`
record that every consumer (harness, trainer, inference agent, demo, reports) measures, logs and
traces the same way. A remote session whose server fails (unreachable, the connection and the
episode with it lost, an error answer) raises `EnvSessionError`, one line for the user.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from memex.envkit.errors import PolicyFailure


class Policy(Protocol):
    """What `play` needs of a policy (`envkit.policy.Policy` is the base class)."""

    name: str
    needs_case: bool

    def reset(self, obs: Any, case: Any = None) -> None: ...
    def act(self, obs: Any) -> Any: ...


# ---- sessions ---------------------------------------------------------------------------------

class Session(Protocol):
    """One episode at a time on one environment instance, local or remote."""

    def reset(self, **options: Any) -> Any: ...
    def step(self, action: Any) -> Any: ...
    def state(self) -> Any: ...
    def close(self) -> None: ...


class LocalSession:
    """An in-process environment behind the `Session` interface."""

    def __init__(self, env: Any):
        self.env = env

    def reset(self, **options: Any) -> Any:
        return self.env.reset(**options)

    def step(self, action: Any) -> Any:
        return self.env.step(action)

    def state(self) -> Any:
        return self.env.state

    def close(self) -> None:
        self.env.close()


class EnvSessionError(ConnectionError):
    """The environment server failed a session's request: unreachable, the connection lost
    (and the episode with it: `envkit.client.EpisodeLostError`), or an error answer. The
    message is one line for the user."""


# What the typed client raises when its server fails: ConnectionError (refused, lost episode),
# TimeoutError (no answer in time), RuntimeError ("Server error: ..." frames).
_CLIENT_FAILURES = (OSError, RuntimeError)


class RemoteSession:
    """A WebSocket session (`/ws`) on a running server, through the environment's typed client;
    a server failure raises `EnvSessionError`."""

    def __init__(self, client_cls: type, base_url: str):
        self.base_url = base_url
        self._client = client_cls(base_url=base_url).sync()
        self._call(self._client.connect)

    def _call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except _CLIENT_FAILURES as exc:
            raise EnvSessionError(f"environment server {self.base_url}: "
                                  f"{' '.join(str(exc).split())[:300]}") from exc

    def reset(self, **options: Any) -> Any:
        return self._call(self._client.reset, **options).observation

    def step(self, action: Any) -> Any:
        return self._call(self._client.step, action).observation

    def state(self) -> Any:
        return self._call(self._client.state)

    def close(self) -> None:
        with contextlib.suppress(*_CLIENT_FAILURES):  # a dead server has nothing to close
            self._client.close()


# ---- episodes ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class EpisodeSpec:
    """One cell of an evaluation or training grid: what to pass to `reset`, and its labels."""

    task: str
    difficulty: str
    seed: int | None
    reset: Mapping[str, Any]
    repeat: int = 0

    @property
    def key(self) -> str:
        """Stable episode key (prompts, trace file names, the test double's agent table)."""
        seed = "none" if self.seed is None else str(self.seed)
        return f"{self.task}-{self.difficulty}-{seed}-r{self.repeat}"

    def to_json(self) -> dict[str, Any]:
        return {"task": self.task, "difficulty": self.difficulty, "seed": self.seed,
                "reset": dict(self.reset), "repeat": self.repeat}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EpisodeSpec:
        return cls(data["task"], data["difficulty"], data["seed"], dict(data["reset"]),
                   int(data.get("repeat", 0)))


@dataclass
class Episode:
    """A played episode: observations o_0..o_T, actions a_1..a_T, the final state and — when the
    runner could regenerate it — the hidden case (never shown to the policy unless it is an
    oracle)."""

    spec: EpisodeSpec
    policy: str
    observations: list[Any] = field(default_factory=list)
    actions: list[Any] = field(default_factory=list)
    state: Any = None
    case: Any = None
    wall_s: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)
    replies: list[Any] = field(default_factory=list)  # per action: the policy's `last_reply`
    insights: list[Any] = field(default_factory=list)  # per action: the policy's `insight()`
    error: str | None = None  # why the episode stopped early, else None
    error_source: str | None = None  # "policy" (`PolicyFailure`) or "environment" (server)

    @property
    def final(self) -> Any:
        return self.observations[-1]

    @property
    def done(self) -> bool:
        return bool(self.observations and self.final.done)

    @property
    def rewards(self) -> list[float]:
        return [float(o.reward or 0.0) for o in self.observations[1:]]

    @property
    def episode_return(self) -> float:
        return round(sum(self.rewards), 6)

    @property
    def steps(self) -> int:
        return len(self.actions)


def policy_insight(policy: Any) -> dict[str, Any] | None:
    """The policy's `insight()` after its last action, for policies that have one."""
    insight = getattr(policy, "insight", None)
    return insight() if callable(insight) else None


def play(session: Session, policy: Policy, spec: EpisodeSpec, *, case: Any = None,
         max_steps: int | None = None,
         on_step: Callable[[Episode], None] | None = None) -> Episode:
    """Run `policy` for one episode of `spec` on `session` (until done, or `max_steps`): the one
    episode loop of the project. `case` is the hidden world, shown to the policy only if it
    `needs_case` and kept on the record; `EnvAdapter.play` regenerates it from the spec. A policy
    that raises `PolicyFailure`, or a session that raises `EnvSessionError` after the reset,
    ends the episode early with `episode.error` and `episode.error_source` set (a failed reset
    raises: no episode started); a policy with a `last_reply` attribute (the LLM policy) has it
    recorded per step in `episode.replies`, and one with an `insight()` (`envkit.policy.Policy`)
    its belief in `episode.insights`."""
    start = time.perf_counter()
    obs = session.reset(**spec.reset)
    episode = Episode(spec, policy.name, [obs], case=case)
    policy.reset(obs, case=case if policy.needs_case else None)
    while not obs.done and (max_steps is None or episode.steps < max_steps):
        try:
            action = policy.act(obs)
        except PolicyFailure as exc:
            episode.error, episode.error_source = str(exc), "policy"
            break
        try:
            obs = session.step(action)
        except EnvSessionError as exc:
            episode.error, episode.error_source = str(exc), "environment"
            break
        episode.actions.append(action)
        episode.observations.append(obs)
        episode.replies.append(getattr(policy, "last_reply", None))
        episode.insights.append(policy_insight(policy))
        if on_step is not None:
            on_step(episode)
    try:
        episode.state = session.state()
    except EnvSessionError as exc:
        if episode.error is None:
            episode.error, episode.error_source = str(exc), "environment"
    episode.wall_s = time.perf_counter() - start
    return episode
