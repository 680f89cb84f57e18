"""How the heuristic's knobs were chosen: each knob value tried on train seeds only, its mean
utility per task against the heuristic as it stands, paired by seed.

    .venv/bin/python -m memex.committee.reports.tuning --start 1000 --episodes 40 \\
        --knob VOL_HEADROOM=0.9,0.95,0.97,0.98 --knob TILT_SHRINK=0,0.15,0.3,0.5

A knob is a class attribute of `policies.heuristic.Heuristic`; a value is tried with every other
knob as it stands. Seeds outside the train split are refused: validation and test seeds judge the
heuristic, they never shape it.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence

from memex.committee.policies.common import Policy
from memex.committee.policies.heuristic import Heuristic
from memex.committee.reports.episodes import run_episode
from memex.committee.world.tasks import SPLITS, TASK_NAMES
from memex.evaluation.report import table


def mean_utility(factory: type[Policy], seeds: range) -> dict[str, list[float]]:
    """Per task, the utility (pts) of every episode on `seeds`."""
    return {t: [run_episode(factory(), t, s).metrics["utility_pts"] for s in seeds]
            for t in TASK_NAMES}


def sweep(knobs: dict[str, Sequence[float]], seeds: range) -> list[list[str]]:
    """One row per knob value: its mean utility per task, paired against the heuristic."""
    base = mean_utility(Heuristic, seeds)
    rows = [["(as is)", ""] + [f"{statistics.fmean(base[t]):.2f}" for t in TASK_NAMES]]
    for knob, values in knobs.items():
        if not hasattr(Heuristic, knob):
            raise ValueError(f"Heuristic has no knob {knob!r}")
        for value in values:
            variant = type("Variant", (Heuristic,), {knob: value})
            got = mean_utility(variant, seeds)
            rows.append([knob, f"{value:g}"] + [
                f"{statistics.fmean(a - b for a, b in zip(got[t], base[t], strict=True)):+.2f}"
                for t in TASK_NAMES])
    return rows


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Sweep the heuristic's knobs on train seeds.")
    p.add_argument("--start", type=int, default=1000, help="first train seed")
    p.add_argument("--episodes", type=int, default=40, help="seeds per task")
    p.add_argument("--knob", action="append", default=[], metavar="NAME=V1,V2,...")
    args = p.parse_args(argv)
    seeds = range(args.start, args.start + args.episodes)
    train = SPLITS["train"]
    if seeds.start < train.start or seeds.stop > train.stop:
        p.error("tuning runs on train seeds only")
    knobs = {}
    for spec in args.knob:
        name, _, values = spec.partition("=")
        knobs[name] = [float(v) for v in values.split(",")]
    print(table(["knob", "value", *[f"`{t}`" for t in TASK_NAMES]], sweep(knobs, seeds),
                right_from=2))


if __name__ == "__main__":
    main()
