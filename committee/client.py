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

from typing import Any, Literal

from memex.client import ToolEnvironment, TypedEnvClient
from memex.committee.actions import ACTIONS
from memex.committee.models import CommitteeAction, CommitteeObservation, CommitteeState
from memex.committee.prompting import render_observation, render_step

RESET_OPTIONS = ("task", "seed")


class CommitteeEnv(TypedEnvClient):
    """Typed WebSocket client for a committee server (one session per client instance)."""

    observation_cls = CommitteeObservation
    state_cls = CommitteeState


class CommitteeToolEnv(ToolEnvironment):
    """TRL `environment_factory` class for the committee: the six actions as methods.

    `reset(**example)` starts an episode (`task` and `seed` from the dataset row are passed to
    the environment) and returns the opening briefing to append to the prompt. `get_reward()`
    returns the episode return so far (pts of NAV) or, with `reward="score"`, the normalised
    score once the episode is over (0 before).
    """

    client_cls = CommitteeEnv
    reset_options = RESET_OPTIONS

    def __init__(self, base_url: str | None = None,
                 reward: Literal["return", "score"] = "return", **reset_defaults: Any):
        self.reward_mode = reward
        super().__init__(base_url, **reset_defaults)

    def _environment(self) -> Any:
        from memex.committee.environment import CommitteeEnvironment
        return CommitteeEnvironment()

    def _action(self, name: str, arguments: dict[str, Any]) -> CommitteeAction:
        return CommitteeAction(action_type=name, **arguments)

    def _briefing(self, obs: CommitteeObservation) -> str:
        return "\n\nCommittee briefing:\n" + render_observation(obs)

    def _render(self, obs: CommitteeObservation) -> str:
        return render_step(obs)

    def get_reward(self) -> float:
        if self.reward_mode == "score":
            final = self.observations[-1] if self.observations else None
            return float(final.metadata.get("score", 0.0)) if final and final.done else 0.0
        return super().get_reward()


CommitteeToolEnv._install_tools(
    ACTIONS, "The result, events, the month's reward and the book, as text.")
