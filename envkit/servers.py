"""Serve an environment's app (`run_app`: how every server of the project runs under uvicorn),
and start real servers for tests and benchmarks: in subprocesses (free port, health wait, clean
shutdown, captured logs), or an ASGI app under uvicorn in a thread of this process (`serve_app`:
no second interpreter to boot, so a test can stop and restart a real server in a second)."""

from __future__ import annotations

import contextlib
import gc
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

# Young-generation collections every this many net allocations (CPython's default is 700). A
# served step allocates a few thousand short-lived objects (its result, its observation, the
# reply's dicts), nearly all freed by reference counting, so the default runs a young
# collection about once a step for little garbage. With 64 live sessions, tuned as `run_app`
# does, the server spent 4-7% less CPU a step (`benchmarks/bench_env.py`'s cells, three
# interleaved repeats against the untuned server).
GC_YOUNG_THRESHOLD = 10_000


def run_app(app, *, host: str, port: int, log_level: str = "warning",
            ws_compression: bool = False, ws_max_size: int | None = None) -> None:
    """Serve `app` with uvicorn until a signal: the project's WebSocket implementation,
    permessage-deflate off unless asked (it costs more CPU per step than it saves on a fast
    link), and the collector tuned for serving: everything alive at start-up (modules, schemas,
    routes) is frozen out of its scans (`gc.freeze`), and young collections are rarer
    (`GC_YOUNG_THRESHOLD`). Sessions' objects are created later, so they stay collectable."""
    import uvicorn

    gc.collect()
    gc.freeze()
    _, *older = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *older)
    extra = {} if ws_max_size is None else {"ws_max_size": ws_max_size}
    uvicorn.run(app, host=host, port=port, log_level=log_level, ws="websockets-sansio",
                ws_per_message_deflate=ws_compression, **extra)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    port: int
    process: subprocess.Popen
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


@contextlib.contextmanager
def serve(module: str, *args: str, health_path: str = "/health", timeout_s: float = 60.0,
          env: dict[str, str] | None = None) -> Iterator[Server]:
    """Run `python -m <module> --port <free> *args` until the context exits."""
    with serve_command([sys.executable, "-m", module, "--port", "{port}", *args],
                       name=module.rsplit(".", 1)[-1], health_path=health_path,
                       timeout_s=timeout_s, env=env) as server:
        yield server


def healthy(url: str, health_path: str = "/health") -> bool:
    """Whether the server at `url` answers 200 on `health_path` (within a second)."""
    try:
        return httpx.get(url + health_path, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


@contextlib.contextmanager
def serve_command(argv: list[str], *, name: str, health_path: str = "/health",
                  timeout_s: float = 60.0, env: dict[str, str] | None = None,
                  stop_timeout_s: float = 10.0) -> Iterator[Server]:
    """Run `argv` (with "{port}" replaced by a free port) until the context exits, once
    `health_path` answers 200; then SIGTERM, and SIGKILL after `stop_timeout_s`."""
    port = free_port()
    log = Path(tempfile.mkstemp(prefix=f"{name}-", suffix=".log")[1])
    handle = log.open("w")
    proc = subprocess.Popen([a.replace("{port}", str(port)) for a in argv],
                            stdout=handle, stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {}), "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited early:\n{log.read_text()}")
            if healthy(url, health_path):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} did not become healthy:\n{log.read_text()}")
            time.sleep(0.1)
        yield Server(url, port, proc, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=stop_timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        handle.close()


@dataclass
class InProcessServer:
    url: str
    port: int
    server: object  # uvicorn.Server


@contextlib.contextmanager
def serve_app(app, *, port: int | None = None, timeout_s: float = 30.0,
              **config) -> Iterator[InProcessServer]:
    """Serve `app` with uvicorn (the project's WebSocket implementation) on 127.0.0.1 in a
    daemon thread until the context exits; `port` defaults to a free one."""
    import uvicorn

    port = port or free_port()
    config.setdefault("ws_per_message_deflate", False)  # as `memex.openenv_server` serves
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           ws="websockets-sansio", **config))
    thread = threading.Thread(target=server.run, daemon=True, name=f"uvicorn-{port}")
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"in-process server on port {port} did not start")
        time.sleep(0.02)
    try:
        yield InProcessServer(f"http://127.0.0.1:{port}", port, server)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
