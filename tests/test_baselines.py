"""Exploit probes lose to the heuristic investigator; the oracle reaches near the maximum.

Run over 300 seeded episodes (100 per difficulty, kinds sampled with the default 40% benign
share). The margin is 15% of the terminal score's range [-1, 1]; "near the maximum" is within
5% of that range of the terminal maximum 1.0.
"""

from __future__ import annotations

import statistics

import pytest

from memex.baselines import POLICIES, PROBES, run_episode
from memex.graders.terminal import SCORE_MAX, SCORE_MIN
from memex.scenarios import SPLITS

EPISODES_PER_DIFFICULTY = 100
RANGE = SCORE_MAX - SCORE_MIN
SEEDS = range(SPLITS["validation"].start, SPLITS["validation"].start + EPISODES_PER_DIFFICULTY)


def _returns(name: str) -> dict[str, list]:
    return {d: [run_episode(POLICIES[name](), seed, d) for seed in SEEDS]
            for d in ("easy", "medium", "hard")}


@pytest.fixture(scope="module")
def heuristic():
    return _returns("heuristic")


def _mean(results) -> float:
    return statistics.mean(r.episode_return for rs in results.values() for r in rs)


@pytest.mark.parametrize("probe", PROBES)
def test_exploit_probe_scores_clearly_below_the_heuristic(probe, heuristic):
    probe_results = _returns(probe)
    gap = _mean(heuristic) - _mean(probe_results)
    assert gap >= 0.15 * RANGE, (probe, _mean(heuristic), _mean(probe_results))
    for difficulty in heuristic:  # and on every difficulty, not just on average
        h = statistics.mean(r.episode_return for r in heuristic[difficulty])
        p = statistics.mean(r.episode_return for r in probe_results[difficulty])
        assert h - p >= 0.15 * RANGE, (probe, difficulty, h, p)


def test_oracle_is_within_five_percent_of_the_maximum():
    oracle = _returns("oracle")
    assert _mean(oracle) >= SCORE_MAX - 0.05 * RANGE, _mean(oracle)
    assert all(r.correct for rs in oracle.values() for r in rs)


def test_heuristic_investigator_meets_solvability_targets(heuristic):
    accuracy = {d: sum(r.correct for r in rs) / len(rs) for d, rs in heuristic.items()}
    assert accuracy["easy"] >= 0.85 and accuracy["hard"] >= 0.70, accuracy
    faults = sum(r.page_faults for rs in heuristic.values() for r in rs)
    assert faults / (3 * EPISODES_PER_DIFFICULTY) < 0.5  # it manages its memory


def test_blind_sar_does_not_score_the_maximum():
    results = [r for rs in _returns("always_sar").values() for r in rs]
    assert max(r.terminal_score for r in results) < 0.5
