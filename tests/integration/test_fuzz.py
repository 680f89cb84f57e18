"""Property-based fuzzing of actions over HTTP and WebSocket against the real server: only
typed errors come back, and the server keeps serving."""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import connect

from memex.server.tools import TOOL_NAMES

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) |
    st.text(max_size=30) | st.sampled_from(["ENT-000000", "TXN-ABCDEF", "2.1", "JOB-1"]),
    lambda children: st.lists(children, max_size=4) |
    st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12)
tools = st.sampled_from(TOOL_NAMES) | st.text(max_size=20)
arguments = st.dictionaries(
    st.sampled_from(["entity_id", "account_id", "transaction_id", "invoice_id", "name", "query",
                     "section_id", "job_id", "note", "evidence_ids", "subjects", "typology",
                     "findings", "cited_sections", "narrative", "reason", "limit", "channel"]) |
    st.text(max_size=10), json_values, max_size=5)
actions = st.fixed_dictionaries({"tool": tools, "arguments": arguments}) | st.dictionaries(
    st.text(max_size=8), json_values, max_size=3)
FUZZ = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])


@pytest.fixture(scope="module")
def http(memex_server):
    with httpx.Client(base_url=memex_server.url, timeout=30) as client:
        yield client


@FUZZ
@given(action=actions, seed=st.integers(0, 50))
def test_http_step_fuzz_returns_typed_errors_only(http, action, seed):
    eid = http.post("/reset", json={"seed": seed, "difficulty": "easy"}).json()["episode_id"]
    r = http.post("/step", json={"episode_id": eid, "action": action})
    assert r.status_code in (200, 422), r.text
    if r.status_code == 200:
        obs = r.json()["observation"]
        assert obs["error"] is None or set(obs["error"]) == {"code", "message"}
    else:
        assert isinstance(r.json()["detail"], list)
    http.delete(f"/episodes/{eid}")
    assert http.get("/health").json()["status"] == "healthy"


@FUZZ
@given(body=json_values)
def test_http_reset_fuzz_never_500s(http, body):
    r = http.post("/reset", json=body)
    assert r.status_code in (200, 422), r.text
    if r.status_code == 200:
        http.delete(f"/episodes/{r.json()['episode_id']}")


@FUZZ
@given(messages=st.lists(st.one_of(
    st.fixed_dictionaries({"type": st.just("step"), "data": actions}),
    st.fixed_dictionaries({"type": st.sampled_from(["reset", "state", "bogus"]),
                           "data": json_values}),
    st.text(max_size=40)), min_size=1, max_size=6))
def test_ws_fuzz_returns_typed_responses_and_the_session_survives(memex_server, messages):
    uri = memex_server.url.replace("http", "ws") + "/ws"
    with connect(uri, max_size=None) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
        assert json.loads(ws.recv())["type"] == "observation"
        for message in messages:
            ws.send(message if isinstance(message, str) else json.dumps(message))
            reply = json.loads(ws.recv())
            assert reply["type"] in ("observation", "state", "error")
            if reply["type"] == "error":
                assert {"message", "code"} <= set(reply["data"])
            elif reply["type"] == "observation":
                err = reply["data"]["observation"].get("error")
                assert err is None or set(err) == {"code", "message"}
        ws.send(json.dumps({"type": "step", "data": {"tool": "review_alert"}}))
        assert json.loads(ws.recv())["type"] == "observation"
