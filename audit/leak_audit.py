"""The leak audit: can one tool's output decide a case without investigating?

    python -m memex.audit.leak_audit [--cases-per-difficulty 2000] [--out docs/leak_audit.md]
                                          [--seed-split test] [--jobs 1]

For every generated case the audit calls the REAL tools (`server.tools.Toolkit` over a
`CaseIndex`, built directly so no RAM or seen-ID check gets in the way) and keeps each result
as one *view*: the alert (`review_alert`), the subject's profile, its accounts' ledgers, the
watchlist screen of its name, its network, source of funds, risk score, device overlap,
beneficial ownership, the trade documents and market prices the alert refers to, the wire
traces of the alerted wires, and the customer's answers to a request for information on every
topic. Each view is featurised GENERICALLY — nothing here knows what a
red flag is:

- every JSON leaf by its field path (list indices collapsed): string values as categories and
  as word tokens (digits masked), numbers as log-magnitude, cents, roundness and count, dates
  as days before the case date, list lengths and distinct-value counts;
- relations, because an investigator compares: for each field path, how many of its IDs,
  names and dates recur under another path (of the same view, or of each other view in the
  combined one), and how close its numbers come to the numbers elsewhere (log ratio);
- in the combined view only, relations between records of different views for every pair (or
  triple) of field paths (`audit.relations`): identifier equality and inequality, signed ratios
  and k% closeness of figures, and differences of two amounts equal to a third within a cent.

The monitoring rule is added to every view (the agent always knows which rule fired). A
gradient-boosted classifier (scikit-learn `HistGradientBoostingClassifier`) is
cross-validated per view and difficulty; its out-of-fold accuracy is compared with the
majority rate overall and per rule. The *combined* view concatenates every view — what a
thorough investigation gathers. The bar (DESIGN.md section 3): alert <= majority + 0.05 under
every rule, any other single view <= majority + 0.15, combined >= 0.97.
"""

from __future__ import annotations

import argparse
import math
import re
import warnings
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from memex.audit.relations import cross_record_relations
from memex.scenarios import DEFAULT_BENIGN_SHARE, DIFFICULTIES, SPLITS, CaseSpec, build
from memex.scenarios.case import Case
from memex.scenarios.difficulty import ALERT_WINDOW_DAYS
from memex.scenarios.model import INFORMATION_TOPICS
from memex.server.case_index import CaseIndex
from memex.server.tools import ToolInputError, Toolkit
from memex.state_manager import OSState

ALERT_MARGIN = 0.05
VIEW_MARGIN = 0.15
COMBINED_MIN_ACCURACY = 0.97
CV_FOLDS = 5
MAX_FEATURES_PER_VIEW = 600
MIN_FEATURE_SUPPORT = 0.01
VIEWS = ("alert", "profile", "transactions", "watchlist", "network", "source_of_funds",
         "risk", "devices", "ownership", "trade_documents", "market_price", "wire_traces",
         "information")
COMBINED = "combined"

_ID = re.compile(r"^([A-Z]{2,4})-[0-9A-F]{6}$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2})?$")
# A document or registration number (letters then digits): compared across views like an ID.
_NUMBER_ID = re.compile(r"^[A-Z]{1,3}\d{6,}$")
_WORD = re.compile(r"[a-z#]+")
_DIGITS = re.compile(r"\d")


# ---- views -----------------------------------------------------------------------------------

def _call(fn, *args, **kwargs) -> Any:
    try:
        return fn(*args, **kwargs)
    except (ToolInputError, KeyError, ValueError):
        return None


