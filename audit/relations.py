"""Relations between records of different views, for the leak audit's combined view only.

An investigator who holds several tools' outputs compares them: an amount in one record equals
the gap between two amounts in others; a price is within a few percent of a figure elsewhere; an
identifier, name, date or document number in one view recurs (or fails to recur) in another.
Nothing here knows what a red flag or an explanation is; every relation is computed for EVERY
pair (or triple) of field paths, keyed by those paths, and the classifier learns which matter:

- `eq:P|Q` / `ne:P|Q`: identifier-like tokens (IDs, names, dates, document numbers) of path P
  that recur / do not recur under path Q of another view;
- `ratio:P/Q`: the signed log ratio of the closest pair of positive amounts of P and Q (two
  views; paths that hold at most `FEW` amounts, i.e. figures, not ledgers), and `within:P/Q:k`
  whether that pair is within k percent;
- `diff:P-Q=R`: how many amounts of R equal (within a cent) a difference a - b of an amount of
  P and an amount of Q, P and Q of different views (R anywhere, ledgers included);
- totals of each kind, so a count of relations is one feature.

The single views get none of this (each is judged on what one tool shows alone).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

FEW = 6  # a path with at most this many amounts holds figures, not a ledger
WITHIN = (1, 5, 20)  # percent
CENT = 0.005
MAX_AMOUNTS = 800  # per case, for the difference triples (a ledger holds a few hundred)
MIN_DIFF_AMOUNT = 100.0  # small numbers (counts, points, sequence numbers) match by chance


def _amounts(groups: Mapping) -> list[tuple[str, str, float]]:
    """(view, path, value) of every positive amount (dates as days excluded), path order."""
    out = []
    for view, leaves in groups.items():
        for path, xs in leaves.numbers.items():
            if path.endswith("#days"):
                continue
            out.extend((view, path, x) for x in dict.fromkeys(xs) if x > 0)
    return out


def _token_relations(groups: Mapping, f: dict[str, float]) -> None:
    n_eq = n_ne = 0
    paths = [(view, path, toks) for view, leaves in groups.items()
             for path, toks in leaves.tokens.items() if toks]
    for view, path, toks in paths:
        for view2, path2, toks2 in paths:
            if view2 == view:
                continue
            hit = len(toks & toks2)
            if hit:
                f[f"eq:{path}|{path2}"] = hit
                n_eq += 1
            else:
                f[f"ne:{path}|{path2}"] = 1.0
                n_ne += 1
    f["rel:eq_pairs"] = n_eq
    f["rel:ne_pairs"] = n_ne


def _ratio_relations(amounts: list[tuple[str, str, float]], f: dict[str, float]) -> None:
    by_path: dict[tuple[str, str], list[float]] = {}
    for view, path, x in amounts:
        by_path.setdefault((view, path), []).append(x)
    figures = [(k, np.log(np.asarray(v))) for k, v in by_path.items() if len(v) <= FEW]
    n_within = dict.fromkeys(WITHIN, 0)
    for i, ((view, path), la) in enumerate(figures):
        for (view2, path2), lb in figures[i + 1:]:
            if view2 == view:
                continue
            d = la[:, None] - lb[None, :]
            j = int(np.argmin(np.abs(d)))
            r = float(d.flat[j])
            f[f"ratio:{path}/{path2}"] = r
            for k in WITHIN:
                if abs(r) <= math.log1p(k / 100):
                    f[f"within:{path}/{path2}:{k}"] = 1.0
                    n_within[k] += 1
    for k, n in n_within.items():
        f[f"rel:within{k}_pairs"] = n


def _difference_relations(amounts: list[tuple[str, str, float]], f: dict[str, float]) -> None:
    amounts = [a for a in amounts if a[2] >= MIN_DIFF_AMOUNT][:MAX_AMOUNTS]
    if len(amounts) < 3:
        f["rel:diff_matches"] = 0
        return
    vals = np.asarray([x for _, _, x in amounts])
    views = np.asarray([v for v, _, _ in amounts])
    order = np.argsort(vals)
    sorted_vals = vals[order]
    gap = vals[:, None] - vals[None, :]  # a - b
    ok = (gap >= MIN_DIFF_AMOUNT) & (views[:, None] != views[None, :])
    ia, ib = np.nonzero(ok)
    g = gap[ia, ib]
    pos = np.searchsorted(sorted_vals, g - CENT)
    hit = (pos < len(sorted_vals)) & (sorted_vals[np.minimum(pos, len(vals) - 1)] <= g + CENT)
    ia, ib, g, pos = ia[hit], ib[hit], g[hit], pos[hit]
    n = 0
    keys: dict[str, float] = {}
    for a, b, gv, p in zip(ia, ib, g, pos, strict=True):
        while p < len(sorted_vals) and sorted_vals[p] <= gv + CENT:
            c = int(order[p])
            p += 1
            if c in (a, b):
                continue
            key = f"diff:{amounts[a][1]}-{amounts[b][1]}={amounts[c][1]}"
            keys[key] = keys.get(key, 0.0) + 1.0
            n += 1
    f.update(keys)
    f["rel:diff_matches"] = n


def cross_record_relations(groups: Mapping, f: dict[str, float]) -> None:
    """Add every relation between records of different views in `groups` (view -> leaves)."""
    _token_relations(groups, f)
    amounts = _amounts(groups)
    _ratio_relations(amounts, f)
    _difference_relations(amounts, f)
