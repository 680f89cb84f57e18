"""Scoring a plan against a defender: validity (the oracle solves it) and the defender's failure.

For each seed the case `scenarios.plan.build(plan, seed)` is played twice on an environment
replica (in process, or a WebSocket session on a server URL): by the oracle and by the defender.

- **valid**: on every seed the oracle, which decides from the truth but is paid only for what
  tools revealed, reaches the right decision inside the step budget having revealed every
  decisive view (`evidence_share == 1`). A plan the oracle cannot solve is not a hard case,
  it is a broken one.
- **failure** (the launderer's reward, in [0, 1]; 0 when invalid): the mean over seeds of
  `FAILURE_WRONG * (defender wrong or timed out) + FAILURE_REGRET * regret`, where regret is
  `(oracle return - defender return) / 2` clipped to [0, 1] (returns lie in about [-2, 1]).
- **lifted** (`Scorer(lifted=True)`): the defender also plays each case with the step budget
  lifted to `LIFTED_STEP_BUDGET`, and the failure is measured on those episodes, so a plan
  scores only if it fools the defender when it has time to finish its investigation: hard by
  structure, not by the clock.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from memex.adapter import ADAPTER
from memex.envkit.episodes import EpisodeSpec
from memex.evaluation.harness import policy_maker
from memex.scenarios import CaseSpec, build
from memex.scenarios.plan import INT_BOUNDS, CasePlan, parse

FAILURE_WRONG = 0.75
FAILURE_REGRET = 0.25
ORACLE = "oracle"
# The most steps a plan may give (the weighing heuristic needs about 13-30 on these cases).
LIFTED_STEP_BUDGET = INT_BOUNDS["step_budget"][1]


@dataclass
class ScoredPlan:
    """A plan with its scores against one defender (the `search` result rows)."""

    plan: dict[str, Any]
    defender: str
    seeds: tuple[int, ...]
    valid: bool
    failure: float                 # the launderer's reward (0 when invalid)
    defender_return: float         # mean episode return over seeds
    defender_correct: float        # share of seeds decided right (timeouts are wrong)
    oracle_return: float
    oracle_correct: float
    outcomes: tuple[str, ...] = field(default=())   # the defender's, per seed
    # With the step budget lifted (`Scorer(lifted=True)`; None when not played): the share of
    # seeds decided right and the outcomes.
    lifted_correct: float | None = None
    lifted_outcomes: tuple[str, ...] = field(default=())

    @property
    def structural_correct(self) -> float:
        """The defender's accuracy with time to finish (the lifted one when it was played)."""
        return self.defender_correct if self.lifted_correct is None else self.lifted_correct

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["seeds"], out["outcomes"] = list(self.seeds), list(self.outcomes)
        out["lifted_outcomes"] = list(self.lifted_outcomes)
        return out


def lifted(plan: CasePlan) -> CasePlan:
    """The same plan with the step budget lifted to `LIFTED_STEP_BUDGET` (the same case
    otherwise: the budget is drawn from nothing)."""
    return plan.model_copy(update={"step_budget": LIFTED_STEP_BUDGET})


def paired(a: ScoredPlan, b: ScoredPlan | None) -> ScoredPlan:
    """A plan's scores joined with its mirror's (`scenarios.plan.mirror`; None: it has none):
    valid when both are, every score the pair's mean, the outcomes the plan's then the
    mirror's. A plan without a mirror cannot enter a split: its failure is 0."""
    if b is None:
        return dataclasses.replace(a, failure=0.0)
    valid = a.valid and b.valid

    def mean(x: float | None, y: float | None) -> float | None:
        return None if x is None or y is None else round((x + y) / 2, 6)

    return dataclasses.replace(
        a, valid=valid, failure=mean(a.failure, b.failure) if valid else 0.0,
        defender_return=mean(a.defender_return, b.defender_return),
        defender_correct=mean(a.defender_correct, b.defender_correct),
        oracle_return=mean(a.oracle_return, b.oracle_return),
        oracle_correct=mean(a.oracle_correct, b.oracle_correct),
        outcomes=a.outcomes + b.outcomes,
        lifted_correct=mean(a.lifted_correct, b.lifted_correct),
        lifted_outcomes=a.lifted_outcomes + b.lifted_outcomes)


def spec_for(plan: CasePlan, seed: int, repeat: int = 0) -> EpisodeSpec:
    """The episode spec of (plan, seed): reset options carry the plan (never observed)."""
    return CaseSpec.from_plan(plan.to_dict(), seed).episode(repeat)


