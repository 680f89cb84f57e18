"""The launderer's search: optuna (TPE) over the plan knob space against one defender.

Each trial suggests a `CasePlan` (`suggest`), scores it on `seeds` (`scoring.Scorer`: the oracle
for validity, the defender for failure) and reports the failure (0 for an invalid plan) as the
objective to maximise. Trials run in batches with optuna's ask/tell; a batch is scored in
process (`workers=1`) or spread over Ray actors, each stepping its own environment replica or a
session on `base_url` (`memex.adversary.distributed`).

    .venv/bin/python -m memex.adversary search --defender heuristic --trials 60
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from tqdm import tqdm

from memex.adversary.distributed import ScorerPool
from memex.adversary.scoring import ScoredPlan, Scorer, paired
from memex.scenarios import DIFFICULTIES, KINDS
from memex.scenarios.plan import (
    FLOAT_BOUNDS,
    INT_BOUNDS,
    JUDGEMENT_CHOICES,
    RANGE_BOUNDS,
    CasePlan,
    PlanError,
    mirror,
    parse,
)
from memex.scenarios.story import POOLS, SINGLE_VIEW

DEFAULT_SEEDS = (0, 1, 2)   # train-split seeds; the adversarial split replays plans on test seeds


def suggest(trial: Any, kinds: Sequence[str] | None = None,
            fixed: Mapping[str, Any] | None = None) -> CasePlan:
    """A plan from an optuna trial: every knob of `scenarios.plan` within its bounds, except
    those in `fixed` (e.g. {"difficulty": "hard"}). Conditional knobs (variant, checks,
    second_failing) get parameter names per kind/variant, so TPE models each space apart."""
    fixed = dict(fixed or {})
    kind = fixed.pop("kind", None) or trial.suggest_categorical("kind", list(kinds or KINDS))
    spec = KINDS[kind]
    variant = fixed.pop("variant", None) or trial.suggest_categorical(
        f"variant|{kind}", list(spec.variants))
    data: dict[str, Any] = {"kind": kind, "variant": variant}
    data["difficulty"] = fixed.pop("difficulty", None) or trial.suggest_categorical(
        "difficulty", list(DIFFICULTIES))
    probe = CasePlan(kind=kind, variant=variant)
    scheme = probe.scheme()
    others = [c for c in POOLS[scheme.rule] if c != scheme.anchor]
    checks = [c for c in others if trial.suggest_categorical(f"check|{scheme.rule}|{c}",
                                                              [True, False])]
    data["checks"] = checks or [others[0]]
    if probe.suspicious and scheme.anchor in SINGLE_VIEW:
        pool = [c for c in data["checks"] if c not in SINGLE_VIEW] or data["checks"]
        pick = trial.suggest_int(f"second|{variant}", 0, len(others) - 1)
        data["second_failing"] = pool[pick % len(pool)]
    for name, (lo, hi) in INT_BOUNDS.items():
        data[name] = trial.suggest_int(name, lo, hi)
    for name, (lo, hi) in FLOAT_BOUNDS.items():
        data[name] = round(trial.suggest_float(name, lo, hi), 2)
    for name, (lo, hi) in RANGE_BOUNDS.items():
        if isinstance(lo, int):
            a, b = trial.suggest_int(f"{name}.lo", lo, hi), trial.suggest_int(f"{name}.hi", lo, hi)
        else:
            a = round(trial.suggest_float(f"{name}.lo", lo, hi), 3)
            b = round(trial.suggest_float(f"{name}.hi", lo, hi), 3)
        data[name] = [min(a, b), max(a, b)]
    for name, choices in JUDGEMENT_CHOICES.items():
        data[name] = trial.suggest_categorical(name, list(choices))
    data.update(fixed)
    return parse(data)


def search(defender: str | Any = "heuristic", *, trials: int = 40,
           seeds: Iterable[int] = DEFAULT_SEEDS, sampler_seed: int = 0,
           kinds: Sequence[str] | None = None, fixed: Mapping[str, Any] | None = None,
           base_url: str | None = None, workers: int = 1, ray_address: str | None = None,
           llm: Any = None, progress: bool = True, lifted: bool = False,
           pairs: bool = False,
           on_result: Callable[[ScoredPlan], None] | None = None) -> list[ScoredPlan]:
    """Search the knob space for plans the defender fails on; every scored plan, best first
    (valid plans before invalid ones, then by failure). With `lifted` the failure is the
    defender's with the step budget lifted (`scoring.Scorer`); with `pairs` each plan is
    scored with its mirror and the objective is the pair's mean (`scoring.paired`), so the
    search looks for pairs hard on both sides, as a split holds them. See `memex.adversary`
    for the API."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    seeds = tuple(seeds)
    study = optuna.create_study(direction="maximize",
                                sampler=optuna.samplers.TPESampler(seed=sampler_seed))
    pool = None
    if workers > 1 or ray_address:
        pool = ScorerPool(defender, workers=workers, base_url=base_url,
                          ray_address=ray_address, llm=llm, lifted=lifted)
        score_batch = pool.score_many
    else:
        scorer = Scorer(defender, base_url=base_url, llm=llm, lifted=lifted)

        def score_batch(items: list[tuple[CasePlan, tuple[int, ...]]]) -> list[ScoredPlan]:
            return [scorer.score(p, s) for p, s in items]

    results: list[ScoredPlan] = []
    bar = tqdm(total=trials, desc="adversary trials", unit="plan", disable=not progress,
               file=sys.stderr)
    try:
        batch = max(1, workers)
        while len(results) < trials:
            asked = [study.ask() for _ in range(min(batch, trials - len(results)))]
            plans = [suggest(t, kinds, fixed) for t in asked]
            scored_batch = score_batch([(p, seeds) for p in plans])
            if pairs:
                twins = [_mirror(p) for p in plans]
                scored_twins = iter(score_batch([(t, seeds) for t in twins if t is not None]))
                scored_batch = [paired(a, None if t is None else next(scored_twins))
                                for a, t in zip(scored_batch, twins, strict=True)]
            for trial, scored in zip(asked, scored_batch, strict=True):
                study.tell(trial, scored.failure)
                results.append(scored)
                if on_result is not None:
                    on_result(scored)
                bar.update()
    finally:
        bar.close()
        if pool is not None:
            pool.close()
        else:
            scorer.close()
    return sorted(results, key=lambda r: (not r.valid, -r.failure))


def _mirror(plan: CasePlan) -> CasePlan | None:
    try:
        return mirror(plan)
    except PlanError:
        return None
