"""The launderer environment's wire contract: typed Action, Observation and State, and the
body of `POST /reset`.

`LaunderAction.plan` is a case plan (`scenarios.plan.CasePlan` as a dict). The observation
carries the knob space (at reset), the defender's name and, after a plan, its scores; never the
cases the plan made (their truth is the plan itself, which the launderer already knows).
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, Field

from memex.envkit.http_episodes import ResetFields

ErrorCode = Literal["invalid_plan", "episode_done", "no_episode"]
# The AML baselines a launderer may play against (names of `memex.adapter.POLICIES`).
Defender = Literal["heuristic", "random", "always_sar", "always_close", "alert_only",
                   "one_lookup"]
DEFENDERS: tuple[Defender, ...] = get_args(Defender)
MAX_SEEDS_PER_PLAN = 8
MAX_PLANS = 16


class LaunderAction(Action):
    """Submit one case plan (see `knob_space` in the reset observation)."""

    plan: dict[str, Any] = Field(description="A case plan: kind, variant and optional knobs "
                                              "(`scenarios.plan.CasePlan`).")


class LaunderError(BaseModel):
    code: ErrorCode
    message: str


class PlanScore(BaseModel):
    """What the defender and the oracle did on the plan's cases."""

    valid: bool = Field(description="The oracle solved every case inside the step budget.")
    failure: float = Field(description="The reward: the defender's failure in [0, 1].")
    defender_correct: float
    defender_return: float
    oracle_correct: float
    oracle_return: float
    outcomes: list[str] = Field(description="The defender's outcome per case (TP/TN/FP/FN/"
                                            "timeout).")


class LaunderObservation(Observation):
    defender: str = ""
    seeds: list[int] = Field(default_factory=list, description="Case seeds each plan is "
                                                               "played on.")
    plans_left: int = 0
    knob_space: dict[str, Any] | None = Field(default=None, description="The knob space "
                                              "(at reset): kinds with variants, check pools, "
                                              "numeric bounds.")
    score: PlanScore | None = None
    error: LaunderError | None = None


class LaunderState(State):
    defender: str = ""
    plans_tried: int = 0
    invalid_plans: int = 0
    best_failure: float = 0.0
    done: bool = False


class LaunderResetRequest(ResetFields):
    """The body of `POST /reset`: its fields are `LaunderEnvironment.reset`'s keywords."""

    seed: int | None = Field(default=None, ge=0, description="Picks the case seeds.")
    defender: Defender = Field(default="heuristic", description="The AML baseline to beat.")
    seeds_per_plan: int = Field(default=2, ge=1, le=MAX_SEEDS_PER_PLAN)
    plans: int = Field(default=1, ge=1, le=MAX_PLANS)
