"""Evaluation harness: any policy over a seeded grid of task x difficulty, with k repeats.

Policies: the environment's baselines by name (for Memex: heuristic, oracle, random, always_sar,
always_close and the exploit probes), `llm:MODEL` (an OpenAI-compatible endpoint, configured by
the shared LLM options of `envkit.llm_options`: `--api-base-url`, `--timeout`, `--max-retries`,
`--max-tokens`, `--max-steps`, `--tool-mode`, `--prompt-tokens`, ... or their environment
variables) and `ckpt:PATH` (a local model or a LoRA checkpoint from `train_grpo.py`). LLM
policies use the inference agent (`memex.inference.LLMPolicy`), so their prompts are the same
bounded-context prompts the trainer uses. Each endpoint is checked before the grid starts; a
model-endpoint or environment-server failure mid-run ends that episode with outcome "error"
(trace written, row kept with `error` and `error_source`, counted in the summary as
`endpoint_errors` / `env_errors`) and the grid continues; so does any reply an endpoint sends
(`memex.inference.LLMPolicy`). LLM rows also carry their requests, endpoint retries, re-asks,
prompts over budget and replies by verdict, and `report.md`'s "Errors and replies" table shows
them per policy with the valid-call rate.

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

`--sealed-url URL` is a sealed run (`memex.envkit.sealed`): the one policy of `--policies` plays
`--episodes` episodes per cell the sealed server lets a client choose (AML: each difficulty;
committee: each task) over HTTP episodes — the server draws every world, so nothing is
regenerated client-side and the oracle cannot play — each episode it leaves unfinished (an
error, `--max-steps`) is ended with DELETE and scored by the server as unfinished; then the run
is closed in the policy's name and its signed report saved as `OUT/sealed_report.json` (checked
here: chain and signature; `python -m memex.envkit.sealed verify` checks it against the
organiser's key). The usual outputs come beside it, measured from what the agent observed.

`--curriculum plr` evaluates instead on the levels prioritized level replay samples by the first
policy's regret against the oracle (`memex.curriculum.evaluation`; `--curriculum-updates` draws)
and appends the sampled-level statistics to the report.

    .venv/bin/python -m memex.evaluation.harness --policies heuristic,random --episodes 5 --serve
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import sys
import threading
import time
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tqdm import tqdm

from memex.curriculum.evaluation import plr_grid
from memex.envkit.adapter import EnvAdapter
from memex.envkit.client import HttpSession
from memex.envkit.episodes import EnvSessionError, Episode, EpisodeSpec, Session
from memex.envkit.llm_options import (
    EndpointError,
    LLMOptions,
    add_llm_arguments,
    options_from_args,
    prepare_endpoint,
    token_counter,
)
from memex.envkit.replies import VERDICTS
from memex.envkit.sealed import check_report
from memex.envkit.servers import serve
from memex.evaluation.report import (
    REQUEST_COUNTS,
    columns,
    error_counts,
    fmt,
    group,
    make_plots,
    markdown_report,
    summarize,
)
from memex.inference import (
    ERROR_SOURCES,
    LLMPolicy,
    LocalBackend,
    OpenAIBackend,
    Warnings,
    episode_trace,
    play_recorded,
)
from memex.registry import get_adapter
from memex.scenarios.splits import header, split_specs

# ---- policies ---------------------------------------------------------------------------------

@dataclass
class PolicyMaker:
    """How to build one episode's policy, and how many may run at once."""

    label: str
    build: Callable[[EpisodeSpec], Any]
    max_workers: int | None = None
    max_steps: int | None = None  # LLM policies: --max-steps