def play_one(session: Any, plan: CasePlan, seed: int, policy: str | Any) -> dict[str, Any]:
    """One episode of `policy` (a baseline name or a `PolicyMaker`) on (plan, seed)."""
    spec = spec_for(plan, seed)
    case = build(CaseSpec.of(spec.reset))
    if isinstance(policy, str):
        agent = ADAPTER.make_policy(policy, seed=zlib.crc32(f"{policy}|{spec.key}".encode()))
        label, max_steps = policy, None
    else:
        agent, label, max_steps = policy.build(spec), policy.label, policy.max_steps
    episode = ADAPTER.play(session, agent, spec, case=case, max_steps=max_steps)
    terminal = (episode.final.metadata or {}).get("terminal") or {}
    outcome = ADAPTER.episode_outcome(episode)
    return {"policy": label, "seed": seed, "outcome": outcome,
            "correct": outcome in ("TP", "TN"), "return": float(episode.episode_return),
            "evidence_share": float((terminal.get("measures") or {}).get("evidence_share", 0.0)),
            "steps": episode.steps}


def combine(plan: CasePlan, defender: str, oracle: Sequence[dict[str, Any]],
            played: Sequence[dict[str, Any]],
            played_lifted: Sequence[dict[str, Any]] | None = None) -> ScoredPlan:
    """Scores from the oracle's and the defender's episodes on the same seeds; with
    `played_lifted` (the defender with the budget lifted) the failure is measured on those."""
    n = max(1, len(played))
    valid = bool(oracle) and all(o["correct"] and o["evidence_share"] >= 1.0 for o in oracle)
    judged = played if played_lifted is None else played_lifted
    failure = sum(FAILURE_WRONG * (not d["correct"]) + FAILURE_REGRET * min(1.0, max(
        0.0, (o["return"] - d["return"]) / 2)) for o, d in zip(oracle, judged, strict=True)) / n
    extra: dict[str, Any] = {}
    if played_lifted is not None:
        extra = {"lifted_correct": sum(d["correct"] for d in played_lifted) / n,
                 "lifted_outcomes": tuple(d["outcome"] for d in played_lifted)}
    return ScoredPlan(
        plan=plan.to_dict(), defender=defender, seeds=tuple(d["seed"] for d in played),
        valid=valid, failure=round(failure, 6) if valid else 0.0,
        defender_return=round(sum(d["return"] for d in played) / n, 6),
        defender_correct=sum(d["correct"] for d in played) / n,
        oracle_return=round(sum(o["return"] for o in oracle) / max(1, len(oracle)), 6),
        oracle_correct=sum(o["correct"] for o in oracle) / max(1, len(oracle)),
        outcomes=tuple(d["outcome"] for d in played), **extra)


class Scorer:
    """Scores plans on one environment replica: in process, or a session on `base_url`."""

    def __init__(self, defender: str | Any = "heuristic", base_url: str | None = None,
                 llm: Any = None, lifted: bool = False):
        self.base_url = base_url
        self.lifted = lifted
        self.session = ADAPTER.open(base_url)
        if isinstance(defender, str) and defender.startswith(("llm:", "ckpt:")):
            defender = policy_maker(ADAPTER, defender, llm=llm)
        self.defender = defender
        self.label = defender if isinstance(defender, str) else defender.label

    def score(self, plan: CasePlan | dict[str, Any], seeds: Sequence[int]) -> ScoredPlan:
        plan = parse(plan)
        oracle = [play_one(self.session, plan, s, ORACLE) for s in seeds]
        played = [play_one(self.session, plan, s, self.defender) for s in seeds]
        played_lifted = None
        if self.lifted:
            free = lifted(plan)
            played_lifted = [play_one(self.session, free, s, self.defender) for s in seeds]
        return combine(plan, self.label, oracle, played, played_lifted)

    def close(self) -> None:
        self.session.close()


def score_plan(plan: CasePlan | dict[str, Any] | str, seeds: Sequence[int],
               defender: str | Any = "heuristic", base_url: str | None = None,
               lifted: bool = False) -> ScoredPlan:
    """Score one plan (a `CasePlan`, a dict or JSON) on `seeds` against `defender`."""
    scorer = Scorer(defender, base_url=base_url, lifted=lifted)
    try:
        return scorer.score(plan, tuple(seeds))
    finally:
        scorer.close()
