"""TEST TOOL: a tiny HTTP proxy in front of an OpenAI-compatible server that injects faults — an
error status on chosen chat requests (400 context length, 500 from a broken tool call), or the
server dying mid-run (the listening socket closes; later requests cannot connect), or a
stall; or it holds one chat request until the test releases it (to kill a real server at a
known point of a run). Everything else is forwarded unchanged, so the model behind it is real.

    with FaultProxy(upstream_url, faults={2: (500, "tool call JSON never closed")}) as proxy:
        ... point the client at proxy.url + "/v1" ...
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

FORWARD_TIMEOUT_S = 600.0


class FaultProxy:
    """Forwards to `upstream`; chat request n (1-based) gets `faults[n]` = (status, message)
    instead, and with `die_after=n` the proxy stops listening once n chat requests were
    forwarded (request n + 1 has its connection dropped); `delay_s` stalls every chat request
    (a server too slow for the client's timeout); `hold_at=n` keeps chat request n waiting
    (`held` is set when it arrives) until `release()`, then forwards it."""

    def __init__(self, upstream: str, *, faults: dict[int, tuple[int, str]] | None = None,
                 die_after: int | None = None, delay_s: float = 0.0,
                 hold_at: int | None = None):
        self.upstream = upstream.rstrip("/")
        self.faults = dict(faults or {})
        self.die_after = die_after
        self.delay_s = delay_s
        self.hold_at = hold_at
        self.held = threading.Event()
        self._release = threading.Event()
        self.chat_requests = 0
        self.forwarded = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                proxy._forward(self, None)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                proxy._forward(self, body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self.alive = True

    def __enter__(self) -> FaultProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()
        self.kill()

    def release(self) -> None:
        """Let the held request (`hold_at`) go on to the upstream."""
        self._release.set()

    def kill(self) -> None:
        """Stop listening, as a server process that died would."""
        if self.alive:
            self.alive = False
            threading.Thread(target=self._server.shutdown, daemon=True).start()
            self._server.socket.close()

    def _forward(self, handler: BaseHTTPRequestHandler, body: bytes | None) -> None:
        fault = None
        if handler.path.endswith("/chat/completions"):
            with self._lock:
                self.chat_requests += 1
                n = self.chat_requests
                if self.die_after is not None and n > self.die_after:
                    self.kill()
                    handler.close_connection = True
                    return  # no response: the client sees the connection drop
                fault = self.faults.get(n)
            if n == self.hold_at:
                self.held.set()
                self._release.wait()
            if self.delay_s:
                time.sleep(self.delay_s)
        if fault is not None:
            status, message = fault
            self._send(handler, status, json.dumps({"detail": message}).encode())
            return
        try:
            response = httpx.request("POST" if body is not None else "GET",
                                     self.upstream + handler.path, content=body,
                                     headers={"Content-Type": "application/json"},
                                     timeout=FORWARD_TIMEOUT_S)
        except httpx.HTTPError as exc:
            self._send(handler, 502, json.dumps({"detail": f"upstream: {exc}"}).encode())
            return
        with self._lock:
            self.forwarded += 1
        self._send(handler, response.status_code, response.content)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload: bytes) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
        except OSError:  # the client gave up (its timeout) and closed the connection
            handler.close_connection = True
