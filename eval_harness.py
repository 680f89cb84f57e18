"""Evaluation harness: any policy over a seeded grid of task x difficulty, with k repeats.

Policies: the environment's baselines by name (for Memex: heuristic, oracle, random, always_sar,
always_close and the exploit probes), `llm:MODEL` (an OpenAI-compatible endpoint: `API_BASE_URL`,
key from `API_KEY` / `OPENAI_API_KEY` / `HF_TOKEN`) and `ckpt:PATH` (a local model or a LoRA
checkpoint from `train_grpo.py`). LLM policies use the inference agent (`inference.LLMPolicy`),
so their prompts are the same bounded-context prompts the trainer uses.

Episodes run in parallel (`--workers`), each worker on its own WebSocket session of the server at
`--env-url` (or of one this harness starts, `--serve`), or in process when neither is given. The
hidden case is regenerated client-side from the seed for the oracle, the metrics and the trace
footers; nothing is read from the server but observations and state.

Outputs under `--out`: `episodes.jsonl` (one row of measurements per episode), `summary.json`,
`report.md` (markdown tables), PNG plots and `traces/<policy>/<episode>.jsonl` (`memex-trace/1`,
replayed by the Glass Box). Measures come from the adapter (`EnvAdapter.metrics`), each averaged
over the episodes where it is defined — for Memex: decision accuracy, SAR precision (filed SARs
on suspicious cases) and recall (suspicious cases with a SAR), subject F1, findings precision and
recall, typology accuracy, mean return, page faults, async timeouts, kernel loads, steps — plus
pass^k for k = 1..8: the chance that all of k independent tries of the same case succeed (for
Memex, a correct decision), estimated per case from n >= k repeats with c successes as
C(c, k) / C(n, k).

    .venv/bin/python -m memex.eval_harness --policies heuristic,random --episodes 5 --serve
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import statistics
import sys
import threading
import time
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from memex.envs import EnvAdapter, EpisodeSpec, get_adapter, play

PASS_K = tuple(range(1, 9))
GENERIC_METRICS: tuple[tuple[str, str], ...] = (("success", "success"),
                                                ("return", "mean return"), ("steps", "steps"))


# ---- policies ---------------------------------------------------------------------------------

@dataclass
class PolicyMaker:
    """How to build one episode's policy, and how many may run at once."""

    label: str
    build: Callable[[EpisodeSpec], Any]
    max_workers: int | None = None


def policy_maker(adapter: EnvAdapter, name: str, *, api_base_url: str | None = None,
                 tool_mode: str = "native", temperature: float = 0.0,
                 run_id: str = "eval") -> PolicyMaker:
    """`name` is a baseline, `llm:MODEL` or `ckpt:PATH`."""
    if name.startswith(("llm:", "ckpt:")):
        from memex.inference import LLMPolicy, LocalBackend, OpenAIBackend

        kind, target = name.split(":", 1)
        if kind == "llm":
            backend: Any = OpenAIBackend(api_base_url, target, temperature=temperature)
            mode, limit = tool_mode, None
        else:
            backend = LocalBackend(target, temperature=temperature)
            mode, limit = "text", 1  # one local model, one generation at a time

        prompting = getattr(backend, "prompting", {})

        def build_llm(spec: EpisodeSpec) -> Any:
            policy = LLMPolicy(adapter, backend, tool_mode=mode, name=name,
                               compact=prompting.get("compact", False),
                               max_prompt_chars=prompting.get("max_chars"))
            policy.episode_key = f"{run_id}-{name}-{spec.key}"
            return policy

        return PolicyMaker(name, build_llm, limit)
    if name not in adapter.policies:
        raise KeyError(f"unknown policy {name!r}: baselines are {', '.join(adapter.policies)}; "
                       "or llm:MODEL, ckpt:PATH")
    # Stochastic baselines get a seed per (case, repeat), so repeats are independent tries.
    return PolicyMaker(name, lambda spec: adapter.make_policy(
        name, seed=zlib.crc32(f"{name}|{spec.key}".encode())))


