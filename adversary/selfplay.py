"""Self-play: adversary rounds and defender rounds around one PLR buffer (`memex.curriculum`).

Each round r:

1. **Adversary round** — an `Adversary` proposes plans against the current defender. The default,
   `SearchAdversary`, is `memex.adversary.search` (optuna over the plan knob space; a plan is
   valid when the oracle, paid only for what tools revealed, solves it inside the budget). The
   `--plans` hardest valid plans enter the buffer as levels (`Level.from_plan(plan, seed)`, one
   per searched seed) through `PLRBuffer.add` — a full buffer takes a level only in place of a
   lower-scored one. Their score (`--plan-score`): the regret (oracle return - target return)
   when the adversary searched against the defender's own checkpoint; otherwise the buffer's top
   score, so the defender plays them soon and its own returns replace that score.
2. **Defender round** — a `Defender` trains on the buffer. The default, `GRPODefender`, runs
   `train_grpo.py --curriculum plr --curriculum-state <the buffer>` for `--groups` more GRPO
   groups (`--resume` from the previous round's checkpoint): every group's level is sampled
   from the buffer, adversary-made or fresh, and its returns update the level's score.

The adversary searches against `--adversary-defender`: `checkpoint` (the defender's latest
adapter through the evaluation harness's `ckpt:` policy; the heuristic before the first
defender round) or any baseline name. On CPU a checkpoint plays each step in seconds, so the
`--dry-run` searches against the heuristic.

Outputs under `--out`: `rounds.csv` (one row per round: the adversary's trials, valid plans,
best failure, levels added or refused, the buffer, the defender's step, return, decision
accuracy and what it sampled), `plans.jsonl` (every scored plan, with its round), `buffer.json`
(the PLR state), `defender/` (the trainer's output: checkpoints, metrics.csv,
curriculum.csv), TensorBoard events under `tb/` and `selfplay.png`.

    .venv/bin/python -m memex.adversary.selfplay --dry-run --rounds 2 --out runs/selfplay
    .venv/bin/python -m memex.adversary.selfplay --rounds 10 --groups 32 --out runs/selfplay \\
        --train-args "--model Qwen/Qwen2.5-1.5B-Instruct --num-generations 8"

`--dry-run`: the trainer's `--dry-run` (SmolLM2-135M on CPU) cut to one model turn of a few
tokens per episode on short prompts, one group per round, no warm start; an adversary of 4
trials on one seed; the dry-run kinds (trade_based, fair_trade, pep_wealth) at easy; replay
probability 0.8; one CPU thread for torch (`OMP_NUM_THREADS=1` unless set: on a busy machine
OpenMP's spin-waiting threads made a round tens of times slower).
"""

from __future__ import annotations

import argparse
import csv
import importlib.util
import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from memex.adversary.search import search
from memex.curriculum.levels import Level, LevelSpace
from memex.curriculum.plr import PLRBuffer, regret
from memex.registry import get_adapter

ROUND_COLUMNS = ("round", "adversary_defender", "trials", "valid", "best_failure",
                 "best_regret", "plan_score", "levels_added", "levels_refused", "buffer_size",
                 "plan_levels_in_buffer", "defender_step", "defender_groups",
                 "defender_mean_return", "defender_decision_accuracy", "plan_share_sampled",
                 "mean_score_sampled", "adversary_s", "defender_s")
DRY_TASKS, DRY_DIFFICULTIES = "trade_based,fair_trade,pep_wealth", "easy"
DRY_TRAIN_ARGS = ("--dry-run --max-turns 1 --max-completion-length 4 --max-prompt-tokens 128 "
                  "--max-prompt-chars 200 --sft-warmstart 0 --lora-r 2")


# ---- the two players ---------------------------------------------------------------------------

@dataclass
class Proposal:
    """A scored plan from an adversary round: its levels (one per seed) and their score."""

    plan: dict[str, Any]
    seeds: tuple[int, ...]
    valid: bool
    failure: float  # the adversary's own objective (higher: the defender fails more)
    regret: float  # oracle return - defender return: the PLR score of its levels
    record: dict[str, Any] = field(default_factory=dict)  # the adversary's full row, for logs

    def levels(self) -> list[Level]:
        return [Level.from_plan(self.plan, s) for s in self.seeds]


