"""The launderer adversary behind the environment-adapter protocol (`memex.envkit.adapter`):
`--env launderer` (`memex.registry`) in the trainer, the evaluation harness, the inference
agent and the demo.

- tasks are the defenders to beat (AML baselines); one difficulty, `standard`; seeds pick the
  case seeds each plan is played on.
- one tool, `submit_plan` (`tools.py`), whose arguments are a `scenarios.plan.CasePlan`.
- no hidden case: the launderer sees the whole knob space; `truth_json` is None.
- `outcome`: `invalid` (a plan outside the space, or one the oracle cannot solve), `fooled`
  (valid and the defender got a case wrong) or `held`; `success` = fooled.
- `reward_components`: "quality" = the failure reward, "os" = 1 for a valid plan.
- policies: `random` (uniform over the knob space) and `squeezer` (a random plan with a step
  budget just above what an efficient investigator needs: the heuristic's known weakness).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from memex.adversary.client import LaunderEnv
from memex.adversary.models import DEFENDERS, LaunderAction, LaunderObservation
from memex.adversary.search import suggest
from memex.adversary.tools import SUBMIT_PLAN, TOOLS
from memex.envkit.adapter import EnvAdapter
from memex.envkit.episodes import Episode, EpisodeSpec
from memex.envkit.policy import SeededPolicy
from memex.scenarios import SPLITS

SQUEEZE_BUDGET = (11, 13)

_SYSTEM = """\
You are a money launderer designing an AML case that a bank's investigator ({defender}) will \
get wrong, while a perfect investigator could still solve it inside the step budget. Reply with \
one call of submit_plan: {{"tool": "submit_plan", "arguments": {{"kind": ..., "variant": ..., \
...optional knobs}}}}. The knob space (kinds and variants, check pools, bounds) is in the first \
observation's knob_space. An invalid or unsolvable plan earns nothing.
"""


class _Planner(SeededPolicy[LaunderObservation, LaunderAction]):
    budget: tuple[int, int] | None = None

    def act(self, obs: LaunderObservation) -> LaunderAction:
        import optuna  # the search's optimiser: loaded only when a planner plays

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        sampler = optuna.samplers.RandomSampler(seed=self.rng.randrange(2**31))
        trial = optuna.create_study(sampler=sampler).ask()
        fixed = {"step_budget": self.rng.randint(*self.budget)} if self.budget else None
        return LaunderAction(plan=suggest(trial, fixed=fixed).to_dict())


class RandomPlanner(_Planner):
    name = "random"


class Squeezer(_Planner):
    name = "squeezer"
    budget = SQUEEZE_BUDGET


class LaunderAdapter(EnvAdapter):
    name = "launderer"
    tasks = ("heuristic",)
    difficulties = ("standard",)
    splits = SPLITS  # a seed picks the AML case seeds its plans are played on
    env_cls = "memex.adversary.environment:LaunderEnvironment"
    client_cls = LaunderEnv
    server_module = "memex.adversary.server"
    tool_specs = TOOLS
    policies: ClassVar = {"random": RandomPlanner, "squeezer": Squeezer}
    eval_policies = ("random", "squeezer")
    demonstrator = "squeezer"
    success_label = "defender fooled"
    summary_metrics = (("failure", "failure (reward)"), ("valid", "valid"),
                       ("defender_correct", "defender acc"), ("oracle_correct", "oracle acc"),
                       ("defender_return", "defender return"))

    def reset_options(self, task: str, difficulty: str, seed: int | None) -> dict[str, Any]:
        if task not in DEFENDERS:
            raise ValueError(f"unknown defender {task!r}")
        return {"seed": seed, "defender": task}

    def system_prompt(self, obs: Any, *, tool_list: bool, compact: bool = False) -> str:
        return _SYSTEM.format(defender=obs.defender or "the heuristic")

    def make_action(self, name: str, arguments: dict[str, Any]) -> Any:
        return LaunderAction(plan=dict(arguments))

    def action_call(self, action: Any) -> tuple[str, dict[str, Any]]:
        return SUBMIT_PLAN.name, dict(action.plan)

    def trace_action(self, data: Any) -> Any:
        return LaunderAction.model_validate(data)

    def action_text(self, action: Any) -> str:
        return json.dumps({"tool": SUBMIT_PLAN.name, "arguments": action.plan})

    def malformed_action(self) -> Any:
        return LaunderAction(plan={})

    def case_for(self, spec: EpisodeSpec) -> Any:
        return None

    def truth_json(self, case: Any) -> Any:
        return None

    def _score(self, episode: Episode) -> Any:
        return next((o.score for o in reversed(episode.observations) if o.score), None)

    def outcome(self, episode: Episode) -> str:
        if not episode.done:
            return "unfinished"
        score = self._score(episode)
        if score is None or not score.valid:
            return "invalid"
        return "fooled" if score.defender_correct < 1.0 else "held"

    def success(self, episode: Episode) -> bool:
        return self.outcome(episode) == "fooled"

    def metrics(self, episode: Episode) -> dict[str, float | None]:
        score = self._score(episode)
        return {"failure": episode.episode_return,
                "valid": None if score is None and not episode.done else float(
                    bool(score and score.valid)),
                "defender_correct": score.defender_correct if score else None,
                "oracle_correct": score.oracle_correct if score else None,
                "defender_return": score.defender_return if score else None,
                "invalid_plans": float(getattr(episode.state, "invalid_plans", 0) or 0)}

    def reward_components(self, episode: Episode) -> dict[str, float]:
        score = self._score(episode)
        return {"quality": max(0.0, min(1.0, episode.episode_return)),
                "os": float(bool(score and score.valid))}

    def timeout_return(self, case: Any) -> float:
        return 0.0


ADAPTER = LaunderAdapter()
