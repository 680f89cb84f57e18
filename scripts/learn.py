"""The measured learning run (`make learn`): does GRPO move a small model in Memex?

One command, three models, one held-out evaluation:

1. `train_grpo.main` fits SmolLM2-135M's LoRA on heuristic (observation -> action) pairs (the
   SFT warm start, saved as `grpo/warmstart/`), then runs closed-loop branch-point GRPO on the
   slice's train-split episodes (`grpo/final/`, `grpo/metrics.csv`).
2. The control starts from the same warm start and gets the same extra compute as supervised
   steps: one optimizer step per heuristic (observation -> action) pair, as many pairs as GRPO
   trained rows (fresh pairs, from train-split episodes the warm start did not use).
3. The three models (warm start, GRPO, control) play the same held-out test-split episodes of
   the slice, in process, in lockstep with one batched greedy generation per turn (the trainer's
   `RolloutEngine` and prompt renderer: evaluation prompts are training prompts); the heuristic
   investigator plays them too under the same turn cap, as a reference.

Reported with bootstrap 95% intervals (scipy, percentile method): return (the episode return,
a turn-capped episode scored as the environment scores a timeout — the training reward's
`outcome`), decision accuracy, valid tool-call rate, page faults, citations (the share of the
needed manual sections a decision cited validly; only defined for decided episodes), and the
paired differences GRPO - warm start and GRPO - control. Figures: the GRPO reward and its
components, the share of GRPO groups whose rewards had zero variance (no learning signal), and
the comparison. Everything goes to `--out` (runs/) and the report and figures to `--docs`.

    .venv/bin/python scripts/learn.py                  # `full`: the run in docs/training.md
    .venv/bin/python scripts/learn.py --size small     # a smoke test of the same pipeline
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shlex
import shutil
import sys
import threading
import time
from collections import Counter
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from memex import train_grpo
from memex.envkit.adapter import EnvAdapter
from memex.envkit.episodes import EpisodeSpec
from memex.envkit.grammar import Limits
from memex.evaluation.report import replace_section
from memex.inference import load_local_model
from memex.policies.probes import AlwaysSar
from memex.policies.scripted import act
from memex.registry import get_adapter
from memex.scenarios import KINDS

# Sizes. `full` (the default) is the specified size: >= 200 held-out test episodes per model
# and 50 GRPO generation batches, one optimizer step each (the aim of >= 50 steps).
# The fourth run's 36 batches took 158 s each and the run 105 minutes, over the 90-minute bound;
# most of a batch was TRL's LM head scoring every prompt position on CPU, which
# `train_grpo.score_completions_only_on_cpu` removed (the fifth run's batches 57 s on average,
# the run 54 minutes; docs/training.md, "Why these sizes");
# `pilot` is 12 batches and 40 test episodes; `small` is a smoke test of the same pipeline.
# Earlier full runs (docs/training.md): the first `--lr 1e-4 --steps-per-generation 1`, the
# second (collapsed to always-close) `--lr 5e-4 --steps-per-generation 4`, both decisions at
# temperature 1 and the kinds unpaired; the third (stopped at 32 of 44 batches, no
# improvement) with the decision at temperature 2, no uniform exploration and advantages
# scaled by the batch; the fourth the current settings at 36 batches (GRPO - warm start +0.083
# [+0.008, +0.180] in return, from four changed decisions and better citations, in 105 minutes);
# the fifth the current settings at 50 batches with the CPU update fixed (+0.214 [+0.065,
# +0.387] in return, +0.040 [+0.005, +0.080] in accuracy).
# The demonstrator plays each episode to the takeover point and gives the warm start's pairs:
# the heuristic, writing to the case file how each anomaly was settled, so that the context the
# model decides from carries what the heuristic decided on (docs/training.md, "The slice").
DEMONSTRATOR = "heuristic_documented"
_SLICE = {"tasks": "trade_based,fair_trade", "demonstrator": DEMONSTRATOR,
          "takeover_last": 1, "max_turns": 1,
          "max_new_tokens": 256, "max_prompt_tokens": 416, "temperature": 1.0, "lr": 5e-4,
          # The decision (the tool name's first token) is drawn half the time from the policy
          # and half the time uniformly between file_sar and close_alert: the warm start's
          # wrong decisions are confident (p(right) 0.003-0.044), so neither temperature 1 nor 2
          # split their groups (the third run); the arguments are sampled at 1.
          "decision_temperature": 1.0, "decision_epsilon": 0.5,
          # Each generation batch is one group of each kind at one seed (2 groups of 4), trained
          # on in one update: one kind's groups cannot push every decision their way, and no
          # old-log-prob pass is needed (TRL skips it when generation and update align).
          "num_generations": 4, "groups_per_step": 2, "steps_per_generation": 1,
          "pair_tasks": True,
          # Generation bounds (free text, lists): a SAR at these bounds is about 220 tokens
          # written plainly, inside the 256-token reply budget (replies average 20-40 tokens);
          # LoRA on the top 8 of 30 layers (a row's backward about 3x cheaper on CPU).
          "gen_text_chars": 48, "gen_list_items": 2, "lora_layers": 8}
SIZES: dict[str, dict[str, Any]] = {
    "small": {**_SLICE, "warmstart": 8, "num_prompts": 4, "test_episodes": 16, "base_row": 1},
    "pilot": {**_SLICE, "warmstart": 24, "num_prompts": 24, "test_episodes": 40, "base_row": 0},
    "full": {**_SLICE, "warmstart": 24, "num_prompts": 100, "test_episodes": 200,
             "base_row": 0},
}
# GRPO's rewards in the learning run: the outcome alone (format, quality and OS weights 0; a
# wrong decision earns none of them anyway), advantages scaled by each group's reward std, so
# that a split `trade_based` group (a spread of 5.2) pushes its twin no harder than a split
# `fair_trade` group (1.2) pushes back: what is left of a pair's update is the difference
# between the twins, not the cost asymmetry (docs/training.md, "Rewards").
REWARD_WEIGHTS = {"format": 0.0, "quality": 0.0, "outcome": 1.0, "os": 0.0}
SCALE_REWARDS = "group"
MEASURES = (("return", "return"), ("decision_accuracy", "decision accuracy"),
            ("valid_call_rate", "valid tool-call rate"), ("page_faults", "page faults"),
            ("citation_share", "citations (share, decided episodes)"),
            ("quality", "evidence quality (reward)"))
MODELS = ("warm start", "GRPO", "control (SFT)")
BASE = "base (constrained)"
PROBES = ("always SAR", "always close")  # the heuristic to the takeover point, then decides


# ---- evaluation -------------------------------------------------------------------------------

@dataclass
class GreedyGenerator:
    """Evaluation stand-in for the trainer in `RolloutEngine.advance`: the same
    `_generate_single_turn(prompt_ids, images, fields, n)` call, answered by batched greedy
    decoding of the model under evaluation (left-padded chunks of `batch` prompts)."""

    model: Any
    tokenizer: Any
    max_new_tokens: int
    batch: int = 16
    # Constrained (`RolloutEngine.generate_constrained`): greedy under each state's grammar.
    temperature: float = 0.0
    use_vllm: bool = False

    @property
    def max_completion_length(self) -> int:
        return self.max_new_tokens

    def _generate_single_turn(self, prompt_ids: list[list[int]], images: Any, fields: Any,
                              num_generations: int) -> tuple[list[list[int]], None]:
        import torch

        pad, eos = self.tokenizer.pad_token_id, self.tokenizer.eos_token_id
        out: list[list[int]] = []
        for i in range(0, len(prompt_ids), self.batch):
            chunk = prompt_ids[i:i + self.batch]
            width = max(map(len, chunk))
            ids = torch.tensor([[pad] * (width - len(p)) + p for p in chunk])
            mask = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in chunk])
            with torch.no_grad():
                gen = self.model.generate(input_ids=ids, attention_mask=mask, do_sample=False,
                                          max_new_tokens=self.max_new_tokens, pad_token_id=pad,
                                          temperature=None, top_p=None, top_k=None)
            for row in gen[:, width:].tolist():
                out.append(row[:row.index(eos) + 1] if eos in row else row)
        return out, None


def engine_for(tokenizer: Any, args: argparse.Namespace) -> train_grpo.RolloutEngine:
    """The one renderer and decoder of every phase (warm start, control, GRPO, evaluation):
    the same prompt cut, the prompt ending with the call prefix, grammar-constrained replies."""
    return train_grpo.RolloutEngine(
        get_adapter("memex"), tokenizer, env_url=None, max_turns=args.max_turns, compact=True,
        max_prompt_chars=args.max_prompt_chars, max_prompt_tokens=args.max_prompt_tokens,
        seed=args.seed, takeover_last=args.takeover_last, constrained=True,
        demonstrator=args.demonstrator, limits=Limits(args.gen_text_chars, args.gen_list_items))


def evaluate_model(path: Path | str, specs: list[EpisodeSpec], args: argparse.Namespace
                   ) -> list[dict[str, Any]]:
    """One row per test episode: the model (a LoRA directory, or the base model's name) plays
    it to the end or the turn cap, greedy under the grammar."""
    from tqdm import tqdm

    adapter = get_adapter("memex")
    model, tokenizer = load_local_model(str(path))
    model.eval()
    engine = engine_for(tokenizer, args)
    generator = GreedyGenerator(model, tokenizer, args.max_new_tokens, args.eval_batch)
    rows = []
    chunk = args.eval_batch
    for i in tqdm(range(0, len(specs), chunk), desc=f"evaluate {Path(path).name}", unit="batch"):
        rollouts = [train_grpo.Rollout(engine, s, adapter.case_for(s))
                    for s in specs[i:i + chunk]]
        engine.advance(rollouts, generator)
        for r in rollouts:
            r.finish()
            rows.append(_row(adapter, r.episode, r.rewards(0) if r.turns else None,
                             [t.parsed.status == "ok" for t in r.turns]))
    engine.pool.shutdown()
    return rows


def probe_action(kind: str, alert: dict[str, Any]) -> Any:
    """The verdict-free decision of an always-SAR / always-close row: a minimal valid SAR
    naming the alert's subject with the rule's typology, or a closure (`policies.probes`)."""
    if kind == "always SAR":
        return act("file_sar", subjects=[alert["subject"]["entity_id"]],
                   typology=AlwaysSar.RULE_TYPOLOGY[alert["rule"]["code"]], findings=[],
                   cited_sections=[], narrative="Alert fired.")
    return act("close_alert", reason="Activity appears normal.", cited_sections=[])


def evaluate_probe(kind: str, specs: list[EpisodeSpec], args: argparse.Namespace
                   ) -> list[dict[str, Any]]:
    """The heuristic plays each episode to the takeover point, then `probe_action` decides:
    the return of deciding without reading the case, on the models' episodes."""
    adapter = get_adapter("memex")
    engine = train_grpo.RolloutEngine(
        adapter, None, env_url=None, max_turns=args.max_turns, compact=True,
        max_prompt_chars=args.max_prompt_chars, max_prompt_tokens=args.max_prompt_tokens,
        seed=args.seed, takeover_last=args.takeover_last, demonstrator=args.demonstrator)
    rows = []
    for spec in specs:
        rollout = train_grpo.Rollout(engine, spec, adapter.case_for(spec))
        rollout.step(probe_action(kind, rollout.episode.observations[0].result), None)
        rollout.finish()
        ret = rollout.episode.episode_return
        if not rollout.episode.done:
            ret += adapter.timeout_return(rollout.episode.case)
        parts = adapter.reward_components(rollout.episode)
        rows.append(_row(adapter, rollout.episode, {"outcome": ret, **parts}, [True]))
    engine.pool.shutdown()
    return rows


def evaluate_heuristic(adapter: EnvAdapter, specs: list[EpisodeSpec], max_turns: int,
                       takeover_last: int | None, demonstrator: str) -> list[dict[str, Any]]:
    """The demonstrator (the heuristic) under the models' turn cap, counted from the takeover
    point."""
    rows = []
    for spec in specs:
        episode = train_grpo.demonstrator_episode(adapter, spec, policy=demonstrator)
        prefix = max(0, len(episode.actions) - takeover_last) if takeover_last else 0
        if len(episode.actions) > prefix + max_turns:
            episode = train_grpo.demonstrator_episode(adapter, spec, max_steps=prefix + max_turns,
                                                      policy=demonstrator)
        ret = episode.episode_return
        if not episode.done:
            ret += adapter.timeout_return(episode.case)
        parts = adapter.reward_components(episode)
        rows.append(_row(adapter, episode, {"outcome": ret, **parts},
                         [True] * len(episode.actions)))
    return rows


def _row(adapter: EnvAdapter, episode: Any, rewards: dict[str, float] | None,
         valid: list[bool]) -> dict[str, Any]:
    m = adapter.metrics(episode)
    return {"key": episode.spec.key, "outcome": adapter.outcome(episode),
            "return": rewards["outcome"] if rewards else None,
            "quality": rewards["quality"] if rewards else None,
            "decision_accuracy": m["decision_accuracy"],
            "valid_call_rate": sum(valid) / max(1, len(valid)),
            "page_faults": m["page_faults"], "citation_share": m["citation_share"],
            "turns": len(valid)}


# ---- statistics -------------------------------------------------------------------------------

def interval(values: list[float | None], seed: int = 0) -> dict[str, Any]:
    """Mean and bootstrap 95% interval of the defined values."""
    import numpy as np
    from scipy.stats import bootstrap

    x = np.array([v for v in values if v is not None], dtype=float)
    if len(x) == 0:
        return {"n": 0, "mean": None, "lo": None, "hi": None}
    if len(x) == 1 or np.all(x == x[0]):
        return {"n": len(x), "mean": float(x.mean()), "lo": float(x[0]), "hi": float(x[0])}
    ci = bootstrap((x,), np.mean, confidence_level=0.95, n_resamples=5000,
                   method="percentile", rng=np.random.default_rng(seed)).confidence_interval
    return {"n": len(x), "mean": float(x.mean()), "lo": float(ci.low), "hi": float(ci.high)}


def paired_difference(a: list[dict[str, Any]], b: list[dict[str, Any]], key: str
                      ) -> dict[str, Any]:
    """Mean of a - b over the episodes (same keys) where both define `key`, with its interval."""
    by_key = {r["key"]: r[key] for r in b}
    diffs = [r[key] - by_key[r["key"]] for r in a
             if r[key] is not None and by_key.get(r["key"]) is not None]
    return interval(diffs)


def by_kind(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per alert kind (the first field of the episode key): decision accuracy with its
    interval, the valid tool-call rate and how the episodes ended."""
    kinds: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        kinds.setdefault(r["key"].split("-")[0], []).append(r)
    return {kind: {"n": len(rs),
                   "decision_accuracy": interval([r["decision_accuracy"] for r in rs]),
                   "valid_call_rate": interval([r["valid_call_rate"] for r in rs]),
                   "outcomes": dict(sorted(Counter(r["outcome"] for r in rs).items()))}
            for kind, rs in kinds.items()}


# ---- figures ----------------------------------------------------------------------------------

def zero_variance(csv_path: Path) -> list[tuple[float, float]]:
    """(step, share of its groups whose G rewards were all equal: no advantage, no gradient).
    TRL's `frac_reward_zero_std` tests the std against exactly 0, which float noise in the
    weighted sum of equal rewards defeats; a step whose whole reward std is below 1e-6 has
    every group equal."""
    return [(float(r["step"]), 1.0 if float(r["reward_std"]) < 1e-6
             else float(r["frac_reward_zero_std"]))
            for r in csv.DictReader(csv_path.open()) if r.get("frac_reward_zero_std")]


def group_decisions(rollouts: Path) -> list[dict[str, float]]:
    """Per generation batch of a GRPO run (`rollouts.jsonl`, in order): `one_decision`, the
    share of its groups whose G samples all took the same tool — no signal on the decision
    whatever the rewards' spread (the filings' and reasons' graded details keep TRL's zero-std
    share off 0 even then) — and `right`, the share of its samples that decided the case right
    (a SAR on a suspicious kind, a closure on a benign one)."""
    batches: dict[int, dict[str, list[str]]] = {}
    for line in rollouts.read_text().splitlines():
        row = json.loads(line)
        tool = json.loads(row["reply"]).get("tool") if row["status"] == "ok" else row["status"]
        batches.setdefault(row["batch"], {}).setdefault(row["episode"], []).append(tool)
    out = []
    for _, groups in sorted(batches.items()):
        samples = [(key.split("-")[0], tool) for key, tools in groups.items() for tool in tools]
        right = sum(tool == ("file_sar" if KINDS[kind].suspicious else "close_alert")
                    for kind, tool in samples)
        out.append({"one_decision": sum(len(set(t)) == 1 for t in groups.values()) / len(groups),
                    "right": right / len(samples)})
    return out


def plot_zero_variance(csv_path: Path, png: Path, rollouts: Path | None = None) -> Path | None:
    """Per generation batch: the share of zero-variance groups and its running share, and
    (from `rollouts`) the running share of groups with one decision and of samples decided
    right."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = zero_variance(csv_path)
    if not points:
        return None
    share = [z for _, z in points]
    batches = list(range(1, len(share) + 1))

    def running(xs: list[float]) -> list[float]:
        return [sum(xs[:i + 1]) / (i + 1) for i in range(len(xs))]

    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.bar(batches, share, color="#bbb", label="zero reward variance, this batch")
    ax.plot(batches, running(share), color="#c33", label="zero reward variance, running")
    decided = group_decisions(rollouts) if rollouts and rollouts.exists() else []
    if decided:
        xs = list(range(1, len(decided) + 1))
        ax.plot(xs, running([d["one_decision"] for d in decided]), color="#36c",
                label="groups with one decision, running")
        ax.plot(xs, [d["right"] for d in decided], color="#6a6", alpha=0.7, lw=1,
                label="samples decided right, this batch")
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("GRPO generation batch")
    ax.set_ylabel("share")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


PALETTE = ("#88a", "#c63", "#6a6", "#999", "#a8c", "#ca8", "#8cc")


def plot_comparison(table: dict[str, dict[str, dict[str, Any]]], png: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = [(k, label) for k, label in MEASURES if k != "citation_share"]
    fig, axes = plt.subplots(1, len(keys), figsize=(3.1 * len(keys), 3.4))
    names = list(table)
    for ax, (key, label) in zip(axes, keys, strict=True):
        means = [table[n][key]["mean"] or 0.0 for n in names]
        err = [[m - (table[n][key]["lo"] if table[n][key]["lo"] is not None else m)
                for m, n in zip(means, names, strict=True)],
               [(table[n][key]["hi"] if table[n][key]["hi"] is not None else m) - m
                for m, n in zip(means, names, strict=True)]]
        ax.bar(range(len(names)), means, yerr=err, capsize=4,
               color=[PALETTE[i % len(PALETTE)] for i in range(len(names))])
        ax.set_xticks(range(len(names)), names, rotation=30, ha="right", fontsize=8)
        ax.set_title(label, fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return png


# ---- report -----------------------------------------------------------------------------------

def _fmt(cell: dict[str, Any]) -> str:
    if cell["mean"] is None:
        return "n/a (0 defined)"
    mean, lo, hi = (round(cell[k], 6) + 0.0 for k in ("mean", "lo", "hi"))  # no "-0.000"
    return f"{mean:.3f} [{lo:.3f}, {hi:.3f}]"


def results_markdown(results: dict[str, Any], figure_dir: str = "") -> str:
    table, diffs = results["table"], results["differences"]
    lines = [f"# Learning run results ({results['size']} size)", "",
             f"Command: `{results['command']}`", "",
             f"Slice: {results['slice']}", "",
             "Means with bootstrap 95% intervals over the test episodes (n per cell after the "
             "semicolon where a measure is defined on fewer episodes).", "",
             "| model | " + " | ".join(label for _, label in MEASURES) + " |",
             "|---|" + "---|" * len(MEASURES)]
    for name, cells in table.items():
        lines.append(f"| {name} | " + " | ".join(
            _fmt(cells[k]) + (f"; n={cells[k]['n']}" if cells[k]["n"] != results["episodes"]
                              else "") for k, _ in MEASURES) + " |")
    lines += ["", "Paired differences (same episodes), mean [95% interval]:", "",
              "| difference | " + " | ".join(label for _, label in MEASURES) + " |",
              "|---|" + "---|" * len(MEASURES)]
    for name, cells in diffs.items():
        lines.append(f"| {name} | " + " | ".join(_fmt(cells[k]) for k, _ in MEASURES) + " |")
    if results.get("by_kind"):
        lines += ["", "By alert kind:", "",
                  "| model | alert kind | n | decision accuracy | valid tool-call rate | "
                  "outcomes |", "|---|---|---|---|---|---|"]
        for name, kinds in results["by_kind"].items():
            for kind, c in kinds.items():
                ends = ", ".join(f"{k} {v}" for k, v in c["outcomes"].items())
                lines.append(f"| {name} | {kind} | {c['n']} | {_fmt(c['decision_accuracy'])} | "
                             f"{_fmt(c['valid_call_rate'])} | {ends} |")
    t = results["timing"]
    lines += ["", "GRPO: " + ", ".join(f"{k} {v}" for k, v in results["grpo"].items()), "",
              "Wall time (s): " + ", ".join(f"{k} {v}" for k, v in t.items()), ""]
    if results.get("load"):
        lines += ["Machine load during the run (1-minute load average, sampled every 30 s): "
                  + ", ".join(f"{k} {v}" for k, v in results["load"].items()), ""]
    lines += [f"![{n}]({figure_dir}{p})" for n, p in results["figures"].items()]
    return "\n".join(lines) + "\n"


# ---- the run ----------------------------------------------------------------------------------

def _file_name(name: str) -> str:
    """runs/learn/episodes/<this>.jsonl: the first word, or both of a probe's ("always-SAR")."""
    return "-".join(name.split()) if name in PROBES else name.split()[0]


def _save_rows(out: Path, name: str, rows: list[dict[str, Any]], part: str = "") -> None:
    path = out / "episodes" / f"{_file_name(name)}{part}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _sample_load(samples: list[float], stop: threading.Event) -> None:
    while not stop.wait(30):
        samples.append(os.getloadavg()[0])


def _timed(fn: Any, *a: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    return fn(*a), round(time.perf_counter() - t0, 1)


def train_control(args: argparse.Namespace, n: int) -> tuple[int, list[float]]:
    """The warm start plus n supervised steps (one per fresh heuristic pair) -> out/control."""
    out = Path(args.out)
    model, tokenizer = load_local_model(str(out / "grpo" / "warmstart"), trainable=True)
    engine = engine_for(tokenizer, args)
    pairs = train_grpo.demonstrations(engine, n, args.seed + 1, args.tasks.split(","),
                                      [args.difficulty], args.max_turns)
    engine.pool.shutdown()
    losses = train_grpo.warm_start(model, pairs, epochs=1, lr=args.sft_lr)
    model.save_pretrained(out / "control")
    return len(pairs), losses


def grpo_arguments(args: argparse.Namespace, out: Path) -> list[str]:
    """`train_grpo`'s command line for the run: the warm start and GRPO on the slice,
    constrained decoding (transformers generation), the run's rewards and sizes."""
    return [
        "--model", "smollm2-135m", "--tasks", args.tasks, "--difficulties", args.difficulty,
        "--max-turns", str(args.max_turns), "--num-prompts", str(args.num_prompts),
        "--num-generations", str(args.num_generations),
        "--batch-size", str(args.num_generations * args.groups_per_step
                            // args.steps_per_generation), "--grad-accum", "1",
        "--steps-per-generation", str(args.steps_per_generation),
        "--max-completion-length", str(args.max_new_tokens), "--lr", str(args.lr),
        "--temperature", str(args.temperature), "--sft-warmstart", str(args.warmstart),
        "--decision-temperature", str(args.decision_temperature),
        "--decision-epsilon", str(args.decision_epsilon),
        *(["--pair-tasks"] if args.pair_tasks else []),
        "--sft-epochs", "1",
        "--sft-lr", str(args.sft_lr), "--compact-prompt", "--constrained", "--vllm", "off",
        "--scale-rewards", SCALE_REWARDS,
        *[a for name, w in REWARD_WEIGHTS.items() for a in (f"--{name}-weight", str(w))],
        "--max-prompt-chars", str(args.max_prompt_chars),
        "--max-prompt-tokens", str(args.max_prompt_tokens), "--save-steps", "100000",
        "--seed", str(args.seed), "--output-dir", str(out / "grpo"),
        "--demonstrator", args.demonstrator, "--lora-layers", str(args.lora_layers),
        "--gen-text-chars", str(args.gen_text_chars),
        "--gen-list-items", str(args.gen_list_items),
        *(["--takeover-last", str(args.takeover_last)] if args.takeover_last else [])]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="GRPO vs warm start vs SFT control on a slice.")
    p.add_argument("--size", choices=tuple(SIZES), default="full")
    p.add_argument("--tasks", default=None)
    p.add_argument("--difficulty", default="easy")
    p.add_argument("--max-turns", type=int, default=None)
    p.add_argument("--takeover-last", type=int, default=None,
                   help="the heuristic plays each episode up to its last N actions (0: none)")
    p.add_argument("--warmstart", type=int, default=None, help="warm-start pairs")
    p.add_argument("--num-prompts", type=int, default=None, help="GRPO groups")
    p.add_argument("--num-generations", type=int, default=None, help="G")
    p.add_argument("--groups-per-step", type=int, default=None,
                   help="GRPO groups per generation batch (one batched generation)")
    p.add_argument("--steps-per-generation", type=int, default=None,
                   help="optimizer steps per generation batch (its rows split evenly)")
    p.add_argument("--test-episodes", type=int, default=None, help="held-out test episodes")
    p.add_argument("--max-new-tokens", type=int, default=None)
    p.add_argument("--max-prompt-tokens", type=int, default=None)
    p.add_argument("--max-prompt-chars", type=int, default=1500)
    p.add_argument("--lr", type=float, default=None, help="GRPO learning rate")
    p.add_argument("--temperature", type=float, default=None, help="GRPO sampling temperature")
    p.add_argument("--decision-temperature", type=float, default=None,
                   help="GRPO sampling temperature of the decision (the tool name's first token)")
    p.add_argument("--decision-epsilon", type=float, default=None,
                   help="GRPO's share of decisions drawn uniformly between the decision tools")
    p.add_argument("--pair-tasks", type=int, choices=(0, 1), default=None,
                   help="each GRPO batch one group of every kind at one seed")
    p.add_argument("--sft-lr", type=float, default=1e-3, help="warm start and control")
    p.add_argument("--base-row", type=int, choices=(0, 1), default=None,
                   help="also evaluate the base SmolLM2 (no warm start), constrained")
    p.add_argument("--eval-batch", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/learn")
    p.add_argument("--docs", default="docs/training", help="report and figures")
    p.add_argument("--report-only", action="store_true",
                   help="redo the statistics and figures from a finished run in --out")
    argv = sys.argv[1:] if argv is None else argv
    args = p.parse_args(argv)
    for key, value in SIZES[args.size].items():
        if getattr(args, key, None) is None:
            setattr(args, key, value)
    args.argv = argv
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    if args.report_only:
        return report(args)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # One thread per process (two processes share the cores): torch's intra-op threads
    # spin and wait on each other on a busy machine, which made each forward several times
    # slower than with one thread.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    out, docs = Path(args.out), Path(args.docs)
    for stale in (out / "grpo", out / "control"):
        shutil.rmtree(stale, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    docs.mkdir(parents=True, exist_ok=True)
    adapter = get_adapter("memex")
    tasks = args.tasks.split(",")
    timing: dict[str, float] = {}

    # Two processes, one per core: GRPO (after its warm start) on one, everything else on the
    # other in turn (the warm start's evaluation, the control's training, the control's
    # evaluation), so GRPO, the critical path, never shares its core. Each evaluation is split
    # in two halves that queue like any task: GRPO's, the last, then runs on both cores.
    grpo_argv = grpo_arguments(args, out)
    per_task = -(-args.test_episodes // len(tasks))  # alert kinds interleaved, seed by seed
    specs = [s for e in range(per_task) for s in adapter.grid(
        "test", tasks, [args.difficulty], 1, seed_offset=e)][:args.test_episodes]
    grpo_rows = args.num_prompts * args.num_generations
    paths = dict(zip(MODELS, (out / "grpo" / "warmstart", out / "grpo" / "final",
                              out / "control"), strict=True))
    rows: dict[str, list[dict[str, Any]]] = {}
    load: list[float] = [os.getloadavg()[0]]  # the machine's 1-minute load, every 30 s
    stop = threading.Event()
    threading.Thread(target=_sample_load, args=(load, stop), daemon=True).start()
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=2, mp_context=get_context("spawn")) as pool, \
            ThreadPoolExecutor(max_workers=1) as chain:

        def evaluation(name: str, path: Path | str) -> list[Future]:
            """Two halves; each saves its rows when done (a stopped run keeps them)."""
            half = -(-len(specs) // 2)
            parts = [pool.submit(_timed, evaluate_model, path, part, args)
                     for part in (specs[:half], specs[half:]) if part]
            for k, f in enumerate(parts, 1):
                f.add_done_callback(lambda f, k=k: f.exception() or _save_rows(
                    out, name, f.result()[0], f".half{k}"))
            return parts

        def control_then_its_evaluation() -> tuple[Any, float, list[Future]]:
            result, seconds = pool.submit(_timed, train_control, args, grpo_rows).result()
            return result, seconds, evaluation(MODELS[2], paths[MODELS[2]])

        grpo = pool.submit(_timed, train_grpo.main, grpo_argv)
        # train_grpo saves warmstart/ before its first rollout writes rollouts.jsonl
        while not (out / "grpo" / "rollouts.jsonl").exists():
            if grpo.done():
                grpo.result()
                raise RuntimeError("GRPO ended before its first rollout")
            time.sleep(5)
        timing["warm start (in the GRPO process)"] = round(time.perf_counter() - started, 1)
        evals = {MODELS[0]: evaluation(MODELS[0], paths[MODELS[0]])}
        control = chain.submit(control_then_its_evaluation)
        # The reference rows need no model: played here while the workers train.
        rows["heuristic (reference)"] = evaluate_heuristic(
            adapter, specs, args.max_turns, args.takeover_last, args.demonstrator)
        for kind in PROBES:
            rows[kind] = evaluate_probe(kind, specs, args)
        summary, timing["GRPO process"] = grpo.result()
        evals[MODELS[1]] = evaluation(MODELS[1], paths[MODELS[1]])
        (pairs, losses), timing["control training"], evals[MODELS[2]] = control.result()
        if args.base_row:
            evals[BASE] = evaluation(BASE, "smollm2-135m")
        for name, parts in evals.items():  # an evaluation's time: its halves' summed
            done = [f.result() for f in parts]
            rows[name] = [r for part, _ in done for r in part]
            timing[f"evaluate {name}"] = round(sum(t for _, t in done), 1)
            _save_rows(out, name, rows[name])
    timing["all (parallel)"] = round(time.perf_counter() - started, 1)
    stop.set()
    steps = -(-args.num_prompts // args.groups_per_step) * args.steps_per_generation
    if summary["global_step"] != steps:
        raise RuntimeError(f"GRPO trained {summary['global_step']} steps, not {steps}")
    for name in ("heuristic (reference)", *PROBES):
        _save_rows(out, name, rows[name])
    (out / "run.json").write_text(json.dumps({
        "argv": args.argv, "episodes": len(specs), "timing": timing,
        "load": {"cores": os.cpu_count(), "samples": len(load),
                 "mean": round(sum(load) / len(load), 2), "min": min(load), "max": max(load),
                 "threads_per_process": os.environ["OMP_NUM_THREADS"]},
        "summary": summary, "control_pairs": pairs, "control_losses": losses}, indent=2))
    return report(args)


def report(args: argparse.Namespace) -> dict[str, Any]:
    """Statistics, figures and docs/training/results.md from what the run saved in --out."""
    out, docs = Path(args.out), Path(args.docs)
    run = json.loads((out / "run.json").read_text())
    args = parse_args([*run["argv"], "--out", str(out), "--docs", str(docs)])  # the run's sizes
    docs.mkdir(parents=True, exist_ok=True)
    adapter = get_adapter("memex")
    tasks = args.tasks.split(",")
    summary, timing, pairs, losses = (run["summary"], run["timing"], run["control_pairs"],
                                      run["control_losses"])
    grpo_rows = args.num_prompts * args.num_generations
    names = [*MODELS, *([BASE] if args.base_row else []), "heuristic (reference)", *PROBES]
    rows = {n: [json.loads(line) for line in
                (out / "episodes" / f"{_file_name(n)}.jsonl").read_text().splitlines()]
            for n in names}
    with (out / "episodes.jsonl").open("w") as f:
        for name, rs in rows.items():
            for r in rs:
                f.write(json.dumps({"model": name, **r}) + "\n")

    table = {name: {k: interval([r[k] for r in rs]) for k, _ in MEASURES}
             for name, rs in rows.items()}
    differences = {f"GRPO - {other}": {k: paired_difference(rows["GRPO"], rows[other], k)
                                       for k, _ in MEASURES}
                   for other in ("warm start", "control (SFT)")}
    figures = {}
    curve = out / "grpo" / "reward_curve.png"
    if curve.exists():
        shutil.copy(curve, docs / "reward_curve.png")
        figures["GRPO reward and its components"] = "reward_curve.png"
    if plot_zero_variance(out / "grpo" / "metrics.csv", docs / "zero_variance.png",
                          out / "grpo" / "rollouts.jsonl"):
        figures["GRPO groups without signal: zero reward variance, one decision"] = (
            "zero_variance.png")
    plot_comparison(table, docs / "comparison.png")
    figures["held-out comparison (95% intervals)"] = "comparison.png"
    zero = [z for _, z in zero_variance(out / "grpo" / "metrics.csv")]
    rollouts = out / "grpo" / "rollouts.jsonl"
    decided = group_decisions(rollouts) if rollouts.exists() else []
    half = len(decided) // 2

    def mean_of(key: str, part: list[dict[str, float]]) -> float | None:
        return round(sum(d[key] for d in part) / len(part), 3) if part else None
    results = {
        "size": args.size, "episodes": run["episodes"],
        "command": ".venv/bin/python scripts/learn.py " + shlex.join(run["argv"]),
        "slice": (f"train/test split, difficulty {args.difficulty}, alert kinds "
                  f"{', '.join(tasks)}, "
                  + (f"the demonstrator ({args.demonstrator}: the heuristic investigator, "
                     f"writing how each anomaly was settled) plays each episode up to its last "
                     f"{args.takeover_last} action(s), then the model takes over; "
                     if args.takeover_last else "")
                  + f"at most {args.max_turns} model turn(s) per episode "
                  f"(a capped episode is scored as a timeout); {run['episodes']} test episodes "
                  f"(seeds from {adapter.splits['test'].start}); prompts <= "
                  f"{args.max_prompt_tokens} tokens, replies <= {args.max_new_tokens} tokens, "
                  "every reply decoded under its state's grammar (GRPO sampling at temperature "
                  f"{args.temperature}, the decision at {args.decision_temperature} and "
                  f"uniform between the decision tools a {args.decision_epsilon} share of the "
                  "time; evaluation greedy); GRPO batches of "
                  f"{args.groups_per_step} groups of {args.num_generations}"
                  f"{', one of each kind at one seed' if args.pair_tasks else ''}, "
                  f"{args.steps_per_generation} update(s) per batch at lr {args.lr}; GRPO "
                  "reward: the outcome alone, advantages scaled by the "
                  f"{SCALE_REWARDS}'s reward std"),
        "table": table, "differences": differences, "timing": timing, "figures": figures,
        "by_kind": {name: by_kind(rs) for name, rs in rows.items()},
        "load": {k: round(v, 2) if isinstance(v, float) else v
                 for k, v in run.get("load", {}).items()},
        "grpo": {"steps": summary["global_step"], "groups": args.num_prompts,
                 "groups per generation": args.groups_per_step,
                 "optimizer steps per generation": args.steps_per_generation,
                 "G": args.num_generations, "rows": grpo_rows,
                 "warm-start pairs": summary["warm_start"].get("examples"),
                 "control pairs": pairs, "control last loss": losses[-1],
                 "zero-variance share": round(sum(zero) / len(zero), 3) if zero else None,
                 "one-decision group share": mean_of("one_decision", decided),
                 "sampled right (first half, second half)": (
                     mean_of("right", decided[:half]), mean_of("right", decided[half:])),
                 "env calls": summary["env_calls"]}}
    (out / "results.json").write_text(json.dumps(results, indent=2))
    (docs / "results.md").write_text(results_markdown(results))
    splice_results(Path(f"{docs}.md"), results, f"{docs.name}/")
    print(results_markdown(results))
    return results


def splice_results(page: Path, results: dict[str, Any], figure_dir: str) -> None:
    """Replace the text between the results markers of the written report (docs/training.md)
    with this run's tables, so its numbers always come from the run."""
    if page.exists() and "<!-- learn-results:begin -->" in page.read_text():
        body = results_markdown(results, figure_dir).split("\n", 2)[2]  # without the title
        replace_section(page, "learn-results", body)


if __name__ == "__main__":
    main()