class Adversary(Protocol):
    """What a self-play adversary round needs: scored plans against `defender`, hardest first."""

    def propose(self, defender: str, round_index: int) -> list[Proposal]: ...


class Defender(Protocol):
    """What a self-play defender round needs: train on the buffer at `state`, report."""

    def train(self, state: Path, round_index: int) -> dict[str, Any]: ...


class SearchAdversary:
    """`memex.adversary.search` (optuna over the plan knob space) as a self-play adversary."""

    def __init__(self, trials: int, seeds: tuple[int, ...], kinds: list[str] | None = None,
                 difficulty: str | None = None, seed: int = 0, progress: bool = True):
        self.trials, self.seeds, self.kinds = trials, seeds, kinds
        self.fixed = {"difficulty": difficulty} if difficulty else None
        self.seed, self.progress = seed, progress

    def propose(self, defender: str, round_index: int) -> list[Proposal]:
        scored = search(defender, trials=self.trials, seeds=self.seeds,
                        sampler_seed=self.seed * 1_000 + round_index, kinds=self.kinds,
                        fixed=self.fixed, progress=self.progress)
        return [Proposal(s.plan, tuple(s.seeds), s.valid, s.failure,
                         regret(s.oracle_return, s.defender_return), s.to_dict())
                for s in scored]


class GRPODefender:
    """`train_grpo.py --curriculum plr` in a subprocess, `groups` more groups per round."""

    def __init__(self, out: Path, groups: int, train_args: list[str], seed: int = 0):
        self.out, self.groups, self.train_args, self.seed = out, groups, train_args, seed

    def checkpoint(self) -> Path | None:
        final = self.out / "final"
        return final if (final / "adapter_config.json").exists() else None

    def train(self, state: Path, round_index: int) -> dict[str, Any]:
        # --epochs counts from the first round: round r resumes and trains epoch r + 1.
        argv = [sys.executable, "-m", "memex.train_grpo", *self.train_args,
                "--curriculum", "plr", "--curriculum-state", str(state),
                "--output-dir", str(self.out), "--num-prompts", str(self.groups),
                "--epochs", str(round_index + 1), "--save-steps", "1", "--seed", str(self.seed)]
        if round_index > 0:
            argv.append("--resume")
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
        run = subprocess.run(argv, capture_output=True, text=True, env=env)
        if run.returncode != 0:
            raise RuntimeError(f"defender round {round_index} failed:\n{run.stderr[-4000:]}")
        summary = json.loads((self.out / "run_summary.json").read_text())
        metrics = list(csv.DictReader((self.out / "metrics.csv").open()))
        last = metrics[-1] if metrics else {}
        groups = list(csv.DictReader((self.out / "curriculum.csv").open()))
        mine = groups[-self.groups:] if groups else []

        def num(value: Any) -> float | None:
            return None if value in (None, "") else float(value)

        return {"step": summary["global_step"], "groups": len(mine),
                "mean_return": num(last.get("env/return")),
                "decision_accuracy": num(last.get("env/decision_accuracy")),
                "plan_share": sum(bool(g["plan"]) for g in mine) / max(1, len(mine)),
                "mean_score": sum(float(g["score"]) for g in mine) / max(1, len(mine))}


# ---- the loop -----------------------------------------------------------------------------------

