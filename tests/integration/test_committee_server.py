"""The committee served for real (uvicorn in a subprocess): a WebSocket episode with the
official OpenEnv client, a stateful HTTP episode, typed errors and the schema."""

from __future__ import annotations

import httpx
import pytest

from memex.committee.client import CommitteeEnv
from memex.committee.environment import CommitteeEnvironment
from memex.committee.models import CommitteeAction, CommitteeObservation, CommitteeState
from memex.committee.policies import POLICIES
from memex.committee.tools import ACTION_NAMES
from memex.committee.world.tasks import TASK_NAMES
from memex.envkit.servers import serve


@pytest.fixture(scope="module")
def committee_server():
    with serve("memex.committee.server", "--host", "127.0.0.1", "--log-level",
               "warning") as server:
        yield server


def test_websocket_episode_with_the_openenv_client_matches_in_process_play(committee_server):
    local = CommitteeEnvironment()
    expected = local.reset(task="research_risk_conflict", seed=9)
    policy = POLICIES["heuristic"]()
    policy.reset(expected)
    with CommitteeEnv(base_url=committee_server.url).sync() as env:
        result = env.reset(task="research_risk_conflict", seed=9)
        obs = result.observation
        assert isinstance(obs, CommitteeObservation)
        assert obs.model_dump() == expected.model_dump()
        total = 0.0
        while not result.done:
            action = policy.act(obs)
            result = env.step(action)
            obs = result.observation
            mirror = local.step(action)
            assert obs.reward == pytest.approx(mirror.reward)
            assert obs.portfolio == mirror.portfolio
            total += result.reward
        state = env.state()
    assert isinstance(state, CommitteeState)
    assert state.done and state.period == 20 and state.task == "research_risk_conflict"
    assert obs.metadata["score"] == mirror.metadata["score"]
    assert obs.metadata["score_components"] == mirror.metadata["score_components"]
    assert total == pytest.approx(obs.metadata["metrics"]["episode_return"], abs=1e-4)


def test_websocket_bad_action_is_a_typed_error_observation(committee_server):
    with CommitteeEnv(base_url=committee_server.url).sync() as env:
        env.reset(task="guided_allocation", seed=1)
        result = env.step(CommitteeAction(action_type="allocate",
                                          weights={"NOVA": 0.9, "GOVT": 0.9}))
        assert result.observation.error.code == "invalid_weights"
        assert result.reward == pytest.approx(
            sum(result.observation.reward_breakdown.values()), abs=1e-5)
        result = env.step(CommitteeAction(action_type="sell_the_farm"))
        assert result.observation.error.code == "unknown_action"
        assert env.state().invalid_actions == 2


def test_http_episode_keeps_its_state_between_requests(committee_server):
    url = committee_server.url
    with httpx.Client(base_url=url, timeout=30) as http:
        r = http.post("/reset", json={"task": "mandate_drift", "seed": 4})
        assert r.status_code == 200
        episode = r.json()["episode_id"]
        assert r.json()["observation"]["task"] == "mandate_drift"
        steps = [{"action_type": "query_research", "query_target": "ENERGY"},
                 {"action_type": "query_risk", "query_target": "PTRL"},
                 {"action_type": "allocate", "weights": {"MEDI": 0.2, "GOVT": 0.3}},
                 {"action_type": "revise_allocation", "weights": {"SOLR": 2}}]
        bodies = []
        for action in steps:
            r = http.post("/step", json={"episode_id": episode, "action": action})
            assert r.status_code == 200
            bodies.append(r.json())
        assert [b["observation"]["period"] for b in bodies] == [1, 2, 3, 4]
        assert bodies[0]["observation"]["result"]["target"] == "ENERGY"
        assert bodies[1]["observation"]["result"]["target"] == "PTRL"
        assert bodies[2]["observation"]["portfolio"]["weights"]["GOVT"] > 0.25
        assert bodies[3]["observation"]["error"]["code"] == "invalid_weights"
        state = http.get("/state", params={"episode_id": episode}).json()
        assert state["period"] == 4 and state["queries_used"] == 2
        assert state["invalid_actions"] == 1
        r = http.post(f"/episodes/{episode}/agent-step", json={"policy": "heuristic"})
        assert r.status_code == 200 and r.json()["action"]["action_type"] in ACTION_NAMES
        assert r.json()["observation"]["period"] == 5
        assert http.delete(f"/episodes/{episode}").status_code == 200
        r = http.post("/step", json={"episode_id": episode, "action": {"action_type": "hold"}})
        assert r.status_code == 404


