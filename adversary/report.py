"""The defenders table of docs/adversary.md: each defender on the normal test split vs the
adversarial split, the oracle on both, every defender on the same episodes.

    .venv/bin/python -m memex.adversary report \\
        --defenders heuristic,oracle,alert_only,one_lookup,random,ckpt:runs/dry_model/final \\
        --test-episodes 1 --seeds-per-plan 1 --max-steps 2 --max-tokens 48 --reply-retries 0

Episodes: the test split's kinds x difficulties x `--test-episodes` seeds (from 1,100,000), and
the adversarial split's plans and mirrors on their first `--seeds-per-plan` seeds. Every
defender plays every one of them (the evaluation harness's `run_grid`, in process). An LLM
defender (`ckpt:PATH`, `llm:MODEL`) takes the harness's LLM options; `--max-steps` caps its
model turns per episode, and an episode cut there is scored as the environment scores a
timeout (its return gets `timeout_return`, its decision is wrong), as the trainer scores one
cut by `--max-turns`. Baselines play the whole budget.

Writes `OUT/episodes.jsonl` (a row per episode, with the split and the entry's role), the table
to `OUT/table.md`, and, with `--doc`, replaces the text between the doc's
`<!-- SECTION:begin -->` and `<!-- SECTION:end -->` markers (`--section`, default
`adversary-report`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memex.adapter import ADAPTER
from memex.evaluation.harness import policy_maker, run_grid
from memex.evaluation.report import replace_section
from memex.scenarios.splits import LATEST, header, load_split

MARK = "adversary-report"
ROLES = ("adversary", "mirror")


def report_specs(adapter: Any, test_episodes: int, seeds_per_plan: int, split: str = LATEST,
                 pairs: int | None = None, test_tasks: Sequence[str] | None = None,
                 test_difficulties: Sequence[str] | None = None,
                 ) -> tuple[list[Any], list[Any], dict[str, str]]:
    """(test specs, adversarial specs, role of each adversarial spec by key): the split's first
    `pairs` plans and their mirrors on their first `seeds_per_plan` seeds, and the test split's
    `test_tasks` (default all; "split": the kinds of those entries) x `test_difficulties`
    x `test_episodes` seeds."""
    per: dict[tuple[int, str], int] = {}
    adversarial, roles = [], {}
    for e in load_split(split):
        k = per.get((e.pair, e.role), 0)
        per[(e.pair, e.role)] = k + 1
        if k < seeds_per_plan and (pairs is None or e.pair < pairs):
            spec = e.spec().episode()
            adversarial.append(spec)
            roles[spec.key] = e.role
    if list(test_tasks or ()) == ["split"]:
        test_tasks = list(dict.fromkeys(s.task for s in adversarial))
    test = adapter.grid("test", list(test_tasks or adapter.tasks),
                        list(test_difficulties or adapter.difficulties), test_episodes)
    return test, adversarial, roles


def score_capped(adapter: Any, spec: Any, row: dict[str, Any]) -> dict[str, Any]:
    """A turn-capped episode (outcome "unfinished") scored as a timeout."""
    if row["outcome"] == "unfinished":
        row = {**row, "outcome": "timeout", "capped": True,
               "return": round(row["return"] + adapter.timeout_return(adapter.case_for(spec)),
                               6)}
    return row


def play(adapter: Any, defenders: Sequence[str], specs: Sequence[Any], *, llm: Any = None,
         progress: bool = True) -> list[dict[str, Any]]:
    makers = [policy_maker(adapter, d, llm=llm) for d in defenders]
    rows = run_grid(adapter, makers, specs, workers=1, traces="none", progress=progress)
    by_key = {s.key: s for s in specs}
    return [score_capped(adapter, by_key[r["key"]], r) for r in rows]


def _mean(rows: list[dict[str, Any]], f: Any, digits: int = 3) -> str:
    return f"{sum(f(r) for r in rows) / len(rows):.{digits}f}" if rows else "-"


def _correct(r: dict[str, Any]) -> float:
    return float(r["outcome"] in ("TP", "TN"))


def _timeout(r: dict[str, Any]) -> float:
    return float(r["outcome"] == "timeout")


def table(defenders: Sequence[str], rows: list[dict[str, Any]], labels: dict[str, str]) -> str:
    """Markdown: per defender, decision accuracy (timeouts wrong) and mean return on both splits,
    timeouts on the adversarial one, and its accuracy on adversary-made cases and mirrors."""
    lines = ["| defender | test: decision acc | test: return | adversarial: decision acc | "
             "adversarial: return | adversarial: timeouts | adversary-made acc | mirrors acc |",
             "|---|---|---|---|---|---|---|---|"]
    for d in defenders:
        mine = [r for r in rows if r["policy"] == d]
        test = [r for r in mine if r["split"] == "test"]
        adv = [r for r in mine if r["split"] == "adversarial"]
        by_role = {role: [r for r in adv if r["role"] == role] for role in ROLES}
        lines.append(f"| {labels.get(d, d)} | {_mean(test, _correct)} | "
                     f"{_mean(test, lambda r: r['return'])} | **{_mean(adv, _correct)}** | "
                     f"{_mean(adv, lambda r: r['return'])} | {_mean(adv, _timeout)} | "
                     f"{_mean(by_role['adversary'], _correct)} | "
                     f"{_mean(by_role['mirror'], _correct)} |")
    return "\n".join(lines)


def report(defenders: Sequence[str], *, test_episodes: int = 1, seeds_per_plan: int = 1,
           split: str = LATEST, pairs: int | None = None,
           test_tasks: Sequence[str] | None = None,
           test_difficulties: Sequence[str] | None = None, llm: Any = None,
           out: Path = Path("runs/adversary_report"), doc: Path | None = None,
           section: str = MARK, command: str = "", progress: bool = True) -> str:
    """Play, tabulate, write `out` (and the doc's section); returns the section's markdown."""
    test, adversarial, roles = report_specs(ADAPTER, test_episodes, seeds_per_plan, split,
                                            pairs, test_tasks, test_difficulties)
    rows = [{**r, "split": "test"} for r in play(ADAPTER, defenders, test, llm=llm,
                                                   progress=progress)]
    rows += [{**r, "split": "adversarial", "role": roles[r["key"]]}
             for r in play(ADAPTER, defenders, adversarial, llm=llm, progress=progress)]
    out.mkdir(parents=True, exist_ok=True)
    with (out / "episodes.jsonl").open("w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    labels = {d: f"{d} (probe)" for d in ("alert_only", "one_lookup")}
    labels |= {d: f"dry-run model (`{d}`)" for d in defenders if d.startswith("ckpt:")}
    cap = getattr(llm, "max_steps", None)
    n_pairs = len({e.pair for e in load_split(split) if pairs is None or e.pair < pairs})
    steps = {d: _mean([r for r in rows if r["policy"] == d and r["split"] == "test"],
                      lambda r: r["steps"], 1) for d in defenders}
    text = "\n".join([
        f"Generated by `{command}`." if command else "",
        "",
        f"Every defender played the same {len(test) + len(adversarial)} episodes: the test "
        f"split's {len(test)} ({len({s.task for s in test})} kinds x "
        f"{'/'.join(dict.fromkeys(s.difficulty for s in test))} x {test_episodes} seed(s) from "
        f"{ADAPTER.splits['test'].start:,}) and "
        f"{len(adversarial)} of the adversarial split `{header(split)['name']}` "
        f"({n_pairs} adversary-made plans and their mirrors, {seeds_per_plan} seed(s) each"
        f"). Decision accuracy counts timeouts as wrong.", "",
        table(defenders, rows, labels), "",
        "Steps per episode on the test split: " + ", ".join(
            f"{labels.get(d, d)} {steps[d]}" for d in defenders) + ".",
        *([f"An LLM defender's episode is cut after {cap} model turns and scored as a "
           "timeout (capped episodes: " + ", ".join(
               f"{sum(bool(r.get('capped')) for r in rows if r['policy'] == d)} of "
               f"{sum(r['policy'] == d for r in rows)}" for d in defenders
               if d.startswith(('ckpt:', 'llm:'))) + "); replies valid / invalid / no call: "
           + ", ".join(f"{sum(r.get('replies_valid', 0) for r in rows if r['policy'] == d)} / "
                       f"{sum(r.get('replies_invalid', 0) for r in rows if r['policy'] == d)} / "
                       f"{sum(r.get('replies_no_call', 0) for r in rows if r['policy'] == d)}"
                       for d in defenders if d.startswith(('ckpt:', 'llm:'))) + "."]
          if cap and any(d.startswith(("ckpt:", "llm:")) for d in defenders) else []),
    ]).strip() + "\n"
    (out / "table.md").write_text(text)
    if doc is not None:
        replace_section(doc, section, text)
    return text
