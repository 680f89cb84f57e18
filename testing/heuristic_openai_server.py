"""TEST DOUBLE: an OpenAI-compatible chat-completions server whose "model" is the built-in
heuristic investigator. It lets the inference agent and AgentOS run end to end against a real
HTTP LLM endpoint without weights or an API key. It is not a language model.

Protocol convention (shared with `inference.py` and `agent_os_core/agent_os.py`): the last
user message contains the latest observation as
`<observation episode="KEY">{...observation JSON...}</observation>`, where KEY is stable for
one episode. The double keeps one heuristic per KEY, feeds it each new observation and answers
with the chosen action:
- as a native tool call when the request carries `tools` (OpenAI function calling), else
- as JSON in the message text: `{"tool": ..., "arguments": {...}}`.
A repeated request for the same observation gets the same action (client retries are
idempotent). A single-message request without an observation (a capability probe) gets "OK";
its reported prompt tokens count the tools, as a template that renders them would.
`--malformed-every N` makes every Nth reply unparseable, to exercise client retries;
`--stall-after N` leaves every episode request after the Nth unanswered (it prints
`stalled at request N+1` first), so a test can kill the process mid-request.

    python -m memex.testing.heuristic_openai_server --port 8011
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import threading
import time
import zlib
from typing import Any

from fastapi import FastAPI, HTTPException, Request

from memex.models import MemexObservation
from memex.policies.heuristic import Heuristic

MODEL_NAME = "memex-heuristic-double"
_OBS = re.compile(r'<observation episode="([^"]+)">(.*?)</observation>', re.S)


def create_double_app(malformed_every: int = 0, stall_after: int | None = None) -> FastAPI:
    app = FastAPI(title="TEST DOUBLE: heuristic investigator behind the OpenAI API")
    lock = threading.Lock()
    agents: dict[str, Heuristic] = {}
    answered: dict[tuple[str, int], dict[str, Any]] = {}
    counter = {"requests": 0}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL_NAME, "object": "model",
                                            "owned_by": "memex-test-double"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict[str, Any]:
        body = await request.json()
        messages = body.get("messages") or []
        text = ""
        for m in reversed(messages):
            if m.get("role") == "user":
                content = m.get("content")
                text = content if isinstance(content, str) else " ".join(
                    p.get("text", "") for p in content or [] if isinstance(p, dict))
                break
        blocks = list(_OBS.finditer(text))
        if not blocks and len(messages) == 1:  # a client's capability probe, not an episode
            return {"id": "chatcmpl-probe", "object": "chat.completion",
                    "created": int(time.time()), "model": body.get("model", MODEL_NAME),
                    "choices": [{"index": 0, "finish_reason": "length",
                                 "message": {"role": "assistant", "content": "OK"}}],
                    "usage": {"prompt_tokens": (len(text) + len(json.dumps(
                        body.get("tools") or ""))) // 4, "completion_tokens": 1}}
        if not blocks:
            raise HTTPException(400, "no <observation episode=...> block in the last user "
                                     "message (see the test double's protocol)")
        key, raw = blocks[-1].group(1), blocks[-1].group(2)
        obs = MemexObservation.model_validate(json.loads(raw))
        with lock:
            counter["requests"] += 1
            malformed = malformed_every and counter["requests"] % malformed_every == 0
            # Keyed by the observation too: a key reused by another run (keys are
            # deterministic) with another case must not get this run's cached answer.
            slot = (key, obs.step, zlib.crc32(raw.encode()))
            cached = answered.get(slot)
            if cached is None:
                if obs.step == 0 or key not in agents:
                    agents[key] = Heuristic()
                    agents[key].reset(obs)
                action = agents[key].act(obs)
                cached = {"tool": action.tool, "arguments": action.arguments}
                answered[slot] = cached
            n = counter["requests"]
        if stall_after is not None and n > stall_after:
            print(f"stalled at request {n}", flush=True)
            while True:  # until the process is killed
                await asyncio.sleep(3600)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        if malformed:
            message["content"] = "I think the next step is {tool: oops"
        elif body.get("tools"):
            message["tool_calls"] = [{
                "id": f"call_{key}_{obs.step}", "type": "function",
                "function": {"name": cached["tool"],
                             "arguments": json.dumps(cached["arguments"])}}]
        else:
            message["content"] = json.dumps(cached)
        # Like a chat template that renders tools: they count in the prompt.
        prompt_tokens = (len(text) + len(json.dumps(body.get("tools") or ""))) // 4
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 30,
                 "total_tokens": prompt_tokens + 30}
        return {"id": f"chatcmpl-{counter['requests']}", "object": "chat.completion",
                "created": int(time.time()), "model": body.get("model", MODEL_NAME),
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if message.get("tool_calls")
                             else "stop"}],
                "usage": usage}

    return app


def main(argv: list[str] | None = None) -> None:
    import uvicorn

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8011)
    p.add_argument("--malformed-every", type=int, default=0)
    p.add_argument("--stall-after", type=int, default=None)
    args = p.parse_args(argv)
    uvicorn.run(create_double_app(args.malformed_every, args.stall_after), host=args.host,
                port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
