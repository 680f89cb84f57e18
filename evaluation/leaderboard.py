"""The leaderboard: `docs/leaderboard.md`, generated from sealed-run report files.

Every row is one sealed run (`memex.envkit.sealed`): a report file in `docs/leaderboard/reports/`,
signed by a key listed in `docs/leaderboard/keys.json` (the organisers' public keys), closed,
with no episode still playing. A report that does not verify, is signed by an unlisted key, is
not closed, or repeats a run already listed stops the generation: nothing unverified is
published. The score of a row is the mean over every episode the run drew — an episode its
agent deleted, abandoned or let expire counts, scored as its environment scores an unfinished
one.

    .venv/bin/python -m memex.evaluation.leaderboard           # rewrites docs/leaderboard.md
    .venv/bin/python -m memex.evaluation.leaderboard --check   # exit 1 when the page is stale
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memex.envkit.sealed import END_STATUSES, check_report

ROOT = Path(__file__).resolve().parents[1]
RUNS_DIR = ROOT / "docs" / "leaderboard" / "reports"
KEYS_FILE = ROOT / "docs" / "leaderboard" / "keys.json"
PAGE = ROOT / "docs" / "leaderboard.md"
Z_95 = 1.96
# What a score means, per environment (the `env` of a report).
ENVIRONMENTS: dict[str, tuple[str, str]] = {
    "memex": ("AML investigation", "the terminal score of each alert (`graders/terminal.py`: a "
              "correct decision earns up to 1 for the evidence behind it; a wrong one, a "
              "timeout and an episode left undecided score the worst wrong decision for the "
              "case)"),
    "memex-committee": ("Investment committee", "the objective per episode in units of the "
                        "task's scale (`committee/scoring.py`: 0 is cash, 1 the regime oracle's "
                        "mean; a book left unfinished is held to the horizon and scored there)"),
}


class LeaderboardError(ValueError):
    """A report that cannot be published (it names the file and why)."""


@dataclass(frozen=True)
class Run:
    """One verified, closed sealed run."""

    path: Path
    report: dict[str, Any]

    @property
    def summary(self) -> dict[str, Any]:
        return self.report["summary"]

    @property
    def scores(self) -> list[float]:
        return [e["score"] for e in self.report["episodes"]]

    def interval(self) -> tuple[float, float]:
        """Mean score and the half-width of its normal-approximation 95% interval."""
        scores = self.scores
        half = Z_95 * statistics.stdev(scores) / math.sqrt(len(scores)) if len(scores) > 1 \
            else math.nan
        return statistics.fmean(scores), half


def load_keys(path: Path = KEYS_FILE) -> dict[str, str]:
    """The trusted public keys (hex) -> who holds their secret."""
    try:
        return {k["public_key"]: k["organiser"] for k in json.loads(path.read_text())["keys"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise LeaderboardError(f"{path}: not a key list ({type(exc).__name__}: {exc})") from None


def load_runs(paths: Sequence[Path], keys: dict[str, str]) -> list[Run]:
    """Every report of `paths`, verified against `keys`; `LeaderboardError` at the first that
    cannot be published."""
    runs, seen = [], {}
    for path in sorted(paths):
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise LeaderboardError(f"{path.name}: not a report ({exc})") from None
        key = report.get("public_key") if isinstance(report, dict) else None
        if key not in keys:
            raise LeaderboardError(f"{path.name}: signed by a key not in {KEYS_FILE.name}")
        problems = check_report(report, public_key=key)
        if problems:
            raise LeaderboardError(f"{path.name}: does not verify: {'; '.join(problems)}")
        summary = report["summary"]
        if not summary["closed"] or summary["playing"]:
            raise LeaderboardError(f"{path.name}: the run is not closed (POST /sealed/close)")
        if not summary["drawn"]:
            raise LeaderboardError(f"{path.name}: the run drew no episode")
        if not all(isinstance(e["score"], int | float) for e in report["episodes"]):
            raise LeaderboardError(f"{path.name}: an episode has no score")
        if report["run_id"] in seen:
            raise LeaderboardError(f"{path.name}: the run of {seen[report['run_id']]} again")
        seen[report["run_id"]] = path.name
        runs.append(Run(path, report))
    return runs


def _cell(options: dict[str, Any]) -> str:
    return ", ".join(str(v) for _, v in sorted(options.items())) or "all"


def _fmt(x: float | None) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _table(runs: list[Run], root: Path) -> list[str]:
    # cells in the order the runs drew them (AML: easy, medium, hard; committee: its tasks)
    cells = list(dict.fromkeys(_cell(e["options"]) for r in runs for e in r.report["episodes"]))
    head = ["rank", "agent", "mean score [95% interval]", "episodes", "finished", "unfinished",
            *[f"score: {c}" for c in cells], "outcomes", "mean return", "run"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    ranked = sorted(runs, key=lambda r: -r.interval()[0])
    for rank, run in enumerate(ranked, start=1):
        mean, half = run.interval()
        by_cell: dict[str, list[float]] = defaultdict(list)
        for e in run.report["episodes"]:
            by_cell[_cell(e["options"])].append(e["score"])
        statuses = run.summary["by_status"]
        unfinished = ", ".join(f"{statuses[s]} {s}" for s in END_STATUSES[1:] if statuses[s])
        outcomes = Counter(e["outcome"] for e in run.report["episodes"])
        interval = f"{_fmt(mean)} [{_fmt(mean - half)}, {_fmt(mean + half)}]" \
            if not math.isnan(half) else _fmt(mean)
        link = Path(os.path.relpath(run.path, root / "docs")).as_posix()
        lines.append("| " + " | ".join([
            str(rank), f"`{run.summary['agent'] or '(undeclared)'}`", interval,
            str(run.summary["drawn"]), str(statuses["finished"]), unfinished or "0",
            *[_fmt(statistics.fmean(by_cell[c])) if by_cell[c] else "" for c in cells],
            ", ".join(f"{o} {n}" for o, n in sorted(outcomes.items())),
            _fmt(run.summary["mean_return"]),
            f"[`{run.report['run_id']}`]({link})"]) + " |")
    return lines


SUBMIT = """## How to submit a run

