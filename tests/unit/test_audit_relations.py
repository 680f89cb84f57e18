"""The leak audit's cross-record relations: computed for the combined view only, keyed by field
paths, and each one true exactly when the records relate (synthetic views, no world needed)."""

from __future__ import annotations

import math
from datetime import date

import pytest

from memex.audit.leak_audit import featurise

pytestmark = pytest.mark.unit

AS_OF = date(2024, 3, 12)


def _views(fee: float, member: str, id_number: str) -> dict:
    return {
        "doc": {"amount_usd": 1_100.00, "id_number": "RC12345678", "holder": "Ana Lima"},
        "flow": {"amount_usd": 1_000.00, "lines": [{"amount_usd": fee}, {"amount_usd": 433.21}]},
        "other": {"co_user": "Ana Lima", "member": member, "ref": id_number, "price": 1_040.0},
    }


def _combined(views: dict) -> dict[str, float]:
    return featurise(views, tuple(views), "R", AS_OF)


def test_a_difference_equal_to_a_third_amount_is_a_relation_keyed_by_its_paths():
    f = _combined(_views(100.00, "Ana Lima", "RC12345678"))
    assert f["diff:doc.amount_usd-flow.amount_usd=flow.lines[].amount_usd"] == 1
    g = _combined(_views(100.02, "Ana Lima", "RC12345678"))  # two cents off: no relation
    assert not any(k.startswith("diff:doc.amount_usd-flow.amount_usd") for k in g)
    assert f["rel:diff_matches"] > g["rel:diff_matches"]


def test_identifiers_equal_or_differ_across_views():
    same = _combined(_views(100.0, "Ana Lima", "RC12345678"))
    other = _combined(_views(100.0, "Rui Costa", "RC87654321"))
    assert same["eq:doc.id_number|other.ref"] == 1
    assert "ne:doc.id_number|other.ref" not in same
    assert other["ne:doc.id_number|other.ref"] == 1
    assert "eq:doc.id_number|other.ref" not in other
    assert same["eq:doc.holder|other.member"] == 1
    assert other["ne:doc.holder|other.member"] == 1


def test_figures_of_two_views_have_a_signed_ratio_and_closeness_buckets():
    f = _combined(_views(100.0, "Ana Lima", "RC12345678"))
    assert f["ratio:doc.amount_usd/other.price"] == pytest.approx(math.log(1_100 / 1_040))
    assert f["within:doc.amount_usd/other.price:20"] == 1.0
    assert "within:doc.amount_usd/other.price:5" not in f  # 5.8% apart
    assert "within:doc.amount_usd/other.price:1" not in f


def test_single_views_get_no_cross_record_relations():
    views = _views(100.0, "Ana Lima", "RC12345678")
    for name in views:
        f = featurise(views, (name,), "R", AS_OF)
        assert not [k for k in f if k.split(":")[0] in {"diff", "eq", "ne", "ratio", "within",
                                                        "rel"}], name
