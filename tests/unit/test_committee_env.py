"""The committee environment's contract: typed errors, the actions' effects, every reward term
pinned to its definition (they are the objective's increments), the Risk Officer's escalation,
and the episode score."""

from __future__ import annotations

import math

import pytest

from memex.committee import rewards as R
from memex.committee.environment import CommitteeEnvironment
from memex.committee.models import CommitteeAction
from memex.committee.scoring import (
    BREACH_FINE_PTS,
    ENFORCEMENT_FINE_PTS,
    SCORE_SCALE_PTS,
    utility,
)
from memex.committee.world.market import ASSETS, CASH_RATE_PCT, TICKERS
from memex.committee.world.risk import (
    DISCIPLINE_PERIODS,
    DISCIPLINE_RELEASE_FRACTION,
    DISCIPLINE_RETRIGGER_PCT,
    ENFORCE_AFTER_PERIODS,
    POSITION_ALERT_PCT,
    POSITION_LOOKBACK_PERIODS,
    breaches,
    check_book,
    ewma_update,
    initial_covariance,
)
from memex.committee.world.tasks import TASK_NAMES, generate

SEED = 123


def a(action_type: str, **params) -> CommitteeAction:
    return CommitteeAction(action_type=action_type, **params)


def fresh(task: str = "guided_allocation", seed: int = SEED):
    env = CommitteeEnvironment()
    return env, env.reset(task=task, seed=seed)


def officer_cov(task: str, seed: int, periods: int):
    """The Risk Officer's model after `periods` months, rebuilt from public returns."""
    world = generate(task, seed)
    cov = initial_covariance(world.prehistory_pct)
    for r in world.returns_pct[:periods]:
        cov = ewma_update(cov, r)
    return cov


def risky(obs) -> dict[str, float]:
    return {t: obs.portfolio.weights[t] for t in TICKERS}


# ---- typed errors ------------------------------------------------------------------------

@pytest.mark.parametrize(("action", "code"), [
    (a("buy_everything"), "unknown_action"),
    (a("allocate"), "invalid_arguments"),
    (a("query_research", weights={"NOVA": 0.1}), "invalid_arguments"),
    (a("allocate", weights={"NOVA": "lots"}), "invalid_weights"),
    (a("allocate", weights={"NOVA": "0.2"}), "invalid_weights"),
    (a("allocate", weights={"NOVA": True}), "invalid_weights"),
    (a("allocate", weights=[0.1, 0.2]), "invalid_weights"),
    (a("allocate", weights={"nova": 0.2}), "unknown_asset"),
    (a("allocate", weights={" NOVA": 0.2}), "unknown_asset"),
    (a("hold", query_target="TECH"), "invalid_arguments"),
    (a("allocate", weights={"NOVA": -0.1}), "invalid_weights"),
    (a("allocate", weights={"NOVA": math.nan}), "invalid_weights"),
    (a("allocate", weights={"NOVA": 35}), "invalid_weights"),
    (a("allocate", weights={"NOVA": 0.6, "GOVT": 0.6}), "invalid_weights"),
    (a("allocate", weights={}), "invalid_weights"),
    (a("allocate", weights={"NOVA": 0.3, "CASH": 0.3}), "invalid_weights"),
    (a("allocate", weights={"TSLA": 0.1}), "unknown_asset"),
    (a("revise_allocation", weights={"GOLD": 0.1}), "unknown_asset"),
    (a("query_research", query_target="CRYPTO"), "unknown_target"),
    (a("query_risk", query_target="SECTOR"), "unknown_target"),
])
def test_bad_action_is_a_typed_error_that_holds_the_book_for_a_period(action, code):
    env, obs = fresh()
    before = obs.portfolio.weights
    obs = env.step(action)
    assert obs.error is not None and obs.error.code == code and obs.error.message
    assert obs.reward == pytest.approx(0.0, abs=1e-9)  # the book was cash: cash's return
    assert obs.period == 1 and not obs.done
    assert obs.portfolio.weights["CASH"] == before["CASH"] == 1.0
    assert env.state.invalid_actions == 1


def test_queries_beyond_the_budget_are_refused_with_a_typed_error():
    env, obs = fresh()
    for i in range(obs.query_budget):
        obs = env.step(a("query_risk" if i % 2 else "query_research"))
        assert obs.error is None
    assert obs.queries_left == 0
    obs = env.step(a("query_research", query_target="TECH"))
    assert obs.error.code == "query_budget_exhausted"
    assert env.state.invalid_actions == 1 and env.state.queries_used == obs.query_budget


def test_stepping_before_reset_or_after_the_end_is_a_typed_error():
    env = CommitteeEnvironment()
    assert env.step(a("hold")).error.code == "no_episode"
    env.reset(task="guided_allocation", seed=1)
    for _ in range(20):
        obs = env.step(a("hold"))
    assert obs.done
    after = env.step(a("hold"))
    assert after.done and after.error.code == "episode_done" and after.reward == 0.0