# ---- running ----------------------------------------------------------------------------------

def run_grid(adapter: EnvAdapter, makers: Sequence[PolicyMaker], specs: Sequence[EpisodeSpec], *,
             base_url: str | None = None, workers: int = 4, out_dir: Path | None = None,
             traces: str = "all", progress: bool = True) -> list[dict[str, Any]]:
    """Play every policy on every spec; one measurement row per episode (in grid order)."""
    jobs = [(m, s) for m in makers for s in specs]
    local = threading.local()
    sessions: list[Any] = []
    lock = threading.Lock()
    limits = {m.label: threading.Semaphore(m.max_workers or workers) for m in makers}

    def session() -> Any:
        if not hasattr(local, "session"):
            local.session = adapter.open(base_url)
            with lock:
                sessions.append(local.session)
        return local.session

    def one(maker: PolicyMaker, spec: EpisodeSpec) -> dict[str, Any]:
        with limits[maker.label]:
            episode = play(adapter, session(), maker.build(spec), spec)
        episode.policy = maker.label
        row = {"policy": maker.label, "task": spec.task, "difficulty": spec.difficulty,
               "seed": spec.seed, "repeat": spec.repeat, "key": spec.key,
               "outcome": adapter.outcome(episode),
               "success": float(episode.done and adapter.success(episode)),
               "return": episode.episode_return, "steps": float(episode.steps),
               "wall_s": round(episode.wall_s, 4), **adapter.metrics(episode)}
        if out_dir is not None and (traces == "all" or (traces == "first" and spec.repeat == 0)):
            path = out_dir / "traces" / _safe(maker.label) / f"{spec.key}.jsonl"
            episode.trace(adapter).write(path)
            row["trace"] = str(path.relative_to(out_dir))
        return row

    rows: list[dict[str, Any] | None] = [None] * len(jobs)
    bar = tqdm(total=len(jobs), desc="episodes", unit="ep", disable=not progress,
               file=sys.stderr)
    try:
        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            futures = {pool.submit(one, m, s): i for i, (m, s) in enumerate(jobs)}
            for future in as_completed(futures):
                rows[futures[future]] = future.result()
                bar.update()
    finally:
        bar.close()
        for s in sessions:
            s.close()
    return [r for r in rows if r is not None]


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in label)


# ---- aggregation ------------------------------------------------------------------------------

def pass_hat_k(trials: Iterable[tuple[int, int]], k: int) -> float | None:
    """pass^k over cases, each given as (n tries, c successes): the mean of C(c,k)/C(n,k) over
    the cases with n >= k; None when no case has k tries."""
    values = [math.comb(c, k) / math.comb(n, k) for n, c in trials if n >= k]
    return sum(values) / len(values) if values else None