def build_views(case: Case) -> dict[str, Any]:
    """Every single-tool view a policy can obtain about the alert's subject, as tool output."""
    pub = case.public
    ix = CaseIndex(pub)
    os = OSState(ix.alert_ids())
    tk = Toolkit(ix, os, lambda _txn: 0)
    alert = pub.alert
    subject = alert.subject_id
    name = ix.entities[subject].name
    txns = [ix.transactions[t] for t in alert.transaction_ids]
    invoices = list(dict.fromkeys(t.reference for t in txns
                                  if t.reference and t.reference in ix.documents))
    commodities = list(dict.fromkeys(ix.documents[i].commodity for i in invoices))
    # The alerted wires, and the other wires of the alerted accounts in the last 30 days (a
    # thorough investigator traces the wire that follows alerted cash, too).
    since = (date.fromisoformat(pub.as_of) - timedelta(days=ALERT_WINDOW_DAYS)).isoformat()
    wires = list(dict.fromkeys(
        [t for t in txns if t.channel == "wire"]
        + [t for a in alert.account_ids for t in ix.txns_of_account[a]
           if t.channel == "wire" and t.timestamp[:10] >= since]))
    traces = []
    for t in wires:
        job = tk.request_wire_trace(t.id)
        os.step = max(os.step, job["ready_at_step"])
        traces.append(tk.retrieve_async_result(job["job_id"]))
    answers = []  # a thorough investigator asks the customer on every topic
    for topic in INFORMATION_TOPICS:
        job = tk.request_information(subject, topic)
        os.step = max(os.step, job["ready_at_step"])
        answers.append(tk.retrieve_async_result(job["job_id"]))
    return {
        "alert": tk.review_alert(),
        "profile": _call(tk.get_customer_profile, subject),
        "transactions": [_call(tk.query_transactions, a, limit=100) for a in alert.account_ids],
        "watchlist": _call(tk.check_watchlist, name),
        "network": _call(tk.trace_network, subject),
        "source_of_funds": _call(tk.check_source_of_funds, subject),
        "risk": _call(tk.assess_risk, subject),
        "devices": _call(tk.check_device_overlap, subject),
        "ownership": _call(tk.query_beneficial_ownership, subject),
        "trade_documents": [_call(tk.verify_customs_invoice, i) for i in invoices],
        "market_price": [_call(tk.check_market_price, c) for c in commodities],
        "wire_traces": traces,
        "information": answers,
    }


# ---- generic featurisation -------------------------------------------------------------------

@dataclass
class _Leaves:
    """What one view holds, by collapsed field path."""

    strings: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    numbers: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    tokens: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # IDs, dates
    lengths: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))


def _walk(node: Any, path: str, out: _Leaves, as_of: date) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _walk(value, f"{path}.{key}" if path else str(key), out, as_of)
    elif isinstance(node, list | tuple):
        out.lengths[path].append(len(node))
        for item in node:
            _walk(item, f"{path}[]", out, as_of)
    elif isinstance(node, bool):
        out.strings[path].append(str(node))
    elif isinstance(node, int | float):
        out.numbers[path].append(float(node))
    elif isinstance(node, str):
        m = _ID.match(node)
        if m:
            out.strings[path].append(f"<{m.group(1)}>")
            out.tokens[path].add(node)
        elif _DATE.match(node):
            out.numbers[f"{path}#days"].append(
                float((as_of - date.fromisoformat(node[:10])).days))
            out.tokens[path].add(node[:10])
        else:
            out.strings[path].append(node)
            if _NUMBER_ID.match(node):
                out.tokens[path].add(node)
            if " " in node and len(node) < 80:
                out.tokens[path].add(node.lower())  # names recur across views


def _number_features(path: str, xs: list[float], f: dict[str, float]) -> None:
    mags = [math.log10(abs(x) + 1.0) for x in xs]
    f[f"{path}:n"] = len(xs)
    f[f"{path}:logmin"] = min(mags)
    f[f"{path}:logmax"] = max(mags)
    f[f"{path}:logmean"] = sum(mags) / len(mags)
    f[f"{path}:cents"] = sum(abs(x - round(x)) > 1e-9 for x in xs) / len(xs)
    f[f"{path}:round100"] = sum(x != 0 and x % 100 == 0 for x in xs) / len(xs)
    f[f"{path}:round1000"] = sum(x != 0 and x % 1000 == 0 for x in xs) / len(xs)


def _string_features(path: str, xs: list[str], f: dict[str, float]) -> None:
    f[f"{path}:nuniq"] = len(set(xs))
    for x in xs:
        if len(x) <= 40:
            key = f"{path}={_DIGITS.sub('#', x.lower())}"
            f[key] = f.get(key, 0.0) + 1.0
        for w in set(_WORD.findall(_DIGITS.sub("#", x.lower()))):
            key = f"{path}~{w}"
            f[key] = f.get(key, 0.0) + 1.0


