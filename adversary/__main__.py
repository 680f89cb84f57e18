"""Command line of the launderer adversary.

    python -m memex.adversary search --defender heuristic --trials 60 [--workers 2]
    python -m memex.adversary build-split --defender heuristic --trials 300 --plans 20 \
        --seeds-per-plan 3 --lifted --pairs --per-kind 2 \
        --out scenarios/splits/adversarial_v1.json
    python -m memex.adversary evaluate --defenders heuristic,alert_only [--lifted] [--workers 2]
    python -m memex.adversary audit [--split adversarial_v1] [--doc docs/adversary.md]
    python -m memex.adversary report --defenders heuristic,oracle,ckpt:PATH --doc docs/adversary.md

`--workers N` (N > 1) or `--ray-address ADDR` spreads plan scoring over Ray actors;
`--env-url URL` makes every worker play on a session of that server instead of in process.
`--lifted` also plays each defender with the step budget lifted (`scoring.LIFTED_STEP_BUDGET`);
the search and the split then count a plan as hard only when it fools the defender with time.
`--pairs` scores each plan with its mirror (the split holds both), the objective their mean.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

from memex.adversary.distributed import ScorerPool
from memex.adversary.report import report
from memex.adversary.scoring import LIFTED_STEP_BUDGET, Scorer
from memex.adversary.search import DEFAULT_SEEDS, search
from memex.audit.adversarial import audit_split
from memex.envkit.llm_options import add_llm_arguments, options_from_args
from memex.evaluation.report import replace_section
from memex.scenarios.plan import JUDGEMENT_CHOICES, PlanError, mirror, parse
from memex.scenarios.splits import LATEST, SEED_BASE, SplitEntry, load_split, write_split


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--defender", default="heuristic",
                   help="a baseline name, llm:MODEL or ckpt:PATH")
    p.add_argument("--trials", type=int, default=60)
    p.add_argument("--seeds", default=",".join(map(str, DEFAULT_SEEDS)),
                   help="comma list of seeds each plan is searched on")
    p.add_argument("--sampler-seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=1, help="Ray actors (1: in process)")
    p.add_argument("--ray-address", default=None, help="join this Ray cluster (default: local)")
    p.add_argument("--env-url", default=None, help="play on sessions of this server")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--lifted", action="store_true",
                   help="score the defender with the step budget lifted (hard by structure)")
    p.add_argument("--pairs", action="store_true",
                   help="score each plan with its mirror; the objective is the pair's mean")


def _search(args: argparse.Namespace):
    return search(args.defender, trials=args.trials,
                  seeds=[int(s) for s in args.seeds.split(",")],
                  sampler_seed=args.sampler_seed, workers=args.workers,
                  ray_address=args.ray_address, base_url=args.env_url,
                  progress=not args.no_progress, lifted=args.lifted, pairs=args.pairs)


BUDGET_BANDS = ((10, 14), (15, 19), (20, 29), (30, 44))


def _by_budget(results, failing: bool) -> dict[str, int]:
    """How many valid (and, with `failing`, defender-failing) trials per step-budget band."""
    out = {}
    for lo, hi in BUDGET_BANDS:
        out[f"{lo}-{hi}"] = sum(r.valid and (not failing or r.structural_correct < 1.0)
                                and lo <= r.plan.get("step_budget", 38) <= hi for r in results)
    return out


def _by_judgement(results) -> dict[str, dict[str, int]]:
    """How many valid, defender-failing trials per value of each judgement knob."""
    out: dict[str, dict[str, int]] = {}
    for name in JUDGEMENT_CHOICES:
        counts: dict[str, int] = {}
        for r in results:
            if r.valid and r.structural_correct < 1.0:
                key = json.dumps(r.plan.get(name))
                counts[key] = counts.get(key, 0) + 1
        out[name] = dict(sorted(counts.items()))
    return out


def build_split(args: argparse.Namespace, command: str) -> int:
    results = _search(args)
    # The hardest valid plans, taken round-robin over kinds (best first within each), so one
    # exploit found early cannot fill the split; with --per-kind N, hardest first with at most
    # N plans of a kind.
    by_kind: dict[str, list] = {}
    ranked: list = []
    seen: set[str] = set()
    for r in results:
        key = json.dumps(r.plan, sort_keys=True)
        if r.valid and r.structural_correct < 1.0 and key not in seen:
            seen.add(key)
            by_kind.setdefault(r.plan["kind"], []).append(parse(r.plan))
            if len(by_kind[r.plan["kind"]]) <= args.per_kind:
                ranked.append(parse(r.plan))
    picked = ranked if args.per_kind else [
        plans[i] for i in range(max(map(len, by_kind.values()), default=0))
        for plans in by_kind.values() if i < len(plans)]
    scorer = Scorer(args.defender, base_url=args.env_url)
    entries: list[SplitEntry] = []
    pair = 0
    for plan in picked:
        if pair >= args.plans:
            break
        try:
            twin = mirror(plan)
        except PlanError:
            continue
        seeds = tuple(SEED_BASE + pair * args.seeds_per_plan + j
                      for j in range(args.seeds_per_plan))
        if not (scorer.score(plan, seeds).valid and scorer.score(twin, seeds).valid):
            continue  # the oracle must solve both on the split's own seeds
        entries += [SplitEntry(p, s, role, pair) for p, role in ((plan, "adversary"),
                                                                  (twin, "mirror"))
                    for s in seeds]
        pair += 1
    scorer.close()
    out = Path(args.out)
    head = {"name": out.stem, "version": 1, "command": command, "defender": args.defender,
            "trials": args.trials, "search_seeds": args.seeds, "sampler_seed": args.sampler_seed,
            "pairs": pair, "seeds_per_plan": args.seeds_per_plan,
            **({"per_kind": args.per_kind} if args.per_kind else {}),
            "valid_trials": sum(r.valid for r in results),
            "failing_valid_plans": len(seen),
            "failing_valid_by_step_budget": _by_budget(results, failing=True),
            "valid_by_step_budget": _by_budget(results, failing=False)}
    if args.pairs:
        head["scored_with_mirror"] = True
    if args.lifted:
        head["lifted_step_budget"] = LIFTED_STEP_BUDGET
        head["failing_valid_by_judgement"] = _by_judgement(results)
    write_split(out, entries, head)
    print(f"{len(entries)} entries ({pair} plans and their mirrors) -> {out}", file=sys.stderr)
    return 0 if entries else 1


def evaluate_split(name: str, defenders: list[str], *, workers: int = 1,
                   ray_address: str | None = None, base_url: str | None = None,
                   lifted: bool = False) -> str:
    """A markdown table: per defender and entry role, its and the oracle's decision accuracy
    and mean return on the split's cases (over Ray actors when `workers > 1`); with `lifted`
    also the defender's accuracy with the step budget lifted."""
    entries = load_split(name)
    items = [(e.plan, (e.seed,)) for e in entries]
    lift_head = f" acc, budget {LIFTED_STEP_BUDGET} |" if lifted else ""
    lines = ["| defender | cases | n | defender acc | defender return |" + lift_head
             + " oracle acc | oracle return |", "|---|---|---|---|---|---|---|"
             + ("---|" if lifted else "")]
    for defender in defenders:
        if workers > 1 or ray_address:
            pool = ScorerPool(defender, workers=workers, base_url=base_url,
                              ray_address=ray_address, lifted=lifted)
            scored = pool.score_many(items)
            pool.close()
        else:
            scorer = Scorer(defender, base_url=base_url, lifted=lifted)
            scored = [scorer.score(p, s) for p, s in items]
            scorer.close()
        for role in ("all", "adversary", "mirror"):
            rows = [r for r, e in zip(scored, entries, strict=True) if role in ("all", e.role)]
            n = max(1, len(rows))
            lift = (f" {sum(r.structural_correct for r in rows) / n:.3f} |" if lifted else "")
            lines.append(
                f"| {defender} | {role} | {len(rows)} | "
                f"{sum(r.defender_correct for r in rows) / n:.3f} | "
                f"{sum(r.defender_return for r in rows) / n:.3f} |{lift} "
                f"{sum(r.oracle_correct for r in rows) / n:.3f} | "
                f"{sum(r.oracle_return for r in rows) / n:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m memex.adversary", description=__doc__.split(
        "\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("search", help="search plans against a defender; print the best")
    _common(s)
    s.add_argument("--top", type=int, default=5)
    s.add_argument("--out", default=None, help="write every scored plan as JSONL here")
    b = sub.add_parser("build-split", help="(re)generate an adversarial test split")
    _common(b)
    b.add_argument("--plans", type=int, default=20)
    b.add_argument("--seeds-per-plan", type=int, default=3)
    b.add_argument("--per-kind", type=int, default=0,
                   help="hardest plans first, at most N of a kind (0: round-robin over kinds)")
    b.add_argument("--out", default=f"scenarios/splits/{LATEST}.json")
    e = sub.add_parser("evaluate", help="play a split's cases: defenders vs the oracle")
    e.add_argument("--split", default=LATEST)
    e.add_argument("--defenders", default="heuristic")
    e.add_argument("--workers", type=int, default=1, help="Ray actors (1: in process)")
    e.add_argument("--ray-address", default=None)
    e.add_argument("--env-url", default=None)
    e.add_argument("--lifted", action="store_true",
                   help="also play each defender with the step budget lifted")
    a = sub.add_parser("audit", help="leak audit on the cases of an adversarial split")
    a.add_argument("--split", default=LATEST)
    a.add_argument("--seeds-per-entry", type=int, default=3)
    a.add_argument("--out", default=None, help="markdown report path")
    a.add_argument("--doc", default=None,
                   help="replace this doc's adversary-audit section with the report")
    r = sub.add_parser("report", help="defenders on the test split vs the adversarial split "
                                      "(docs/adversary.md's table; memex.adversary.report)")
    r.add_argument("--split", default=LATEST)
    r.add_argument("--defenders", default="heuristic,oracle,alert_only,one_lookup,random")
    r.add_argument("--test-episodes", type=int, default=1, help="test seeds per kind x difficulty")
    r.add_argument("--seeds-per-plan", type=int, default=1,
                   help="seeds of each adversarial plan and mirror played")
    r.add_argument("--pairs", type=int, default=None,
                   help="only the split's first N plans (and their mirrors)")
    r.add_argument("--test-tasks", default=None,
                   help="test-split kinds (comma list; `split`: the kinds those entries have)")
    r.add_argument("--test-difficulties", default=None, help="comma list (default all)")
    r.add_argument("--out", default="runs/adversary_report")
    r.add_argument("--doc", default=None, help="replace this doc's SECTION with the table")
    r.add_argument("--section", default="adversary-report", help="the doc's marked section")
    r.add_argument("--no-progress", action="store_true")
    add_llm_arguments(r, model=False)
    args = p.parse_args(argv)
    argv_list = sys.argv[1:] if argv is None else list(argv)
    command = ".venv/bin/python -m memex.adversary " + shlex.join(argv_list)
    if args.command == "search":
        results = _search(args)
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            Path(args.out).write_text("".join(json.dumps(r.to_dict()) + "\n" for r in results))
        for r in results[:args.top]:
            print(json.dumps(r.to_dict()))
        return 0
    if args.command == "build-split":
        return build_split(args, command)
    if args.command == "report":
        text = report(args.defenders.split(","), test_episodes=args.test_episodes,
                      seeds_per_plan=args.seeds_per_plan, split=args.split, pairs=args.pairs,
                      test_tasks=args.test_tasks and args.test_tasks.split(","),
                      test_difficulties=args.test_difficulties
                      and args.test_difficulties.split(","),
                      llm=options_from_args(args), out=Path(args.out),
                      doc=Path(args.doc) if args.doc else None, section=args.section,
                      command=command,
                      progress=not args.no_progress)
        print(text)
        return 0
    if args.command == "evaluate":
        print(evaluate_split(args.split, args.defenders.split(","), workers=args.workers,
                             ray_address=args.ray_address, base_url=args.env_url,
                             lifted=args.lifted))
        return 0
    text, ok = audit_split(args.split, args.seeds_per_entry)
    if args.out:
        Path(args.out).write_text(text)
    if args.doc:
        replace_section(Path(args.doc), "adversary-audit", f"Generated by `{command}`.\n\n{text}")
    print(text)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
