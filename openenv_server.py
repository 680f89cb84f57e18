"""Serve the Memex environment: `python -m memex.openenv_server [--port 7860]`, or
`uvicorn openenv_server:app` from the repository root.

The ASGI app is `app` here, the same object as `memex.server.app:app` (`server.app:app` from the
repository root, as `openenv.yaml` declares). Flags override the `MEMEX_*` environment variables.
"""

from __future__ import annotations

import argparse
import os

import uvicorn

from memex.envkit.guards import DEFAULT_MAX_BODY_BYTES
from memex.envkit.http_episodes import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_TIMEOUT_S
from memex.server.app import app, create_memex_app

__all__ = ["app", "create_memex_app", "main"]


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Serve the Memex OpenEnv environment.")
    p.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"),
                   help="interface to bind (default loopback only; the Docker image passes "
                        "0.0.0.0 — set MEMEX_API_TOKEN on a shared server)")
    p.add_argument("--port", type=int, default=int(os.environ.get("PORT", "7860")))
    p.add_argument("--max-sessions", type=int,
                   default=int(os.environ.get("MEMEX_MAX_SESSIONS", DEFAULT_MAX_SESSIONS)))
    p.add_argument("--session-timeout", type=float,
                   default=float(os.environ.get("MEMEX_SESSION_TIMEOUT_S",
                                                DEFAULT_SESSION_TIMEOUT_S)))
    p.add_argument("--reveal-truth-after-done", action="store_true",
                   default=os.environ.get("MEMEX_REVEAL_TRUTH_AFTER_DONE", "0") == "1",
                   help="serve ground truth of finished HTTP episodes (Glass Box overlay)")
    p.add_argument("--ws-compression", action=argparse.BooleanOptionalAction,
                   default=os.environ.get("MEMEX_WS_COMPRESSION", "0") == "1",
                   help="permessage-deflate on /ws (off by default: it costs more CPU per step "
                        "than it saves on a fast link; turn it on for slow remote clients)")
    p.add_argument("--log-level", default="info")
    args = p.parse_args(argv)
    app = create_memex_app(args.max_sessions, args.session_timeout, args.reveal_truth_after_done)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level,
                ws="websockets-sansio", ws_per_message_deflate=args.ws_compression,
                ws_max_size=int(os.environ.get("MEMEX_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES)))


if __name__ == "__main__":
    main()
