from __future__ import annotations

import pytest

from memex.testing.servers import serve


@pytest.fixture(scope="session")
def memex_server():
    """The real Memex server (uvicorn, subprocess) with the truth overlay enabled."""
    with serve("memex.openenv_server", "--host", "127.0.0.1", "--log-level", "info",
               "--reveal-truth-after-done") as server:
        yield server


@pytest.fixture(scope="session")
def heuristic_llm():
    """TEST DOUBLE: an OpenAI-compatible server whose model is the heuristic investigator."""
    with serve("memex.testing.heuristic_openai_server", health_path="/v1/models") as server:
        yield server
