"""An environment's declared tools over MCP, through OpenEnv's own MCP support.

OpenEnv serves MCP for an environment that carries an `mcp_server` (a FastMCP server) and an
`mcp_client` (a FastMCP client of it): `tools/list` and `tools/call` on `POST /mcp` (JSON-RPC),
on the `/mcp` WebSocket and as `mcp` messages of a `/ws` session, each against the session's own
environment. `DeclaredToolsMcp` gives an environment those two attributes, generated from the
same `ToolSpec` declarations as `/schema` (`envkit.declarations`): one MCP tool per declared
tool, its input schema the declared JSON schema; calling it takes that action as one `step` of
the session's episode and returns the step as `/step` does (`observation`, `reward`, `done`).
Invalid arguments are the environment's own typed error observation, as on every other route.

OpenEnv's `/mcp` speaks only `tools/list`, `tools/call` and its `openenv/session/*` methods.
`install_mcp_transport` makes the same route a Streamable-HTTP MCP endpoint that any MCP client
(the `mcp` SDK's `streamablehttp_client` + `ClientSession`, an IDE, an agent framework) can open:
`initialize` creates an OpenEnv session (its id is the `Mcp-Session-Id` header), requests that
carry the header run against that session (OpenEnv's `session_id`), notifications are accepted,
`DELETE` ends the session, and replies use MCP's field names. Requests without the header reach
OpenEnv's handler unchanged.

An episode is an OpenEnv session's: the orchestrator resets it over `/ws?session_id=<id>` (how
OpenEnv attaches a WebSocket to an MCP session), the agent acts with `tools/call`. Sealed servers
serve no `/mcp` (`envkit.sealed`).
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, ClassVar

from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from fastmcp import Client, FastMCP
from fastmcp.tools import Tool
from fastmcp.tools.tool import ToolResult
from openenv.core.env_server.serialization import serialize_observation
from pydantic import ValidationError

from memex.envkit.declarations import ToolSpec
from memex.envkit.errors import validation_message

MCP_PATH = "/mcp"
SESSION_HEADER = "mcp-session-id"
# The MCP revisions this endpoint answers `initialize` with (newest first); tools only.
PROTOCOL_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")
JSONRPC_METHOD_NOT_FOUND = -32601
JSONRPC_INVALID_REQUEST = -32600


class DeclaredTool(Tool):
    """One declared tool as an MCP tool: a call is one step of the episode it is bound to."""

    call: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(structured_content=await self.call(self.name, arguments))


class DeclaredToolsMcp:
    """Mixin for an OpenEnv `Environment` whose tools are declared as `ToolSpec`s: set
    `mcp_tools` (name -> spec) and implement `mcp_action(name, arguments)` (the wire action of
    that call); OpenEnv then serves the tools over MCP against each session's environment. The
    server is built on first use, so environments nobody reaches over MCP pay nothing."""

    mcp_tools: ClassVar[Mapping[str, ToolSpec]]

    def mcp_action(self, name: str, arguments: dict[str, Any]) -> Any:
        raise NotImplementedError

    async def _mcp_call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            action = self.mcp_action(name, arguments)
        except ValidationError as exc:
            # Arguments the wire action itself refuses (a field no action has): the step an
            # environment answers a malformed action with, where it has one (`step_malformed`).
            malformed = getattr(self, "step_malformed", None)
            if malformed is None:
                raise
            return serialize_observation(malformed(validation_message(exc)))
        return serialize_observation(await self.step_async(action))

    @functools.cached_property
    def mcp_server(self) -> FastMCP:
        server = FastMCP(type(self).__name__)
        for spec in self.mcp_tools.values():
            server.add_tool(DeclaredTool(name=spec.name, description=spec.description,
                                         parameters=spec.json_schema(), call=self._mcp_call,
                                         tags={spec.category}))
        return server

    @functools.cached_property
    def mcp_client(self) -> Client:
        return Client(self.mcp_server)


def _jsonrpc_error(request_id: Any, code: int, message: str, status: int = 200) -> JSONResponse:
    return JSONResponse({"jsonrpc": "2.0", "id": request_id,
                         "error": {"code": code, "message": message}}, status_code=status)


def _mcp_result(method: str, result: Any) -> Any:
    """OpenEnv's `tools/call` result (FastMCP's, snake_case) in MCP's field names."""
    if method != "tools/call" or not isinstance(result, dict) or "content" not in result:
        return result
    out = {"content": result["content"], "isError": bool(result.get("is_error", False))}
    if result.get("structured_content") is not None:
        out["structuredContent"] = result["structured_content"]
    return out


