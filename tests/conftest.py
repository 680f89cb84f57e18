"""Shared fixtures, and the tier marker of every test: `unit` (in process, fast: `make
test-fast` runs `-m unit`), `integration` (real servers, subprocesses, models, many episodes)
and `e2e` (the Glass Box in a browser). A test's tier is its folder (`tests/unit`, ...) unless it
carries a tier marker itself (a statistical run kept beside the unit checks of its module).
`pytest -q` runs all three."""

from __future__ import annotations

from pathlib import Path

import pytest

from memex.envkit.servers import serve

TIERS = ("unit", "integration", "e2e")
# A bound, not a timing check: a server process starts in seconds on a quiet machine, but a
# 2-core machine shared with other jobs can take over a minute to import and bind.
SERVER_START_S = 180.0


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        tier = Path(str(item.path)).parent.name
        if tier in TIERS and not any(item.get_closest_marker(t) for t in TIERS):
            item.add_marker(getattr(pytest.mark, tier))


@pytest.fixture(scope="session")
def memex_server():
    """The real Memex server (uvicorn, subprocess) with the truth overlay enabled."""
    with serve("memex.openenv_server", "--host", "127.0.0.1", "--log-level", "info",
               "--reveal-truth-after-done", timeout_s=SERVER_START_S) as server:
        yield server


@pytest.fixture(scope="session")
def heuristic_llm():
    """TEST DOUBLE: an OpenAI-compatible server whose model is the heuristic investigator."""
    with serve("memex.testing.heuristic_openai_server", health_path="/v1/models",
               timeout_s=SERVER_START_S) as server:
        yield server
