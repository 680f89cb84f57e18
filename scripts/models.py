"""The model table (`make models`): every policy runnable here on the same test episodes, with
decision accuracy, mean return, pass^k and intervals, written to docs/models.md.

Three tables, each on one fixed set of test-split episodes:

1. **The learning slice** — `scripts/learn.py`'s held-out episodes (its sizes, its derivation:
   the keys of a learning run's `episodes.jsonl` when `--learn-run` holds one). The run's
   demonstrator (the heuristic investigator, documenting how each anomaly was settled) plays
   each episode up to its last K actions, then the policy takes over for at most T turns; a
   capped episode is scored as the environment scores a timeout, and the return is the whole
   episode's (the learning run's own scoring). Played here: the demonstrator (its own last K
   actions) and the policies that can take over mid-episode (`TAKEOVER`: they act on the
   observation in front of them, or decide at once); the language models' rows (warm start,
   GRPO, the SFT control, the constrained base model) are read from the learning run, not
   re-played.
2. **Whole episodes** — test-split episodes of every alert kind (every task and difficulty,
   `--whole-episodes` seeds per cell: the harness's grid) played from the reset by every policy
   that plays whole episodes (the heuristic, the oracle, random and every probe).
3. **The PPO agents** (`scripts/ppo.py`, saved under `--ppo-dir`) on their own gym slices'
   held-out episodes, beside the heuristic and the masked-uniform random policy.

Rows added from harness runs (`--runs DIR ...`, each an `evaluation.harness --out DIR`): a run
on the whole-episode grid joins table 2; any other run (a sealed one: the server draws its
worlds) gets a table of its own, with the sealed report's verification.

Per row: n, decision accuracy and mean return with bootstrap 95% intervals (`scripts/learn.py`'s
`interval`), pass^k for k = 1..3 (`evaluation.report.pass_hat_k`: here over the episodes of the
same task and difficulty — the chance that k episodes of one cell drawn without replacement are
all decided right, C(c, k) / C(n, k) averaged over cells), and the valid-call rate for the
language models (their replies that parsed to a valid call).

    .venv/bin/python scripts/models.py                          # docs/models.md
    .venv/bin/python scripts/models.py --runs runs/eval-gpt     # with a harness run's row
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import time
import zlib
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import gymnasium
import torch
from sb3_contrib import MaskablePPO

from memex.envkit.adapter import EnvAdapter
from memex.envkit.episodes import Episode, EpisodeSpec
from memex.envkit.replies import VERDICTS
from memex.envkit.sealed import check_report
from memex.evaluation.harness import policy_maker, run_grid
from memex.evaluation.report import pass_hat_k, replace_section
from memex.registry import GYM_ENVS, get_adapter, register_gym

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str) -> Any:
    """A sibling script as a module (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


learn = _script("learn")
ppo = _script("ppo")

# Policies that can take over another's episode: each acts on the observation in front of it
# (random, the looping probes) or decides at once (the verdict-free probes). Every other
# baseline runs a plan from the alert's first step and cannot resume the heuristic's review.
TAKEOVER = ("random", "always_sar", "always_close", "tool_spam", "never_decide")
PASS_K = (1, 2, 3)
PPO_RUNS = ("takeover", "")  # scripts/ppo.py --name: the takeover agent, the whole-episode one


# ---- the learning slice -----------------------------------------------------------------------

def spec_of(adapter: EnvAdapter, key: str) -> EpisodeSpec:
    """The episode an `EpisodeSpec.key` names (task-difficulty-seed-rREPEAT)."""
    task, difficulty, seed, repeat = key.rsplit("-", 3)
    return EpisodeSpec(task, difficulty, int(seed),
                       adapter.reset_options(task, difficulty, int(seed)), int(repeat[1:]))


def learning_run(run_dir: Path) -> dict[str, Any] | None:
    """A finished learning run's rows by model, its command and date; None without one."""
    path = run_dir / "episodes.jsonl"
    if not path.exists():
        return None
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in path.read_text().splitlines():
        row = json.loads(line)
        rows[row["model"]].append(row)
    run = json.loads((run_dir / "run.json").read_text()) if (run_dir / "run.json").exists() \
        else {}
    argv = run.get("argv", [])
    return {"rows": dict(rows), "argv": argv,
            "command": ".venv/bin/python scripts/learn.py " + " ".join(argv),
            "date": datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime(
                "%Y-%m-%d %H:%M UTC")}


def learning_slice(adapter: EnvAdapter, run: dict[str, Any] | None
                   ) -> tuple[argparse.Namespace, list[EpisodeSpec]]:
    """The learning run's arguments and held-out episodes: the run's own keys when there is
    one, else what `scripts/learn.py` (its default size) would evaluate on."""
    args = learn.parse_args(run["argv"] if run else [])
    if run:
        first = next(iter(run["rows"].values()))
        return args, [spec_of(adapter, r["key"]) for r in first]
    tasks = args.tasks.split(",")
    per_task = -(-args.test_episodes // len(tasks))  # as scripts/learn.py: kinds interleaved
    specs = [s for e in range(per_task) for s in adapter.grid(
        "test", tasks, [args.difficulty], 1, seed_offset=e)][:args.test_episodes]
    return args, specs


def demonstrator_prefix(adapter: EnvAdapter, spec: EpisodeSpec, last: int,
                     demonstrator: str) -> list[Any]:
    """The demonstrator's (the learning run's: the heuristic, documenting what settled each
    anomaly) actions on `spec` but its last `last` (the learning run's takeover; none without
    one)."""
    if not last:
        return []
    session = adapter.open()
    try:
        reference = adapter.play(session, adapter.make_policy(demonstrator), spec)
    finally:
        session.close()
    return reference.actions[:max(0, reference.steps - last)]


def play_takeover(adapter: EnvAdapter, name: str, spec: EpisodeSpec, prefix: Sequence[Any],
                  max_turns: int, demonstrator: str) -> dict[str, Any]:
    """`name` takes over `spec` after the demonstrator's `prefix`, for at most `max_turns`
    actions; scored as the learning run scores its models (a capped episode as a timeout, the
    whole episode's return)."""
    case = adapter.case_for(spec)
    session = adapter.open()
    try:
        obs = session.reset(**spec.reset)
        episode = Episode(spec, name, [obs], case=case)
        policy = adapter.make_policy(name, seed=zlib.crc32(f"{name}|{spec.key}".encode()))
        policy.reset(obs, case=None)  # the alert, as at any reset; the prefix is not its own
        for action in prefix:
            if name == demonstrator:  # its own prefix: it keeps its place in its script
                policy.act(episode.final)
            episode.actions.append(action)
            episode.observations.append(session.step(action))
        for _ in range(max_turns):
            if episode.done:
                break
            episode.actions.append(policy.act(episode.final))
            episode.observations.append(session.step(episode.actions[-1]))
    finally:
        session.close()
    ret = episode.episode_return + (0.0 if episode.done else adapter.timeout_return(case))
    return {"key": spec.key, "task": spec.task, "difficulty": spec.difficulty,
            "outcome": adapter.outcome(episode), "return": round(ret, 6),
            "decision_accuracy": adapter.metrics(episode)["decision_accuracy"],
            "turns": episode.steps - len(prefix)}


# ---- whole episodes and harness runs ----------------------------------------------------------

def play_whole(adapter: EnvAdapter, names: Sequence[str], specs: Sequence[EpisodeSpec],
               workers: int) -> dict[str, list[dict[str, Any]]]:
    """Every policy of `names` on every spec from the reset (the harness's episode loop)."""
    makers = [policy_maker(adapter, n) for n in names]
    rows = run_grid(adapter, makers, specs, workers=workers, progress=False)
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[r["policy"]].append(r)
    return dict(out)


def harness_run(run_dir: Path) -> dict[str, Any]:
    """A harness run's rows by policy; with its sealed report's check when it is a sealed run."""
    rows: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for line in (run_dir / "episodes.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows[row["policy"]].append(row)
    sealed = run_dir / "sealed_report.json"
    report = json.loads(sealed.read_text()) if sealed.exists() else None
    return {"dir": str(run_dir), "rows": dict(rows), "sealed": report,
            "problems": check_report(report) if report else []}


def merge_runs(whole_rows: dict[str, list[dict[str, Any]]], whole_specs: Sequence[EpisodeSpec],
               run_dirs: Sequence[Path]) -> list[dict[str, Any]]:
    """Each harness run's policies join `whole_rows` (as "POLICY [DIR]") when the run played
    exactly the whole-episode grid and is not sealed; the other runs are returned."""
    keys = sorted(s.key for s in whole_specs)
    others = []
    for run_dir in run_dirs:
        extra = harness_run(run_dir)
        if not extra["sealed"] and all(sorted(r["key"] for r in rs) == keys
                                       for rs in extra["rows"].values()):
            whole_rows.update({f"{n} [{run_dir.name}]": rs for n, rs in extra["rows"].items()})
        else:
            others.append(extra)
    return others


# ---- the PPO agents ---------------------------------------------------------------------------

def play_ppo(ppo_dir: Path, name: str, episodes: int) -> dict[str, Any] | None:
    """The saved PPO agent of `scripts/ppo.py --name NAME` on its gym slice's held-out episodes,
    with the heuristic and the masked-uniform random policy; None when none was saved."""
    stem = f"ppo_{name}_curve" if name else "ppo_curve"
    path, meta = ppo_dir / f"{stem}.zip", ROOT / "docs" / "training" / f"{stem}.json"
    if not path.exists() or not meta.exists():
        return None
    gym_id = json.loads(meta.read_text())["gym_id"]
    register_gym()
    env = gymnasium.make(gym_id).unwrapped
    specs = ppo.held_out(gym_id, episodes)
    model = MaskablePPO.load(path, device="cpu")
    last = GYM_ENVS[gym_id].get("takeover_last", 0)
    rows = {"PPO": ppo.play_gym(env, specs, ppo.greedy(model)),
            "random (masked)": ppo.play_gym(env, specs, ppo.uniform(0)),
            "heuristic": ppo.play_heuristic(specs, last)}
    for rs in rows.values():
        for r, spec in zip(rs, specs, strict=True):
            r.update(task=spec.task, difficulty=spec.difficulty, decision_accuracy=r["correct"])
    return {"gym_id": gym_id, "last": last, "rows": rows, "model": str(path.relative_to(ROOT))
            if path.is_relative_to(ROOT) else str(path)}


# ---- the table --------------------------------------------------------------------------------

def _cell(row: dict[str, Any]) -> tuple[str, str]:
    if "task" in row:
        return row["task"], row["difficulty"]
    task, difficulty, _, _ = row["key"].rsplit("-", 3)
    return task, difficulty


def measure(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """n, accuracy and return with intervals, pass^1..3 over cells, valid-call rate."""
    correct = [None if r.get("decision_accuracy") is None else float(r["decision_accuracy"])
               for r in rows]
    cells: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for r, c in zip(rows, correct, strict=True):
        cells[_cell(r)].append(bool(c))
    trials = [(len(v), sum(v)) for v in cells.values()]
    out = {"n": len(rows), "accuracy": learn.interval(correct),
           "return": learn.interval([r["return"] for r in rows]),
           **{f"pass^{k}": pass_hat_k(trials, k) for k in PASS_K}, "valid": None}
    rates = [r["valid_call_rate"] for r in rows if r.get("valid_call_rate") is not None]
    if rates:  # a learning run's rows: the share of a model's replies that parsed
        out["valid"] = sum(rates) / len(rates)
    elif any("replies_valid" in r for r in rows):
        replies = sum(r.get(f"replies_{v}", 0) for r in rows for v in VERDICTS)
        out["valid"] = sum(r.get("replies_valid", 0) for r in rows) / max(1, replies)
    return out


def _ci(cell: dict[str, Any], signed: bool) -> str:
    if cell["mean"] is None:
        return "—"
    f = "{:+.3f}" if signed else "{:.3f}"
    return f"{f.format(cell['mean'])} [{f.format(cell['lo'])}, {f.format(cell['hi'])}]"


def table(rows: dict[str, list[dict[str, Any]]], notes: dict[str, str] | None = None) -> str:
    lines = ["| policy | n | decision accuracy | mean return | pass^1 | pass^2 | pass^3 | "
             "valid calls |", "|---|---:|---|---|---:|---:|---:|---:|"]
    for name, rs in rows.items():
        m = measure(rs)
        passes = " | ".join("—" if m[f"pass^{k}"] is None else f"{m[f'pass^{k}']:.3f}"
                            for k in PASS_K)
        valid = "—" if m["valid"] is None else f"{m['valid']:.3f}"
        label = name + (f" ({notes[name]})" if notes and name in notes else "")
        lines.append(f"| {label} | {m['n']} | {_ci(m['accuracy'], False)} | "
                     f"{_ci(m['return'], True)} | {passes} | {valid} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--learn-run", type=Path, default=ROOT / "runs" / "learn",
                   help="a learning run's --out (its episodes.jsonl and run.json)")
    p.add_argument("--learn-episodes", type=int, default=None,
                   help="the first N of the learning slice's episodes (default: all)")
    p.add_argument("--whole-episodes", type=int, default=3,
                   help="test seeds per task x difficulty for the whole-episode table")
    p.add_argument("--ppo-dir", type=Path, default=ROOT / "runs" / "ppo")
    p.add_argument("--ppo-episodes", type=int, default=100)
    p.add_argument("--runs", type=Path, nargs="*", default=[],
                   help="harness run directories (--out) whose policies join the table")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--out", type=Path, default=ROOT / "docs" / "models.md")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    started = time.perf_counter()
    adapter = get_adapter("memex")
    command = "scripts/models.py " + " ".join(sys.argv[1:] if argv is None else argv)

    run = learning_run(args.learn_run)
    slice_args, specs = learning_slice(adapter, run)
    specs = specs[:args.learn_episodes] if args.learn_episodes else specs
    keys = [s.key for s in specs]
    last, turns = slice_args.takeover_last or 0, slice_args.max_turns
    demonstrator = slice_args.demonstrator
    prefixes = {s.key: demonstrator_prefix(adapter, s, last, demonstrator) for s in specs}
    slice_rows = {name: [play_takeover(adapter, name, s, prefixes[s.key], turns, demonstrator)
                         for s in specs] for name in (demonstrator, *TAKEOVER)}
    if run:
        for model, rs in run["rows"].items():
            by_key = {r["key"]: r for r in rs}
            slice_rows[f"{model} [learning run]"] = [by_key[k] for k in keys if k in by_key]

    whole_specs = adapter.grid("test", episodes=args.whole_episodes)
    whole_rows = play_whole(adapter, list(adapter.policies), whole_specs, args.workers)
    other_runs = merge_runs(whole_rows, whole_specs, args.runs)
    agents = [a for a in (play_ppo(args.ppo_dir, n, args.ppo_episodes) for n in PPO_RUNS) if a]

    text = report(command, slice_args, specs, slice_rows, run, whole_specs, whole_rows,
                  other_runs, agents, args, time.perf_counter() - started)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    if args.out.exists() and "<!-- models:begin -->" in args.out.read_text():
        replace_section(args.out, "models", text)
    else:
        args.out.write_text(MODELS_PAGE.format(body=text))
    print(text)
    return {"slice": slice_rows, "whole": whole_rows, "ppo": agents, "runs": other_runs}


MODELS_PAGE = """# Model table

Every policy runnable here on the same test episodes. Generated by `make models`
(`scripts/models.py`); everything between the markers is rewritten by it.

<!-- models:begin -->
{body}
<!-- models:end -->
"""


def report(command: str, slice_args: argparse.Namespace, specs: list[EpisodeSpec],
           slice_rows: dict[str, list[dict[str, Any]]], run: dict[str, Any] | None,
           whole_specs: list[EpisodeSpec], whole_rows: dict[str, list[dict[str, Any]]],
           other_runs: list[dict[str, Any]], agents: list[dict[str, Any]],
           args: argparse.Namespace, wall_s: float) -> str:
    tasks = sorted({s.task for s in specs})
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "unknown"
    lines = [
        f"`make models` — `{command.strip()}` at commit `{commit}`, {wall_s / 60:.1f} min on "
        "this machine's CPU (2 cores, shared).",
        "",
        "Columns: n episodes; decision accuracy and mean return with bootstrap 95% intervals; "
        "pass^k for k = 1..3 over the episodes of the same task and difficulty (the chance "
        "that k of them, drawn without replacement, are all decided right: C(c, k) / C(n, k), "
        "averaged over cells); the valid-call rate for language models (replies that parsed to "
        "a valid call).",
        "",
        "## 1. The learning slice (the model takes over)",
        "",
        f"`scripts/learn.py`'s held-out episodes: {len(specs)} test-split episodes "
        f"({', '.join(tasks)}, difficulty {slice_args.difficulty}; seeds from "
        f"{min(s.seed for s in specs)}). The demonstrator (`{slice_args.demonstrator}`: the "
        "heuristic investigator, writing how each anomaly was settled to the case file) plays "
        "each up to its last "
        f"{slice_args.takeover_last} action(s), then the policy takes over for at most "
        f"{slice_args.max_turns} turn(s); a capped episode is scored as a timeout, and the "
        "return is the whole episode's (the learning run's scoring).",
        "",
        table(slice_rows),
        "",
        "Played here: the demonstrator (its own last actions) and the baselines that can take "
        f"over mid-episode ({', '.join(TAKEOVER)}: each acts on the observation in front of it "
        "or decides at once). The oracle and the other probes run a plan from the alert's first "
        "step and cannot resume another's review, so they are left out of this table.",
        "",
    ]
    base = ("The constrained base model (SmolLM2-135M, no warm start) has a row when the "
            "learning run evaluated it (`scripts/learn.py --base-row 1`).")
    if run:
        lines += [f"Rows marked [learning run] are read from the learning run's "
                  f"`episodes.jsonl` (`{run['command'].strip()}`, written {run['date']}), not "
                  "re-played."
                  + ("" if any(m.startswith("base") for m in run["rows"]) else " " + base), ""]
    else:
        lines += ["**The language models' rows (SmolLM2-135M base with constrained decoding, "
                  "the warm start, the GRPO checkpoint, the SFT control) are not here yet**: "
                  "no learning run's `episodes.jsonl` was found at "
                  f"`{_rel(args.learn_run)}`. The learning run on this world has not finished; "
                  "`make learn` then `make models` adds them. " + base, ""]
    lines += [
        "## 2. Whole episodes (every alert kind)",
        "",
        f"{len(whole_specs)} test-split episodes: every task x difficulty x "
        f"{args.whole_episodes} seed(s) (seeds from {min(s.seed for s in whole_specs)}; the "
        f"harness's grid, `--split test --episodes {args.whole_episodes}`), played from the "
        "reset. One kind per cell, so about half the cases are suspicious (as many as the "
        "suspicious kinds), not the default mix's 25%: a policy that files on everything "
        "scores higher here than on the default mix, where every verdict-free policy's mean "
        "return is negative "
        "([scoring.md](scoring.md)).",
        "",
        table(whole_rows),
        "",
        "## 3. The PPO agents (their own slices)",
        "",
    ]
    lines += ["Trained on the cash rule's easy slice (`docs/training.md`, section 2), not on "
              "the learning slice or every kind, so they are not in tables 1 or 2.", ""]
    if not agents:
        lines += [f"No saved PPO agent in `{_rel(args.ppo_dir)}` (`make ppo` saves them).", ""]
    for agent in agents:
        what = (f"from where the heuristic has {agent['last']} actions left (return and steps "
                "from there; the heuristic's row: its own last actions)") if agent["last"] \
            else "whole episodes"
        lines += [f"`{agent['model']}` on {len(agent['rows']['PPO'])} held-out "
                  f"episodes of {agent['gym_id']}, {what}.", "",
                  table(agent["rows"]), ""]
    for extra in other_runs:
        sealed = extra["sealed"]
        head = f"### Harness run `{extra['dir']}`"
        if sealed:
            verdict = "verifies" if not extra["problems"] else \
                "does NOT verify: " + "; ".join(extra["problems"])
            head += (f" — sealed run {sealed['run_id']} (the server drew every world; its "
                     f"signed report {verdict})")
        lines += [head, "", "Not the episodes of tables 1 or 2.", "", table(extra["rows"]), ""]
    lines += [
        "## Adding a row for an OpenAI-compatible endpoint",
        "",
        "Any endpoint the harness's `llm:` policy reaches (a frontier API or a local vLLM / "
        "llama.cpp server) gets a row in table 2 by playing the same grid, then regenerating "
        "the page with that run directory:",
        "",
        "```bash",
        "API_KEY=... .venv/bin/python -m memex.evaluation.harness --policies llm:MODEL \\",
        f"    --api-base-url https://HOST/v1 --constrained --split test "
        f"--episodes {args.whole_episodes} \\",
        "    --out runs/eval-MODEL",
        "make models MODELS_ARGS='--runs runs/eval-MODEL'",
        "```",
        "",
        "`--constrained` where the endpoint supports guided JSON (vLLM, llama.cpp); leave it "
        "out for one that does not. `scripts/models.py --runs DIR ...` reads each run's "
        "`episodes.jsonl`: a run that played exactly table 2's episodes joins it as "
        "`POLICY [DIR]`; any other gets a table of its own.",
        "",
        "Played against a sealed server instead (the server draws every world and signs the "
        "report; `docs/leaderboard.md`), the row cannot be tuned to known episodes:",
        "",
        "```bash",
        "MEMEX_SEALED_SECRET=$(openssl rand -hex 32) .venv/bin/python -m memex.openenv_server "
        "--sealed &",
        "API_KEY=... .venv/bin/python -m memex.evaluation.harness --policies llm:MODEL \\",
        "    --api-base-url https://HOST/v1 --constrained --sealed-url http://127.0.0.1:7860 \\",
        "    --episodes 20 --agent MODEL --out runs/sealed-MODEL",
        "make models MODELS_ARGS='--runs runs/sealed-MODEL'",
        "```",
        "",
        "The run saves `sealed_report.json`; its table says whether the report's hash chain and "
        "signature verify, and its episodes are the server's draw (20 per difficulty), not "
        "table 2's.",
    ]
    return "\n".join(lines)


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


if __name__ == "__main__":
    main()
