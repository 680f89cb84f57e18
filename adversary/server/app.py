"""Wiring of the launderer adversary's app: `python -m memex.adversary.server [--port 7862]`
serves it; the ASGI app is `memex.adversary.server.app:app`. The episode logic is in
`environment.py`, the one tool in `tools.py`, the wire models in `models.py`.

Built like the other servers (`envkit.http_episodes.create_env_app`: OpenEnv `create_app` with
typed models, `/ws` sessions, stateful HTTP episodes). `POST /reset` takes
`LaunderResetRequest` (`seed`, `defender`, `seeds_per_plan`, `plans`); `GET /knobs` returns the
knob space. Configuration as for the AML server (`MEMEX_MAX_SESSIONS`,
`MEMEX_SESSION_TIMEOUT_S`).
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from memex.adversary.environment import LaunderEnvironment, knob_space
from memex.adversary.models import (
    LaunderAction,
    LaunderObservation,
    LaunderResetRequest,
    LaunderState,
)
from memex.envkit.http_episodes import create_env_app, server_arguments
from memex.envkit.servers import run_app

DEFAULT_PORT = 7862


def create_launderer_app(max_sessions: int | None = None,
                         idle_timeout_s: float | None = None) -> FastAPI:
    app = create_env_app(LaunderEnvironment, LaunderAction, LaunderObservation, LaunderState,
                         name="memex-launderer", reset_model=LaunderResetRequest,
                         max_sessions=max_sessions, idle_timeout_s=idle_timeout_s,
                         title="Memex launderer adversary environment")

    @app.get("/knobs", tags=["Environment Info"], summary="The case-plan knob space")
    async def knobs() -> dict[str, Any]:
        return knob_space()

    return app


app = create_launderer_app()


def main(argv: list[str] | None = None) -> None:
    p = server_arguments("Serve the launderer adversary environment.", DEFAULT_PORT)
    args = p.parse_args(argv)
    run_app(create_launderer_app(args.max_sessions, args.session_timeout), host=args.host,
            port=args.port, log_level=args.log_level)