def test_unknown_task_or_negative_seed_is_rejected_at_reset():
    env = CommitteeEnvironment()
    with pytest.raises(ValueError, match="unknown task"):
        env.reset(task="day_trading")
    with pytest.raises(ValueError, match="seed"):
        env.reset(task="guided_allocation", seed=-1)


# ---- the actions ---------------------------------------------------------------------------

def test_allocate_sets_the_whole_book_and_revise_changes_only_named_positions():
    env, _ = fresh()
    obs = env.step(a("allocate", weights={"NOVA": 0.2, "GOVT": 0.3}))
    assert obs.error is None
    w1 = risky(obs)
    obs = env.step(a("revise_allocation", weights={"PTRL": 0.1, "NOVA": 0.25}))
    w2 = risky(obs)
    assert obs.result["traded"]
    # GOVT drifted with prices during period 2 but was not traded
    assert w2["GOVT"] == pytest.approx(w1["GOVT"] * (1 + obs.market.returns_pct["GOVT"] / 100)
                                       / (1 + obs.portfolio.period_return_pct / 100), abs=2e-3)
    obs = env.step(a("allocate", weights={"MEDI": 0.4, "CASH": 0.6}))
    assert risky(obs)["NOVA"] == 0.0 and risky(obs)["MEDI"] > 0.3
    obs = env.step(a("move_to_cash", reason="de-risk"))
    assert obs.portfolio.weights["CASH"] == 1.0
    assert any(n.author == "pm" and n.text.startswith("move_to_cash") and "de-risk" in n.text
               for n in obs.notes)


@pytest.mark.parametrize("task", TASK_NAMES)
def test_an_episode_lasts_the_horizon_and_scores_only_at_the_end(task):
    env, obs = fresh(task)
    assert obs.period == 0 and obs.reward is None and "score" not in obs.metadata
    total = 0.0
    while not obs.done:
        obs = env.step(a("hold"))
        total += obs.reward
        if not obs.done:
            assert obs.metadata == {}
    assert obs.period == obs.horizon == 20
    metrics, parts = obs.metadata["metrics"], obs.metadata["score_components"]
    # the return is the objective: the utility of the edge over cash, fines deducted
    assert metrics["episode_return"] == pytest.approx(total, abs=1e-5)
    assert total == pytest.approx(utility(parts["edge_pts"]), abs=1e-4)
    assert parts["edge_pts"] == pytest.approx(
        metrics["final_nav"] - metrics["cash_nav"] - metrics["fines_pts"], abs=1e-3)
    assert obs.metadata["score"] == pytest.approx(total / SCORE_SCALE_PTS[task], abs=1e-5)
    assert env.state.score == obs.metadata["score"] and env.state.done


# ---- every reward term, pinned -------------------------------------------------------------

def test_reward_is_the_sum_of_its_reported_terms_and_totals_accumulate():
    env, obs = fresh("research_risk_conflict")
    running = dict.fromkeys(R.TERMS, 0.0)
    for action in [a("query_research"), a("allocate", weights={"NOVA": 0.5}), a("hold"),
                   a("allocate", weights={"X": 1}), a("query_risk")]:
        obs = env.step(action)
        assert tuple(obs.reward_breakdown) == R.TERMS
        assert obs.reward == pytest.approx(sum(obs.reward_breakdown.values()), abs=1e-5)
        for k, v in obs.reward_breakdown.items():
            running[k] += v
        assert obs.reward_totals == pytest.approx(running, abs=1e-5)


def test_transaction_cost_is_the_nav_traded_away():
    env, obs = fresh()
    obs = env.step(a("allocate", weights={"NOVA": 0.2, "GOVT": 0.3}))
    cost = 0.2 * ASSETS["NOVA"].cost_bps / 1e4 + 0.3 * ASSETS["GOVT"].cost_bps / 1e4
    assert obs.reward_breakdown["transaction_cost"] == pytest.approx(-100 * cost, abs=1e-6)
    assert obs.result["turnover"] == pytest.approx(0.5)


def test_portfolio_return_is_what_the_market_added_to_nav_and_cash_return_the_benchmark():
    env, obs = fresh()
    world = generate("guided_allocation", SEED)
    obs = env.step(a("allocate", weights={"NOVA": 0.2, "GOVT": 0.3}))
    r = world.returns_pct[0]
    book = 0.2 * r["NOVA"] / 100 + 0.3 * r["GOVT"] / 100 + 0.5 * CASH_RATE_PCT / 100
    nav_after_cost = 100 + obs.reward_breakdown["transaction_cost"]
    assert obs.reward_breakdown["portfolio_return"] == pytest.approx(nav_after_cost * book,
                                                                     abs=1e-6)
    assert obs.portfolio.nav == pytest.approx(nav_after_cost * (1 + book), abs=1e-4)
    assert obs.reward_breakdown["cash_return"] == pytest.approx(-CASH_RATE_PCT, abs=1e-9)
    obs = env.step(a("hold"))
    assert obs.reward_breakdown["cash_return"] == pytest.approx(
        -100 * (1 + CASH_RATE_PCT / 100) * CASH_RATE_PCT / 100, abs=1e-9)