def _nearest_log_ratio(xs: list[float], others: np.ndarray) -> float:
    if not len(others):
        return 5.0
    best = 5.0
    for x in xs:
        if x <= 0:
            continue
        d = float(np.min(np.abs(np.log(others) - math.log(x))))
        best = min(best, d)
    return min(best, 5.0)


def _relations(groups: dict[str, _Leaves], f: dict[str, float], within: bool) -> None:
    """How a path's tokens and numbers recur elsewhere: under other paths of the same view
    (`within`) or in each other view."""
    for gname, leaves in groups.items():
        targets = [(gname, leaves)] if within else [(o, lv) for o, lv in groups.items()
                                                   if o != gname]
        for tname, tleaves in targets:
            for path, toks in leaves.tokens.items():
                other: set[str] = set()
                for p2, t2 in tleaves.tokens.items():
                    if not (within and p2 == path):
                        other |= t2
                hit = len(toks & other)
                f[f"{path}@{tname}:shared"] = hit
                f[f"{path}@{tname}:unshared"] = len(toks) - hit
            for path, xs in leaves.numbers.items():
                if path.endswith("#days"):
                    continue
                pos = [y for p2, ys in tleaves.numbers.items()
                       if not (within and p2 == path) and not p2.endswith("#days")
                       for y in ys if y > 0]
                if pos:
                    f[f"{path}@{tname}:near"] = _nearest_log_ratio(xs, np.asarray(pos))


def featurise(views: dict[str, Any], names: Iterable[str], rule: str, as_of: date,
              ) -> dict[str, float]:
    """Generic features of the named views (several names = their concatenation)."""
    f: dict[str, float] = {f"rule={rule}": 1.0}
    groups: dict[str, _Leaves] = {}
    for name in names:
        leaves = _Leaves()
        _walk(views.get(name), name, leaves, as_of)
        groups[name] = leaves
        for path, xs in leaves.numbers.items():
            _number_features(path, xs, f)
        for path, xs in leaves.strings.items():
            _string_features(path, xs, f)
        for path, ns in leaves.lengths.items():
            f[f"{path}:len"] = sum(ns)
    _relations(groups, f, within=True)
    if len(groups) > 1:
        _relations(groups, f, within=False)
        cross_record_relations(groups, f)
    return f


# ---- classification --------------------------------------------------------------------------

@dataclass
class ViewResult:
    view: str
    difficulty: str
    accuracy: float
    majority: float
    by_rule: dict[str, tuple[float, float, int]]  # rule -> (accuracy, majority, n)
    top_features: list[tuple[str, float]]


def _majority(y: np.ndarray) -> float:
    return float(max(y.mean(), 1 - y.mean())) if len(y) else 1.0


def _matrix(rows: list[dict[str, float]]):
    """Sparse matrix of the features seen in at least `MIN_FEATURE_SUPPORT` of the cases."""
    from sklearn.feature_extraction import DictVectorizer

    vec = DictVectorizer(sparse=True)
    x = vec.fit_transform(rows).tocsc()
    support = np.asarray((x != 0).sum(axis=0)).ravel()
    keep = np.flatnonzero(support >= max(2, MIN_FEATURE_SUPPORT * len(rows)))
    return x[:, keep].tocsr().astype(np.float32), [vec.feature_names_[i] for i in keep]


def _dense(x):
    return x.toarray() if hasattr(x, "toarray") else x


def _top_features(x, y: np.ndarray, names: list[str], k: int = 5):
    """Features ranked by how far their single-feature AUC is from 0.5."""
    from sklearn.feature_selection import f_classif
    from sklearn.metrics import roc_auc_score

    f_scores = np.nan_to_num(f_classif(x, y)[0])
    scored = []
    for j in np.argsort(-f_scores)[:200]:
        col = x[:, j].toarray().ravel()
        if col.min() == col.max():
            continue
        scored.append((abs(roc_auc_score(y, col) - 0.5) + 0.5, names[j]))
    scored.sort(reverse=True)
    return [(n, round(s, 3)) for s, n in scored[:k]]