def install_mcp_transport(app: FastAPI, server: Any, *, name: str) -> None:
    """Make OpenEnv's `POST /mcp` (of `server`, the app's `HTTPEnvServer`) a Streamable-HTTP MCP
    endpoint as the module docstring says; `name` and this package's version are the
    `serverInfo`."""
    version = importlib.metadata.version(__package__.split(".")[0])
    route = next(r for r in app.router.routes if isinstance(r, APIRoute)
                 and r.path == MCP_PATH and "POST" in r.methods)
    openenv_mcp = route.endpoint
    app.router.routes.remove(route)

    async def forward(request: Request, message: dict[str, Any]) -> dict[str, Any]:
        body = json.dumps(message).encode()

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        return await openenv_mcp(Request(request.scope, receive))

    def initialize(message: dict[str, Any], session_id: str) -> JSONResponse:
        asked = (message.get("params") or {}).get("protocolVersion")
        result = {"protocolVersion": asked if asked in PROTOCOL_VERSIONS else
                  PROTOCOL_VERSIONS[0],
                  "capabilities": {"tools": {"listChanged": False}},
                  "serverInfo": {"name": name, "version": version},
                  "instructions": "Each tool is one action of this session's episode. Reset the "
                                  f"episode over /ws?session_id={session_id} (OpenEnv), then "
                                  "call tools; a result is the step: observation, reward, done."}
        return JSONResponse({"jsonrpc": "2.0", "id": message.get("id"), "result": result},
                            headers={SESSION_HEADER: session_id})

    @app.post(MCP_PATH, tags=["MCP"], summary="MCP (Streamable HTTP; OpenEnv JSON-RPC)")
    async def mcp(request: Request) -> Response:
        try:
            message = json.loads(await request.body())
        except ValueError:
            return _jsonrpc_error(None, -32700, "parse error: the body is not JSON", 400)
        if not isinstance(message, dict):
            return _jsonrpc_error(None, JSONRPC_INVALID_REQUEST,
                                  "one JSON-RPC message per request (no batches)", 400)
        method = message.get("method")
        session_id = request.headers.get(SESSION_HEADER)
        if method == "initialize":
            created = await forward(request, {"jsonrpc": "2.0", "id": message.get("id"),
                                              "method": "openenv/session/create",
                                              "params": {}})
            if created.get("error"):
                return JSONResponse(created)
            return initialize(message, created["result"]["session_id"])
        if session_id is None:
            return JSONResponse(await forward(request, message))  # OpenEnv's own protocol
        if session_id not in server._sessions:
            return _jsonrpc_error(message.get("id"), JSONRPC_INVALID_REQUEST,
                                  f"unknown or expired MCP session {session_id[:64]!r}", 404)
        if "id" not in message:
            return Response(status_code=202)  # a notification (e.g. notifications/initialized)
        if method == "ping":
            return JSONResponse({"jsonrpc": "2.0", "id": message["id"], "result": {}})
        if method not in ("tools/list", "tools/call"):
            return _jsonrpc_error(message["id"], JSONRPC_METHOD_NOT_FOUND,
                                  f"method not found: {str(method)[:64]} (this server offers "
                                  "tools only)")
        params = {**(message.get("params") or {}), "session_id": session_id}
        answer = await forward(request, {**message, "params": params})
        if answer.get("result") is not None:
            answer["result"] = _mcp_result(method, answer["result"])
        return JSONResponse(answer)

    @app.delete(MCP_PATH, tags=["MCP"], summary="End an MCP session")
    async def end_mcp_session(request: Request) -> Response:
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is None or session_id not in server._sessions:
            return Response(status_code=404)
        await forward(request, {"jsonrpc": "2.0", "id": 0, "method": "openenv/session/close",
                                "params": {"session_id": session_id}})
        return Response(status_code=204)

    @app.get(MCP_PATH, tags=["MCP"], include_in_schema=False)
    async def no_event_stream() -> Response:
        return Response(status_code=405, headers={"Allow": "POST, DELETE"})
