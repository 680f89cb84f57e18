"""The step's fast paths give what the plain code they replace gives (issue #12): the memoised
manual search (a pure function of the query) gives byte-identical observations, and the fast
scan for case IDs in a tool result (`scenarios.ids.known_ids_in`) finds exactly what
`ID_PATTERN` finds in the result's JSON."""

from __future__ import annotations

import json
import random

import pytest

from memex.evaluation.runs import run_episode
from memex.models import MemexAction
from memex.policies.heuristic import Heuristic
from memex.scenarios import SUSPICIOUS_KINDS
from memex.scenarios.ids import ID_PATTERN, known_ids_in
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


def _reference_ids(content, known) -> frozenset[str]:
    return frozenset(i for i in ID_PATTERN.findall(json.dumps(content)) if i in known)


def test_revealed_ids_match_the_id_pattern_on_every_page_of_real_episodes(monkeypatch):
    env = MemexEnvironment()
    pages = []
    revealed = env._revealed

    def checked(content):
        pages.append((content, revealed(content), env._ix.ids))
        return pages[-1][1]

    monkeypatch.setattr(env, "_revealed", checked)
    for i, kind in enumerate(SUSPICIOUS_KINDS):
        run_episode(Heuristic(), seed=i, difficulty="hard", kind=kind, env=env)
    assert len(pages) > 50
    for content, fast, known in pages:
        assert fast == _reference_ids(content, known)
    assert sum(len(fast) for _, fast, _ in pages) > 200  # the pages did carry IDs


def test_known_ids_in_text_agrees_with_the_pattern_on_adversarial_text():
    known = {"TXN-0A1B2C", "WL-FFFFFF", "CASE-123456", "ACC-ABCDEF", "ENT-000001"}
    parts = [*known, "XTXN-0A1B2C", "TXN-0A1B2CD", "TXN-0a1b2c", "-", "_", " ", "é", "\n",
             "2024-03-01", "ACC-ABCDEF-123456", "EF-123456", "ENT-00000", "ASE-123456", "\"",
             "TXN-", "0A1B2C", "WL-FFFFFF_", "(", ")", "ACC"]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(parts) for _ in range(rng.randrange(1, 9)))
        assert known_ids_in(text, known) == {i for i in ID_PATTERN.findall(text) if i in known}
