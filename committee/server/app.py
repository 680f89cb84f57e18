"""Wiring of the investment-committee app: `python -m memex.committee.server [--port 7861]`
serves it; the ASGI app is `memex.committee.server.app:app` (as `committee/openenv.yaml`
declares). The episode logic is in `environment.py`, the actions in `tools.py`.

The app is built by the project's `create_env_app` (OpenEnv `create_app` with typed models,
`/ws` sessions with a session limit and idle timeout, plus stateful HTTP episodes), and adds:
- `POST /reset` (body `CommitteeResetRequest`: `task`, `seed`, optional `episode_id`),
  `POST /step`, `GET /state?episode_id=`, `DELETE /episodes/{id}`: HTTP episodes.
- `POST /episodes/{id}/agent-step`: a built-in baseline PM takes the next step of that episode.
- `GET /tasks`: the four tasks, what each poses and rewards, and the seed splits.
- `GET /info`: settings and live sessions. `GET /` (and `/web`): the Glass Box's committee
  view, when built (`memex.envkit.glass_box`).
- `GET /reference?task=&seed=`: the reference PM's (the heuristic's) NAV month by month on that
  world, which the Glass Box draws beside the fund's and cash's (`reference.py`; a built-in
  agent's route, refused by a sealed server).
- Sealed evaluation (`--sealed`, `MEMEX_SEALED=1`): secret seeds, opaque ids, no seed in
  `/state`, no `/ws`; `GET /sealed/report` signed with the run id (`memex.envkit.sealed`).

Configuration: `MEMEX_MAX_SESSIONS` (256) and `MEMEX_SESSION_TIMEOUT_S` (900), as for the AML
server; flags override them. `AMC_TASK_ID` names the task of a reset that names none (as the
prototype's server read it); the server refuses to start when it names no task.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException, Query
from fastapi.concurrency import run_in_threadpool

from memex.committee.environment import CommitteeEnvironment, default_task
from memex.committee.models import (
    CommitteeAction,
    CommitteeObservation,
    CommitteeResetRequest,
    CommitteeState,
)
from memex.committee.policies import POLICIES
from memex.committee.server.reference import reference_path
from memex.committee.world.tasks import TASK_NAMES, task_catalog
from memex.envkit.glass_box import FRONTEND_DIST, glass_box_built, mount_glass_box
from memex.envkit.http_episodes import (
    POLICY_ROUTE_TAG,
    create_env_app,
    server_arguments,
)
from memex.envkit.sealed import install_sealed, sealed_from_env
from memex.envkit.servers import run_app

DEFAULT_PORT = 7861
AGENT_POLICIES = ("heuristic", "random", "research_chaser", "always_cash", "query_spammer")


def create_committee_app(max_sessions: int | None = None,
                         idle_timeout_s: float | None = None,
                         sealed: bool | None = None,
                         frontend_dir: Path | None = FRONTEND_DIST) -> FastAPI:
    """The committee app; `sealed` (default `MEMEX_SEALED=1`) serves sealed evaluation
    (`memex.envkit.sealed`): secret seeds, opaque ids, only `task` chosen by the client."""
    default_task()  # a bad AMC_TASK_ID stops the server here, not at its first reset
    app = create_env_app(CommitteeEnvironment, CommitteeAction, CommitteeObservation,
                         CommitteeState, name="memex-committee",
                         reset_model=CommitteeResetRequest, max_sessions=max_sessions,
                         idle_timeout_s=idle_timeout_s,
                         agent_policies={name: POLICIES[name] for name in AGENT_POLICIES},
                         title="Memex investment-committee environment")
    episodes = app.state.http_episodes
    _install_reference_route(app)  # a built-in agent's route: a sealed server refuses it
    if sealed_from_env(sealed):
        install_sealed(app, allowed_reset_fields=("task",))

    @app.get("/tasks", tags=["Environment Info"], summary="The tasks and the seed splits")
    async def tasks() -> dict[str, Any]:
        return task_catalog()

    @app.get("/info", tags=["Environment Info"], summary="Server settings and live sessions")
    async def info() -> dict[str, Any]:
        return {"env": "memex-committee", **app.state.settings,
                "http_episodes": len(episodes), "tasks": list(TASK_NAMES),
                "default_task": default_task(), "glass_box": glass_box_built(frontend_dir)}

    mount_glass_box(app, frontend_dir)
    return app


def _install_reference_route(app: FastAPI) -> None:
    @app.get("/reference", tags=[POLICY_ROUTE_TAG],
             summary="The reference PM's NAV month by month on a world (open servers only)")
    async def reference(task: str | None = Query(None, description="default: the server's"),
                        seed: int | None = Query(None, ge=0, description="default: the task's "
                                                 "canonical seed")) -> dict[str, Any]:
        if task is not None and task not in TASK_NAMES:
            raise HTTPException(422, f"unknown task {task!r}; tasks: {', '.join(TASK_NAMES)}")
        return await run_in_threadpool(reference_path, task, seed)


app = create_committee_app()


def main(argv: list[str] | None = None) -> None:
    p = server_arguments("Serve the investment-committee environment.", DEFAULT_PORT)
    p.add_argument("--sealed", action="store_true", default=None,
                   help="sealed evaluation mode (also MEMEX_SEALED=1)")
    args = p.parse_args(argv)
    run_app(create_committee_app(args.max_sessions, args.session_timeout, args.sealed),
            host=args.host, port=args.port, log_level=args.log_level)


if __name__ == "__main__":
    main()
