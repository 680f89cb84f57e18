"""Wiring of the investment-committee app: `python -m memex.committee.server [--port 7861]`
serves it; the ASGI app is `memex.committee.server.app:app` (as `committee/openenv.yaml`
declares). The episode logic is in `environment.py`, the actions in `tools.py`.

The app is built by the project's `create_env_app` (OpenEnv `create_app` with typed models,
`/ws` sessions with a session limit and idle timeout, plus stateful HTTP episodes), and adds:
- `POST /reset` (body `CommitteeResetRequest`: `task`, `seed`, optional `episode_id`),
  `POST /step`, `GET /state?episode_id=`, `DELETE /episodes/{id}`: HTTP episodes.
- `POST /episodes/{id}/agent-step`: a built-in baseline PM takes the next step of that episode.
- `GET /tasks`: the four tasks, what each poses and rewards, and the seed splits.
- `GET /info`: settings and live sessions.
- Sealed evaluation (`--sealed`, `MEMEX_SEALED=1`): secret seeds, opaque ids, no seed in
  `/state`, no `/ws`; `GET /sealed/report` signed with the run id (`memex.envkit.sealed`).

Configuration: `MEMEX_MAX_SESSIONS` (256) and `MEMEX_SESSION_TIMEOUT_S` (900), as for the AML
server; flags override them.
"""

from __future__ import annotations

from typing import Any

import uvicorn
from fastapi import FastAPI

from memex.committee.environment import CommitteeEnvironment
from memex.committee.models import (
    CommitteeAction,
    CommitteeObservation,
    CommitteeResetRequest,
    CommitteeState,
)
from memex.committee.policies import POLICIES
from memex.committee.world.tasks import TASK_NAMES, task_catalog
from memex.envkit.http_episodes import (
    create_env_app,
    server_arguments,
)
from memex.envkit.sealed import install_sealed, sealed_from_env

DEFAULT_PORT = 7861
AGENT_POLICIES = ("heuristic", "random", "research_chaser", "always_cash", "query_spammer")


def create_committee_app(max_sessions: int | None = None,
                         idle_timeout_s: float | None = None,
                         sealed: bool | None = None) -> FastAPI:
    """The committee app; `sealed` (default `MEMEX_SEALED=1`) serves sealed evaluation
    (`memex.envkit.sealed`): secret seeds, opaque ids, only `task` chosen by the client."""
    app = create_env_app(CommitteeEnvironment, CommitteeAction, CommitteeObservation,
                         CommitteeState, name="memex-committee",
                         reset_model=CommitteeResetRequest, max_sessions=max_sessions,
                         idle_timeout_s=idle_timeout_s,
                         agent_policies={name: POLICIES[name] for name in AGENT_POLICIES},
                         title="Memex investment-committee environment")
    episodes = app.state.http_episodes
    if sealed_from_env(sealed):
        install_sealed(app, allowed_reset_fields=("task",))

    @app.get("/tasks", tags=["Environment Info"], summary="The tasks and the seed splits")
    async def tasks() -> dict[str, Any]:
        return task_catalog()

    @app.get("/info", tags=["Environment Info"], summary="Server settings and live sessions")
    async def info() -> dict[str, Any]:
        return {"env": "memex-committee", **app.state.settings,
                "http_episodes": len(episodes), "tasks": list(TASK_NAMES)}

    return app


app = create_committee_app()


def main(argv: list[str] | None = None) -> None:
    p = server_arguments("Serve the investment-committee environment.", DEFAULT_PORT)
    p.add_argument("--sealed", action="store_true", default=None,
                   help="sealed evaluation mode (also MEMEX_SEALED=1)")
    args = p.parse_args(argv)
    uvicorn.run(create_committee_app(args.max_sessions, args.session_timeout, args.sealed),
                host=args.host,
                port=args.port, log_level=args.log_level, ws="websockets-sansio")


if __name__ == "__main__":
    main()
