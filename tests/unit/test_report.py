"""The report writer's aggregation: pass^k and means where defined."""

from __future__ import annotations

import pytest

from memex.evaluation.report import pass_hat_k, summarize


def test_pass_hat_k_on_a_hand_made_example():
    # Three cases tried four times: always, half the time, never.
    trials = [(4, 4), (4, 2), (4, 0)]
    assert pass_hat_k(trials, 1) == pytest.approx((1 + 0.5 + 0) / 3)
    assert pass_hat_k(trials, 2) == pytest.approx((1 + 1 / 6 + 0) / 3)  # C(2,2)/C(4,2)
    assert pass_hat_k(trials, 3) == pytest.approx(1 / 3)  # C(2,3) = 0
    assert pass_hat_k(trials, 4) == pytest.approx(1 / 3)
    assert pass_hat_k(trials, 5) is None  # no case was tried five times
    assert pass_hat_k([(3, 3), (1, 0)], 2) == pytest.approx(1.0)  # only cases with n >= k count


def test_summary_averages_each_measure_where_defined():
    rows = [{"task": "a", "difficulty": "easy", "seed": 1, "success": 1.0, "return": 0.5,
             "steps": 3.0, "sar_precision": None},
            {"task": "a", "difficulty": "easy", "seed": 1, "success": 0.0, "return": -0.5,
             "steps": 5.0, "sar_precision": 0.0}]
    s = summarize(rows, ["sar_precision"])
    assert s["success"] == 0.5 and s["return"] == 0.0 and s["steps"] == 4.0
    assert s["sar_precision"] == 0.0  # the one episode where it is defined
    assert s["pass^1"] == 0.5 and s["pass^2"] == 0.0 and s["pass^3"] is None