1. **The organiser serves the run.** A sealed server is one process with a secret only the
   organiser holds: `MEMEX_SEALED_SECRET=$(openssl rand -hex 32) python -m memex.openenv_server
   --sealed` (the committee: `python -m memex.committee.server --sealed`; the Docker image:
   `docker run -e MEMEX_SEALED=1 -e MEMEX_SEALED_SECRET=... memex`). Its public key is in
   `GET /info` (`sealed_public_key`) and belongs in `docs/leaderboard/keys.json`. One process
   serves one run: restart it for the next submission (a new run id).
2. **The agent plays.** `python -m memex.evaluation.harness --env memex --policies llm:MODEL
   --api-base-url URL --sealed-url SERVER --episodes 20 --agent "NAME" --out runs/sealed` plays
   20 episodes per difficulty (committee: per task) and saves `runs/sealed/sealed_report.json`.
   Any other client works the same way: `POST /reset` (only `difficulty`, or `task`), `POST
   /step`, then `POST /sealed/close {"agent": "NAME"}` returns the final report.
3. **Submit the report.** Add the file to `docs/leaderboard/reports/` and run `python -m
   memex.evaluation.leaderboard`; `python -m memex.envkit.sealed verify FILE --public-key KEY`
   checks one file on its own. `tests/unit/test_leaderboard.py` checks that every listed report
   verifies against a listed key and that this page is current.

**The rules the server enforces.** The server draws every world from its secret (a chosen
seed, kind, case or episode id is refused with 403); only the agent plays (the built-in
policies' route answers 403); every episode drawn is in the report in draw order with its final
status — one deleted, abandoned at the close or left idle past the session timeout is scored as
unfinished, so leaving the hard ones does not help; the report is a hash chain signed with
Ed25519, so removing, editing or reordering an entry fails verification. The agent's name is
what the client declares when it closes the run; the server cannot check it.
"""


def render(runs: list[Run], keys: dict[str, str], root: Path = ROOT) -> str:
    """The page."""
    parts = ["# Leaderboard", "",
             "<!-- Generated by `python -m memex.evaluation.leaderboard` from the report files "
             "in docs/leaderboard/reports/; do not edit by hand. -->", "",
             "Sealed runs only (`memex.envkit.sealed`): the server drew every world, only the "
             "agent played, and every episode drawn counts. Each row is one signed report, "
             "verified against the organisers' keys in "
             "[leaderboard/keys.json](leaderboard/keys.json); the interval is the normal "
             "approximation (mean ± 1.96 standard errors over the run's episodes).", ""]
    by_env: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        by_env[run.report.get("env") or "?"].append(run)
    for env in sorted(by_env, key=lambda e: (e not in ENVIRONMENTS, e)):
        title, meaning = ENVIRONMENTS.get(env, (env, "the environment's episode score"))
        parts += [f"## {title} (`{env}`)", "", f"Score: {meaning}.", "",
                  *_table(by_env[env], root), ""]
    parts += ["Signing keys:", ""]
    parts += [f"- `{key}`: {who}" for key, who in keys.items()]
    parts += ["", SUBMIT]
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Generate docs/leaderboard.md from sealed reports.")
    p.add_argument("reports", nargs="*", type=Path,
                   help="report files (default: docs/leaderboard/reports/*.json)")
    p.add_argument("--keys", type=Path, default=KEYS_FILE)
    p.add_argument("--out", type=Path, default=PAGE)
    p.add_argument("--check", action="store_true", help="exit 1 when OUT is not current")
    args = p.parse_args(argv)
    try:
        keys = load_keys(args.keys)
        runs = load_runs(args.reports or sorted(RUNS_DIR.glob("*.json")), keys)
    except LeaderboardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    page = render(runs, keys)
    if args.check:
        current = args.out.exists() and args.out.read_text() == page
        print(f"{args.out}: {'current' if current else 'STALE: run the generator'}")
        return 0 if current else 1
    args.out.write_text(page)
    print(f"{args.out}: {len(runs)} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