def policy_maker(adapter: EnvAdapter, name: str, *, llm: LLMOptions | None = None,
                 prepared: dict[str, LLMOptions] | None = None,
                 warn: Warnings | None = None) -> PolicyMaker:
    """`name` is a baseline, `llm:MODEL` or `ckpt:PATH`. An `llm:` policy needs `llm` (the
    endpoint options; MODEL replaces its model) and checks the endpoint and its tool mode once
    (`prepare_endpoint`, `EndpointError` if it fails); `prepared` caches that per model; `warn`
    says each kind of warning once for the whole run (default: once per policy)."""
    if name.startswith(("llm:", "ckpt:")):
        kind, target = name.split(":", 1)
        opts = llm or LLMOptions()
        if kind == "llm":
            opts = opts.replace(model=target or opts.model)
            if opts.constrained:  # the grammar constrains a text reply
                opts = opts.replace(tool_mode="text")
            cache = prepared if prepared is not None else {}
            if name not in cache:
                cache[name] = prepare_endpoint(opts)
            opts = cache[name]
            backend: Any = OpenAIBackend(opts, warn)
            mode, limit = opts.tool_mode, None
        else:
            backend = LocalBackend(target, temperature=opts.temperature,
                                   max_tokens=opts.max_tokens)
            mode, limit = "text", 1  # one local model, one generation at a time

        prompting = getattr(backend, "prompting", {})
        count = token_counter(opts.tokenizer) if opts.prompt_tokens else None

        def build_llm(spec: EpisodeSpec) -> Any:
            policy = LLMPolicy(adapter, backend, tool_mode=mode, name=name,
                               reply_retries=opts.reply_retries,
                               compact=prompting.get("compact", False),
                               max_prompt_chars=prompting.get("max_chars"),
                               prompt_tokens=opts.prompt_tokens, count_tokens=count,
                               run_token=opts.run_token, warn=warn,
                               constrained=opts.constrained)
            policy.episode_key = spec.key  # deterministic prompts, run to run
            return policy

        return PolicyMaker(name, build_llm, limit, max_steps=opts.max_steps)
    if name not in adapter.policies:
        raise KeyError(f"unknown policy {name!r}: baselines are {', '.join(adapter.policies)}; "
                       "or llm:MODEL, ckpt:PATH")
    # Stochastic baselines get a seed per (case, repeat), so repeats are independent tries.
    return PolicyMaker(name, lambda spec: adapter.make_policy(
        name, seed=zlib.crc32(f"{name}|{spec.key}".encode())))


# ---- running ----------------------------------------------------------------------------------

def run_grid(adapter: EnvAdapter, makers: Sequence[PolicyMaker], specs: Sequence[EpisodeSpec], *,
             base_url: str | None = None, workers: int = 4, out_dir: Path | None = None,
             traces: str = "all", progress: bool = True,
             open_session: Callable[[], Session] | None = None) -> list[dict[str, Any]]:
    """Play every policy on every spec; one measurement row per episode (in grid order). Each
    worker plays on its own session: `open_session()`, else `adapter.open(base_url)`."""
    jobs = [(m, s) for m in makers for s in specs]
    local = threading.local()
    sessions: list[Any] = []
    lock = threading.Lock()
    limits = {m.label: threading.Semaphore(m.max_workers or workers) for m in makers}
    failed_sources: set[str] = set()

    def session() -> Any:
        if not hasattr(local, "session"):
            local.session = open_session() if open_session else adapter.open(base_url)
            with lock:
                sessions.append(local.session)
        return local.session

    def one(maker: PolicyMaker, spec: EpisodeSpec) -> dict[str, Any]:
        policy = maker.build(spec)
        with limits[maker.label]:
            try:
                episode = play_recorded(adapter, session(), policy, spec,
                                        max_steps=maker.max_steps)
            except EnvSessionError as exc:  # the server refused a new session
                episode = Episode(spec, maker.label, error=str(exc), error_source="environment")
            end = getattr(session(), "end", None)  # an HTTP episode left unfinished: DELETE
            if end is not None:
                with contextlib.suppress(EnvSessionError):
                    end()
        episode.policy = maker.label
        row = {"policy": maker.label, "task": spec.task, "difficulty": spec.difficulty,
               "seed": spec.seed, "repeat": spec.repeat, "key": spec.key,
               "outcome": adapter.episode_outcome(episode),
               "success": float(episode.done and adapter.success(episode)),
               "return": episode.episode_return, "steps": float(episode.steps),
               "wall_s": round(episode.wall_s, 4),
               **(adapter.metrics(episode) if episode.observations else {})}
        if episode.error:
            source = ERROR_SOURCES[episode.error_source or "policy"]
            row["error"], row["error_source"] = episode.error, episode.error_source or "policy"
            with lock:
                if source not in failed_sources:
                    failed_sources.add(source)
                    tqdm.write(f"# {source} error in {maker.label} {spec.key}: "
                               f"{episode.error} (episode ended; grid continues)",
                               file=sys.stderr)
        stats = getattr(policy, "stats", None)
        if isinstance(stats, dict) and "verdicts" in stats:
            row.update({f"replies_{v}": stats["verdicts"][v] for v in VERDICTS})
            row.update({k: stats[k] for k in REQUEST_COUNTS})
        if out_dir is not None and (traces == "all" or (traces == "first" and spec.repeat == 0)):
            path = out_dir / "traces" / _safe(maker.label) / f"{spec.key}.jsonl"
            episode_trace(adapter, episode).write(path)
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


