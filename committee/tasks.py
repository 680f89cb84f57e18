"""The four committee tasks, their seeded variants, and the train/validation/test seed splits.

Each task fixes the conflict it poses (regime script, research quality and bias, starting book,
mandate and its revisions); the seed draws the details (when the regime turns, asset tilts,
every return, research noise). `seed=None` plays the task's canonical instance, which is the
first *train* seed: a seedless reset never plays a public test (or validation) world.
`generate(task, seed)` is a pure function: the same `(task, seed)` gives the same `World`,
whatever the agent does.

Each `TaskSpec` states the conflict it poses and what good behaviour looks like
(`conflict`, `good_behaviour`; served at `GET /tasks` and tabled in `committee/README.md`):
`guided_allocation` (little conflict, learn the workflow), `research_risk_conflict` (a biased
analyst against the limits), `regime_shift_recovery` (late cycle, crisis and recovery with
lagging research), `mandate_drift` (a tightened mandate and an exclusion, announced with
notice).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from memex.committee.world import (
    TICKERS,
    Mandate,
    MandateChange,
    World,
    simulate,
)

HORIZON_PERIODS = 20
QUERY_BUDGET = 10

SPLITS: dict[str, range] = {
    "train": range(0, 1_000_000),
    "validation": range(1_000_000, 1_100_000),
    "test": range(1_100_000, 1_200_000),
}
CANONICAL_SEED = SPLITS["train"].start  # never a test seed (issue #16)

RegimeScript = Callable[[random.Random, int], list[str]]


def _markov(start: str, states: tuple[str, ...], switch_prob: float) -> RegimeScript:
    def script(rng: random.Random, horizon: int) -> list[str]:
        path, current = [], start
        for _ in range(horizon):
            path.append(current)
            if rng.random() < switch_prob:
                current = rng.choice([s for s in states if s != current])
        return path
    return script


def _boom_then_maybe_correction(rng: random.Random, horizon: int) -> list[str]:
    boom = rng.randint(7, 12)
    correction = rng.randint(3, 5) if rng.random() < 0.7 else 0
    path = ["tech_boom"] * boom + ["tech_correction"] * correction
    return (path + ["expansion"] * horizon)[:horizon]


def _expansion_crisis_recovery(rng: random.Random, horizon: int) -> list[str]:
    expansion = rng.randint(4, 7)
    late_cycle = rng.randint(1, 3)
    crisis = rng.randint(3, 5)
    path = ["expansion"] * expansion + ["late_cycle"] * late_cycle + ["crisis"] * crisis
    return (path + ["recovery"] * horizon)[:horizon]


def _weights(**w: float) -> Mapping[str, float]:
    assert set(w) <= set(TICKERS) and sum(w.values()) <= 1.0 + 1e-9
    return MappingProxyType({t: w.get(t, 0.0) for t in TICKERS})


@dataclass(frozen=True)
class TaskSpec:
    name: str
    title: str
    conflict: str
    good_behaviour: str
    regime_script: RegimeScript
    prehistory_regime: str
    research_noise: float                      # sd of the analyst's error, conviction units
    research_bias: Mapping[str, float]         # sector -> conviction bias (the analyst's pet)
    research_lag_periods: int                  # research describes the regime this many months ago
    initial_weights: Mapping[str, float]
    mandate: Mandate = field(default_factory=Mandate)
    mandate_revision: tuple[Mandate, str] | None = None
    announce_window: tuple[int, int] = (6, 9)  # announcement period range, when revised
    notice_periods: int = 2                    # announcement to effective date
    horizon: int = HORIZON_PERIODS
    query_budget: int = QUERY_BUDGET


TASKS: Mapping[str, TaskSpec] = MappingProxyType({t.name: t for t in (
    TaskSpec(
        name="guided_allocation",
        title="Guided allocation",
        conflict="Little conflict: accurate research, a calm market and a generous mandate. The "
                 "book starts in cash.",
        good_behaviour="Consult Research and Risk, build a diversified book tilted towards the "
                       "convictions and inside the limits, then hold with low turnover.",
        regime_script=_markov("expansion", ("expansion", "inflation"), 0.06),
        prehistory_regime="expansion",
        research_noise=0.25, research_bias=MappingProxyType({}), research_lag_periods=0,
        initial_weights=_weights(),
    ),
    TaskSpec(
        name="research_risk_conflict",
        title="Research versus Risk",
        conflict="The analyst is over-enthusiastic about TECH, and a month late, during a "
                 "volatile tech boom that usually corrects; chasing the conviction breaks the "
                 "asset, sector and volatility limits and rides the correction down.",
        good_behaviour="Take the tilt but size it to the mandate, trim when the Risk Officer "
                       "warns, and do not follow the analyst into the correction.",
        regime_script=_boom_then_maybe_correction,
        prehistory_regime="expansion",
        research_noise=0.40, research_bias=MappingProxyType({"TECH": 0.6}),
        research_lag_periods=1,
        initial_weights=_weights(NOVA=0.42, CLDX=0.30, PTRL=0.08, SOLR=0.07, MEDI=0.05,
                                 GOVT=0.05),
    ),
    TaskSpec(
        name="regime_shift_recovery",
        title="Regime shift and recovery",
        conflict="An expansion goes late-cycle (volatility rises, returns fade), then into a "
                 "crisis and a recovery. Research lags each turn by a month, so it is still "
                 "bullish while the Risk Officer reports market stress and losses mount, and "
                 "still bearish when the rebound starts.",
        good_behaviour="Heed the Risk Officer's stress and drawdown warnings over stale research: "
                       "cut equity risk early, hold bonds and cash through the crisis, and "
                       "re-risk once the recovery shows.",
        regime_script=_expansion_crisis_recovery,
        prehistory_regime="expansion",
        research_noise=0.35, research_bias=MappingProxyType({}), research_lag_periods=1,
        initial_weights=_weights(NOVA=0.38, CLDX=0.24, PTRL=0.12, SOLR=0.08, MEDI=0.10,
                                 BIOG=0.08),
    ),
    TaskSpec(
        name="mandate_drift",
        title="Mandate drift",
        conflict="Mid-episode the committee tightens the mandate — lower asset and sector "
                 "limits, a smaller volatility budget and an ESG exclusion of PTRL — while the "
                 "analyst still likes energy.",
        good_behaviour="Notice the announcement, check with Risk, and bring the book into the "
                       "new mandate by the effective date without dumping all risk.",
        regime_script=_markov("expansion", ("expansion", "inflation"), 0.08),
        prehistory_regime="expansion",
        research_noise=0.30, research_bias=MappingProxyType({"ENERGY": 0.4}),
        research_lag_periods=0,
        initial_weights=_weights(NOVA=0.10, CLDX=0.05, PTRL=0.40, SOLR=0.25, MEDI=0.10,
                                 GOVT=0.10),
        mandate_revision=(
            Mandate(max_asset_weight=0.25, max_sector_weight=0.45, vol_budget_annual_pct=9.0,
                    excluded=("PTRL",)),
            "Mandate revision: max 25% per asset, 45% per sector, volatility budget 9% a year, "
            "and PTRL (thermal coal and oil sands) excluded on ESG grounds."),
    ),
)})
TASK_NAMES: tuple[str, ...] = tuple(TASKS)


def split_of(seed: int) -> str:
    """The split a seed belongs to (seeds past the test range count as test)."""
    for name, seeds in SPLITS.items():
        if seed in seeds:
            return name
    return "test"


def generate(task: str, seed: int | None = None) -> World:
    """The world of one episode of `task`; `seed=None` is the canonical instance."""
    if task not in TASKS:
        raise ValueError(f"unknown task {task!r}; tasks: {', '.join(TASK_NAMES)}")
    spec = TASKS[task]
    seed = CANONICAL_SEED if seed is None else int(seed)
    if seed < 0:
        raise ValueError("seed must be >= 0")
    rng = random.Random(f"memex-committee|{task}|{seed}")
    regimes = spec.regime_script(rng, spec.horizon)
    change = None
    if spec.mandate_revision is not None:
        announce = rng.randint(*spec.announce_window)
        mandate, summary = spec.mandate_revision
        change = MandateChange(announce, announce + spec.notice_periods, mandate, summary)
    alphas, history, path = simulate(rng, regimes, spec.prehistory_regime)
    return World(task=task, seed=seed, horizon=spec.horizon, regimes=tuple(regimes),
                 alphas=MappingProxyType({k: MappingProxyType(v) for k, v in alphas.items()}),
                 returns_pct=tuple(MappingProxyType(r) for r in path),
                 prehistory_pct=tuple(MappingProxyType(r) for r in history),
                 initial_weights=spec.initial_weights, mandate=spec.mandate,
                 mandate_change=change)


def episode_grid(split: str = "test", episodes_per_task: int = 25,
                 tasks: tuple[str, ...] = TASK_NAMES) -> list[dict[str, object]]:
    """Reset options for a seeded evaluation or training grid: `{"task": ..., "seed": ...}`
    for the first `episodes_per_task` seeds of `split`, task by task."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; splits: {', '.join(SPLITS)}")
    unknown = [t for t in tasks if t not in TASKS]
    if unknown:
        raise ValueError(f"unknown tasks {unknown}")
    start = SPLITS[split].start
    return [{"task": t, "seed": start + i} for t in tasks for i in range(episodes_per_task)]
