"""Clients: the typed OpenEnv WebSocket client, and the TRL tool environment.

`CommitteeEnv` is the standard OpenEnv `EnvClient` for `/ws` sessions:

    with CommitteeEnv(base_url="http://localhost:7861").sync() as env:
        result = env.reset(task="research_risk_conflict", seed=3)
        result = env.step(CommitteeAction(action_type="query_research", query_target="TECH"))

`CommitteeToolEnv` is a class for TRL's `GRPOTrainer(environment_factory=...)`: its public
methods are the six actions, generated from the declarations in `actions.py` (same names,
parameters and docstrings), backed by an in-process environment or a remote server.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from memex.client import TypedEnvClient
from memex.committee.actions import ACTIONS
from memex.committee.models import CommitteeAction, CommitteeObservation, CommitteeState
from memex.committee.prompting import render_observation, render_step
from memex.server.declarations import tool_method

RESET_OPTIONS = ("task", "seed")


class CommitteeEnv(TypedEnvClient):
    """Typed WebSocket client for a committee server (one session per client instance)."""

    observation_cls = CommitteeObservation
    state_cls = CommitteeState


class CommitteeToolEnv:
    """TRL `environment_factory` class: one committee episode per instance, actions as methods.

    `reset(**example)` starts an episode (`task` and `seed` from the dataset row are passed to
    the environment) and returns the opening briefing to append to the prompt. `get_reward()`
    returns the episode return so far (pts of NAV) or, with `reward="score"`, the normalised
    score once the episode is over (0 before). Backed in-process, or by a server when
    `base_url` is given. Its only public methods are `reset`, `get_reward` and the six
    actions (TRL turns every other public method into a tool); `_close()` ends a remote
    session.
    """

    def __init__(self, base_url: str | None = None,
                 reward: Literal["return", "score"] = "return", **reset_defaults: Any):
        self.reset_defaults = reset_defaults
        self.reward_mode = reward
        self.base_url = base_url
        if base_url is None:
            from memex.committee.environment import CommitteeEnvironment
            self._env = CommitteeEnvironment()
            self._client = None
        else:
            self._client = CommitteeEnv(base_url=base_url).sync()
            self._client.connect()
        self.episode_return = 0.0
        self.done = False
        self.steps = 0
        self.observations: list[CommitteeObservation] = []

    def reset(self, **kwargs: Any) -> str:
        options = {k: v for k, v in (self.reset_defaults | kwargs).items()
                   if k in RESET_OPTIONS}
        if self._client is None:
            obs = self._env.reset(**options)
        else:
            obs = self._client.reset(**options).observation
        self.episode_return, self.done, self.steps = 0.0, False, 0
        self.observations = [obs]
        return "\n\nCommittee briefing:\n" + render_observation(obs)

    def _call(self, action_type: str, arguments: dict[str, Any]) -> str:
        if self.done:
            return "ERROR episode_done: the episode has ended; no further actions run."
        action = CommitteeAction(action_type=action_type,
                                 **json.loads(json.dumps(arguments, default=str)))
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
        if self.reward_mode == "score":
            final = self.observations[-1] if self.observations else None
            return float(final.metadata.get("score", 0.0)) if final and final.done else 0.0
        return round(self.episode_return, 6)

    def _close(self) -> None:
        if self._client is not None:
            self._client.close()


for _spec in ACTIONS.values():
    setattr(CommitteeToolEnv, _spec.name, tool_method(
        _spec, "The result, events, the month's reward and the book, as text."))
