"""The leak audit at test size: the alert alone, and any one other tool's output alone, cannot
decide a case; everything a thorough investigation gathers can.

The same code as `python -m memex.audit.leak_audit` (docs/leak_audit.md states the number of
cases per difficulty it was generated at), on fewer cases of the hardest difficulty (the most
cross-checks to combine, the deepest traces). With fewer cases an accuracy is noisier, so each
ceiling is allowed two standard errors of the sample on top of the documented bar (and the
combined floor two below it); the bar itself is unchanged.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from memex.audit.leak_audit import (
    ALERT_MARGIN,
    COMBINED,
    COMBINED_MIN_ACCURACY,
    VIEW_MARGIN,
    VIEWS,
    collect,
    evaluate_view,
)
from memex.scenarios.rules import ALERT_RULES

CASES = 450  # nine rules: about fifty cases each


def _se(p: float, n: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.02) / n)


@pytest.fixture(scope="module")
def audited():
    cases = collect("hard", CASES, progress=False)
    y = np.asarray([c.label for c in cases])
    rules = [c.rule for c in cases]
    return {view: evaluate_view(view, "hard", [c.features[view] for c in cases], y, rules,
                                top=False) for view in (*VIEWS, COMBINED)}


def test_every_monitoring_rule_is_audited_in_both_classes(audited):
    assert set(audited["alert"].by_rule) == set(ALERT_RULES)
    for rule, (_, majority, n) in audited["alert"].by_rule.items():
        assert n >= 20 and majority < 1.0, (rule, majority, n)  # both labels occur


def test_the_alert_alone_predicts_no_better_than_the_majority_under_every_rule(audited):
    r = audited["alert"]
    assert r.accuracy <= r.majority + ALERT_MARGIN + 2 * _se(r.majority, CASES), r
    for rule, (acc, maj, n) in r.by_rule.items():
        assert acc <= maj + ALERT_MARGIN + 2 * _se(maj, n), (rule, acc, maj, n)


def test_no_single_investigation_view_decides_the_case(audited):
    for view in VIEWS[1:]:
        r = audited[view]
        assert r.accuracy <= r.majority + VIEW_MARGIN + 2 * _se(r.majority, CASES), (view, r)


@pytest.mark.xfail(strict=True, reason=(
    "Known shortfall, bar unchanged: in the world of judgement the label is a count (a SAR iff "
    "two checks stay unexplained) of relations between records; the generic classifier with "
    "cross-record relations (audit/relations.py) reaches about 0.80 at this size (0.86-0.87 at "
    "2,000 cases per difficulty) against 0.97. docs/leak_audit.md reports FAIL. Strict: this "
    "mark must go the day the bar is met."))
def test_the_views_a_thorough_investigation_combines_decide_it(audited):
    r = audited[COMBINED]
    assert r.accuracy >= COMBINED_MIN_ACCURACY - 2 * _se(COMBINED_MIN_ACCURACY, CASES), r
