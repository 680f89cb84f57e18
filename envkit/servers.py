"""Start real servers in subprocesses for tests and benchmarks (free port, health wait,
clean shutdown, captured logs)."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx


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


@contextlib.contextmanager
def serve_command(argv: list[str], *, name: str, health_path: str = "/health",
                  timeout_s: float = 60.0, env: dict[str, str] | None = None
                  ) -> Iterator[Server]:
    """Run `argv` (with "{port}" replaced by a free port) until the context exits, once
    `health_path` answers 200."""
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
            try:
                if httpx.get(url + health_path, timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{name} did not become healthy:\n{log.read_text()}")
            time.sleep(0.1)
        yield Server(url, port, proc, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        handle.close()
