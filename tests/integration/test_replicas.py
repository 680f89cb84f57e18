"""Replicas: `python -m memex.openenv_server --replicas 2` serves two server
processes on consecutive ports and stops both; the typed client, the evaluation harness and the
AgentOS runtime spread their sessions over a comma list of replicas."""

from __future__ import annotations

import sys
import time

import httpx
import psutil
import pytest

from memex.client import MemexEnv
from memex.envkit.servers import healthy, serve_command
from memex.evaluation.harness import policy_maker, run_grid
from memex.openenv_server import replica_urls
from memex.policies.heuristic import Heuristic
from memex.registry import get_adapter
from memex.testing.builds import require_agent_os

try:
    from memex.agent_os_core.runtime import EnvBatch
except ImportError:  # the Rust extension is not built: the test that needs it says so
    EnvBatch = None

pytestmark = pytest.mark.integration
BOOT_TIMEOUT_S = 600.0  # three interpreters boot at once on a small shared machine


def _healthy(url: str, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if healthy(url):
            return True
        time.sleep(0.2)
    return False


def _ws_sessions(url: str) -> int:
    return httpx.get(url + "/info", timeout=10).json()["ws_sessions"]


@pytest.fixture(scope="module")
def replicas():
    argv = [sys.executable, "-m", "memex.openenv_server", "--port", "{port}", "--replicas", "2",
            "--log-level", "warning"]
    with serve_command(argv, name="replicas", timeout_s=BOOT_TIMEOUT_S,
                       stop_timeout_s=120) as server:
        urls = replica_urls("127.0.0.1", server.port, 2)
        assert _healthy(urls[1], BOOT_TIMEOUT_S), server.log()
        children = psutil.Process(server.process.pid).children()
        assert len(children) == 2
        yield server, urls
    assert server.process.returncode == 0, server.log()  # SIGTERM: a clean stop
    _, alive = psutil.wait_procs(children, timeout=60)
    assert not alive  # the parent stopped every replica on its way out
    for url in urls:
        with pytest.raises(httpx.HTTPError):
            httpx.get(url + "/health", timeout=2)


def test_typed_clients_spread_sessions_and_play_complete_episodes(replicas):
    _, urls = replicas
    clients = [MemexEnv(base_url=",".join(urls)).sync() for _ in range(4)]
    try:
        assert sorted(c.replica for c in clients) == sorted(urls * 2)  # round-robin
        for seed, env in enumerate(clients):
            obs = env.reset(seed=seed, difficulty="easy").observation
            agent = Heuristic()
            agent.reset(obs)
            while not obs.done:
                obs = env.step(agent.act(obs)).observation
            assert obs.error is None and "terminal" in obs.metadata  # a real end, scored
        assert [_ws_sessions(u) for u in urls] == [2, 2]  # sessions landed on both
    finally:
        for env in clients:
            env.close()


def test_the_harness_takes_a_comma_list(replicas):
    _, urls = replicas
    adapter = get_adapter("memex")
    specs = adapter.grid("test", None, ["easy"], 2, 1)[:2]
    rows = run_grid(adapter, [policy_maker(adapter, "heuristic")], specs,
                    base_url=",".join(urls), workers=2, traces="none", progress=False)
    assert len(rows) == 2 and all(r.get("error") in (None, "") for r in rows), rows


def test_the_agent_os_runtime_takes_a_comma_list(replicas):
    _, urls = replicas
    require_agent_os()
    with EnvBatch(",".join(urls), sessions=2) as batch:
        replies = batch.reset([{"seed": 1, "difficulty": "easy"}] * 2)
        assert all(not r.done for r in replies)
        assert [_ws_sessions(u) for u in urls] == [1, 1]
