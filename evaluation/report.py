"""The one report writer: markdown tables and plots of evaluation rows, for both environments.

`table` and `fmt` write every markdown table of the project's reports (the harness report, the
committee's baseline report); `markdown_report` and `make_plots` turn the harness's per-episode
rows into the report and its figures. Aggregation (`summarize`, `group`, pass^k) is here too, so
a report is a pure function of its rows.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from memex.envkit.adapter import EnvAdapter
from memex.envkit.replies import VERDICTS
from memex.scenarios.generator import KINDS, variant_of

PASS_K = tuple(range(1, 9))
GENERIC_METRICS: tuple[tuple[str, str], ...] = (("success", "success"),
                                                ("return", "mean return"), ("steps", "steps"))


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
    for r in rows:  # a seedless episode (a sealed run's) is a case of its own
        case = (r["task"], r["difficulty"], r["seed"]) if r["seed"] is not None else r["key"]
        cases[case].append(bool(r["success"]))
    trials = [(len(v), sum(v)) for v in cases.values()]
    for k in PASS_K:
        out[f"pass^{k}"] = pass_hat_k(trials, k)
    return out


def group(rows: Sequence[dict[str, Any]], *keys: str) -> dict[tuple, list[dict[str, Any]]]:
    out: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        out[tuple(r[k] for k in keys)].append(r)
    return out


# What an LLM policy's `stats` count per episode, kept on its row and summed per policy.
REQUEST_COUNTS = ("requests", "endpoint_retries", "reasks", "over_budget")


def error_counts(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Episodes of `rows` ended by a model-endpoint error and by an environment-server error;
    for an LLM policy also its replies by verdict and its request counts (`REQUEST_COUNTS`)."""
    out: dict[str, Any] = {
        "endpoint_errors": sum(r.get("error_source") == "policy" for r in rows),
        "env_errors": sum(r.get("error_source") == "environment" for r in rows)}
    if any("replies_valid" in r for r in rows):
        out["replies"] = {v: sum(r.get(f"replies_{v}", 0) for r in rows) for v in VERDICTS}
        out.update({k: sum(r.get(k, 0) for r in rows) for k in REQUEST_COUNTS})
    return out


# ---- report -----------------------------------------------------------------------------------

def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(header: Sequence[str], body: Iterable[Sequence[Any]], *,
          right_from: int | None = None) -> str:
    """A markdown table; cells through `fmt`. Columns from index `right_from` on are
    right-aligned (numbers)."""
    rule = ["---:" if right_from is not None and i >= right_from else "---"
            for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(rule) + "|"]
    lines += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


# Per-kind bars: the heuristic decides at least this share of a kind's cases, every
# probe's mean return sits at least this far below the heuristic's (15% of the terminal score's
# range), and the oracle's mean return reaches this.
KIND_HEURISTIC_MIN_ACCURACY = 0.75
KIND_PROBE_MARGIN = 0.3
KIND_ORACLE_MIN_RETURN = 0.9
REFERENCE_POLICIES = ("heuristic", "oracle")


def kind_groups(rows: Sequence[dict[str, Any]]) -> dict[str, str] | None:
    """Row key -> the group it is reported under: its AML kind, or `kind (hold-out)` when the
    case's variant is one of the kind's test-only hold-outs. None when the rows are not AML
    kinds (the committee's tasks)."""
    if not rows or any(r["task"] not in KINDS or r.get("seed") is None for r in rows):
        return None
    out = {}
    for r in rows:
        spec = KINDS[r["task"]]
        holdout = variant_of(int(r["seed"]), r["difficulty"], r["task"]) in spec.holdout_variants
        out[r["key"]] = f"{r['task']} (hold-out)" if holdout else r["task"]
    return out