def mean_defined(rows: Iterable[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return statistics.fmean(values) if values else None


def columns(adapter: EnvAdapter) -> tuple[tuple[str, str], ...]:
    """(measure, label) columns of the report: the adapter's, or the generic ones."""
    return tuple(getattr(adapter, "summary_metrics", ()) or GENERIC_METRICS)


def summarize(rows: Sequence[dict[str, Any]],
              measures: Iterable[str] = ()) -> dict[str, Any]:
    """Means of the generic measures and of `measures` (each where defined), the episode
    count, the return's spread and pass^1..8."""
    out: dict[str, Any] = {"episodes": len(rows)}
    for key in dict.fromkeys([k for k, _ in GENERIC_METRICS] + list(measures)):
        out[key] = mean_defined(rows, key)
    out["return_std"] = statistics.pstdev([r["return"] for r in rows]) if rows else None
    cases: dict[tuple, list[bool]] = defaultdict(list)
    for r in rows:
        cases[(r["task"], r["difficulty"], r["seed"])].append(bool(r["success"]))
    trials = [(len(v), sum(v)) for v in cases.values()]
    for k in PASS_K:
        out[f"pass^{k}"] = pass_hat_k(trials, k)
    return out


def group(rows: Sequence[dict[str, Any]], *keys: str) -> dict[tuple, list[dict[str, Any]]]:
    out: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[tuple(r[k] for k in keys)].append(r)
    return out


# ---- report -----------------------------------------------------------------------------------

def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _table(header: Sequence[str], body: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def markdown_report(adapter: EnvAdapter, rows: Sequence[dict[str, Any]], *, title: str,
                    command: str, grid_note: str, plots: Sequence[Path],
                    report_dir: Path) -> str:
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    difficulties = [d for d in adapter.difficulties if any(r["difficulty"] == d for r in rows)]
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    by_policy = group(rows, "policy")
    by_pd = group(rows, "policy", "difficulty")
    by_ptd = group(rows, "policy", "task", "difficulty")
    parts = [f"# {title}", "", "Produced by one command:", "", "```", command, "```", "",
             grid_note, ""]

    success = getattr(adapter, "success_label", "success")
    parts += ["## Summary by difficulty", "",
              f"{success.capitalize()} and mean episode return (the sum of the step rewards).",
              ""]
    header = ["policy"] + [f"{d} {success}" for d in difficulties] + [
        f"{d} return" for d in difficulties]
    parts.append(_table(header, (
        [p] + [mean_defined(by_pd[(p, d)], "success") for d in difficulties]
        + [mean_defined(by_pd[(p, d)], "return") for d in difficulties]
        for p in policies)))

    cols = columns(adapter)
    parts += ["", "## All measures", "",
              "Each measure is averaged over the episodes where it is defined. "
              + getattr(adapter, "metrics_note", ""), ""]
    summaries = {p: summarize(by_policy[(p,)], [k for k, _ in cols]) for p in policies}
    parts.append(_table(["policy", "episodes"] + [label for _, label in cols],
                        ([p, summaries[p]["episodes"]] + [summaries[p][k] for k, _ in cols]
                         for p in policies)))

    parts += ["", "## pass^k", "",
              f"Probability that all k tries of the same case succeed (success as counted by "
              f"{success}; C(c,k)/C(n,k) per case, averaged; — where fewer than k repeats "
              "ran).", ""]
    parts.append(_table(["policy"] + [f"pass^{k}" for k in PASS_K],
                        ([p] + [summaries[p][f"pass^{k}"] for k in PASS_K] for p in policies)))

    parts += ["", "## By task and difficulty", "",
              f"Each cell: {success} / mean return.", ""]
    for d in difficulties:
        parts += [f"### {d}", ""]
        parts.append(_table(["task"] + policies, (
            [t] + [f"{_fmt(mean_defined(by_ptd[(p, t, d)], 'success'), 2)} / "
                   f"{_fmt(mean_defined(by_ptd[(p, t, d)], 'return'), 2)}"
                   if by_ptd.get((p, t, d)) else "—" for p in policies]
            for t in tasks)))
        parts.append("")
    if plots:
        parts += ["## Plots", ""]
        parts += [f"![{p.stem}]({os.path.relpath(p, report_dir)})" for p in plots]
        parts.append("")
    return "\n".join(parts)


def make_plots(adapter: EnvAdapter, rows: Sequence[dict[str, Any]], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    difficulties = [d for d in adapter.difficulties if any(r["difficulty"] == d for r in rows)]
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    by_pd = group(rows, "policy", "difficulty")
    paths = []

    success = getattr(adapter, "success_label", "success")
    for key, label, name in (("return", "mean episode return", "return_by_difficulty"),
                             ("success", success, "success_by_difficulty")):
        fig, ax = plt.subplots(figsize=(min(12.0, max(6.0, 0.3 * len(policies)
                                                      * len(difficulties))), 4.4))
        width = 0.8 / len(policies)
        for i, p in enumerate(policies):
            means, errs = [], []
            for d in difficulties:
                values = [r[key] for r in by_pd[(p, d)] if r.get(key) is not None]
                means.append(statistics.fmean(values) if values else 0.0)
                errs.append(statistics.pstdev(values) / math.sqrt(len(values))
                            if len(values) > 1 else 0.0)
            xs = [j + (i - (len(policies) - 1) / 2) * width for j in range(len(difficulties))]
            ax.bar(xs, means, width, yerr=errs, label=p, capsize=2)
        ax.set_xticks(range(len(difficulties)), difficulties)
        ax.set_ylabel(label)
        ax.axhline(0, color="black", linewidth=0.6)
        ax.legend(fontsize=7, ncol=min(len(policies), 5), loc="upper center",
                  bbox_to_anchor=(0.5, -0.08), frameon=False)
        ax.set_title(f"{adapter.name}: {label} by difficulty")
        fig.tight_layout()
        paths.append(out / f"{name}.png")
        fig.savefig(paths[-1], dpi=110)
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(7.5, 4))
    for p in policies:
        s = summarize([r for r in rows if r["policy"] == p])
        ks = [k for k in PASS_K if s[f"pass^{k}"] is not None]
        ax.plot(ks, [s[f"pass^{k}"] for k in ks], marker="o", label=p)
    ax.set_xlabel("k")
    ax.set_ylabel("pass^k")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    ax.set_title(f"{adapter.name}: pass^k")
    fig.tight_layout()
    paths.append(out / "pass_k.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    cols = min(3, len(policies))
    nrows = math.ceil(len(policies) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.6 * cols, 0.45 * len(tasks) * nrows + 1.2),
                             squeeze=False)
    by_ptd = group(rows, "policy", "task", "difficulty")
    for ax, p in zip(axes.flat, policies, strict=False):
        grid = [[mean_defined(by_ptd.get((p, t, d), []), "return") or 0.0
                 for d in difficulties] for t in tasks]
        ax.imshow(grid, vmin=-1.2, vmax=1.0, cmap="RdYlGn", aspect="auto")
        ax.set_xticks(range(len(difficulties)), difficulties, fontsize=7)
        ax.set_yticks(range(len(tasks)), tasks, fontsize=7)
        for i, line in enumerate(grid):
            for j, v in enumerate(line):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=6)
        ax.set_title(p, fontsize=8)
    for ax in list(axes.flat)[len(policies):]:
        ax.axis("off")
    fig.suptitle(f"{adapter.name}: mean return by task x difficulty", fontsize=9)
    fig.tight_layout()
    paths.append(out / "return_by_task.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths


# ---- CLI --------------------------------------------------------------------------------------

def evaluate(adapter: EnvAdapter, policies: Sequence[str], specs: Sequence[EpisodeSpec], *,
             out: Path, base_url: str | None = None, workers: int = 4, traces: str = "all",
             report: Path | None = None, plots_dir: Path | None = None, command: str = "",
             grid_note: str = "", title: str | None = None, api_base_url: str | None = None,
             tool_mode: str = "native", temperature: float = 0.0,
             progress: bool = True) -> dict[str, Any]:
    """Run, measure, plot and report; returns {"rows", "summary", "report", "plots"}."""
    out.mkdir(parents=True, exist_ok=True)
    run_id = f"eval{os.getpid()}-{int(time.time())}"
    makers = [policy_maker(adapter, p, api_base_url=api_base_url, tool_mode=tool_mode,
                           temperature=temperature, run_id=run_id) for p in policies]
    started = time.perf_counter()
    rows = run_grid(adapter, makers, specs, base_url=base_url, workers=workers, out_dir=out,
                    traces=traces, progress=progress)
    wall = time.perf_counter() - started
    with (out / "episodes.jsonl").open("w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    measures = [k for k, _ in columns(adapter)]
    summary = {p: {"all": summarize(g, measures)} for (p,), g in group(rows, "policy").items()}
    for (p, d), g in group(rows, "policy", "difficulty").items():
        summary[p][d] = summarize(g, measures)
    (out / "summary.json").write_text(json.dumps({"env": adapter.name, "wall_s": wall,
                                                  "episodes": len(rows),
                                                  "policies": summary}, indent=2))
    plots = make_plots(adapter, rows, plots_dir or out)
    report_path = report or out / "report.md"
    report_path.parent.mkdir(parents=True, exist_ok=True)
    report_path.write_text(markdown_report(
        adapter, rows, title=title or f"{adapter.name} evaluation", command=command,
        grid_note=grid_note, plots=plots, report_dir=report_path.parent))
    return {"rows": rows, "summary": summary, "report": report_path, "plots": plots,
            "wall_s": wall}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Evaluate policies over a seeded grid.")
    p.add_argument("--env", default="memex")
    p.add_argument("--policies", default=None,
                   help="comma list: baselines, llm:MODEL, ckpt:PATH (default: the env's set)")
    p.add_argument("--split", default="test")
    p.add_argument("--tasks", default=None, help="comma list (default: all)")
    p.add_argument("--difficulties", default=None, help="comma list (default: all)")
    p.add_argument("--episodes", type=int, default=10, help="cases (seeds) per task x difficulty")
    p.add_argument("--repeats", type=int, default=1, help="tries per case (pass^k needs k)")
    p.add_argument("--seed-offset", type=int, default=0)
    p.add_argument("--env-url", default=os.environ.get("ENV_URL"),
                   help="run episodes over WebSocket sessions on this server")
    p.add_argument("--serve", action="store_true",
                   help="start a local server for this run and use WebSocket sessions on it")
    p.add_argument("--workers", type=int, default=8, help="parallel sessions")
    p.add_argument("--out", default="runs/eval")
    p.add_argument("--report", default=None, help="markdown report path (default OUT/report.md)")
    p.add_argument("--title", default=None, help="report title")
    p.add_argument("--plots-dir", default=None, help="where PNG plots go (default OUT)")
    p.add_argument("--traces", choices=("all", "first", "none"), default="all",
                   help="JSONL traces for every episode, only repeat 0, or none")
    p.add_argument("--api-base-url", default=os.environ.get("API_BASE_URL"))
    p.add_argument("--tool-mode", choices=("native", "text"), default="native")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--no-progress", action="store_true")
    args = p.parse_args(argv)

    adapter = get_adapter(args.env)
    policies = args.policies.split(",") if args.policies else list(adapter.eval_policies)
    tasks = args.tasks.split(",") if args.tasks else list(adapter.tasks)
    difficulties = args.difficulties.split(",") if args.difficulties else \
        list(adapter.difficulties)
    specs = adapter.grid(args.split, tasks, difficulties, args.episodes, args.repeats,
                         args.seed_offset)
    seeds = adapter.splits[args.split]
    first = seeds.start + args.seed_offset
    grid_note = (f"Grid: split `{args.split}`, {len(tasks)} tasks x {len(difficulties)} "
                 f"difficulties x {args.episodes} cases (seeds {first}..{first + args.episodes - 1}"
                 f") x {args.repeats} repeats = {len(specs)} episodes per policy.")
    argv_list = sys.argv[1:] if argv is None else list(argv)
    command = ".venv/bin/python -m memex.eval_harness " + shlex.join(argv_list)
    with ExitStack() as stack:
        base_url = args.env_url
        if args.serve and not base_url:
            from memex.testing.servers import serve

            server = stack.enter_context(serve(adapter.server_module, "--host", "127.0.0.1",
                                               "--log-level", "warning"))
            base_url = server.url
        result = evaluate(adapter, policies, specs, out=Path(args.out), base_url=base_url,
                          workers=args.workers, traces=args.traces,
                          report=Path(args.report) if args.report else None,
                          plots_dir=Path(args.plots_dir) if args.plots_dir else None,
                          command=command, grid_note=grid_note, title=args.title,
                          api_base_url=args.api_base_url, tool_mode=args.tool_mode,
                          temperature=args.temperature, progress=not args.no_progress)
    print(f"{len(result['rows'])} episodes in {result['wall_s']:.1f}s -> {result['report']}",
          file=sys.stderr)
    for policy, s in result["summary"].items():
        print(f"{policy:<16} success {_fmt(s['all']['success'])}  "
              f"return {_fmt(s['all']['return'])}  pass^1 {_fmt(s['all']['pass^1'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
