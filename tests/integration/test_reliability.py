"""A server you can share: capacity that frees itself, bounded inputs, no 5xx,
honest clients. One fast regression test per measured defect (1-8), then the minor ones.

Most run the app in process (FastAPI's TestClient, HTTP and WebSocket); the reaping and
reconnect tests need a real uvicorn server (`serve_app`: in a thread of this process, so a
restart takes a second, not an interpreter boot).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import threading
import time

import httpx
import pytest
import websockets
from fastapi.testclient import TestClient
from websockets.sync.client import connect as ws_connect

from memex.client import EpisodeLostError, MemexEnv
from memex.envkit.declarations import MAX_ARG_CHARS
from memex.envkit.guards import (
    DEFAULT_MAX_BODY_BYTES,
    OFF_LOOP_ARG_CHARS,
    WS_IDLE_CLOSE_CODE,
    run_step,
)
from memex.envkit.servers import free_port, serve_app
from memex.models import MemexAction
from memex.server.app import create_memex_app
from memex.server.environment import MemexEnvironment
from memex.server.tools import MAX_NAME_CHARS

CLOSE = {"tool": "close_alert", "arguments": {"reason": "explained", "cited_sections": []}}


def _client(**kwargs) -> TestClient:
    kwargs.setdefault("frontend_dir", None)
    kwargs.setdefault("reveal_truth_after_done", True)
    return TestClient(create_memex_app(**kwargs))


def _reset(http, **body) -> str:
    r = http.post("/reset", json={"seed": 2, "difficulty": "easy", **body})
    assert r.status_code == 200, r.text
    return r.json()["episode_id"]


def _step(http, eid: str, action: dict) -> httpx.Response:
    return http.post("/step", json={"episode_id": eid, "action": action})


# ---- 1. capacity that frees itself -------------------------------------------------------------

def test_finished_http_episode_frees_its_slot_at_once_and_stays_readable():
    http = _client(max_sessions=2)
    finished = []
    for _ in range(6):  # three times the pool, every episode ended
        eid = _reset(http)
        assert _step(http, eid, CLOSE).json()["done"]
        finished.append(eid)
    assert len(http.app.state.http_episodes) == 0
    for eid in finished[-2:]:  # the finished store serves /state and /truth
        assert http.get("/state", params={"episode_id": eid}).json()["done"]
        assert http.get(f"/episodes/{eid}/truth").status_code == 200
        assert _step(http, eid, CLOSE).json()["observation"]["error"]["code"] == "episode_done"


def test_full_pool_answers_503_with_retry_after_and_evicts_only_idle_episodes():
    http = _client(max_sessions=2)
    a, b = _reset(http), _reset(http)
    r = http.post("/reset", json={})
    assert r.status_code == 503 and int(r.headers["Retry-After"]) >= 1
    episodes = http.app.state.http_episodes
    episodes._episodes[a].last_used -= episodes.evict_idle_s + 1  # a: idle, least recent
    c = _reset(http)  # evicts a
    assert http.get("/state", params={"episode_id": a}).status_code == 404
    assert {b, c} == set(episodes._episodes)


def test_reads_do_not_extend_an_http_episodes_life():
    http = _client(max_sessions=4, idle_timeout_s=60)
    eid = _reset(http)
    ep = http.app.state.http_episodes._episodes[eid]
    before = ep.last_used
    http.get("/state", params={"episode_id": eid})
    http.get(f"/episodes/{eid}/truth")
    assert ep.last_used == before


# ---- 2. bounded inputs ----------------------------------------------------------------------

def test_oversized_body_gets_413_before_any_work():
    http = _client()
    eid = _reset(http)
    big = "x" * (DEFAULT_MAX_BODY_BYTES + 1)
    r = _step(http, eid, {"tool": "check_watchlist", "arguments": {"name": big}})
    assert r.status_code == 413
    assert http.get("/state", params={"episode_id": eid}).json()["step_count"] == 0


def test_long_arguments_are_rejected_fast_and_never_echoed():
    http = _client()
    eid = _reset(http)
    name = "A" * (MAX_ARG_CHARS * 50)  # 100 kB: under the body limit, over the argument bound
    start = time.perf_counter()
    r = _step(http, eid, {"tool": "check_watchlist", "arguments": {"name": name}})
    assert time.perf_counter() - start < 1.0
    assert r.status_code == 200 and len(r.content) < 20_000
    assert r.json()["observation"]["error"]["code"] == "invalid_arguments"
    assert _step(http, eid, {"tool": "review_alert"}).status_code == 200


def test_every_string_and_list_argument_is_bounded_in_the_published_schema():
    tools = _client().get("/schema").json()["action"]["tools"]

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "string" and "enum" not in node:
                assert node.get("maxLength"), node
            if node.get("type") in ("array", "object") and "additionalProperties" not in node:
                assert node.get("maxItems") or node.get("maxProperties") or "properties" in node
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(tools)
    note = next(t for t in tools if t["name"] == "write_to_case_file")
    assert note["parameters"]["properties"]["note"]["maxLength"] == MAX_ARG_CHARS


# ---- 3. reaped WS sessions are closed, with a reason; the cap holds ---------------------------

@pytest.fixture(scope="module")
def short_lived_server():
    # A real uvicorn server (in a thread of this process: no second interpreter to boot).
    with serve_app(create_memex_app(max_sessions=2, idle_timeout_s=1,
                                    frontend_dir=None)) as server:
        yield server


def _ws_reset(ws) -> dict:
    with contextlib.suppress(websockets.ConnectionClosed):  # refused: its error is queued
        ws.send(json.dumps({"type": "reset", "data": {"seed": 2, "difficulty": "easy"}}))
    return json.loads(ws.recv(timeout=30))


def test_reaped_ws_session_is_closed_with_a_reason_and_the_cap_holds(short_lived_server):
    url = short_lived_server.url.replace("http", "ws") + "/ws"
    old = [ws_connect(url) for _ in range(2)]
    for ws in old:
        assert _ws_reset(ws)["type"] == "observation"
    time.sleep(2.5)  # past the idle timeout: the sweep closes both sockets
    for ws in old:
        with pytest.raises(websockets.ConnectionClosed) as closed:
            ws.send(json.dumps({"type": "state"}))
            ws.recv(timeout=10)
        assert closed.value.rcvd.code == WS_IDLE_CLOSE_CODE and "idle" in closed.value.rcvd.reason
    fresh = [ws_connect(url) for _ in range(2)]
    replies = [_ws_reset(ws) for ws in fresh]
    fresh.append(ws_connect(url))
    replies.append(_ws_reset(fresh[-1]))
    assert [r["type"] for r in replies].count("observation") == 2  # the cap (2) holds
    assert any(r.get("data", {}).get("code") == "CAPACITY_REACHED" for r in replies)
    for ws in fresh:
        ws.close()


def test_typed_client_raises_when_its_session_was_reaped(short_lived_server):
    with MemexEnv(base_url=short_lived_server.url).sync() as env:
        env.reset(seed=2, difficulty="easy")
        time.sleep(2.5)
        with pytest.raises(EpisodeLostError, match=r"idle|lost|closed"):
            env.step(MemexAction(tool="review_alert"))
        assert not env.reset(seed=2, difficulty="easy").done  # usable again after reset


# ---- 4. HTTP MCP sessions have their own pool ------------------------------------------------

def test_http_mcp_sessions_cannot_fill_the_ws_pool(monkeypatch):
    monkeypatch.setenv("MEMEX_MAX_MCP_SESSIONS", "2")
    http = _client(max_sessions=2)
    create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
    replies = [http.post("/mcp", json=create).json() for _ in range(6)]
    assert sum("result" in r for r in replies) == 2
    with http.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 2, "difficulty": "easy"}}))
        assert ws.receive_json()["type"] == "observation"
    assert http.get("/info").json()["mcp_sessions"] == 2


# ---- 5. text that cannot be encoded is rejected at the boundary ------------------------------

def test_lone_surrogate_is_rejected_and_the_episode_stays_usable():
    http = _client()
    eid = _reset(http)
    body = ('{"episode_id": "' + eid + '", "action": {"tool": "write_to_case_file", '
            '"arguments": {"note": "\\ud800"}}}')
    r = http.post("/step", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert http.get("/state", params={"episode_id": eid}).json()["step_count"] == 0
    r = _step(http, eid, {"tool": "write_to_case_file", "arguments": {"note": "fine"}})
    assert r.status_code == 200 and r.json()["observation"]["error"] is None
    with http.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 2}}))
        assert ws.receive_json()["type"] == "observation"
        ws.send_text('{"type": "step", "data": {"tool": "write_to_case_file", '
                     '"arguments": {"note": "\\ud800"}}}')
        assert ws.receive_json()["type"] == "error"
        ws.send_text(json.dumps({"type": "step", "data": {"tool": "review_alert"}}))
        reply = ws.receive_json()
        assert reply["type"] == "observation" and reply["data"]["observation"]["step"] == 1


# ---- 6. built-in agent after manual steps ------------------------------------------------------

def test_agent_step_after_a_manual_step_continues_the_episode():
    http = _client()
    eid = _reset(http)
    for _ in range(2):
        assert http.post(f"/episodes/{eid}/agent-step").status_code == 200
    assert _step(http, eid, {"tool": "review_alert"}).status_code == 200
    r = http.post(f"/episodes/{eid}/agent-step")
    assert r.status_code == 200 and not r.json()["done"]
    r = http.post(f"/episodes/{eid}/agent-step")
    assert r.status_code == 200
    assert r.json()["action"]["tool"] != "close_alert"  # not a "no decision reached" closure


# ---- 7. per-episode memory is bounded -----------------------------------------------------------

def test_episode_keeps_call_digests_and_drops_pages_evicted_from_ram():
    env = MemexEnvironment()
    env.reset(seed=2, difficulty="easy", ram_pages=2)
    for i in range(12):
        name = f"name {i} ".ljust(MAX_NAME_CHARS, "x")  # as long as the schema allows
        assert env.step(MemexAction(tool="check_watchlist", arguments={"name": name})).error is None
    # Each long call is kept as a 16-byte digest (after a marker byte), not its JSON.
    assert len(env._calls) == 12
    assert all(isinstance(k, bytes) and len(k) == 17 and k[0] == 0 for k in env._calls)
    assert len(env._os.ram) == len(env._ram_views) == 2  # evicted pages and views dropped


# ---- 8. the typed client never fakes an episode end --------------------------------------------

def test_typed_client_raises_episode_lost_after_a_server_restart():
    # A real uvicorn server in this process (no interpreter to boot): stopped, then a fresh
    # one — a new app, holding no sessions — started on the same port.
    port = free_port()
    with contextlib.closing(MemexEnv(base_url=f"http://127.0.0.1:{port}").sync()) as env:
        with serve_app(create_memex_app(frontend_dir=None), port=port):
            env.reset(seed=2, difficulty="easy")
            env.step(MemexAction(tool="review_alert"))
        with serve_app(create_memex_app(frontend_dir=None), port=port):
            with pytest.raises(EpisodeLostError):
                env.step(MemexAction(tool="review_alert"))
            with pytest.raises(EpisodeLostError):  # still lost until reset
                env.step(MemexAction(tool="review_alert"))
            assert env.reset(seed=2, difficulty="easy").observation.step == 0


# ---- minor ------------------------------------------------------------------------------------

def test_unknown_ids_and_invalid_inputs_are_not_echoed_unbounded():
    http = _client()
    long_id = "x" * 30_000
    for r in (http.get("/state", params={"episode_id": long_id}),
              http.get(f"/episodes/{long_id}/truth"), http.delete(f"/episodes/{long_id}")):
        assert r.status_code == 404 and len(r.content) < 1_000
    r = http.post("/step", json={"episode_id": long_id, "action": []})
    assert r.status_code == 422 and len(r.content) < 2_000


def test_seed_must_be_a_strict_integer():
    http = _client()
    for seed in (True, "7", 1.5, -1):
        assert http.post("/reset", json={"seed": seed}).status_code == 422
    env = MemexEnvironment()
    with pytest.raises(ValueError):
        env.reset(seed=True)


def test_binary_and_deeply_nested_ws_frames_keep_the_session():
    http = _client()
    with http.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 2}}))
        assert ws.receive_json()["type"] == "observation"
        ws.send_bytes(b"\x00\x01")
        assert ws.receive_json()["type"] == "error"
        ws.send_text("[" * 100_000 + "]" * 100_000)
        assert ws.receive_json()["type"] == "error"
        ws.send_text(json.dumps({"type": "step", "data": {"tool": "review_alert"}}))
        assert ws.receive_json()["data"]["observation"]["step"] == 1
    deep = '{"episode_id": "x", "action": ' + "[" * 100_000 + "]" * 100_000 + "}"
    r = http.post("/step", content=deep, headers={"content-type": "application/json"})
    assert r.status_code in (400, 413, 422)


def test_bearer_token_guards_every_route_but_health(monkeypatch):
    monkeypatch.setenv("MEMEX_API_TOKEN", "s3cret")
    http = _client()
    assert http.get("/health").status_code == 200
    for path in ("/info", "/schema", "/episodes/abcd/truth"):
        assert http.get(path).status_code == 401
    assert http.post("/reset", json={}).status_code == 401
    auth = {"Authorization": "Bearer s3cret"}
    assert http.get("/info", headers=auth).status_code == 200
    with pytest.raises(Exception), http.websocket_connect("/ws") as ws:  # noqa: B017
        ws.receive_json()
    with http.websocket_connect("/ws?access_token=s3cret") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 2}}))
        assert ws.receive_json()["type"] == "observation"
    # Every HTTP route of the app, each method: 401 without the token, let through with it.
    routes = [(m, re.sub(r"\{[^}]+\}", "abcd", r.path)) for r in http.app.routes
              for m in sorted(getattr(r, "methods", None) or ()) if r.path not in ("/health", "/")]
    assert len(routes) > 10
    for method, path in routes:
        assert http.request(method, path).status_code == 401, (method, path)
        assert http.request(method, path, headers=auth).status_code != 401, (method, path)
    # The Glass Box's page and assets are code, not data: served without it (GET only).
    assert http.get("/").status_code != 401 and http.get("/assets/x.js").status_code != 401
    assert http.post("/").status_code == 401


def test_info_counts_ws_sessions_and_the_truth_endpoint_is_off_by_default():
    http = _client(reveal_truth_after_done=False)
    eid = _reset(http)
    _step(http, eid, CLOSE)
    assert http.get(f"/episodes/{eid}/truth").status_code == 403
    with http.websocket_connect("/ws") as ws:
        ws.send_text(json.dumps({"type": "reset", "data": {"seed": 2}}))
        ws.receive_json()
        assert http.get("/info").json()["ws_sessions"] == 1


# ---- expensive work off the event loop, under a per-step deadline -----------------------------

def test_a_step_past_the_deadline_gets_a_typed_error_and_the_episode_stays_usable():
    http = _client(step_deadline_s=1e-9)  # every read-only tool call overruns it
    first = http.post("/reset", json={"seed": 2, "difficulty": "easy"}).json()
    eid, subject = first["episode_id"], first["observation"]["result"]["subject"]["entity_id"]
    r = _step(http, eid, {"tool": "get_customer_profile", "arguments": {"entity_id": subject}})
    assert r.status_code == 200
    obs = r.json()["observation"]
    assert obs["error"]["code"] == "deadline_exceeded" and obs["result"] is None
    assert len(obs["context"]["ram"]) == 1  # nothing of the dropped result was kept
    assert http.get("/state", params={"episode_id": eid}).json()["step_count"] == 1
    assert _step(http, eid, CLOSE).json()["done"]  # the episode goes on to its end
    with http.websocket_connect("/ws") as ws:  # the WebSocket path has the same deadline
        ws.send_json({"type": "reset", "data": {"seed": 2, "difficulty": "easy"}})
        ws.receive_json()
        ws.send_json({"type": "step", "data": {"tool": "get_customer_profile",
                                               "arguments": {"entity_id": subject}}})
        reply = ws.receive_json()["data"]["observation"]
        assert reply["error"]["code"] == "deadline_exceeded"


def test_steps_with_large_arguments_run_off_the_event_loop():
    env = MemexEnvironment()
    env.reset(seed=2, difficulty="easy")
    threads = []
    real_step = env.step

    def step(action, timeout_s=None):  # the real step, noting the thread it ran on
        threads.append(threading.current_thread().name)
        return real_step(action, timeout_s=timeout_s)

    small = MemexAction(tool="search_compliance_manual", arguments={"query": "cash"})
    large = MemexAction(tool="search_compliance_manual",
                        arguments={"query": "cash deposits " * (OFF_LOOP_ARG_CHARS // 10)})

    async def run() -> float:
        await run_step(step, small, 2.0)
        await run_step(step, large, 2.0)
        # A step that blocks for 0.3 s does not stop the loop serving others meanwhile.
        ticks, gaps = [], []

        async def ticker():
            last = time.monotonic()
            while len(ticks) < 1000:
                await asyncio.sleep(0.01)
                now = time.monotonic()
                ticks.append(now)
                gaps.append(now - last)
                last = now

        task = asyncio.create_task(ticker())
        await run_step(lambda a, timeout_s: time.sleep(0.3), large, None)
        task.cancel()
        return max(gaps)

    worst_gap = asyncio.run(run())
    assert threads[0] == threading.current_thread().name  # small: inline, on the loop
    assert threads[1].startswith("env-step")  # large: a worker thread
    assert worst_gap < 0.25  # the loop kept ticking through the 0.3 s step