def play_rounds(buffer: PLRBuffer, state: Path, adversary: Adversary, defender: Defender, *,
                rounds: int, plans: int, out: Path, adversary_defender: str = "heuristic",
                checkpoint: Any = None, plan_score: str = "auto",
                log: Any = print) -> list[dict[str, Any]]:
    """Alternate adversary and defender rounds; log and return one row per round.

    `plan_score` is what an adversary-made level enters the buffer with: `regret` (against the
    adversary's target), `top` (the buffer's highest score, or its regret if higher: the
    defender plays it soon, and its own returns then replace the score), or `auto` (`regret`
    when the target was the defender's own checkpoint, else `top` — another policy's regret
    says little about this defender)."""
    rows: list[dict[str, Any]] = []
    writer = _tensorboard(out / "tb")
    for r in range(rounds):
        target = adversary_defender
        if target == "checkpoint":
            ckpt = checkpoint() if checkpoint is not None else None
            target = f"ckpt:{ckpt}" if ckpt is not None else "heuristic"
        t0 = time.perf_counter()
        proposals = adversary.propose(target, r)
        adversary_s = time.perf_counter() - t0
        with (out / "plans.jsonl").open("a") as f:
            for p in proposals:
                f.write(json.dumps({"round": r, "defender": target, **p.record,
                                    "regret": p.regret}, sort_keys=True) + "\n")
        hardest = sorted((p for p in proposals if p.valid), key=lambda p: -p.failure)[:plans]
        added = refused = 0
        how = plan_score if plan_score != "auto" else (
            "regret" if target.startswith("ckpt:") else "top")
        top = max((e.score for e in buffer.entries.values()), default=None)
        for p in hardest:
            score = p.regret if how == "regret" or top is None else max(p.regret, top)
            for level in p.levels():
                if buffer.add(level, score):
                    added += 1
                else:
                    refused += 1
        buffer.save(state)
        log(f"round {r}: adversary vs {target}: {len(proposals)} plans, "
            f"{sum(p.valid for p in proposals)} valid, {added} levels added ({refused} refused)")

        t0 = time.perf_counter()
        trained = defender.train(state, r)
        defender_s = time.perf_counter() - t0
        buffer = PLRBuffer.load(state)  # the trainer sampled and scored: continue from there
        row = {"round": r, "adversary_defender": target, "trials": len(proposals),
               "valid": sum(p.valid for p in proposals),
               "best_failure": max((p.failure for p in proposals), default=0.0),
               "best_regret": max((p.regret for p in hardest), default=None),
               "plan_score": how,
               "levels_added": added, "levels_refused": refused, "buffer_size": len(buffer),
               "plan_levels_in_buffer": sum(lv.plan is not None for lv in buffer.levels()),
               "defender_step": trained.get("step"), "defender_groups": trained.get("groups"),
               "defender_mean_return": trained.get("mean_return"),
               "defender_decision_accuracy": trained.get("decision_accuracy"),
               "plan_share_sampled": trained.get("plan_share"),
               "mean_score_sampled": trained.get("mean_score"),
               "adversary_s": round(adversary_s, 1), "defender_s": round(defender_s, 1)}
        rows.append(row)
        _append_csv(out / "rounds.csv", row)
        if writer is not None:
            for key, value in row.items():
                if isinstance(value, int | float) and key != "round":
                    writer.add_scalar(f"selfplay/{key}", value, r)
            writer.flush()
        log(f"round {r}: defender step {row['defender_step']}, return "
            f"{row['defender_mean_return']}, plan levels sampled {row['plan_share_sampled']}")
    if writer is not None:
        writer.close()
    plot(rows, out / "selfplay.png")
    return rows


def _append_csv(path: Path, row: dict[str, Any]) -> None:
    new = not path.exists()
    with path.open("a", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=ROUND_COLUMNS)
        if new:
            writer.writeheader()
        writer.writerow(row)


def _tensorboard(path: Path) -> Any:
    if importlib.util.find_spec("tensorboard") is None:
        return None
    from torch.utils.tensorboard import SummaryWriter

    return SummaryWriter(str(path))


