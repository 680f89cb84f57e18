"""LaunderEnvironment: the launderer adversary as an OpenEnv environment.

Observation
    `LaunderObservation`: at reset the knob space (`knob_space`), the defender's name, the case
    seeds every plan is played on and how many plans the episode takes; after a plan its
    `score` (validity, the defender's and the oracle's accuracy and return) or a typed `error`.

Actions
    `LaunderAction(plan)`: one case plan (`scenarios.plan.CasePlan` as a dict), the one tool
    `submit_plan` (`tools.py`).

Reward
    The defender's failure on the plan's cases (`adversary.scoring`: 0.75 x wrong decisions +
    0.25 x return regret against the oracle, in [0, 1]), and 0 when the plan is invalid:
    outside the knob space (typed `invalid_plan` error) or unsolvable (the oracle fails).

Episode end
    After `plans` plans (default 1: one plan per episode, the shape GRPO groups want).

Reset arguments
    `seed` (picks the case seeds: `seeds_per_plan` consecutive train-split seeds from
    `seed * seeds_per_plan`), `defender` (a baseline of the AML environment, default
    "heuristic"), `seeds_per_plan` (1-8, default 2), `plans` (1-16, default 1).
"""

from __future__ import annotations

import random
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from memex.adversary.models import (
    DEFENDERS,
    MAX_PLANS,
    MAX_SEEDS_PER_PLAN,
    LaunderAction,
    LaunderError,
    LaunderObservation,
    LaunderState,
    PlanScore,
)
from memex.adversary.scoring import Scorer
from memex.scenarios import DIFFICULTIES, KINDS
from memex.scenarios.plan import (
    FLOAT_BOUNDS,
    INT_BOUNDS,
    JUDGEMENT_CHOICES,
    RANGE_BOUNDS,
    CasePlan,
    PlanError,
    parse,
)
from memex.scenarios.story import POOLS

_SYSTEM_RNG = random.SystemRandom()


def knob_space() -> dict[str, Any]:
    """The knob space as data (what a launderer agent reads; `scenarios.plan` documents it)."""
    kinds = {}
    for name, spec in KINDS.items():
        variants = {}
        for v in spec.variants:
            scheme = CasePlan(kind=name, variant=v).scheme()
            variants[v] = {"rule": scheme.rule, "anchor": scheme.anchor,
                           "other_checks": [c for c in POOLS[scheme.rule] if c != scheme.anchor]}
        kinds[name] = {"suspicious": spec.suspicious, "variants": variants}
    return {"kinds": kinds, "difficulties": list(DIFFICULTIES),
            "int": {k: list(v) for k, v in INT_BOUNDS.items()},
            "float": {k: list(v) for k, v in FLOAT_BOUNDS.items()},
            "range": {k: list(v) for k, v in RANGE_BOUNDS.items()},
            "judgement": {k: list(v) for k, v in JUDGEMENT_CHOICES.items()}}


class LaunderEnvironment(Environment[LaunderAction, LaunderObservation, LaunderState]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._scorer: Scorer | None = None
        self._state = LaunderState()
        self._left = 0

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              defender: str = "heuristic", seeds_per_plan: int = 2, plans: int = 1,
              **_: Any) -> LaunderObservation:
        if seed is not None and (type(seed) is not int or seed < 0):
            raise ValueError("seed must be a non-negative integer")
        if defender not in DEFENDERS:
            raise ValueError(f"unknown defender {defender!r}; choose one of "
                             f"{', '.join(DEFENDERS)}")
        if not 1 <= int(seeds_per_plan) <= MAX_SEEDS_PER_PLAN:
            raise ValueError(f"seeds_per_plan must be 1..{MAX_SEEDS_PER_PLAN}")
        if not 1 <= int(plans) <= MAX_PLANS:
            raise ValueError(f"plans must be 1..{MAX_PLANS}")
        seed = _SYSTEM_RNG.randrange(100_000) if seed is None else seed
        if self._scorer is None or self._scorer.label != defender:
            self._scorer = Scorer(defender)
        n = int(seeds_per_plan)
        self._seeds = tuple(seed * n + j for j in range(n))
        self._left = int(plans)
        self._state = LaunderState(episode_id=episode_id, step_count=0, defender=defender)
        return self._observe(knob_space(), reward=None)

    @property
    def state(self) -> LaunderState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="memex-launderer", version="0.1.0",
            description="The launderer adversary: design an AML case (a plan) that the "
                        "defender gets wrong and the oracle still solves.")

    def step(self, action: LaunderAction, timeout_s: float | None = None,
             **_: Any) -> LaunderObservation:
        if self._scorer is None:
            return self._error("no_episode", "call reset before step", done=True)
        if self._left <= 0:
            return self._error("episode_done", "the episode has ended; call reset", done=True)
        st = self._state
        st.step_count += 1
        self._left -= 1
        try:
            plan = parse(action.plan)
        except PlanError as exc:
            st.invalid_plans += 1
            return self._error(exc.code, str(exc), done=self._left <= 0)
        scored = self._scorer.score(plan, self._seeds)
        st.plans_tried += 1
        st.best_failure = max(st.best_failure, scored.failure)
        score = PlanScore(valid=scored.valid, failure=scored.failure,
                          defender_correct=scored.defender_correct,
                          defender_return=scored.defender_return,
                          oracle_correct=scored.oracle_correct,
                          oracle_return=scored.oracle_return, outcomes=list(scored.outcomes))
        return self._observe(None, reward=scored.failure, score=score)

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **kwargs: Any) -> LaunderObservation:
        return self.reset(seed=seed, episode_id=episode_id, **kwargs)

    def _observe(self, space: dict[str, Any] | None, reward: float | None,
                 score: PlanScore | None = None,
                 error: LaunderError | None = None) -> LaunderObservation:
        done = self._left <= 0
        self._state.done = done
        return LaunderObservation(defender=self._state.defender, seeds=list(self._seeds),
                                  plans_left=self._left, knob_space=space, score=score,
                                  error=error, reward=reward, done=done)

    def _error(self, code: str, message: str, done: bool) -> LaunderObservation:
        if self._scorer is None or code == "episode_done":
            return LaunderObservation(error=LaunderError(code=code, message=message),
                                      reward=0.0, done=True)
        return self._observe(None, reward=0.0, error=LaunderError(code=code, message=message))

    def close(self) -> None:
        if self._scorer is not None:
            self._scorer.close()
            self._scorer = None