def evaluate_view(view: str, difficulty: str, rows: list[dict[str, float]], y: np.ndarray,
                  rules: list[str], seed: int = 0, top: bool = True) -> ViewResult:
    from threadpoolctl import threadpool_limits

    # One thread: OpenMP spin-waiting on a shared, busy machine costs 30x, not 2x.
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore")  # constant features in a fold are expected
        return _evaluate_view(view, difficulty, rows, y, rules, seed, top)


def _evaluate_view(view: str, difficulty: str, rows: list[dict[str, float]], y: np.ndarray,
                   rules: list[str], seed: int, top: bool) -> ViewResult:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.feature_selection import SelectKBest, f_classif
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer

    x, names = _matrix(rows)
    # Feature selection is fitted inside each fold, so the held-out fold never informs it.
    clf = make_pipeline(
        SelectKBest(f_classif, k=min(MAX_FEATURES_PER_VIEW, x.shape[1])),
        FunctionTransformer(_dense, accept_sparse=True),
        HistGradientBoostingClassifier(max_iter=80, learning_rate=0.15, max_leaf_nodes=15,
                                       max_features=0.5, early_stopping=False,
                                       random_state=seed))
    folds = StratifiedKFold(n_splits=CV_FOLDS, shuffle=True, random_state=seed)
    pred = cross_val_predict(clf, x, y, cv=folds)
    correct = pred == y
    by_rule = {}
    rules_arr = np.asarray(rules)
    for rule in sorted(set(rules)):
        m = rules_arr == rule
        by_rule[rule] = (float(correct[m].mean()), _majority(y[m]), int(m.sum()))
    return ViewResult(view, difficulty, float(correct.mean()), _majority(y), by_rule,
                      _top_features(x, y, names) if top else [])


# ---- the audit -------------------------------------------------------------------------------

@dataclass
class AuditCase:
    label: int
    rule: str
    kind: str
    features: dict[str, dict[str, float]]


def collect(difficulty: str, n: int, split: str = "test",
            benign_share: float = DEFAULT_BENIGN_SHARE, progress: bool = True,
            ) -> list[AuditCase]:
    start = SPLITS[split].start
    out = []
    for seed in tqdm(range(start, start + n), desc=f"views {difficulty}", disable=not progress,
                     leave=False):
        case = build(CaseSpec(seed=seed, difficulty=difficulty, benign_share=benign_share))
        views = build_views(case)
        rule = case.public.alert.rule.code
        as_of = date.fromisoformat(case.public.as_of)
        feats = {v: featurise(views, (v,), rule, as_of) for v in VIEWS}
        feats[COMBINED] = featurise(views, VIEWS, rule, as_of)
        out.append(AuditCase(int(case.truth.suspicious), rule, case.truth.kind, feats))
    return out


def run_audit(cases_per_difficulty: int, split: str = "test",
              benign_share: float = DEFAULT_BENIGN_SHARE, progress: bool = True,
              views: Iterable[str] = (*VIEWS, COMBINED)) -> list[ViewResult]:
    results = []
    views = tuple(views)
    for difficulty in DIFFICULTIES:
        cases = collect(difficulty, cases_per_difficulty, split, benign_share, progress)
        y = np.asarray([c.label for c in cases])
        rules = [c.rule for c in cases]
        for view in tqdm(views, desc=f"classify {difficulty}", disable=not progress,
                         leave=False):
            results.append(evaluate_view(view, difficulty, [c.features[view] for c in cases],
                                         y, rules))
    return results


