"""TEST DOUBLE: an OpenAI-compatible endpoint that answers with whatever the test scripts — any
status, content type and body bytes, for `GET /v1/models` and `POST /v1/chat/completions` — so
the agent can be shown replies no well-behaved server sends (a truncated body, `message: null`,
`content` a list, arguments as an object, a 1 MB argument). It is not a model.

    script = Script()
    with serve_app(create_scripted_app(script)) as endpoint:
        script.chat = canned(completion(content="hi"))
        ... point the client at endpoint.url + "/v1" ...

`Script.chat` is answered to every chat request until the test changes it (`Script.queue`, when
not empty, is answered first, one item per request); `Script.requests` keeps each request body.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request, Response

MODEL_NAME = "scripted-double"


@dataclass(frozen=True)
class Canned:
    """One scripted HTTP response."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = "application/json"
    delay_s: float = 0.0  # wait this long before answering (a hung or slow server)


def canned(body: Any, status: int = 200, content_type: str | None = "application/json",
           delay_s: float = 0.0) -> Canned:
    """A response whose body is `body` as JSON (bytes and str are sent as they are)."""
    raw = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) \
        else json.dumps(body).encode()
    return Canned(status, raw, content_type, delay_s)


def completion(content: Any = None, tool_calls: Any = None, **message: Any) -> dict[str, Any]:
    """A chat completion with one choice whose message has these fields (any JSON values)."""
    fields = {"role": "assistant", "content": content, **message}
    if tool_calls is not None:
        fields["tool_calls"] = tool_calls
    return {"id": "chatcmpl-scripted", "object": "chat.completion", "created": 0,
            "model": MODEL_NAME, "choices": [{"index": 0, "message": fields,
                                              "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1}}


def tool_call(name: Any, arguments: Any) -> dict[str, Any]:
    """One native tool call; `arguments` is sent as given (a JSON string, an object, ...)."""
    return {"id": "call_0", "type": "function", "function": {"name": name,
                                                              "arguments": arguments}}


MODELS = canned({"object": "list", "data": [{"id": MODEL_NAME, "object": "model"}]})


@dataclass
class Script:
    """What the double answers; a test changes it between requests."""

    chat: Canned = field(default_factory=lambda: canned(completion(content="OK")))
    models: Canned = MODELS
    queue: list[Canned] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, scripted: Canned | list[Canned]) -> None:
        """Answer every later chat request with `scripted` (a list: one item per request,
        then its last item)."""
        items = scripted if isinstance(scripted, list) else [scripted]
        self.queue, self.chat = list(items[:-1]), items[-1]
        self.requests.clear()


async def _response(scripted: Canned) -> Response:
    if scripted.delay_s:
        await asyncio.sleep(scripted.delay_s)
    headers = {} if scripted.content_type is None else {"content-type": scripted.content_type}
    return Response(scripted.body, status_code=scripted.status, headers=headers)


def create_scripted_app(script: Script) -> FastAPI:
    app = FastAPI(title="TEST DOUBLE: scripted OpenAI-compatible endpoint")

    @app.get("/v1/models")
    async def models() -> Response:
        return await _response(script.models)

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        try:
            script.requests.append(json.loads(await request.body()))
        except ValueError:
            script.requests.append({})
        return await _response(script.queue.pop(0) if script.queue else script.chat)

    return app
