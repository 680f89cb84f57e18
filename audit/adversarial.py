"""The leak audit on adversary-made cases: `audit.leak_audit`'s views, features and
classifiers, run on the cases of an adversarial split instead of generated ones.

The bar is the audit's own (`leak_audit.violations`): the alert no better than the majority rate
+ 0.05 (under every rule), any other single view no better than majority + 0.15, and the
combined view (everything a thorough investigation gathers) at least 0.97. The classifiers learn
from the cases they are shown: a split's plan is one variant among many, so each entry's plan is
built on several seeds (`seeds_per_entry`; `make adversary-report` uses 8, 960 cases) for the
combined classifier to see enough cases of each plan's decisive cross-check. The report says
how many cases it used.
"""

from __future__ import annotations

from datetime import date

import numpy as np
from tqdm import tqdm

from memex.audit import leak_audit as la
from memex.scenarios import CaseSpec, build
from memex.scenarios.splits import header, load_split

SEED_STRIDE = 10_000   # extra seeds of an entry: seed + k * stride (still test-split seeds)


def audit_split(name: str = "adversarial_v1", seeds_per_entry: int = 1,
                progress: bool = True) -> tuple[str, bool]:
    """(markdown report, whether the bar holds) for the split's cases, each entry's plan built
    with `seeds_per_entry` seeds (its own first) to shrink the cross-validation noise."""
    entries = load_split(name)
    feats, labels, rules = [], [], []
    cases = [(e, e.seed + k * SEED_STRIDE) for e in entries for k in range(seeds_per_entry)]
    for e, seed in tqdm(cases, desc="adversarial views", disable=not progress, leave=False):
        case = build(CaseSpec.from_plan(e.plan.to_dict(), seed))
        views = la.build_views(case)
        rule = case.public.alert.rule.code
        as_of = date.fromisoformat(case.public.as_of)
        row = {v: la.featurise(views, (v,), rule, as_of) for v in la.VIEWS}
        row[la.COMBINED] = la.featurise(views, la.VIEWS, rule, as_of)
        feats.append(row)
        labels.append(int(case.truth.suspicious))
        rules.append(rule)
    y = np.asarray(labels)
    results = [la.evaluate_view(v, "adversarial", [f[v] for f in feats], y, rules, top=False)
               for v in (*la.VIEWS, la.COMBINED)]
    bad = la.violations(results)
    lines = [f"### Leak audit on `{header(name)['name']}` ({len(cases)} cases: {len(entries)} "
             f"entries x {seeds_per_entry} seeds, {int(y.sum())} suspicious)", "",
             "| view | accuracy | majority | lift |", "|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r.view} | {r.accuracy:.3f} | {r.majority:.3f} | "
                     f"{r.accuracy - r.majority:+.3f} |")
    lines += ["", *(f"- FAIL: {b}" for b in bad)] if bad else ["", "- PASS: every view within "
                                                               "the bar."]
    return "\n".join(lines) + "\n", not bad
