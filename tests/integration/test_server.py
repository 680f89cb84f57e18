"""Protocol round-trips against the real server (uvicorn in a subprocess)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import websockets

from memex.client import MemexEnv
from memex.envkit.servers import serve
from memex.models import MemexAction, MemexObservation
from memex.policies.heuristic import Heuristic
from memex.server.environment import MemexEnvironment

ROOT = Path(__file__).resolve().parents[2]


def _heuristic_actions(seed: int, difficulty: str) -> list[MemexAction]:
    """The heuristic's action sequence for a case, recorded in-process."""
    env, pol = MemexEnvironment(), Heuristic()
    obs = env.reset(seed=seed, difficulty=difficulty)
    pol.reset(obs)
    actions = []
    while not obs.done:
        actions.append(pol.act(obs))
        obs = env.step(actions[-1])
    return actions


def test_full_episode_over_ws_with_the_official_client(memex_server):
    with MemexEnv(base_url=memex_server.url).sync() as env:
        result = env.reset(seed=21, difficulty="medium")
        assert result.reward is None and not result.done
        policy = Heuristic()
        policy.reset(result.observation)
        rewards = []
        while not result.done:
            result = env.step(policy.act(result.observation))
            assert result.reward == result.observation.reward  # copied from the envelope
            assert result.done == result.observation.done
            rewards.append(result.reward)
        state = env.state()
    terminal = result.observation.metadata["terminal"]
    assert terminal["outcome"] in ("TP", "TN", "FP", "FN")
    assert rewards[-1] == terminal["score"]
    assert state.done and state.total_reward == pytest.approx(sum(rewards))
    assert state.step_count == len(rewards)


def test_http_episode_continues_with_the_same_episode_id(memex_server):
    url = memex_server.url
    actions = _heuristic_actions(33, "hard")
    env = MemexEnvironment()
    local = [env.reset(seed=33, difficulty="hard")] + [env.step(a) for a in actions]
    with httpx.Client(base_url=url, timeout=30) as http:
        r = http.post("/reset", json={"seed": 33, "difficulty": "hard"})
        assert r.status_code == 200
        episode_id = r.json()["episode_id"]
        remote = [r.json()]
        for a in actions:
            r = http.post("/step", json={"episode_id": episode_id,
                                         "action": a.model_dump(exclude={"metadata"})})
            assert r.status_code == 200 and r.json()["episode_id"] == episode_id
            remote.append(r.json())
        state = http.get("/state", params={"episode_id": episode_id}).json()
        truth = http.get(f"/episodes/{episode_id}/truth")
    # HTTP and in-process play the same episode, byte for byte in the observation.
    for mine, theirs in zip(local, remote, strict=True):
        obs = MemexObservation(**theirs["observation"], reward=theirs["reward"],
                               done=theirs["done"])
        assert obs.model_dump(exclude={"metadata"}) == mine.model_dump(exclude={"metadata"})
        assert theirs["reward"] == mine.reward and theirs["done"] == mine.done
    assert remote[-1]["done"] and state["done"] and state["step_count"] == len(actions)
    assert truth.status_code == 200 and truth.json()["kind"]


def test_unknown_expired_and_malformed_http_requests(memex_server):
    with httpx.Client(base_url=memex_server.url, timeout=30) as http:
        r = http.post("/step", json={"episode_id": "nope", "action": {"tool": "review_alert"}})
        assert r.status_code == 404 and "unknown or expired episode_id" in r.json()["detail"]
        assert http.get("/state", params={"episode_id": "nope"}).status_code == 404
        assert http.post("/reset", json={"difficulty": "impossible"}).status_code == 422
        assert http.post("/reset", json={"kind": "smuggling"}).status_code == 422
        eid = http.post("/reset", json={"seed": 1}).json()["episode_id"]
        assert http.post("/step", json={"episode_id": eid, "action": {"arguments": {}}}
                         ).status_code == 422
        assert http.get(f"/episodes/{eid}/truth").status_code == 409  # not finished yet
        bad = http.post("/step", json={"episode_id": eid, "action": {"tool": "nope"}}).json()
        assert bad["observation"]["error"]["code"] == "unknown_tool" and not bad["done"]
        assert http.delete(f"/episodes/{eid}").status_code == 200
        assert http.post("/step", json={"episode_id": eid, "action": {"tool": "review_alert"}}
                         ).status_code == 404


