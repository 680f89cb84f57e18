"""App wiring for the AML environment: `create_env_app` (OpenEnv + stateful HTTP episodes),
the built-in baseline agent, the post-episode truth overlay, and the Glass Box.

Routes added on top of the OpenEnv ones:
- `POST /reset`, `POST /step`, `GET /state?episode_id=`, `DELETE /episodes/{id}`: HTTP episodes.
- `POST /episodes/{id}/agent-step`: the built-in heuristic investigator takes the next step of
  that episode (no API key needed); the response carries the action it chose.
- `GET /episodes/{id}/truth`: ground truth of a *finished* episode, only when the server runs
  with `--reveal-truth-after-done` / `MEMEX_REVEAL_TRUTH_AFTER_DONE=1` (Glass Box overlay);
  with the case plan under `plan` when the episode was reset with one.
- `GET /info`: settings and live sessions. `GET /` (and `/web`): the Glass Box, when built.
- `GET /schema`: OpenEnv's schemas, the action's with the `tools` catalog (every tool's argument
  schema, derived from the declarations in `server/tools.py`).

Configuration: `MEMEX_MAX_SESSIONS` (256) bounds WebSocket sessions and, separately, live HTTP
episodes (a finished one frees its slot at once); `MEMEX_SESSION_TIMEOUT_S` (900) closes idle
ones; `MEMEX_MAX_MCP_SESSIONS`, `MEMEX_MAX_BODY_BYTES`, `MEMEX_STEP_DEADLINE_S` and
`MEMEX_API_TOKEN` are described in `memex.envkit.http_episodes`. See docs/reliability.md.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import Field

from memex.envkit.glass_box import FRONTEND_DIST, glass_box_built, mount_glass_box
from memex.envkit.http_episodes import ResetFields, create_env_app
from memex.envkit.sealed import install_sealed, sealed_from_env
from memex.models import MemexAction, MemexObservation, MemexState
from memex.policies.heuristic import Heuristic
from memex.policies.probes import RandomPolicy
from memex.scenarios import BENIGN_KINDS, DIFFICULTIES, SUSPICIOUS_KINDS, CaseSpec
from memex.scenarios.cases import FIXED_CASES
from memex.scenarios.splits import load_split
from memex.server.environment import MemexEnvironment
from memex.server.tools import TOOLS, manual_index
from memex.state_manager import (
    DEFAULT_KERNEL_CAPACITY,
    DEFAULT_RAM_PAGES,
    MAX_MEMORY_SLOTS,
    MIN_MEMORY_SLOTS,
)

# Built-in agents for `POST /episodes/{id}/agent-step` (never the oracle: it reads the truth).
AGENT_POLICIES = {"heuristic": Heuristic, "random": RandomPolicy}


class MemexResetRequest(ResetFields, CaseSpec):
    """The body of `POST /reset`: the case (`scenarios.CaseSpec`, the one reset contract) and
    the machine it is played on (the OS sizes, which are not the case's)."""

    ram_pages: int = Field(default=DEFAULT_RAM_PAGES, ge=MIN_MEMORY_SLOTS, le=MAX_MEMORY_SLOTS,
                           description="RAM pages: the tool results the agent keeps in view.")
    kernel_capacity: int = Field(default=DEFAULT_KERNEL_CAPACITY, ge=MIN_MEMORY_SLOTS,
                                 le=MAX_MEMORY_SLOTS,
                                 description="Manual sections the kernel holds.")


def _adversarial_cases() -> int:
    """Entries of the adversarial split (the Glass Box offers them by index, never by plan)."""
    try:
        return len(load_split())
    except KeyError:
        return 0


def create_memex_app(max_sessions: int | None = None, idle_timeout_s: float | None = None,
                     reveal_truth_after_done: bool | None = None,
                     sealed: bool | None = None,
                     frontend_dir: Path | None = FRONTEND_DIST,
                     step_deadline_s: float | None = None) -> FastAPI:
    if reveal_truth_after_done is None:
        reveal_truth_after_done = os.environ.get("MEMEX_REVEAL_TRUTH_AFTER_DONE", "0") == "1"
    manual_index()  # built now, so no episode's first manual search waits for it
    app = create_env_app(MemexEnvironment, MemexAction, MemexObservation, MemexState,
                         name="memex", reset_model=MemexResetRequest, max_sessions=max_sessions,
                         idle_timeout_s=idle_timeout_s, agent_policies=AGENT_POLICIES,
                         action_schema_extra={"tools": [s.catalog_entry()
                                                        for s in TOOLS.values()]},
                         title="Memex AML investigation environment",
                         step_deadline_s=step_deadline_s)
    episodes = app.state.http_episodes
    sealed = sealed_from_env(sealed)  # sealed evaluation: `memex.envkit.sealed`
    reveal_truth_after_done = reveal_truth_after_done and not sealed

    @app.get("/episodes/{episode_id}/truth", tags=["Debug"],
             summary="Ground truth of a finished episode (only when enabled)")
    async def truth(episode_id: str) -> dict[str, Any]:
        if not reveal_truth_after_done:
            raise HTTPException(403, "ground truth is not served by this server "
                                     "(start it with --reveal-truth-after-done)")
        ep = episodes.get(episode_id, touch=False)  # a read never extends an episode's life
        truth = ep.env.ground_truth_if_done()
        if truth is None:
            raise HTTPException(409, "ground truth is served only after the episode has ended")
        plan = ep.env.plan_if_done()
        return truth.model_dump() if plan is None else {**truth.model_dump(), "plan": plan}

    @app.get("/info", tags=["Environment Info"], summary="Server settings and live sessions")
    async def info() -> dict[str, Any]:
        pools = app.state.session_pools
        return {"env": "memex", **app.state.settings, "http_episodes": len(episodes),
                "finished_http_episodes": episodes.finished, "ws_sessions": pools.live("ws"),
                "mcp_sessions": pools.live("mcp"),
                "reveal_truth_after_done": reveal_truth_after_done,
                "kinds": {"suspicious": list(SUSPICIOUS_KINDS), "benign": list(BENIGN_KINDS)},
                "difficulties": list(DIFFICULTIES), "fixed_cases": list(FIXED_CASES),
                "adversarial_cases": _adversarial_cases(),
                "glass_box": glass_box_built(frontend_dir)}

    mount_glass_box(app, frontend_dir)
    if sealed:
        install_sealed(app, allowed_reset_fields=("difficulty",))
    return app


app = create_memex_app()