def violations(results: list[ViewResult]) -> list[str]:
    """Every way the results miss the bar, as readable lines (empty when the bar holds)."""
    bad = []
    for r in results:
        if r.view == COMBINED:
            if r.accuracy < COMBINED_MIN_ACCURACY:
                bad.append(f"{r.difficulty} combined {r.accuracy:.3f} < {COMBINED_MIN_ACCURACY}")
            continue
        margin = ALERT_MARGIN if r.view == "alert" else VIEW_MARGIN
        if r.accuracy > r.majority + margin:
            bad.append(f"{r.difficulty} {r.view} {r.accuracy:.3f} > majority "
                       f"{r.majority:.3f} + {margin}")
        if r.view == "alert":
            for rule, (acc, maj, _) in r.by_rule.items():
                if acc > maj + margin:
                    bad.append(f"{r.difficulty} alert under {rule} {acc:.3f} > majority "
                               f"{maj:.3f} + {margin}")
    return bad


def render(results: list[ViewResult], n: int, split: str, title: str = "Leak audit",
           note: str = "") -> str:
    rules = sorted({rule for r in results for rule in r.by_rule})
    lines = [f"# {title}", "",
             f"Generated by `python -m memex.audit.leak_audit` — {n} cases per difficulty "
             f"from the `{split}` seed split, default kind mix, {CV_FOLDS}-fold cross-validated "
             "`HistGradientBoostingClassifier` per view and difficulty over generic features "
             "(see the module docstring). Accuracy is out-of-fold; *maj* is the majority-class "
             "rate of the same cases.", "",
             f"Bar: alert <= majority + {ALERT_MARGIN} under every rule; any other single view "
             f"<= majority + {VIEW_MARGIN}; combined >= {COMBINED_MIN_ACCURACY}.", "",
             *([note, ""] if note else []),
             "## Accuracy by view and difficulty", "",
             "| view | " + " | ".join(f"{d} acc (maj)" for d in DIFFICULTIES) + " | max lift |",
             "|---|" + "---|" * (len(DIFFICULTIES) + 1)]
    by = {(r.view, r.difficulty): r for r in results}
    for view in dict.fromkeys(r.view for r in results):
        cells, lift = [], -1.0
        for d in DIFFICULTIES:
            r = by.get((view, d))
            if r is None:
                cells.append("-")
                continue
            cells.append(f"{r.accuracy:.3f} ({r.majority:.3f})")
            lift = max(lift, r.accuracy - r.majority)
        lines.append(f"| {view} | " + " | ".join(cells) + f" | {lift:+.3f} |")
    lines += ["", "## Accuracy by view and rule (all difficulties pooled, weighted by cases)", "",
              "| view | " + " | ".join(f"{rule} acc (maj)" for rule in rules) + " |",
              "|---|" + "---|" * len(rules)]
    for view in dict.fromkeys(r.view for r in results):
        cells = []
        for rule in rules:
            accs = [(r.by_rule[rule]) for r in results if r.view == view and rule in r.by_rule]
            n_rule = sum(a[2] for a in accs)
            acc = sum(a[0] * a[2] for a in accs) / max(1, n_rule)
            maj = sum(a[1] * a[2] for a in accs) / max(1, n_rule)
            cells.append(f"{acc:.3f} ({maj:.3f})")
        lines.append(f"| {view} | " + " | ".join(cells) + " |")
    lines += ["", "## Most predictive single features (|AUC - 0.5| + 0.5, medium)", ""]
    for r in results:
        if r.difficulty == "medium":
            feats = ", ".join(f"`{n}` {s}" for n, s in r.top_features)
            lines.append(f"- **{r.view}**: {feats}")
    bad = violations(results)
    lines += ["", "## Verdict", ""]
    lines += [f"- FAIL: {b}" for b in bad] or ["- PASS: every view within the bar."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="leak_audit", description=__doc__.splitlines()[0])
    p.add_argument("--cases-per-difficulty", type=int, default=2_000)
    p.add_argument("--out", default="docs/leak_audit.md")
    p.add_argument("--seed-split", choices=tuple(SPLITS), default="test")
    p.add_argument("--benign-share", type=float, default=DEFAULT_BENIGN_SHARE)
    p.add_argument("--title", default="Leak audit")
    p.add_argument("--note", default="", help="a paragraph written under the bar")
    args = p.parse_args(argv)
    results = run_audit(args.cases_per_difficulty, args.seed_split, args.benign_share)
    text = render(results, args.cases_per_difficulty, args.seed_split, args.title, args.note)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)
    return 1 if violations(results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
