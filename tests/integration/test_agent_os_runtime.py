"""The Rust/Tokio runtime (`agent_os_runtime`) against real Memex servers: round trips, ordering,
sharding over replicas, typed errors, timeouts, and servers that stop or die mid-call."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from memex.testing.builds import require_agent_os

require_agent_os()

from memex.agent_os_core.runtime import (
    CallTimeout,
    ConnectError,
    ConnectionLost,
    EnvBatch,
    Runtime,
    ServerError,
    SessionClosed,
    SessionError,
)
from memex.envkit.servers import free_port, healthy, serve
from memex.models import MemexAction
from memex.server.environment import MemexEnvironment

REVIEW = {"tool": "review_alert", "arguments": {}}


@pytest.fixture
def own_server():
    """A server this test may stop or kill."""
    with serve("memex.openenv_server", "--host", "127.0.0.1", "--log-level", "warning") as s:
        yield s


def test_batch_round_trip_matches_the_in_process_environment(memex_server):
    seeds = [11, 12, 13, 14, 15, 16]
    with EnvBatch(memex_server.url, sessions=len(seeds)) as batch:
        resets = batch.reset([{"seed": s, "difficulty": "easy"} for s in seeds])
        assert [r.session for r in resets] == batch.ids, "results come back in order"
        for r, seed in zip(resets, seeds, strict=True):
            local = MemexEnvironment().reset(seed=seed, difficulty="easy")
            assert r.reward is None and not r.done
            assert r.observation.result == local.result
            assert r.observation.context == local.context
        steps = batch.step([MemexAction(tool="review_alert")] * len(seeds))
        assert all(s.observation.step == 1 and s.reward is not None for s in steps)
        assert len({s.observation.result["alert_id"] for s in steps}) == len(seeds)
        closes = batch.step([{"tool": "close_alert",
                              "arguments": {"reason": "test", "cited_sections": []}}] * 6)
        for c in closes:
            assert c.done
            assert c.metadata["terminal"]["outcome"] in ("TP", "TN", "FP", "FN")
            assert c.reward == c.metadata["terminal"]["score"]


def test_sessions_are_sharded_round_robin_over_replicas(memex_server, own_server):
    with Runtime([memex_server.url, own_server.url]) as rt:
        ids = rt.open(6)
        assert [rt.url_of(i) for i in ids] == [memex_server.url, own_server.url] * 3
        replies = rt.reset(ids, {"seed": 3, "difficulty": "easy"})
        assert len({r.data for r in replies}) == 1, "same seed, same case on every replica"
        assert all(r.json()["step"] == 1 for r in rt.step(ids, [REVIEW] * 6))


def test_invalid_calls_raise_clear_python_errors(memex_server):
    with Runtime(memex_server.url) as rt:
        ids = rt.open(2)
        rt.reset(ids, {"seed": 2, "difficulty": "easy"})
        with pytest.raises(ValueError, match="listed twice"):
            rt.step([ids[0], ids[0]], [REVIEW, REVIEW])
        with pytest.raises(ValueError, match="2 sessions but 1 actions"):
            rt.step(ids, [REVIEW])
        with pytest.raises(TypeError, match="not JSON-serialisable"):
            rt.step(ids[:1], [{"tool": "review_alert", "arguments": {"x": object()}}])
        with pytest.raises(SessionClosed) as info:
            rt.step([999], [REVIEW])
        assert info.value.session == 999 and info.value.kind == "closed"
        # A bad action is the environment's typed error observation, not a transport error.
        bad = rt.step(ids[:1], [{"tool": "no_such_tool", "arguments": {}}])[0]
        assert bad.json()["error"]["code"] == "unknown_tool"
        rt.close(ids[:1])
        assert rt.sessions == ids[1:]
        out = rt.step(ids, [REVIEW, REVIEW], return_exceptions=True)
        assert isinstance(out[0], SessionClosed) and out[1].json()["step"] == 1
    with pytest.raises(ValueError, match="not a URL"):
        Runtime("localhost:1")


def test_unreachable_server_is_a_connect_error():
    with Runtime(f"http://127.0.0.1:{free_port()}", connect_timeout_s=2) as rt:
        started = time.monotonic()
        with pytest.raises(ConnectError) as info:
            rt.open(3)
        assert time.monotonic() - started < 5
        assert "cannot connect" in str(info.value) and rt.sessions == []


def test_server_at_capacity_is_reported_at_open_and_nothing_is_left_open():
    with serve("memex.openenv_server", "--host", "127.0.0.1", "--log-level", "warning",
               "--max-sessions", "2") as server, Runtime(server.url) as rt:
        with pytest.raises(SessionError) as info:
            rt.open(3)
        assert "capacity" in str(info.value).lower() or "closed" in str(info.value).lower()
        assert rt.sessions == []
        assert len(rt.open(2)) == 2, "the refused attempt released its slots"


def test_a_stopped_server_times_out_and_the_session_survives(own_server):
    pid = own_server.process.pid
    with Runtime(own_server.url, timeout_s=30) as rt:
        ids = rt.open(2)
        rt.reset(ids, {"seed": 5, "difficulty": "easy"})
        os.kill(pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            with pytest.raises(CallTimeout) as info:
                rt.step(ids, [REVIEW, REVIEW], timeout_s=0.5)
            assert time.monotonic() - started < 3
            assert info.value.session == ids[0] and info.value.url == own_server.url
            assert rt.stats()["timeouts"] == 2
        finally:
            os.kill(pid, signal.SIGCONT)
        # The late replies are discarded; the next call gets its own reply. The timed-out step
        # was applied by the server once it resumed (the documented semantics of a timeout).
        state = rt.state(ids)[0].json()
        assert state["step_count"] == 1
        assert rt.step(ids, [REVIEW, REVIEW])[0].json()["step"] == 2


def test_a_server_killed_mid_call_fails_fast_with_connection_lost(own_server):
    proc = own_server.process
    with Runtime(own_server.url, timeout_s=60, reconnect_attempts=1,
                 connect_timeout_s=2) as rt:
        ids = rt.open(4)
        rt.reset(ids, {"seed": 9, "difficulty": "easy"})
        os.kill(proc.pid, signal.SIGSTOP)  # the step below is in flight when the server dies
        timer = threading.Timer(0.5, proc.kill)
        timer.start()
        started = time.monotonic()
        out = rt.step(ids, [REVIEW] * 4, return_exceptions=True)
        elapsed = time.monotonic() - started
        timer.join()
        assert elapsed < 10, "a dead server must not hang the call until the 60 s timeout"
        assert all(isinstance(e, ConnectionLost) for e in out)
        assert [e.session for e in out] == ids
        assert all(e.url == own_server.url and e.kind == "connection_lost" for e in out)
        with pytest.raises(ConnectionLost, match="call reset"):
            rt.step(ids[:1], [REVIEW])
        with pytest.raises(ConnectionLost, match="reconnecting failed"):
            rt.reset(ids[:1])


def test_reset_reconnects_after_the_server_comes_back():
    with serve("memex.openenv_server", "--host", "127.0.0.1", "--log-level", "warning") as first:
        rt = Runtime(first.url, reconnect_attempts=5)
        ids = rt.open(2)
        rt.reset(ids, {"seed": 1, "difficulty": "easy"})
    # The server is gone; start a new one on the same port.
    proc = subprocess.Popen([sys.executable, "-m", "memex.openenv_server", "--host",
                             "127.0.0.1", "--port", str(first.port), "--log-level", "warning"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not healthy(first.url):
            assert time.monotonic() < deadline, "restarted server not healthy"
            time.sleep(0.1)
        with pytest.raises(ConnectionLost):
            rt.step(ids[:1], [REVIEW])
        replies = rt.reset(ids, {"seed": 1, "difficulty": "easy"})
        assert [r.json()["step"] for r in replies] == [0, 0]
        assert rt.stats()["reconnects"] == 2
        assert rt.step(ids, [REVIEW] * 2)[1].json()["step"] == 1
    finally:
        rt.shutdown()
        proc.kill()
        proc.wait()


def test_server_error_frames_carry_the_code(memex_server):
    with Runtime(memex_server.url) as rt:
        ids = rt.open(1)
        with pytest.raises(ServerError) as info:
            rt.reset(ids, {"seed": 1, "difficulty": "impossible"})
        assert info.value.code == "EXECUTION_ERROR" and info.value.session == ids[0]
        assert rt.reset(ids, {"seed": 1, "difficulty": "easy"})[0].json()["step"] == 0
