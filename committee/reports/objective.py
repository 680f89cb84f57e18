"""Does the score rank policies as the stated objective does? The checks behind the baseline
report and its tests, over the episodes of a policy zoo (`EpisodeResult`s, one per policy,
task and seed):

- `share_at_bound`: the share of a policy's episodes whose score sits at a bound of
  `scoring.score_range` (a clip would pile episodes there);
- `objective_table`: per policy, the mean score, the certainty-equivalent edge (the objective,
  pts), the mean final NAV and the breaches;
- `rank_agreement`: Spearman's rank correlation of the mean score with the objective (and,
  for comparison, with the risk-neutral edge and with final wealth) over the policies;
- `losers_above_winners`: policies (or same-world episodes) that lose money against cash yet
  score above one that beats cash without a breach — there should be none.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from scipy.stats import spearmanr

from memex.committee.reports.episodes import EpisodeResult
from memex.committee.scoring import certainty_equivalent, score_range

BOUND_TOLERANCE = 1e-6


def _grouped(results: Sequence[EpisodeResult], task: str) -> dict[str, list[EpisodeResult]]:
    out: dict[str, list[EpisodeResult]] = {}
    for r in results:
        if r.task == task:
            out.setdefault(r.policy, []).append(r)
    return out


def share_at_bound(results: Sequence[EpisodeResult], task: str) -> dict[str, float]:
    """Per policy, the share of its episodes of `task` scored at a bound of the score's range
    (within `BOUND_TOLERANCE`)."""
    lo, hi = score_range(task)

    def at_bound(score: float) -> bool:
        return any(math.isfinite(b) and abs(score - b) <= BOUND_TOLERANCE for b in (lo, hi))

    return {p: sum(at_bound(r.score) for r in rs) / len(rs)
            for p, rs in _grouped(results, task).items()}


@dataclass(frozen=True)
class PolicyObjective:
    policy: str
    score: float                  # mean episode score
    certainty_equivalent: float   # the objective: U^-1(mean utility), pts over cash
    edge: float                   # mean edge over cash net of fines (risk-neutral), pts
    final_nav: float              # mean
    cash_nav: float
    breaches: float               # mean per episode

    @property
    def loses_money(self) -> bool:
        return self.final_nav < self.cash_nav

    @property
    def beats_cash_cleanly(self) -> bool:
        return self.final_nav > self.cash_nav and self.breaches == 0


def objective_table(results: Sequence[EpisodeResult], task: str) -> list[PolicyObjective]:
    """Every policy's mean score and its objective on `task`."""
    rows = []
    for p, rs in _grouped(results, task).items():
        rows.append(PolicyObjective(
            p, statistics.fmean(r.score for r in rs),
            certainty_equivalent(statistics.fmean(r.metrics["utility_pts"] for r in rs)),
            statistics.fmean(r.metrics["edge_pts"] for r in rs),
            statistics.fmean(r.metrics["final_nav"] for r in rs),
            statistics.fmean(r.metrics["cash_nav"] for r in rs),
            statistics.fmean(r.metrics["breaches"] for r in rs)))
    return rows


def rank_agreement(rows: Sequence[PolicyObjective]) -> dict[str, float]:
    """Spearman's rho of the mean score against the objective, against the risk-neutral edge
    (fines in, no risk aversion) and against final wealth (neither)."""
    scores = [r.score for r in rows]

    def rho(values: list[float]) -> float:
        return float(spearmanr(scores, values)[0])

    return {"objective": rho([r.certainty_equivalent for r in rows]),
            "edge": rho([r.edge for r in rows]), "final_nav": rho([r.final_nav for r in rows])}


def losers_above_winners(rows: Sequence[PolicyObjective]) -> list[tuple[str, str]]:
    """(loser, winner) pairs of policies: the loser's mean NAV is below cash, the winner's
    above it without a breach, and the loser's mean score is the higher."""
    return [(a.policy, b.policy) for a in rows for b in rows
            if a.loses_money and b.beats_cash_cleanly and a.score > b.score]


def episode_inversions(results: Sequence[EpisodeResult], task: str) -> tuple[int, int]:
    """Same-world pairs of episodes (same seed, two policies) in which one lost money against
    cash and the other beat cash without a breach: (pairs where the loser scored higher,
    pairs)."""
    by_seed: dict[int, list[EpisodeResult]] = {}
    for r in results:
        if r.task == task:
            by_seed.setdefault(r.seed, []).append(r)
    bad = pairs = 0
    for rs in by_seed.values():
        for a in rs:
            if a.metrics["final_nav"] >= a.metrics["cash_nav"]:
                continue
            for b in rs:
                if b.metrics["final_nav"] > b.metrics["cash_nav"] and b.metrics["breaches"] == 0:
                    pairs += 1
                    bad += a.score > b.score
    return bad, pairs
