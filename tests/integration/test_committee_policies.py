"""Baselines, probes and the score's agreement with the objective on validation seeds: every
probe scores clearly below the committee-aware heuristic on every task (by 0.15, paired by
seed); the heuristic is at least as good as the strongest outsider known (`em_filter`); the
score ranks the policy zoo exactly as the objective does, no episode sits at a bound, and no
policy that loses money against cash outscores one that beats it without a breach; the regime
oracle sets the scale."""

from __future__ import annotations

import statistics

import pytest

from memex.committee.environment import CommitteeEnvironment
from memex.committee.policies import BASELINES, CHALLENGERS, POLICIES, PROBES, make_policy
from memex.committee.policies.outsider import FIT_EPISODES, fitted_profiles, public_returns
from memex.committee.reports.episodes import run_episode, run_grid
from memex.committee.reports.objective import (
    episode_inversions,
    losers_above_winners,
    objective_table,
    rank_agreement,
    share_at_bound,
)
from memex.committee.scoring import SCORE_SCALE_PTS
from memex.committee.world.market import TICKERS
from memex.committee.world.tasks import SPLITS, TASK_NAMES, generate

EPISODES = 20          # validation seeds per task: deterministic, so this is a fixed check
MARGIN = 0.15          # heuristic mean score minus probe mean score, on every task


@pytest.fixture(scope="module")
def zoo():
    return run_grid("validation", EPISODES, BASELINES)


def _scores(zoo, policy: str, task: str) -> list[float]:
    return [r.score for r in zoo if r.policy == policy and r.task == task]


def test_the_zoo_holds_at_least_fifteen_policies_with_the_reference_points():
    assert len(BASELINES) >= 15
    assert {"bonds_only", "max_risk", "hold_only", "always_cash", "em_filter"} <= set(BASELINES)


@pytest.mark.parametrize("probe", PROBES)
@pytest.mark.parametrize("task", TASK_NAMES)
def test_probe_scores_clearly_below_the_heuristic(zoo, task, probe):
    paired = [h - x for h, x in zip(_scores(zoo, "heuristic", task), _scores(zoo, probe, task),
                                    strict=True)]
    assert statistics.fmean(paired) >= MARGIN, (task, probe, statistics.fmean(paired))


@pytest.mark.parametrize("challenger", CHALLENGERS)
@pytest.mark.parametrize("task", TASK_NAMES)
def test_the_heuristic_is_at_least_as_good_as_every_challenger(zoo, task, challenger):
    paired = [h - x for h, x in zip(_scores(zoo, "heuristic", task),
                                    _scores(zoo, challenger, task), strict=True)]
    assert statistics.fmean(paired) >= 0.0, (task, challenger, statistics.fmean(paired))


@pytest.mark.parametrize("task", TASK_NAMES)
def test_the_score_ranks_the_zoo_as_the_objective_does_and_sits_at_no_bound(zoo, task):
    rows = objective_table(zoo, task)
    assert len(rows) == len(BASELINES)
    assert rank_agreement(rows)["objective"] >= 0.95
    assert max(share_at_bound(zoo, task).values()) <= 0.02
    assert losers_above_winners(rows) == []
    bad, pairs = episode_inversions(zoo, task)
    assert pairs > 0 and bad == 0


def test_heuristic_beats_cash_clearly_on_every_task(zoo):
    for task in TASK_NAMES:
        assert statistics.fmean(_scores(zoo, "heuristic", task)) >= 0.5, task


def test_the_scale_is_the_regime_oracles_mean_utility(zoo):
    for task in TASK_NAMES:
        utilities = [r.metrics["utility_pts"] for r in zoo
                     if r.policy == "regime_oracle" and r.task == task]
        assert statistics.fmean(utilities) == pytest.approx(SCORE_SCALE_PTS[task], rel=0.15)
    wins = [r.metrics["edge_pts"] > 0 for r in zoo if r.policy == "regime_oracle"]
    assert sum(wins) >= 0.95 * len(wins)


def test_always_cash_scores_about_zero_and_the_query_spammer_hits_the_budget():
    for task in TASK_NAMES:
        r = run_episode(POLICIES["always_cash"](), task, SPLITS["validation"].start)
        assert abs(r.score) < 0.05 and r.metrics["breaches"] == 0
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


def test_the_outsider_fits_its_profiles_on_train_seeds_from_what_a_pm_sees():
    profiles = fitted_profiles()
    assert set(profiles.names) == {"expansion", "inflation", "late_cycle", "crisis",
                                   "recovery", "tech_boom", "tech_correction"}
    crisis, expansion = profiles.index("crisis"), profiles.index("expansion")
    assert profiles.means[crisis][TICKERS.index("NOVA")] < -3 < 1 < \
        profiles.means[expansion][TICKERS.index("NOVA")]
    assert SPLITS["train"][:FIT_EPISODES][-1] < SPLITS["validation"].start
    env = CommitteeEnvironment()
    obs = env.reset(task="mandate_drift", seed=5)
    seen = []
    while not obs.done:
        obs = env.step(make_policy("hold_only").act(obs))
        seen.append([obs.market.returns_pct[t] for t in TICKERS])
    assert (public_returns("mandate_drift", 5) == seen).all()
    assert len(generate("mandate_drift", 5).returns_pct) == len(seen)


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
    env = CommitteeEnvironment()
    obs = env.reset(task="guided_allocation", seed=3)
    with pytest.raises(ValueError, match="needs the episode's world"):
        POLICIES["regime_oracle"]().reset(obs)
