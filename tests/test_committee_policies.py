"""Baselines and exploit probes: every probe scores clearly below the committee-aware
heuristic on every task; the regime oracle reproduces the score's upper reference."""

from __future__ import annotations

import statistics

import pytest

from memex.committee.environment import CommitteeEnvironment
from memex.committee.policies import BASELINES, POLICIES, PROBES, make_policy, run_episode
from memex.committee.scoring import MIN_SPAN_PTS, normalised_score, references
from memex.committee.tasks import SPLITS, TASK_NAMES, episode_grid
from memex.committee.world import CASH_RATE_PCT

EPISODES = 20          # validation seeds per task: deterministic, so this is a fixed check
MARGIN = 0.10          # heuristic mean score minus probe mean score, on every task


@pytest.fixture(scope="module")
def scores() -> dict[tuple[str, str], list[float]]:
    grid = episode_grid("validation", EPISODES)
    out: dict[tuple[str, str], list[float]] = {}
    for name in BASELINES:
        for g in grid:
            r = run_episode(make_policy(name, g["seed"]), g["task"], g["seed"])
            out.setdefault((name, g["task"]), []).append(r.score)
    return out


@pytest.mark.parametrize("probe", PROBES)
@pytest.mark.parametrize("task", TASK_NAMES)
def test_probe_scores_clearly_below_the_heuristic(scores, task, probe):
    heuristic = statistics.fmean(scores[("heuristic", task)])
    other = statistics.fmean(scores[(probe, task)])
    assert heuristic - other >= MARGIN, (task, probe, heuristic, other)


def test_always_cash_scores_zero_and_the_query_spammer_hits_the_budget():
    for task in TASK_NAMES:
        r = run_episode(POLICIES["always_cash"](), task, SPLITS["validation"].start)
        assert r.score == 0.0 and r.metrics["breaches"] == 0
        spam = run_episode(POLICIES["query_spammer"](), task, SPLITS["validation"].start)
        assert spam.metrics["queries_used"] == 10
        assert spam.metrics["invalid_actions"] == spam.steps - 10
        assert spam.metrics["turnover"] <= 1.0  # only the Risk Officer ever trades for it


def test_research_chaser_breaks_the_mandate_and_gets_enforced():
    r = run_episode(POLICIES["research_chaser"](), "research_risk_conflict",
                    SPLITS["validation"].start)
    assert r.metrics["breaches"] > 20 and r.metrics["enforcements"] >= 2


def test_heuristic_stays_inside_the_mandate():
    for task in TASK_NAMES:
        r = run_episode(POLICIES["heuristic"](), task, SPLITS["validation"].start + 1)
        assert r.metrics["enforcements"] == 0 and r.metrics["invalid_actions"] == 0
        assert r.metrics["breaches"] <= 1


@pytest.mark.parametrize("task", TASK_NAMES)
def test_regime_oracle_reproduces_the_reference_it_defines(task):
    seed = SPLITS["validation"].start + 2
    refs = references(task, seed)
    r = run_episode(POLICIES["regime_oracle"](), task, seed)
    assert r.episode_return == pytest.approx(refs.oracle, abs=1e-6)
    assert r.score == normalised_score(refs.oracle, refs)
    assert refs.cash == pytest.approx(20 * CASH_RATE_PCT)


def test_score_normalisation_anchors_cash_at_zero_and_the_oracle_at_one():
    refs = references("guided_allocation", 7)
    span = max(refs.oracle - refs.cash, MIN_SPAN_PTS)
    assert normalised_score(refs.cash, refs) == 0.0
    assert normalised_score(refs.cash - 10, refs) == 0.0
    assert normalised_score(refs.cash + span / 2, refs) == pytest.approx(0.5)
    assert normalised_score(refs.cash + span, refs) == 1.0
    assert normalised_score(refs.cash + 3 * span, refs) == 1.0


def test_run_episode_is_deterministic_and_random_policy_is_seeded():
    a = run_episode(POLICIES["heuristic"](), "mandate_drift", 42)
    b = run_episode(POLICIES["heuristic"](), "mandate_drift", 42)
    assert a == b
    r1 = run_episode(make_policy("random", 1), "mandate_drift", 42)
    r2 = run_episode(make_policy("random", 1), "mandate_drift", 42)
    assert r1 == r2
    assert run_episode(make_policy("random", 2), "mandate_drift", 42) != r1


def test_only_the_oracle_needs_the_hidden_world():
    assert [n for n in POLICIES if POLICIES[n]().needs_case] == ["regime_oracle"]
    env = CommitteeEnvironment(score_episodes=False)
    obs = env.reset(task="guided_allocation", seed=3)
    with pytest.raises(ValueError, match="needs the episode's world"):
        POLICIES["regime_oracle"]().reset(obs)
