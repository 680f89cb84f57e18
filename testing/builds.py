"""Optional builds the tests need: skip with the reason when one is missing, unless the run
requires it (`make test` sets `MEMEX_REQUIRE_AGENT_OS=1`, and `MEMEX_REQUIRE_E2E=1` for the
browser tests), in which case the test fails."""

from __future__ import annotations

import importlib.util
import os

import pytest

AGENT_OS_REASON = ("the AgentOS runtime extension `agent_os_runtime` is not built (`make test` "
                   "builds it; or `.venv/bin/maturin develop --release -m "
                   "agent_os_core/Cargo.toml`)")


def require_build(module: str, env_var: str, reason: str) -> None:
    """Skip the calling test module when `module` cannot be imported, or fail it when the
    environment variable `env_var` is "1"."""
    if importlib.util.find_spec(module) is not None:
        return
    if os.environ.get(env_var) == "1":
        pytest.fail(f"{reason} ({env_var}=1)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def require_agent_os() -> None:
    require_build("agent_os_runtime", "MEMEX_REQUIRE_AGENT_OS", AGENT_OS_REASON)