def kind_section(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Per kind (hold-out variants apart): the heuristic's decision accuracy, the oracle's mean
    return, the best probe's mean return and the heuristic's margin over it, against the bars."""
    groups = kind_groups(rows)
    policies = list(dict.fromkeys(r["policy"] for r in rows))
    if groups is None or not all(p in policies for p in REFERENCE_POLICIES):
        return []
    probes = [p for p in policies if p not in REFERENCE_POLICIES and not p.startswith("llm")]
    by: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by[(groups[r["key"]], r["policy"])].append(r)
    labels = sorted(dict.fromkeys(groups.values()), key=lambda g: (g.endswith("(hold-out)"),
                                                                    g))
    body = []
    for g in labels:
        h = by[(g, "heuristic")]
        o = by[(g, "oracle")]
        h_acc, h_ret = mean_defined(h, "success"), mean_defined(h, "return")
        o_ret = mean_defined(o, "return")
        best = max(probes, key=lambda p: mean_defined(by[(g, p)], "return") or -9.0,
                   default=None)
        b_ret = mean_defined(by[(g, best)], "return") if best else None
        gap = h_ret - b_ret if h_ret is not None and b_ret is not None else None
        met = (h_acc is not None and h_acc >= KIND_HEURISTIC_MIN_ACCURACY
               and gap is not None and gap >= KIND_PROBE_MARGIN
               and o_ret is not None and o_ret >= KIND_ORACLE_MIN_RETURN)
        body.append([g, len(h), h_acc, h_ret, mean_defined(o, "success"), o_ret, best, b_ret,
                     gap, "yes" if met else "NO"])
    return ["## By kind", "",
            "All difficulties pooled; hold-out variants (test-only schemes) in their own rows. "
            "Bar per kind: heuristic decision accuracy >= "
            f"{KIND_HEURISTIC_MIN_ACCURACY}, every probe's mean return at least "
            f"{KIND_PROBE_MARGIN} below the heuristic's (the best probe is shown), oracle mean "
            f"return >= {KIND_ORACLE_MIN_RETURN}. A probe's decision accuracy on one kind says "
            "little (always_sar decides every suspicious kind right); its return, which pays "
            "for evidence and findings, is what the margin compares.", "",
            table(["kind", "episodes", "heuristic acc", "heuristic return", "oracle acc",
                   "oracle return", "best probe", "probe return", "margin", "bar met"], body),
            ""]


def errors_section(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Per policy: episodes ended by errors, by source, and for LLM policies the requests sent
    and how many replies were valid calls; then the first error message of each policy."""
    by_policy = group(rows, "policy")
    body, first = [], []
    for (p,), g in by_policy.items():
        counts = error_counts(g)
        replies = counts.get("replies")
        total = sum(replies.values()) if replies else 0
        body.append([p, len(g), counts["endpoint_errors"], counts["env_errors"],
                     counts.get("requests"), counts.get("endpoint_retries"),
                     counts.get("reasks")]
                    + [replies[v] if replies else None for v in VERDICTS]
                    + [replies["valid"] / total if total else None])
        failed = next((r for r in g if r.get("error")), None)
        if failed is not None:
            first.append(f"- `{p}` {failed['key']} ({failed.get('error_source', 'policy')}): "
                         f"{' '.join(str(failed['error']).split())[:300]}")
    return ["## Errors and replies", "",
            "Episodes ended by a model-endpoint or an environment-server error (outcome "
            "`error`), and for LLM policies the HTTP requests sent (endpoint retries "
            "included), the re-asks after a reply without a valid call, the replies by "
            "verdict and the valid-call rate (valid replies / all replies).", "",
            table(["policy", "episodes", "endpoint errors", "env errors", "requests",
                   "endpoint retries", "re-asks", "valid", "invalid", "no-call",
                   "valid-call rate"], body, right_from=1),
            "", *([*first, ""] if first else [])]


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
    parts.append(table(header, (
        [p] + [mean_defined(by_pd[(p, d)], "success") for d in difficulties]
        + [mean_defined(by_pd[(p, d)], "return") for d in difficulties]
        for p in policies)))

    cols = columns(adapter)
    parts += ["", "## All measures", "",
              "Each measure is averaged over the episodes where it is defined. "
              + getattr(adapter, "metrics_note", ""), ""]
    summaries = {p: summarize(by_policy[(p,)], [k for k, _ in cols]) for p in policies}
    parts.append(table(["policy", "episodes"] + [label for _, label in cols],
                        ([p, summaries[p]["episodes"]] + [summaries[p][k] for k, _ in cols]
                         for p in policies)))

    parts += ["", "## pass^k", "",
              f"Probability that all k tries of the same case succeed (success as counted by "
              f"{success}; C(c,k)/C(n,k) per case, averaged; — where fewer than k repeats "
              "ran).", ""]
    parts.append(table(["policy"] + [f"pass^{k}" for k in PASS_K],
                        ([p] + [summaries[p][f"pass^{k}"] for k in PASS_K] for p in policies)))

    parts += ["", "## By task and difficulty", "",
              f"Each cell: {success} / mean return.", ""]
    for d in difficulties:
        parts += [f"### {d}", ""]
        parts.append(table(["task"] + policies, (
            [t] + [f"{fmt(mean_defined(by_ptd[(p, t, d)], 'success'), 2)} / "
                   f"{fmt(mean_defined(by_ptd[(p, t, d)], 'return'), 2)}"
                   if by_ptd.get((p, t, d)) else "—" for p in policies]
            for t in tasks)))
        parts.append("")
    parts += errors_section(rows)
    parts += kind_section(rows)
    if plots:
        parts += ["## Plots", ""]
        parts += [f"![{p.stem}]({os.path.relpath(p, report_dir)})" for p in plots]
        parts.append("")
    return "\n".join(parts)


def make_plots(adapter: EnvAdapter, rows: Sequence[dict[str, Any]], out: Path) -> list[Path]:
    """PNG figures of the rows under `out`. matplotlib is an optional dependency (the `train`
    extra), imported only when plots are drawn."""
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


def replace_section(doc: Path, name: str, text: str) -> None:
    """Put `text` between the doc's `<!-- NAME:begin -->` and `<!-- NAME:end -->` markers, so a
    hand-written page carries numbers that always come from the run that wrote them."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    body = doc.read_text()
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(body):
        raise ValueError(f"{doc} has no {begin} ... {end} section")
    doc.write_text(pattern.sub(lambda _m: f"{begin}\n{text.rstrip()}\n{end}", body, count=1))
