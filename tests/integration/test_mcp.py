"""Both environments' declared tools over MCP, driven by the MCP SDK's own client (`mcp`:
`streamable_http_client` + `ClientSession`) against the real servers: the protocol handshake,
`tools/list` equal to `/schema`'s declarations, and `tools/call` as steps of an episode that
OpenEnv's `/ws` reset in the same session — the same observations as the environment in
process — then typed errors, the session's end, and no `/mcp` on a sealed server."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

from memex.committee.environment import CommitteeEnvironment
from memex.committee.models import CommitteeAction
from memex.committee.policies import Heuristic as CommitteeHeuristic
from memex.envkit.servers import serve
from memex.models import MemexAction
from memex.policies.heuristic import Heuristic
from memex.server.environment import MemexEnvironment

# env name, server module, reset options, the in-process environment, a policy, wire action
CASES = {
    "memex": ("memex.openenv_server", {"seed": 7, "difficulty": "easy"}, MemexEnvironment,
              Heuristic, lambda name, args: MemexAction(tool=name, arguments=args),
              lambda a: (a.tool, a.arguments)),
    "memex-committee": ("memex.committee.server", {"task": "mandate_drift", "seed": 3},
                        CommitteeEnvironment, CommitteeHeuristic,
                        lambda name, args: CommitteeAction(action_type=name, **args),
                        lambda a: (a.action_type, a.model_dump(
                            exclude={"action_type", "metadata"}, exclude_none=True))),
}
STEPS = 4


@pytest.fixture(scope="module", params=sorted(CASES))
def server(request):
    with serve(CASES[request.param][0], "--host", "127.0.0.1", "--log-level",
               "warning") as running:
        yield request.param, running


async def _reset_over_ws(url: str, session_id: str, options: dict) -> dict:
    """OpenEnv's way to start the episode of an MCP session: a WebSocket attached to it."""
    ws_url = url.replace("http://", "ws://") + f"/ws?session_id={session_id}"
    async with websockets.connect(ws_url) as ws:
        await ws.send(json.dumps({"type": "reset", "data": options}))
        answer = json.loads(await ws.recv())
    assert answer["type"] == "observation", answer
    return answer["data"]


async def _mcp_episode(url: str, env_name: str) -> dict:
    _, options, env_cls, policy_cls, make_action, call_of = CASES[env_name]
    # The same episode in process, played by the heuristic: the calls to make over MCP.
    env, policy = env_cls(), policy_cls()
    obs = env.reset(**options)
    policy.reset(obs)
    calls, expected = [], []
    for _ in range(STEPS):
        action = policy.act(obs)
        obs = env.step(action)
        calls.append(call_of(action))
        expected.append(obs.model_dump(mode="json", exclude={"reward", "done"}))
    out: dict = {"calls": calls, "expected": expected}
    async with streamable_http_client(url + "/mcp") as (read, write, session_id), \
            ClientSession(read, write) as session:
        init = await session.initialize()
        out["server"] = init.serverInfo.name
        out["tools"] = (await session.list_tools()).tools
        out["first"] = await _reset_over_ws(url, session_id(), options)
        out["results"] = [await session.call_tool(name, args) for name, args in calls]
        out["bad"] = await session.call_tool(calls[0][0], {"no_such_argument": 1})
        with pytest.raises(McpError, match="no_such_tool"):
            await session.call_tool("no_such_tool", {})
        out["session_id"] = session_id()
    return out


def test_declared_tools_over_mcp_are_steps_of_the_sessions_episode(server):
    env_name, running = server
    episode = asyncio.run(_mcp_episode(running.url, env_name))
    assert episode["server"] == env_name
    # tools/list is /schema's catalog: the same names, descriptions and argument schemas.
    schema = httpx.get(running.url + "/schema", timeout=30).json()["action"]
    declared = schema.get("tools") or schema["actions"]
    assert [(t.name, t.description, t.inputSchema) for t in episode["tools"]] == \
        [(d["name"], d["description"], d["parameters"]) for d in declared]
    # Each call is one step: the observation the environment in process gives, with a reward.
    for result, want in zip(episode["results"], episode["expected"], strict=True):
        assert not result.isError
        step = result.structuredContent
        assert step["observation"] == want
        assert isinstance(step["reward"], float) and step["done"] is False
    assert json.loads(episode["results"][0].content[0].text) == \
        episode["results"][0].structuredContent
    # Arguments no tool takes: the environment's typed error, a step like any other.
    bad = episode["bad"].structuredContent["observation"]
    assert bad["error"]["code"] in ("invalid_arguments", "malformed_action")


def test_an_ended_mcp_session_is_gone_and_sealed_servers_serve_no_mcp(server):
    env_name, running = server
    with httpx.Client(base_url=running.url, timeout=30) as http:
        init = http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                       "params": {"protocolVersion": "2025-06-18",
                                                  "capabilities": {},
                                                  "clientInfo": {"name": "t", "version": "0"}}})
        session = init.headers["mcp-session-id"]
        header = {"mcp-session-id": session}
        assert http.post("/mcp", headers=header, json={
            "jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
        assert http.post("/mcp", headers=header, json={
            "jsonrpc": "2.0", "id": 2, "method": "ping"}).json()["result"] == {}
        assert http.post("/mcp", headers=header, json={
            "jsonrpc": "2.0", "id": 3, "method": "resources/list"}).json()["error"]["code"] \
            == -32601
        assert http.delete("/mcp", headers=header).status_code == 204
        gone = http.post("/mcp", headers=header,
                         json={"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
        assert gone.status_code == 404
        assert http.get("/mcp").status_code == 405
    module = CASES[env_name][0]
    with serve(module, "--host", "127.0.0.1", "--log-level", "warning",
               "--sealed") as sealed, httpx.Client(base_url=sealed.url, timeout=30) as http:
        assert http.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                       "params": {}}).status_code == 404
