"""The committee's score is its stated objective and nothing else: the utility of the edge over
cash net of breach fines, unclipped and increasing, so that losing money against cash always
scores below beating it without a breach; no term pays for process (queries, research held),
and breaches cost the fines they stand for."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from memex.committee.policies import make_policy
from memex.committee.reports.episodes import run_episode
from memex.committee.scoring import (
    ABSOLUTE_RISK_AVERSION,
    BREACH_FINE_PTS,
    RISK_AVERSION,
    SCORE_SCALE_PTS,
    VARIANCE_AVERSION,
    certainty_equivalent,
    episode_score,
    score_range,
    utility,
)
from memex.committee.world.market import INITIAL_NAV
from memex.committee.world.tasks import SPLITS, TASK_NAMES

SEED = SPLITS["validation"].start


@pytest.mark.parametrize("task", TASK_NAMES)
def test_score_is_increasing_unclipped_and_zero_at_cash(task):
    edges = [-80, -30, -5, -0.1, 0, 0.1, 5, 15, 30, 60, 120]
    scores = [episode_score(x, task) for x in edges]
    assert scores == sorted(scores) and len(set(scores)) == len(scores)
    assert episode_score(0, task) == 0.0
    assert episode_score(60, task) > 1 and episode_score(-30, task) < -1   # no clip at +-1
    lo, hi = score_range(task)
    assert lo == -math.inf and episode_score(150, task) < hi == pytest.approx(
        1 / (ABSOLUTE_RISK_AVERSION * SCORE_SCALE_PTS[task]))


def test_losing_money_against_cash_scores_below_beating_it_without_breaches():
    rng = random.Random(7)
    for _ in range(1000):
        task = rng.choice(TASK_NAMES)
        loser = -rng.uniform(1e-3, 40) - BREACH_FINE_PTS * rng.randint(0, 40)
        winner = rng.uniform(1e-3, 60)
        assert episode_score(loser, task) < 0 < episode_score(winner, task)


def test_the_utility_is_the_mandates_risk_aversion_and_its_mean_variance_reading():
    assert ABSOLUTE_RISK_AVERSION == RISK_AVERSION / INITIAL_NAV
    assert pytest.approx(ABSOLUTE_RISK_AVERSION / 2) == VARIANCE_AVERSION
    rng = random.Random(3)
    edges = [rng.gauss(10, 4) for _ in range(20_000)]
    ce = certainty_equivalent(statistics.fmean(utility(x) for x in edges))
    # CE ~ E[x] - (a/2) Var[x] for a normal edge
    assert ce == pytest.approx(statistics.fmean(edges) - VARIANCE_AVERSION
                               * statistics.pvariance(edges), abs=0.05)
    for x in (-20, -1, 0, 3, 25):
        assert certainty_equivalent(utility(x)) == pytest.approx(x, abs=1e-9)


@pytest.mark.parametrize("task", TASK_NAMES)
def test_process_earns_nothing_research_held_or_asked_is_worth_no_points(task):
    hold = run_episode(make_policy("hold_only"), task, SEED)
    reader = run_episode(make_policy("research_then_hold"), task, SEED)
    assert reader.metrics["queries_used"] > 0
    assert reader.episode_return == pytest.approx(hold.episode_return, abs=1e-6)
    assert reader.score == hold.score


@pytest.mark.parametrize("task", ["research_risk_conflict", "regime_shift_recovery",
                                  "mandate_drift"])
def test_holding_an_inherited_breach_is_fined_until_the_officer_enforces(task):
    r = run_episode(make_policy("hold_only"), task, SEED)
    assert r.metrics["fines_pts"] >= 2 * BREACH_FINE_PTS
    assert r.metrics["enforcements"] >= 1
    assert r.metrics["edge_pts"] == pytest.approx(
        r.metrics["excess_nav_pts"] - r.metrics["fines_pts"], abs=1e-5)