def test_http_rejects_bad_reset_options_and_answers_malformed_steps(committee_server):
    with httpx.Client(base_url=committee_server.url, timeout=30) as http:
        assert http.post("/reset", json={"task": "options_trading"}).status_code == 422
        assert http.post("/reset", json={"seed": -3}).status_code == 422
        episode = http.post("/reset", json={}).json()["episode_id"]
        # no action_type, or a field no action takes: not an action at all — answered like a
        # malformed weight, with a typed error observation and the book held for the month
        for period, action in enumerate(({"weights": {}},
                                         {"action_type": "hold", "colour": "red"}), start=1):
            r = http.post("/step", json={"episode_id": episode, "action": action})
            assert r.status_code == 200, r.text
            obs = r.json()["observation"]
            assert obs["error"]["code"] == "malformed_action" and obs["period"] == period


@pytest.mark.parametrize("body", [
    '{"episode_id": "EID", "action": {"action_type": "hold"',          # broken JSON
    '{"episode_id": "EID", "action": [{"action_type": "hold"}]}',      # a list
    '{"episode_id": "EID", "action": "{\\"action_type\\": \\"hold\\"}"}',  # a string
    '{"episode_id": "EID", "action": {"action_type": 5}}',             # a wrong action_type
    '{"episode_id": "EID", "action": null}',
    '{"episode_id": "EID"}',
])
def test_a_malformed_action_envelope_is_a_typed_error_observation(committee_server, body):
    # answered the way a malformed weight is: a typed error, the book held, the month gone
    with httpx.Client(base_url=committee_server.url, timeout=30) as http:
        episode = http.post("/reset", json={}).json()["episode_id"]
        r = http.post("/step", content=body.replace("EID", episode),
                      headers={"content-type": "application/json"})
        assert r.status_code == 200, r.text
        obs = r.json()["observation"]
        assert obs["error"]["code"] == "malformed_action" and obs["period"] == 1
        assert obs["portfolio"]["turnover"] == 0.0
        state = http.get("/state", params={"episode_id": episode}).json()
        assert state["invalid_actions"] == 1 and state["step_count"] == 1
        # a malformed weight, for comparison: the same answer with its own code
        r = http.post("/step", json={"episode_id": episode, "action": {
            "action_type": "allocate", "weights": {"NOVA": "NaN"}}})
        assert r.json()["observation"]["error"]["code"] == "invalid_weights"


def test_a_body_that_names_no_episode_is_a_typed_422(committee_server):
    with httpx.Client(base_url=committee_server.url, timeout=30) as http:
        for body in ("garbage", '{"action": {"action_type": "hold"}}', "[1, 2]"):
            r = http.post("/step", content=body, headers={"content-type": "application/json"})
            assert r.status_code == 422
            assert all({"type", "loc", "msg"} <= set(e) for e in r.json()["detail"])


def test_schema_tasks_and_info_describe_the_environment(committee_server):
    with httpx.Client(base_url=committee_server.url, timeout=30) as http:
        schema = http.get("/schema").json()
        assert [a["name"] for a in schema["action"]["actions"]] == list(ACTION_NAMES)
        assert schema["action"]["properties"]["action_type"]["enum"] == list(ACTION_NAMES)
        assert {"query_target", "weights", "reason"} <= set(schema["action"]["properties"])
        assert "score" in schema["state"]["properties"]
        tasks = http.get("/tasks").json()
        assert [t["name"] for t in tasks["tasks"]] == list(TASK_NAMES)
        assert tasks["splits"]["test"][0] == 1_100_000
        shift = tasks["tasks"][TASK_NAMES.index("regime_shift_recovery")]["regime_process"]
        assert shift["start"] == "expansion" and shift["spells"]["crisis"]["months"] == [3, 5]
        assert http.get("/info").json()["env"] == "memex-committee"
        assert http.get("/health").status_code == 200
