"""Serve the Memex environment: `python -m memex.openenv_server [--port 7860]`, or
`uvicorn openenv_server:app` from the repository root.

`--replicas N` serves N independent server processes on consecutive ports (`--port`,
`--port`+1, ...; N=0: one per CPU core) and stops them all on SIGINT/SIGTERM or when one exits.
Sessions live in one process, so clients spread them: the typed client
(`MemexEnv(base_url="http://h:7860,http://h:7861")`), the evaluation harness
(`--env-url` with a comma list) and the AgentOS runtime assign each new session to the next
replica in turn.

The ASGI app is `app` here, the same object as `memex.server.app:app` (`server.app:app` from the
repository root, as `openenv.yaml` declares). Flags override the `MEMEX_*` environment variables.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time

from memex.envkit.guards import DEFAULT_MAX_BODY_BYTES
from memex.envkit.sealed import sealed_from_env
from memex.envkit.servers import run_app
from memex.server.app import app, create_memex_app

__all__ = ["app", "create_memex_app", "main", "replica_urls"]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Serve the Memex OpenEnv environment.")
    p.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"),
                   help="interface to bind (default loopback only; the Docker image passes "
                        "0.0.0.0 — set MEMEX_API_TOKEN on a shared server)")
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "7860")))
    p.add_argument("--max-sessions", type=int, default=None,
                   help="WebSocket sessions and live HTTP episodes, each (MEMEX_MAX_SESSIONS, 256)")
    p.add_argument("--session-timeout", type=float, default=None,
                   help="idle seconds before a session closes (MEMEX_SESSION_TIMEOUT_S, 900)")
    p.add_argument("--reveal-truth-after-done", action="store_true",
                   default=os.environ.get("MEMEX_REVEAL_TRUTH_AFTER_DONE", "0") == "1",
                   help="serve ground truth of finished HTTP episodes (Glass Box overlay)")
    p.add_argument("--ws-compression", action=argparse.BooleanOptionalAction,
                   default=os.environ.get("MEMEX_WS_COMPRESSION", "0") == "1",
                   help="permessage-deflate on /ws (off by default: it costs more CPU per step "
                        "than it saves on a fast link; turn it on for slow remote clients)")
    p.add_argument("--log-level", default="info")
    p.add_argument("--sealed", action="store_true", default=None,
                   help="sealed evaluation mode (also MEMEX_SEALED=1): secret seeds, opaque "
                        "episode ids, no truth endpoint, a signed report (memex.envkit.sealed)")
    p.add_argument("--replicas", type=int,
                   default=int(os.environ.get("MEMEX_REPLICAS", "1")),
                   help="server processes on consecutive ports from --port (0: one per core)")
    args = p.parse_args(argv)
    if args.replicas != 1 and sealed_from_env(args.sealed):
        p.error("a sealed run is one server process (its ledger lives there): drop --replicas")
    if args.replicas != 1:
        raise SystemExit(serve_replicas(args, sys.argv[1:] if argv is None else list(argv)))
    app = create_memex_app(args.max_sessions, args.session_timeout, args.reveal_truth_after_done,
                           sealed=args.sealed)
    run_app(app, host=args.host, port=args.port, log_level=args.log_level,
            ws_compression=args.ws_compression,
            ws_max_size=int(os.environ.get("MEMEX_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES)))


def replica_urls(host: str, port: int, replicas: int) -> list[str]:
    """The base URLs `--replicas` serves (what a client's comma list should name)."""
    return [f"http://{host}:{port + i}" for i in range(replicas)]


def serve_replicas(args: argparse.Namespace, argv: list[str]) -> int:
    """Run `args.replicas` copies of this server (each a plain one-process server) until a
    signal or one copy's exit; then stop every copy. Returns the exit status."""
    n = args.replicas if args.replicas > 0 else len(os.sched_getaffinity(0))
    base = _without_flags(argv, ("--replicas", "--port"))
    children = [subprocess.Popen([sys.executable, "-m", "memex.openenv_server", *base,
                                  "--port", str(args.port + i), "--replicas", "1"])
                for i in range(n)]
    print(f"memex: {n} replicas on {', '.join(replica_urls(args.host, args.port, n))}",
          flush=True)
    stopping = False

    def stop(signum, _frame) -> None:
        nonlocal stopping
        stopping = True

    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, stop)
    while not stopping and all(c.poll() is None for c in children):
        time.sleep(0.2)
    for c in children:
        if c.poll() is None:
            c.send_signal(signal.SIGINT)  # uvicorn's graceful shutdown
    deadline = time.monotonic() + 10
    for c in children:
        try:
            c.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            c.kill()
            c.wait()
    return 0 if stopping else 1


def _without_flags(argv: list[str], flags: tuple[str, ...]) -> list[str]:
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a in flags:
            skip = True
        elif not any(a.startswith(f + "=") for f in flags):
            out.append(a)
    return out


if __name__ == "__main__":
    main()