def test_queries_cost_the_month_not_points_and_cash_matches_the_benchmark():
    env, obs = fresh()
    obs = env.step(a("query_research", query_target="SECTOR"))
    assert obs.reward_breakdown["portfolio_return"] == pytest.approx(CASH_RATE_PCT, abs=1e-9)
    assert obs.reward == pytest.approx(0.0, abs=1e-9)
    assert obs.queries_left == obs.query_budget - 1


def test_the_rewards_telescope_to_the_utility_of_the_running_edge():
    """Each period's reward is U(x_t) - U(x_{t-1}), x the edge over cash net of fines; the
    risk adjustment is what the utility makes of the period's change of edge."""
    env, obs = fresh("research_risk_conflict")
    edge = 0.0
    for action in [a("hold"), a("allocate", weights={"NOVA": 0.3, "GOVT": 0.3}),
                   a("allocate", weights={"NOVA": 0.6}), a("hold"), a("query_risk")]:
        obs = env.step(action)
        change = sum(v for k, v in obs.reward_breakdown.items() if k != "risk_adjustment")
        assert obs.reward == pytest.approx(utility(edge + change) - utility(edge), abs=1e-5)
        edge += change
        assert obs.reward_breakdown["risk_adjustment"] == pytest.approx(
            utility(edge) - utility(edge - change) - change, abs=1e-5)
    assert obs.reward_totals["breach_fines"] < 0 and obs.reward_totals["risk_adjustment"] < 0
    assert sum(obs.reward_totals.values()) == pytest.approx(utility(edge), abs=1e-4)


def test_breach_fines_count_each_breached_item_and_enforcement_follows():
    env, obs = fresh()
    book = {"NOVA": 0.5, "CLDX": 0.3}
    obs = env.step(a("allocate", weights=book))
    expected = breaches(check_book(book, generate("guided_allocation", SEED).mandate,
                                   officer_cov("guided_allocation", SEED, 0), False))
    assert {c.limit for c in expected} >= {"asset:NOVA", "sector:TECH"}
    assert obs.reward_breakdown["breach_fines"] == pytest.approx(
        -BREACH_FINE_PTS * len(expected))
    assert any(f.level == "breach" for f in obs.risk.flags)
    for _ in range(ENFORCE_AFTER_PERIODS - 2):
        obs = env.step(a("hold"))
        assert obs.reward_breakdown["breach_fines"] < 0 and env.state.enforcements == 0
    assert any(f.level == "escalated" for f in obs.risk.flags)
    obs = env.step(a("hold"))
    assert env.state.enforcements == 1
    assert obs.reward_breakdown["breach_fines"] <= -ENFORCEMENT_FINE_PTS
    assert any("enforced" in e for e in obs.events)
    assert obs.notes[-1].kind == "enforcement" or any(n.kind == "enforcement"
                                                      for n in obs.notes)
    assert risky(obs)["NOVA"] < 0.35 and obs.result["traded"] is False


def _drifted_breach_seed() -> tuple[int, float]:
    """A seed where NOVA bought just under its cap drifts over it in the first month."""
    for seed in range(500):
        r = generate("guided_allocation", seed).returns_pct[0]
        w = 0.345 * (1 + r["NOVA"] / 100)
        total = w + 0.655 * (1 + CASH_RATE_PCT / 100)
        if w / total > 0.352:
            return seed, 0.345
    raise AssertionError("no seed drifts NOVA over its cap")


def test_a_breach_the_market_causes_is_flagged_and_fined_only_if_kept():
    seed, weight = _drifted_breach_seed()
    env, obs = fresh(seed=seed)
    obs = env.step(a("allocate", weights={"NOVA": weight}))
    assert obs.reward_breakdown["breach_fines"] == 0.0   # compliant when checked
    assert any(f.limit == "asset:NOVA" and f.level == "breach" for f in obs.risk.flags)
    fixed = env.step(a("revise_allocation", weights={"NOVA": 0.3}))
    assert fixed.reward_breakdown["breach_fines"] == 0.0
    env, obs = fresh(seed=seed)
    env.step(a("allocate", weights={"NOVA": weight}))
    kept = env.step(a("hold"))
    assert kept.reward_breakdown["breach_fines"] == -BREACH_FINE_PTS


LOW_RISK_BOOK_WITH_PTRL = {"PTRL": 0.1, "MEDI": 0.1, "GOVT": 0.2, "CORP": 0.1}


