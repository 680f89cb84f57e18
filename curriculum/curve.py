"""The PLR curve: what prioritized level replay samples over updates, against uniform sampling.

For each defender, a `PLRBuffer` and a `UniformSampler` draw levels from the same space (the
train split: every kind x difficulty x `--seeds` seeds); each drawn level is played by the
defender and scored by its regret against the oracle (`RegretOracle`), and the score goes back
with `update`. Both defenders here are deterministic, so a level's regret is measured once (real
episodes, in process) and reused when the level comes back.

- `blind_spot:layering` (`curriculum.defenders.BlindSpot`): the oracle except on layering,
  where it closes the alert at once — a defender with one known weakness.
- `heuristic`: the scripted investigator (`policies.heuristic`), right on nearly every case
  but short of the oracle's return by different amounts on different cells.

Writes the markdown report (`--out`) and PNGs (`--plots-dir`): the sampled kind and difficulty
distribution over updates (share of the last `--window` draws), and the mean regret of the
sampled levels, PLR against uniform.

    .venv/bin/python -m memex.curriculum.curve --out docs/curriculum.md --plots-dir docs/curriculum
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from memex.curriculum.defenders import BlindSpot
from memex.curriculum.levels import Level, LevelSpace
from memex.curriculum.oracle import RegretOracle, play_level
from memex.curriculum.plr import PLRBuffer, UniformSampler
from memex.registry import get_adapter

DEFENDERS = ("blind_spot:layering", "heuristic")


def make_defender(adapter: Any, name: str) -> Any:
    if name.startswith("blind_spot:"):
        return BlindSpot(name.split(":", 1)[1])
    return adapter.make_policy(name)


class LevelRegrets:
    """Regret of a deterministic defender per level, measured once per level."""

    def __init__(self, adapter: Any, defender: str, oracle: RegretOracle):
        self.adapter, self.defender, self.oracle = adapter, defender, oracle
        self.values: dict[str, float] = {}

    def __call__(self, level: Level) -> float:
        if level.key not in self.values:
            episode = play_level(self.adapter, make_defender(self.adapter, self.defender), level)
            self.values[level.key] = self.oracle.regret(level, episode.episode_return)
        return self.values[level.key]


def run(sampler: Any, regrets: LevelRegrets, updates: int, label: str = "",
        progress: bool = True) -> list[tuple[Level, float]]:
    """`updates` rounds of sample -> play -> update; the (level, regret) of each draw."""
    out = []
    for _ in tqdm(range(updates), desc=label, unit="update", disable=not progress,
                  file=sys.stderr):
        level = sampler.sample()
        score = regrets(level)
        sampler.update(level, score)
        out.append((level, score))
    return out


def shares(draws: list[tuple[Level, float]], by: str, values: list[str],
           window: int) -> list[list[float]]:
    """Per update t, the share of each value among the last `window` draws."""
    out = []
    for t in range(1, len(draws) + 1):
        recent = Counter(getattr(lv, by) for lv, _ in draws[max(0, t - window):t])
        n = sum(recent.values())
        out.append([recent[v] / n for v in values])
    return out


def rolling_mean(xs: list[float], window: int) -> list[float]:
    return [sum(xs[max(0, t - window):t]) / len(xs[max(0, t - window):t])
            for t in range(1, len(xs) + 1)]


def plot(defender: str, plr: list[tuple[Level, float]], uniform: list[tuple[Level, float]],
         space: LevelSpace, window: int, path: Path, top: int = 4) -> Path:
    """Three panels: PLR's kind shares (the `top` most drawn kinds stacked, the rest as
    "other"; the uniform sampler's share of the most drawn kind dashed), its difficulty shares,
    and the mean regret of sampled levels, PLR against uniform."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    counts = Counter(lv.kind for lv, _ in plr)
    kinds = [k for k, _ in counts.most_common(top)]
    diffs = list(space.difficulties)
    xs = list(range(1, len(plr) + 1))
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.4))

    def stack(ax: Any, by: str, values: list[str], other: bool) -> None:
        rows = shares(plr, by, values, window)
        ys = [list(col) for col in zip(*rows, strict=True)]
        labels = list(values)
        if other:
            ys.append([1 - sum(r) for r in rows])
            labels.append(f"other {len(space.kinds) - len(values)} kinds")
        colors = [plt.cm.tab10(i) for i in range(len(values))] + (["#cccccc"] if other else [])
        ax.stackplot(xs, ys, labels=labels, colors=colors, alpha=0.9)
        ax.set_xlim(1, len(plr))
        ax.set_ylim(0, 1)
        ax.set_xlabel("update")
        ax.set_ylabel(f"share of the last {window} draws")
        ax.set_title(f"PLR: sampled {by}")

    stack(axes[0], "kind", kinds, True)
    axes[0].plot(xs, [r[0] for r in shares(uniform, "kind", kinds[:1], window)], color="black",
                 linestyle="--", linewidth=1, label=f"uniform sampler: {kinds[0]}")
    axes[0].axhline(1 / len(space.kinds), color="black", linestyle=":", linewidth=1,
                    label=f"1/{len(space.kinds)}")
    stack(axes[1], "difficulty", diffs, False)
    axes[1].axhline(1 / len(diffs), color="black", linestyle=":", linewidth=1,
                    label=f"1/{len(diffs)}")
    for ax in axes[:2]:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax = axes[2]
    for draws, label in ((plr, "PLR"), (uniform, "uniform")):
        ax.plot(xs, rolling_mean([s for _, s in draws], window), label=label)
    ax.set_xlabel("update")
    ax.set_ylabel(f"mean regret, last {window} draws")
    ax.set_title("regret of sampled levels")
    ax.legend(fontsize=8)
    fig.suptitle(f"defender: {defender}")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def report(results: list[dict[str, Any]], args: argparse.Namespace, command: str,
           out: Path) -> str:
    lines = [
        "# Prioritized level replay: the PLR curve", "",
        "What `memex.curriculum.PLRBuffer` samples over updates, against uniform sampling of the "
        "same level space. Each drawn level is played by the defender and scored by its regret "
        "against the oracle (oracle return - defender return, real in-process episodes); the "
        "score goes back with `update`. Regenerate with:", "",
        f"    {command}", "",
        f"Level space: train split, {len(results[0]['space'].kinds)} kinds x "
        f"{len(results[0]['space'].difficulties)} difficulties x {args.seeds} seeds "
        f"({results[0]['space'].size} levels). PLR: capacity {args.capacity}, temperature "
        f"(beta) {args.temperature}, staleness (rho) {args.staleness}, replay probability "
        f"{args.replay_prob}, seed {args.seed}; {args.updates} updates per sampler. Shares in "
        f"the tables are over the last {args.tail} updates; plots use a window of "
        f"{args.window}.", "",
    ]
    for r in results:
        kinds = list(r["space"].kinds)
        plr_tail = Counter(lv.kind for lv, _ in r["plr"][-args.tail:])
        uni_tail = Counter(lv.kind for lv, _ in r["uniform"][-args.tail:])
        lines += [f"## Defender `{r['defender']}`", "",
                  f"![PLR curve, {r['defender']}]({os.path.relpath(r['png'], out.parent)})", "",
                  "| kind | mean regret (levels seen) | PLR share | uniform sampler share | "
                  f"PLR share / (1/{len(kinds)}) |",
                  "|---|---:|---:|---:|---:|"]
        seen: dict[str, list[float]] = {}
        for lv, s in r["plr"] + r["uniform"]:
            seen.setdefault(lv.kind, []).append(s)
        for k in kinds:
            p, u = plr_tail[k] / args.tail, uni_tail[k] / args.tail
            ratio = f"{p * len(kinds):.2f}"
            mean = sum(seen.get(k, [0.0])) / max(1, len(seen.get(k, [])))
            lines.append(f"| {k} | {mean:.3f} | {p:.2f} | {u:.2f} | {ratio} |")
        diffs = list(r["space"].difficulties)
        pd = Counter(lv.difficulty for lv, _ in r["plr"][-args.tail:])
        ud = Counter(lv.difficulty for lv, _ in r["uniform"][-args.tail:])
        lines += ["", "| difficulty | PLR share | uniform share |", "|---|---:|---:|"]
        lines += [f"| {d} | {pd[d] / args.tail:.2f} | {ud[d] / args.tail:.2f} |" for d in diffs]
        plr_regret = sum(s for _, s in r["plr"][-args.tail:]) / args.tail
        uni_regret = sum(s for _, s in r["uniform"][-args.tail:]) / args.tail
        buf = r["buffer"]
        lines += ["", f"Mean regret of the sampled levels (last {args.tail} updates): PLR "
                  f"{plr_regret:.3f}, uniform {uni_regret:.3f}. Buffer: {len(buf)} levels, "
                  f"{sum(d.replay for d in buf.history)} of {buf.sampled} draws replayed, "
                  f"{buf.evicted} evicted. Top levels by score: "
                  + ", ".join(f"`{e.level.label}` ({e.score:.3f})" for e in buf.top(5)) + ".",
                  f"Episodes played: {r['episodes']} defender, {r['oracle_episodes']} oracle; "
                  f"{r['wall_s']:.1f} s.", ""]
    lines += [
        "## Using the curriculum", "",
        "- Training: `python -m memex.train_grpo --curriculum plr [--plr-score regret|value_loss]"
        "` samples each GRPO group's level from the buffer and scores it from the group's "
        "returns (the buffer persists in `OUTPUT_DIR/curriculum.json`, one row per group in "
        "`curriculum.csv`); `--curriculum uniform` (the default) is the seeded grid.",
        "- Evaluation: `python -m memex.evaluation.harness --curriculum plr "
        "--curriculum-updates N --policies P,...` evaluates on the levels PLR samples by the "
        "first policy's regret against the oracle and adds the sampled-level statistics to "
        "the report.",
        "- Self-play: `python -m memex.adversary.selfplay --dry-run --rounds 2 --out "
        "runs/selfplay` (`make selfplay`) alternates adversary rounds (`memex.adversary.search`"
        "; the hardest valid plans enter the buffer as levels) and defender rounds "
        "(`train_grpo.py --curriculum plr` on that buffer); rounds, scores and plans go to "
        "`rounds.csv`, `plans.jsonl`, TensorBoard and `selfplay.png`.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="The PLR curve: sampled levels over updates.")
    p.add_argument("--defenders", default=",".join(DEFENDERS),
                   help="comma list: baselines or blind_spot:KIND")
    p.add_argument("--updates", type=int, default=300)
    p.add_argument("--seeds", type=int, default=10, help="train seeds per kind x difficulty")
    p.add_argument("--capacity", type=int, default=64)
    p.add_argument("--temperature", type=float, default=0.3)
    p.add_argument("--staleness", type=float, default=0.3)
    p.add_argument("--replay-prob", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--window", type=int, default=25, help="draws per point of the curves")
    p.add_argument("--tail", type=int, default=100, help="updates the tables summarise")
    p.add_argument("--out", default="docs/curriculum.md")
    p.add_argument("--plots-dir", default="docs/curriculum")
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)
    args.tail = min(args.tail, args.updates)
    argv_list = sys.argv[1:] if argv is None else list(argv)
    command = ".venv/bin/python -m memex.curriculum.curve " + shlex.join(
        a for a in argv_list if a != "--no-progress")  # the same run, with or without bars

    adapter = get_adapter("memex")
    space = LevelSpace.of(adapter, "train", seeds=args.seeds)
    oracle = RegretOracle(adapter)
    out = Path(args.out)
    results = []
    for defender in args.defenders.split(","):
        started = time.perf_counter()
        before = oracle.episodes
        regrets = LevelRegrets(adapter, defender, oracle)
        buffer = PLRBuffer(args.capacity, args.temperature, args.staleness, args.replay_prob,
                           seed=args.seed, space=space)
        plr = run(buffer, regrets, args.updates, f"PLR {defender}", not args.no_progress)
        uniform = run(UniformSampler(space, seed=args.seed), regrets, args.updates,
                      f"uniform {defender}", not args.no_progress)
        png = plot(defender, plr, uniform, space, args.window,
                   Path(args.plots_dir) / f"plr_{defender.replace(':', '_')}.png")
        results.append({"defender": defender, "space": space, "plr": plr, "uniform": uniform,
                        "buffer": buffer, "png": png, "episodes": len(regrets.values),
                        "oracle_episodes": oracle.episodes - before,
                        "wall_s": time.perf_counter() - started})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report(results, args, command, out))
    print(f"-> {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