# ---- CLI --------------------------------------------------------------------------------------

def evaluate(adapter: EnvAdapter, policies: Sequence[str], specs: Sequence[EpisodeSpec], *,
             out: Path, base_url: str | None = None, workers: int = 4, traces: str = "all",
             report: Path | None = None, plots_dir: Path | None = None, command: str = "",
             grid_note: str = "", title: str | None = None, llm: LLMOptions | None = None,
             progress: bool = True, open_session: Callable[[], Session] | None = None,
             makers: Sequence[PolicyMaker] | None = None) -> dict[str, Any]:
    """Run, measure, plot and report; returns {"rows", "summary", "report", "plots"}. An
    `llm:` policy whose endpoint fails its check raises `EndpointError` before any episode;
    one that fails mid-run ends that episode with outcome "error" and the grid continues.
    `open_session` and `makers` (the policies already built) are passed to `run_grid`."""
    out.mkdir(parents=True, exist_ok=True)
    if makers is None:
        prepared: dict[str, LLMOptions] = {}
        warn = Warnings(lambda message: tqdm.write(message, file=sys.stderr))
        makers = [policy_maker(adapter, p, llm=llm, prepared=prepared, warn=warn)
                  for p in policies]
    started = time.perf_counter()
    rows = run_grid(adapter, makers, specs, base_url=base_url, workers=workers, out_dir=out,
                    traces=traces, progress=progress, open_session=open_session)
    wall = time.perf_counter() - started
    with (out / "episodes.jsonl").open("w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    measures = [k for k, _ in columns(adapter)]
    summary = {p: {"all": summarize(g, measures)} for (p,), g in group(rows, "policy").items()}
    for (p, d), g in group(rows, "policy", "difficulty").items():
        summary[p][d] = summarize(g, measures)
    for (p,), g in group(rows, "policy").items():
        summary[p]["all"].update(error_counts(g))
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


# ---- sealed runs ------------------------------------------------------------------------------

class SealedRunError(RuntimeError):
    """A sealed run that cannot start (not a sealed server, a policy that needs the world)."""


def sealed_grid(adapter: EnvAdapter, allowed: Sequence[str], tasks: Sequence[str],
                difficulties: Sequence[str], episodes: int) -> list[EpisodeSpec]:
    """`episodes` specs per cell of the reset fields a sealed server lets a client choose
    (`allowed`: AML `difficulty`, committee `task`), without a seed: the server draws every
    world. A field it does not allow is labelled `drawn`. Every spec is its own case (its
    `repeat` is its index in the cell, so keys and trace files differ)."""
    cells = [(t if "task" in allowed else "drawn", d if "difficulty" in allowed else "drawn")
             for t in (tasks if "task" in allowed else [None])
             for d in (difficulties if "difficulty" in allowed else [None])]
    return [EpisodeSpec(task, difficulty, None,
                        {k: v for k, v in (("task", task), ("difficulty", difficulty))
                         if k in allowed}, e)
            for task, difficulty in cells for e in range(episodes)]


def sealed_run(adapter: EnvAdapter, policy: str, url: str, *, tasks: Sequence[str],
               difficulties: Sequence[str], episodes: int, out: Path, workers: int = 4,
               traces: str = "all", llm: LLMOptions | None = None, command: str = "",
               title: str | None = None, progress: bool = True,
               agent: str | None = None) -> dict[str, Any]:
    """Play `policy` against the sealed server at `url` (see the module docstring), close the
    run in the name of `agent` (default: the policy) and save its signed report as
    `out/sealed_report.json`. Returns
    `evaluate`'s result with `sealed_report` (the report) and `sealed_problems` (what
    `check_report` found against the report's own key: nothing when the chain holds)."""
    probe = HttpSession(adapter.client_cls, url)
    try:
        info = probe.request("GET", "/info")
        if not info.get("sealed"):
            raise SealedRunError(f"{url} is not a sealed server (start it with --sealed)")
        specs = sealed_grid(adapter, info.get("sealed_reset_fields", ()), tasks, difficulties,
                            episodes)
        maker = policy_maker(adapter, policy, llm=llm)
        if specs and getattr(maker.build(specs[0]), "needs_case", False):
            raise SealedRunError(f"{policy} reads the hidden world: a sealed run cannot give it "
                                 "one")
        cells = ", ".join(sorted({f"{s.task}/{s.difficulty}" for s in specs}))
        result = evaluate(adapter, [policy], specs, out=out, workers=workers, traces=traces,
                          command=command, title=title or f"{adapter.name} sealed run",
                          grid_note=f"Grid: a sealed run at {url}: {episodes} episodes per "
                                    f"cell ({cells}); the server drew every world.",
                          progress=progress, makers=[maker],
                          open_session=lambda: HttpSession(adapter.client_cls, url))
        report = probe.request("POST", "/sealed/close", json={"agent": agent or policy})
    finally:
        probe.close()
    (out / "sealed_report.json").write_text(json.dumps(report, indent=1) + "\n")
    return {**result, "sealed_report": report, "sealed_problems": check_report(report)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Evaluate policies over a seeded grid.")
    p.add_argument("--env", default="memex")
    p.add_argument("--policies", default=None,
                   help="comma list: baselines, llm:MODEL, ckpt:PATH (default: the env's set)")
    p.add_argument("--split", default="test",
                   help="a seed split, or `adversarial` (the adversary's fixed plans)")
    p.add_argument("--tasks", default=None, help="comma list (default: all)")
    p.add_argument("--difficulties", default=None, help="comma list (default: all)")
    p.add_argument("--episodes", type=int, default=10, help="cases (seeds) per task x difficulty")
    p.add_argument("--repeats", type=int, default=1, help="tries per case (pass^k needs k)")
    p.add_argument("--seed-offset", type=int, default=0)
    p.add_argument("--env-url", default=os.environ.get("ENV_URL"),
                   help="run episodes over WebSocket sessions on this server (a comma list "
                        "of replicas: each new session takes the next)")
    p.add_argument("--serve", action="store_true",
                   help="start a local server for this run and use WebSocket sessions on it")
    p.add_argument("--sealed-url", default=None,
                   help="a sealed run against this sealed server: the one policy of "
                        "--policies plays --episodes per cell over HTTP; the signed report is "
                        "saved as OUT/sealed_report.json")
    p.add_argument("--agent", default=None,
                   help="with --sealed-url: the name the run is closed in (default: the policy)")
    p.add_argument("--workers", type=int, default=8, help="parallel sessions")
    p.add_argument("--out", default="runs/eval")
    p.add_argument("--report", default=None, help="markdown report path (default OUT/report.md)")
    p.add_argument("--title", default=None, help="report title")
    p.add_argument("--plots-dir", default=None, help="where PNG plots go (default OUT)")
    p.add_argument("--traces", choices=("all", "first", "none"), default="all",
                   help="JSONL traces for every episode, only repeat 0, or none")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--curriculum", choices=("none", "plr"), default="none",
                   help="plr: evaluate on the levels prioritized level replay samples by the "
                        "first policy's regret against the oracle (memex.curriculum.evaluation)")
    p.add_argument("--curriculum-updates", type=int, default=100, help="PLR draws (with plr)")
    add_llm_arguments(p, model=False)
    args = p.parse_args(argv)

    adapter = get_adapter(args.env)
    policies = args.policies.split(",") if args.policies else list(adapter.eval_policies)
    tasks = args.tasks.split(",") if args.tasks else list(adapter.tasks)
    difficulties = args.difficulties.split(",") if args.difficulties else \
        list(adapter.difficulties)
    if args.split.startswith("adversarial") and args.env == "memex":
        # The adversary's fixed plans (`memex.scenarios.splits`): every entry, --episodes unused.
        specs = split_specs(args.split, args.tasks and tasks, args.difficulties and difficulties,
                            args.repeats)
        grid_note = (f"Grid: adversarial split `{header(args.split)['name']}` (adversary-made "
                     f"plans and their mirrors) x {args.repeats} repeats = {len(specs)} "
                     "episodes per policy.")
    else:
        specs = adapter.grid(args.split, tasks, difficulties, args.episodes, args.repeats,
                             args.seed_offset)
        seeds = adapter.splits[args.split]
        first = seeds.start + args.seed_offset
        grid_note = (f"Grid: split `{args.split}`, {len(tasks)} tasks x {len(difficulties)} "
                     f"difficulties x {args.episodes} cases (seeds {first}.."
                     f"{first + args.episodes - 1}) x {args.repeats} repeats = {len(specs)} "
                     "episodes per policy.")
    argv_list = sys.argv[1:] if argv is None else list(argv)
    command = ".venv/bin/python -m memex.evaluation.harness " + shlex.join(argv_list)
    if args.sealed_url:
        return _sealed_main(adapter, args, policies, tasks, difficulties, command)
    try:
        with ExitStack() as stack:
            base_url = args.env_url
            if args.serve and not base_url:
                server = stack.enter_context(serve(adapter.server_module, "--host", "127.0.0.1",
                                                   "--log-level", "warning"))
                base_url = server.url
            section = ""
            if args.curriculum == "plr":  # the grid: levels PLR sampled by regret
                target = policy_maker(adapter, policies[0], llm=options_from_args(args))
                specs, grid_note, section = plr_grid(
                    adapter, target.label, lambda batch: [r["return"] for r in run_grid(
                        adapter, [target], batch, base_url=base_url, workers=args.workers,
                        progress=False)], split=args.split, tasks=tasks,
                    difficulties=difficulties, episodes=args.episodes,
                    seed_offset=args.seed_offset, repeats=args.repeats,
                    updates=args.curriculum_updates)
            result = evaluate(adapter, policies, specs, out=Path(args.out), base_url=base_url,
                              workers=args.workers, traces=args.traces,
                              report=Path(args.report) if args.report else None,
                              plots_dir=Path(args.plots_dir) if args.plots_dir else None,
                              command=command, grid_note=grid_note, title=args.title,
                              llm=options_from_args(args), progress=not args.no_progress)
            if section:  # the sampled-level statistics, after the usual report
                with Path(result["report"]).open("a") as f:
                    f.write(section)
    except EndpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{len(result['rows'])} episodes in {result['wall_s']:.1f}s -> {result['report']}",
          file=sys.stderr)
    for policy, s in result["summary"].items():
        a = s["all"]
        line = (f"{policy:<16} success {fmt(a['success'])}  return {fmt(a['return'])}  "
                f"pass^1 {fmt(a['pass^1'])}  endpoint errors {a['endpoint_errors']}  "
                f"env errors {a['env_errors']}")
        if "replies" in a:
            line += "  replies " + ", ".join(f"{n} {v}" for v, n in a["replies"].items())
        print(line)
    rows = result["rows"]
    return 0 if any(not r.get("error") for r in rows) or not rows else 1