def _until_announcement(env, obs, change):
    """Hold a low-risk book that keeps PTRL until the revision is announced."""
    obs = env.step(a("allocate", weights=LOW_RISK_BOOK_WITH_PTRL))
    while obs.period < change.announce_period - 1:
        assert obs.mandate.pending is None
        assert obs.reward_breakdown["breach_fines"] == 0.0
        obs = env.step(a("hold"))
    return obs


def test_complying_with_an_announced_revision_before_it_binds_avoids_every_fine():
    task = "mandate_drift"
    change = generate(task, SEED).mandate_change
    env, obs = fresh(task)
    obs = _until_announcement(env, obs, change)
    assert obs.mandate.pending["effective_period"] == change.effective_period
    assert any(n.kind == "mandate" for n in obs.notes)
    cov = officer_cov(task, SEED, obs.period)
    due = breaches(check_book(risky(obs), change.mandate, cov, False))
    assert {c.limit for c in due} == {"excluded:PTRL"}
    obs = env.step(a("revise_allocation", weights={"PTRL": 0.0}))
    assert obs.reward_breakdown["breach_fines"] == 0.0
    while obs.period < change.effective_period + 2:
        obs = env.step(a("hold"))
        assert obs.reward_breakdown["breach_fines"] == 0.0


def test_ignoring_a_mandate_revision_is_a_breach_from_its_effective_period():
    task = "mandate_drift"
    change = generate(task, SEED).mandate_change
    env, obs = fresh(task)
    obs = _until_announcement(env, obs, change)
    while obs.period < change.effective_period - 1:
        obs = env.step(a("hold"))
        assert obs.reward_breakdown["breach_fines"] == 0.0
    obs = env.step(a("hold"))
    assert obs.mandate.excluded == ["PTRL"] and obs.mandate.pending is None
    assert obs.reward_breakdown["breach_fines"] == -BREACH_FINE_PTS
    assert any("excluded:PTRL" in e for e in obs.events)


def test_drawdown_discipline_engages_at_the_limit_and_lifts_after_its_review():
    """Past the drawdown limit the vol cap drops to the de-risking level for
    DISCIPLINE_PERIODS periods, unless the loss deepens further or heals."""
    checked = 0
    for seed in range(300):
        env, obs = fresh("regime_shift_recovery", seed)
        history = []
        while not obs.done:
            obs = env.step(a("allocate", weights={"NOVA": 0.35, "PTRL": 0.35, "SOLR": 0.25})
                           if obs.period == 0 else a("hold"))
            history.append((obs.risk.drawdown_discipline, obs.portfolio.drawdown_pct,
                            obs.risk.vol_cap_annual_pct))
        limit = obs.mandate.drawdown_limit_pct
        on = [i for i, h in enumerate(history) if h[0]]
        if not on:
            continue
        e = on[0]
        assert history[e][1] >= limit and history[e][2] == obs.mandate.derisk_vol_annual_pct
        window = history[e:e + DISCIPLINE_PERIODS + 1]
        calm = len(window) == DISCIPLINE_PERIODS + 1 and all(
            limit * DISCIPLINE_RELEASE_FRACTION <= dd < history[e][1] + DISCIPLINE_RETRIGGER_PCT
            for _, dd, _ in window)
        if calm:
            assert [w[0] for w in window] == [True] * DISCIPLINE_PERIODS + [False]
            checked += 1
        if checked >= 3:
            return
    raise AssertionError("too few seeds reached the drawdown limit")


def test_market_stress_is_reported_from_realised_volatility():
    seen = set()
    for seed in range(40):
        env, obs = fresh("regime_shift_recovery", seed)
        while not obs.done:
            obs = env.step(a("hold"))
            seen.add(obs.risk.market_stress)
            if obs.risk.market_stress == "severe":
                assert obs.risk.stress_ratio >= 2.0
    assert seen == {"normal", "elevated", "severe"}


def test_position_alerts_flag_holdings_far_below_their_recent_high():
    for seed in range(100):
        env, obs = fresh("research_risk_conflict", seed)
        world = generate("research_risk_conflict", seed)
        prices = world.price_path()
        while not obs.done:
            obs = env.step(a("hold"))
            if obs.done:
                break
            window = prices[max(0, obs.period - POSITION_LOOKBACK_PERIODS):obs.period + 1]
            expected = {t for t in TICKERS if obs.portfolio.weights[t] >= 0.02 and
                        1 - window[-1][t] / max(p[t] for p in window) >= POSITION_ALERT_PCT / 100}
            assert set(obs.risk.position_alerts) == expected
            if expected:
                assert any(n.kind == "position" and all(t in n.text for t in expected)
                           for n in obs.notes)
                return
    raise AssertionError("no holding fell far enough in 100 seeds")