def plot(rows: list[dict[str, Any]], path: Path) -> Path | None:
    """Adversary (best failure, regret of its levels) and defender (return, accuracy, share of
    adversary-made levels sampled) per round."""
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    xs = [r["round"] for r in rows]

    def ys(key: str) -> list[float]:
        return [float("nan") if r[key] is None else float(r[key]) for r in rows]

    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
    a1.plot(xs, ys("best_failure"), marker="o", label="best failure (adversary objective)")
    a1.plot(xs, ys("best_regret"), marker="s", label="regret of the hardest valid plan")
    a1.set_title("adversary rounds")
    a1.set_xlabel("round")
    a1.legend(fontsize=8)
    a2.plot(xs, ys("defender_mean_return"), marker="o", label="episode return (last step)")
    a2.plot(xs, ys("defender_decision_accuracy"), marker="s", label="decision accuracy")
    a2.plot(xs, ys("plan_share_sampled"), marker="^", label="adversary levels sampled (share)")
    a2.set_title("defender rounds")
    a2.set_xlabel("round")
    a2.legend(fontsize=8)
    for ax in (a1, a2):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Self-play: adversary and defender rounds around "
                                            "one PLR buffer.")
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--out", default="runs/selfplay")
    p.add_argument("--trials", type=int, default=30, help="adversary plans scored per round")
    p.add_argument("--adversary-seeds", default="0,1,2", help="train seeds each plan plays on")
    p.add_argument("--plans", type=int, default=4, help="hardest valid plans added per round")
    p.add_argument("--adversary-defender", default="checkpoint",
                   help="checkpoint (the defender's latest adapter) or a baseline name")
    p.add_argument("--plan-score", choices=("auto", "regret", "top"), default="auto",
                   help="the score adversary-made levels enter the buffer with (play_rounds)")
    p.add_argument("--groups", type=int, default=8, help="GRPO groups per defender round")
    p.add_argument("--tasks", default=None, help="kinds (comma list; default all)")
    p.add_argument("--difficulties", default=None, help="comma list (default all)")
    p.add_argument("--train-args", default="", help="more train_grpo.py arguments")
    p.add_argument("--capacity", type=int, default=128)
    p.add_argument("--temperature", type=float, default=0.3)
    p.add_argument("--staleness", type=float, default=0.3)
    p.add_argument("--replay-prob", type=float, default=0.5)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dry-run", action="store_true",
                   help="bounded CPU run: SmolLM2-135M dry-run trainer, a tiny adversary")
    p.add_argument("--no-progress", action="store_true")
    argv = sys.argv[1:] if argv is None else list(argv)
    args = p.parse_args(argv)
    given = {a.split("=")[0] for a in argv if a.startswith("--")}
    if args.dry_run:
        for flag, value in (("--trials", 4), ("--adversary-seeds", "0"), ("--plans", 2),
                            ("--replay-prob", 0.8),
                            ("--groups", 1), ("--adversary-defender", "heuristic"),
                            ("--tasks", DRY_TASKS), ("--difficulties", DRY_DIFFICULTIES)):
            if flag not in given:
                setattr(args, flag.lstrip("-").replace("-", "_"), value)
    train_args = shlex.split(args.train_args)
    if args.dry_run:
        train_args = shlex.split(DRY_TRAIN_ARGS) + train_args
        os.environ.setdefault("OMP_NUM_THREADS", "1")  # the trainer subprocess inherits it
    adapter = get_adapter("memex")
    kinds = args.tasks.split(",") if args.tasks else None
    difficulties = args.difficulties.split(",") if args.difficulties else None
    train_args += [f for flag, v in (("--tasks", args.tasks), ("--difficulties",
                                                                args.difficulties))
                   if v for f in (flag, v)]

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    state = out / "buffer.json"
    if state.exists():
        p.error(f"{out} holds a self-play run already (buffer.json); choose another --out")
    space = LevelSpace.of(adapter, "train", kinds, difficulties, seed_offset=args.seed * 10_000)
    buffer = PLRBuffer(args.capacity, args.temperature, args.staleness, args.replay_prob,
                       seed=args.seed, space=space)
    seeds = tuple(int(s) for s in args.adversary_seeds.split(","))
    adversary = SearchAdversary(args.trials, seeds, kinds,
                                difficulties[0] if difficulties and len(difficulties) == 1
                                else None, seed=args.seed, progress=not args.no_progress)
    defender = GRPODefender(out / "defender", args.groups, train_args, seed=args.seed)
    started = time.perf_counter()
    rows = play_rounds(buffer, state, adversary, defender, rounds=args.rounds, plans=args.plans,
                       out=out, adversary_defender=args.adversary_defender,
                       checkpoint=defender.checkpoint, plan_score=args.plan_score,
                       log=lambda m: print(m, file=sys.stderr, flush=True))
    summary = {"rounds": rows, "wall_s": round(time.perf_counter() - started, 1),
               "command": "python -m memex.adversary.selfplay " + shlex.join(argv)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
