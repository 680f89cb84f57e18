"""The four committee tasks, their seeded variants, and the train/validation/test seed splits.

Each task fixes the conflict it poses (its regime process, research quality and bias, starting
book, mandate and its revisions); the seed draws the details (when the regime turns, asset
tilts, every return, research noise). The regime process is public *in distribution*
(`RegimeProcess`: where the path starts, how long each regime lasts, where it goes next); an
episode's path never is. `seed=None` plays the task's canonical instance, which is the
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from memex.committee.world.market import (
    TICKERS,
    Mandate,
    MandateChange,
    World,
    simulate,
)
from memex.envkit.tasks import Grid, TaskCatalog

HORIZON_PERIODS = 20
QUERY_BUDGET = 10

SPLITS: dict[str, range] = {
    "train": range(0, 1_000_000),
    "validation": range(1_000_000, 1_100_000),
    "test": range(1_100_000, 1_200_000),
}
CANONICAL_SEED = SPLITS["train"].start  # a seedless reset never plays a test world

@dataclass(frozen=True)
class Spell:
    """How long a regime lasts once entered and where it goes next: a length drawn uniformly
    from `months`, or (with `months` None) a monthly turn probability `switch_prob`; `after`
    gives the next regime's probabilities (empty: the regime lasts to the end)."""

    months: tuple[int, int] | None = None
    switch_prob: float = 0.0
    after: Mapping[str, float] = field(default_factory=dict)

    def hazard(self, age: int) -> float:
        """Probability that the spell ends after its `age`-th month, given it lasted that long."""
        if not self.after:
            return 0.0
        if self.months is None:
            return self.switch_prob
        lo, hi = self.months
        return 0.0 if age < lo else 1.0 / (hi - age + 1) if age <= hi else 1.0


@dataclass(frozen=True)
class RegimeProcess:
    """A task's regime path *in distribution* — public, unlike any episode's path: the regime
    it starts in and each regime's `Spell`. Worlds draw their path from it (`sample`), and the
    heuristic's regime filter (`belief.py`) runs on it."""

    start: str
    spells: Mapping[str, Spell]

    def as_dict(self) -> dict[str, object]:
        """The process as JSON (served at `GET /tasks`)."""
        def spell(sp: Spell) -> dict[str, object]:
            length = ({"months": list(sp.months)} if sp.months is not None
                      else {"switch_prob": sp.switch_prob} if sp.after else {"lasts": "to the end"})
            return {**length, "after": dict(sp.after)}
        return {"start": self.start, "spells": {k: spell(v) for k, v in self.spells.items()}}

    def sample(self, rng: random.Random, horizon: int) -> list[str]:
        path, current = [], self.start
        while len(path) < horizon:
            spell = self.spells[current]
            if not spell.after:
                length = horizon
            elif spell.months is not None:
                length = rng.randint(*spell.months)
            else:
                length = 1
                while length < horizon and rng.random() >= spell.switch_prob:
                    length += 1
            path += [current] * length
            if spell.after:
                current = rng.choices(list(spell.after), weights=list(spell.after.values()))[0]
        return path[:horizon]


def _process(start: str, **spells: Spell) -> RegimeProcess:
    return RegimeProcess(start, MappingProxyType(spells))


def _switching(switch_prob: float, to: str) -> Spell:
    return Spell(switch_prob=switch_prob, after=MappingProxyType({to: 1.0}))


def _lasting(lo: int, hi: int, **after: float) -> Spell:
    return Spell(months=(lo, hi), after=MappingProxyType(after))


def _weights(**w: float) -> Mapping[str, float]:
    assert set(w) <= set(TICKERS) and sum(w.values()) <= 1.0 + 1e-9
    return MappingProxyType({t: w.get(t, 0.0) for t in TICKERS})


@dataclass(frozen=True)
class TaskSpec:
    name: str
    title: str
    conflict: str
    good_behaviour: str
    regime_process: RegimeProcess
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
        regime_process=_process("expansion", expansion=_switching(0.06, "inflation"),
                                inflation=_switching(0.15, "expansion")),
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
        regime_process=_process(
            "tech_boom", tech_boom=_lasting(7, 12, tech_correction=0.7, expansion=0.3),
            tech_correction=_lasting(3, 5, expansion=1.0), expansion=Spell()),
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
        regime_process=_process(
            "expansion", expansion=_lasting(4, 7, late_cycle=1.0),
            late_cycle=_lasting(1, 3, crisis=1.0), crisis=_lasting(3, 5, recovery=1.0),
            recovery=Spell()),
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
        regime_process=_process("expansion", expansion=_switching(0.08, "inflation"),
                                inflation=_switching(0.15, "expansion")),
        prehistory_regime="expansion",
        research_noise=0.30, research_bias=MappingProxyType({"ENERGY": 0.4}),
        research_lag_periods=0,
        initial_weights=_weights(NOVA=0.10, CLDX=0.05, PTRL=0.40, SOLR=0.25, MEDI=0.10,
                                 GOVT=0.10),
        mandate_revision=(
            Mandate(max_asset_weight=0.25, max_sector_weight=0.45, vol_budget_annual_pct=6.0,
                    excluded=("PTRL",)),
            "Mandate revision: max 25% per asset, 45% per sector, volatility budget 6% a year, "
            "and PTRL (thermal coal and oil sands) excluded on ESG grounds."),
    ),
)})
TASK_NAMES: tuple[str, ...] = tuple(TASKS)


# The tasks of OpenEnv's Task API (`envkit.tasks`): each seed split crossed with the four tasks,
# seed-major ("test/5" is task 1 on the second test seed). A task id is also a reset `task_id`.
TASK_GRIDS = TaskCatalog(tuple(
    Grid(name, name, seeds, {"task": TASK_NAMES},
         description=f"every task on the {name} seeds")
    for name, seeds in SPLITS.items()))


def named_task(task_id: str) -> dict[str, str]:
    """The reset fields a `task_id` that is no task id `SPLIT/INDEX` names: a task."""
    if task_id not in TASKS:
        raise ValueError(f"task_id {task_id[:64]!r}: not a task ({', '.join(TASK_NAMES)}) or a "
                         f"task id SPLIT/INDEX ({', '.join(SPLITS)})")
    return {"task": task_id}


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
    regimes = spec.regime_process.sample(rng, spec.horizon)
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


def task_catalog() -> dict[str, object]:
    """The public description of every task and the seed splits (served at `GET /tasks`)."""
    return {"tasks": [{"name": t.name, "title": t.title, "conflict": t.conflict,
                       "good_behaviour": t.good_behaviour, "horizon": t.horizon,
                       "query_budget": t.query_budget,
                       "regime_process": t.regime_process.as_dict()} for t in TASKS.values()],
            "splits": {k: [r.start, r.stop - 1] for k, r in SPLITS.items()}}
