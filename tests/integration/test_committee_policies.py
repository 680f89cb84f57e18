"""Baselines and exploit probes: every probe scores clearly below the committee-aware
heuristic on every task (by 0.15, paired by seed); the oracle reproduces the score's
reference and beats cash in at least 95% of episodes."""

from __future__ import annotations

import statistics

import pytest

from memex.committee.environment import CommitteeEnvironment
from memex.committee.policies import POLICIES, PROBES, make_policy
from memex.committee.references import references
from memex.committee.reports.episodes import run_episode
from memex.committee.scoring import REFERENCE_EDGE_PTS, normalised_score
from memex.committee.world.market import CASH_RATE_PCT
from memex.committee.world.tasks import SPLITS, TASK_NAMES, episode_grid

EPISODES = 20          # validation seeds per task: deterministic, so this is a fixed check
MARGIN = 0.15          # heuristic mean score minus probe mean score, on every task


@pytest.fixture(scope="module")
def scores() -> dict[tuple[str, str], list[float]]:
    grid = episode_grid("validation", EPISODES)
    out: dict[tuple[str, str], list[float]] = {}
    for name in ("heuristic", *PROBES):
        for g in grid:
            r = run_episode(make_policy(name, g["seed"]), g["task"], g["seed"])
            out.setdefault((name, g["task"]), []).append(r.score)
    return out


@pytest.mark.parametrize("probe", PROBES)
@pytest.mark.parametrize("task", TASK_NAMES)
def test_probe_scores_clearly_below_the_heuristic(scores, task, probe):
    paired = [h - x for h, x in zip(scores[("heuristic", task)], scores[(probe, task)],
                                    strict=True)]
    assert statistics.fmean(paired) >= MARGIN, (task, probe, statistics.fmean(paired))


def test_heuristic_beats_cash_clearly_on_every_task(scores):
    for task in TASK_NAMES:
        assert statistics.fmean(scores[("heuristic", task)]) >= 0.3, task


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


@pytest.mark.parametrize("task", TASK_NAMES)
def test_regime_oracle_reproduces_the_reference_it_defines(task):
    seed = SPLITS["validation"].start + 2
    refs = references(task, seed)
    r = run_episode(POLICIES["regime_oracle"](), task, seed)
    assert r.episode_return == pytest.approx(refs.oracle, abs=1e-6)
    assert r.score == normalised_score(refs.oracle, refs, task)
    assert refs.cash == pytest.approx(20 * CASH_RATE_PCT)


def test_the_oracle_beats_cash_in_at_least_95_percent_of_episodes():
    refs = {t: [references(t, g["seed"]) for g in episode_grid("validation", EPISODES, (t,))]
            for t in TASK_NAMES}
    wins = [r.oracle > r.cash for rs in refs.values() for r in rs]
    assert sum(wins) >= 0.95 * len(wins)
    for task, rs in refs.items():
        # the scale the score divides by is the reference's mean edge (within 25%)
        mean_edge = statistics.fmean(r.oracle - r.cash for r in rs)
        assert mean_edge == pytest.approx(REFERENCE_EDGE_PTS[task], rel=0.25)


def test_losses_count_the_score_ranks_like_the_return():
    results = [run_episode(make_policy(p, 5), "regime_shift_recovery", SPLITS["validation"].start)
               for p in ("heuristic", "hold_only", "research_chaser", "always_cash")]
    by_return = sorted(results, key=lambda r: r.episode_return)
    assert [r.score for r in by_return] == sorted(r.score for r in results)
    assert min(r.score for r in results) < 0


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
