"""The committee's score and shaping cannot be farmed: the score is symmetric around cash and
monotone in the return, the bonus terms are capped far below the growth term, risk_response
pays only for a PM trade, signal_alignment is measured against a de-biased view, and doing
nothing with an inherited book costs money."""

from __future__ import annotations

import math

import pytest

from memex.committee import rewards as R
from memex.committee.environment import CommitteeEnvironment
from memex.committee.models import CommitteeAction
from memex.committee.policies import make_policy
from memex.committee.reports.episodes import run_episode
from memex.committee.scoring import REFERENCE_EDGE_PTS, References, normalised_score
from memex.committee.world.tasks import SPLITS, TASK_NAMES, TASKS

SEEDS = range(SPLITS["validation"].start, SPLITS["validation"].start + 3)


def a(action_type: str, **params) -> CommitteeAction:
    return CommitteeAction(action_type=action_type, **params)


@pytest.mark.parametrize("task", TASK_NAMES)
def test_score_is_symmetric_around_cash_and_monotone_in_the_return(task):
    refs = References(cash=5.0, oracle=30.0)
    edge = REFERENCE_EDGE_PTS[task]
    assert normalised_score(5.0, refs, task) == 0.0
    assert normalised_score(5.0 + edge / 2, refs, task) == pytest.approx(0.5)
    assert normalised_score(5.0 - edge / 2, refs, task) == pytest.approx(-0.5)
    assert normalised_score(5.0 - 3 * edge, refs, task) == -1.0
    assert normalised_score(5.0 + 3 * edge, refs, task) == 1.0
    returns = [-40, -10, 0, 4, 5, 6, 12, 30]
    scores = [normalised_score(g, refs, task) for g in returns]
    assert scores == sorted(scores)


def test_bonus_cap_is_far_below_the_growth_term_it_rewards():
    growth_spread_pts = min(REFERENCE_EDGE_PTS.values())
    assert 0.1 * growth_spread_pts >= R.MAX_BONUS_PTS
    caps = (R.MAX_INFO_BONUSES * R.INFO_BONUS_PTS, R.MAX_RISK_RESPONSES * R.RISK_RESPONSE_BONUS_PTS)
    assert all(c <= R.MAX_BONUS_PTS for c in caps)


@pytest.mark.parametrize("policy", ["heuristic", "research_then_hold", "regime_table_reader",
                                    "random", "regime_oracle"])
def test_no_policy_collects_more_bonus_than_the_cap(policy):
    for task in TASK_NAMES:
        for seed in SEEDS:
            r = run_episode(make_policy(policy, seed), task, seed)
            bonus = sum(r.metrics[f"term_{k}"] for k in R.BONUS_TERMS)
            assert bonus <= R.MAX_BONUS_PTS + 1e-6, (task, seed, bonus)


@pytest.mark.parametrize("task", ["research_risk_conflict", "regime_shift_recovery",
                                  "mandate_drift"])
def test_holding_an_inherited_breach_pays_no_risk_response_and_costs_penalties(task):
    r = run_episode(make_policy("hold_only"), task, SPLITS["validation"].start)
    assert r.metrics["term_risk_response"] == 0.0
    assert r.metrics["term_compliance_penalty"] <= -2 * R.COMPLIANCE_PENALTY_PTS
    assert r.metrics["enforcements"] >= 1


def test_a_pm_trade_that_fixes_an_inherited_breach_earns_the_risk_response():
    env = CommitteeEnvironment()
    obs = env.reset(task="research_risk_conflict", seed=SPLITS["validation"].start)
    assert any(f.level == "breach" for f in obs.risk.flags)
    obs = env.step(a("allocate", weights={"NOVA": 0.2, "CLDX": 0.15, "GOVT": 0.3}))
    assert obs.reward_breakdown["risk_response"] > 0
    assert obs.reward_breakdown["compliance_penalty"] == 0.0


def test_signal_alignment_takes_the_analysts_documented_bias_out():
    task = "research_risk_conflict"
    bias = TASKS[task].research_bias["TECH"]
    env = CommitteeEnvironment()
    env.reset(task=task, seed=7)
    env.step(a("allocate", weights={"GOVT": 0.3}))
    obs = env.step(a("query_research", query_target="NOVA"))
    conviction = next(v.conviction for v in obs.research if v.name == "NOVA")
    obs = env.step(a("allocate", weights={"NOVA": 0.3}))
    debiased = math.tanh(math.atanh(max(-0.999, min(0.999, conviction))) - bias)
    assert obs.reward_breakdown["signal_alignment"] == pytest.approx(
        R.ALIGNMENT_WEIGHT * 0.3 * debiased, abs=1e-6)
