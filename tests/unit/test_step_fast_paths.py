"""The step's fast path — the memoised manual search (a pure function of the query) — gives
observations byte-identical to the uncached search it replaces (issue #12)."""

from __future__ import annotations

import pytest

from memex.models import MemexAction
from memex.server import tools
from memex.server.environment import MemexEnvironment

pytestmark = pytest.mark.unit
QUERIES = ("structuring cash deposits", "wire transfer layering", "cash", "the", "PEP",
           "trade invoice over-pricing")


def _observations() -> list[str]:
    env = MemexEnvironment()
    env.reset(seed=3, difficulty="easy")
    return [env.step(MemexAction(tool="search_compliance_manual", arguments={"query": q})
                     ).model_dump_json() for q in QUERIES + QUERIES]  # round 2: cache hits


def test_memoised_manual_search_matches_the_uncached_search(monkeypatch):
    cached = _observations()
    monkeypatch.setattr(tools.MANUAL, "search", lambda q, k: list(
        tools._Manual._ranked.__wrapped__(tools.MANUAL, q, k)))
    assert _observations() == cached
    assert tools.MANUAL._ranked.cache_info().hits >= len(QUERIES)