def test_two_interleaved_sessions_stay_isolated(memex_server):
    a_actions, b_actions = _heuristic_actions(40, "easy"), _heuristic_actions(41, "hard")

    def solo(seed, difficulty, actions):
        env = MemexEnvironment()
        return [env.reset(seed=seed, difficulty=difficulty).model_dump_json()] + [
            env.step(x).model_dump_json() for x in actions]

    expected_a, expected_b = solo(40, "easy", a_actions), solo(41, "hard", b_actions)
    with MemexEnv(base_url=memex_server.url).sync() as ws, \
            httpx.Client(base_url=memex_server.url, timeout=30) as http:
        got_a = [ws.reset(seed=40, difficulty="easy").observation]
        first = http.post("/reset", json={"seed": 41, "difficulty": "hard"}).json()
        eid = first["episode_id"]
        got_b = [first]
        for i in range(max(len(a_actions), len(b_actions))):
            if i < len(a_actions):
                got_a.append(ws.step(a_actions[i]).observation)
            if i < len(b_actions):
                got_b.append(http.post("/step", json={
                    "episode_id": eid,
                    "action": b_actions[i].model_dump(exclude={"metadata"})}).json())
    assert [o.model_dump_json(exclude={"metadata"}) for o in got_a] == [
        MemexObservation.model_validate_json(x).model_dump_json(exclude={"metadata"})
        for x in expected_a]
    for mine, theirs in zip(expected_b, got_b, strict=True):
        mine = json.loads(mine)
        assert theirs["observation"]["context"] == mine["context"]
        assert theirs["reward"] == mine["reward"]


def test_many_concurrent_ws_sessions(memex_server):
    async def episode(seed: int) -> float:
        uri = memex_server.url.replace("http", "ws") + "/ws"
        async with websockets.connect(uri, max_size=None) as ws:
            await ws.send(json.dumps({"type": "reset", "data": {"seed": seed,
                                                                  "difficulty": "easy"}}))
            msg = json.loads(await ws.recv())
            obs = MemexObservation(**msg["data"]["observation"])
            policy = Heuristic()
            policy.reset(obs)
            total = 0.0
            while True:
                await ws.send(json.dumps({"type": "step", "data": policy.act(obs).model_dump()}))
                data = json.loads(await ws.recv())["data"]
                obs = MemexObservation(**data["observation"], reward=data["reward"],
                                       done=data["done"])
                total += data["reward"]
                if data["done"]:
                    return total

    async def main():
        return await asyncio.gather(*(episode(500 + i) for i in range(40)))

    totals = asyncio.run(main())
    assert len(totals) == 40 and all(t > -2 for t in totals)


def test_session_limit_and_idle_timeout_are_configurable():
    with serve("memex.openenv_server", "--max-sessions", "2", "--session-timeout", "1",
               "--log-level", "warning") as server, \
            httpx.Client(base_url=server.url, timeout=30) as http:
        ids = [http.post("/reset", json={"seed": i}).json()["episode_id"] for i in range(2)]
        full = http.post("/reset", json={"seed": 3})
        assert full.status_code == 503 and "capacity" in full.json()["detail"]
        import time
        time.sleep(1.5)
        assert http.get("/state", params={"episode_id": ids[0]}).status_code == 404
        assert http.post("/reset", json={"seed": 4}).status_code == 200
        assert http.get("/info").json()["max_sessions"] == 2


def test_schema_is_complete(memex_server):
    schema = httpx.get(memex_server.url + "/schema", timeout=30).json()
    assert len(schema["action"]["tools"]) == 19
    assert "context" in schema["observation"]["properties"]
    assert "page_faults" in schema["state"]["properties"]


def test_openenv_validate_passes_against_the_running_server(memex_server):
    exe = Path(sys.executable).with_name("openenv")
    out = subprocess.run([str(exe), "validate", "--url", memex_server.url, "--timeout", "20"],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Verdict: PASS" in out.stdout


def test_built_in_agent_plays_an_http_episode_without_an_api_key(memex_server):
    with httpx.Client(base_url=memex_server.url, timeout=30) as http:
        eid = http.post("/reset", json={"seed": 9, "difficulty": "easy"}).json()["episode_id"]
        for _ in range(60):
            r = http.post(f"/episodes/{eid}/agent-step", json={"policy": "heuristic"}).json()
            assert r["action"]["tool"]
            if r["done"]:
                break
        assert r["done"] and r["metadata"]["terminal"]["outcome"] in ("TP", "TN")