def _sealed_main(adapter: EnvAdapter, args: argparse.Namespace, policies: list[str],
                 tasks: list[str], difficulties: list[str], command: str) -> int:
    if len(policies) != 1 or args.serve or args.env_url or args.curriculum != "none":
        print("error: --sealed-url plays one policy (--policies NAME) and takes no --serve, "
              "--env-url or --curriculum", file=sys.stderr)
        return 2
    try:
        result = sealed_run(adapter, policies[0], args.sealed_url, tasks=tasks,
                            difficulties=difficulties, episodes=args.episodes,
                            out=Path(args.out), workers=args.workers, traces=args.traces,
                            llm=options_from_args(args), command=command, title=args.title,
                            progress=not args.no_progress, agent=args.agent)
    except (EndpointError, SealedRunError, EnvSessionError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    s = result["sealed_report"]["summary"]
    print(f"sealed run {result['sealed_report']['run_id']}: drawn {s['drawn']} ("
          + ", ".join(f"{k} {n}" for k, n in s["by_status"].items())
          + f"), mean score {fmt(s['mean_score'])} -> {Path(args.out) / 'sealed_report.json'}")
    for problem in result["sealed_problems"]:
        print(f"error: the report does not verify: {problem}", file=sys.stderr)
    return 1 if result["sealed_problems"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
