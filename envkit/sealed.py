"""Sealed evaluation mode for any environment served by `create_env_app`: a leaderboard run that
can neither replay nor peek.

The worlds of both environments are pure functions of `(task, seed)` and the generators are
public, so an open server lets an agent open a second episode on the same seed, read its
outcome (the committee's whole price path, the AML case's terminal result), and play the first
with hindsight. A sealed server closes every door to that:

- seeds are drawn from a server-held secret (`MEMEX_SEALED_SECRET`, else random per process):
  `HMAC(secret, run_id | n)` mapped far outside the public train/validation/test ranges, one
  fresh seed per episode — a `seed` (or a client-chosen `episode_id`, or any reset field not in
  the environment's allowed list) is refused with 403, and `seed=None` never means a public seed;
- episodes are addressed by opaque random ids only, over HTTP (`/ws` and `/mcp`, which accept
  seeds of their own, are not served), and `GET /state` never shows the seed;
- every truth endpoint (`/episodes/{id}/truth`) is off;
- `GET /sealed/report` lists the run's episodes (reset options without the seed, done, score and
  the state's counters) with `run_id` and an HMAC-SHA256 `signature` over the canonical JSON, so
  the organiser, who holds the secret, can check a submitted report with `verify_report`.

`install_sealed(app, allowed_reset_fields=...)` is called by the servers' `create_*_app(...,
sealed=True)`: the `--sealed` flag of both servers (`python -m memex.openenv_server --sealed`,
`python -m memex.committee.server --sealed`) or `MEMEX_SEALED=1`; `create_env_app` applies
`app.state.reset_hook` to every validated reset body.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Iterable
from typing import Any

from fastapi import FastAPI, HTTPException, Query
from fastapi.routing import APIRoute, APIWebSocketRoute
from pydantic import BaseModel

SEALED_SEED_BASE = 10**12           # far past every public split (they end below 2 * 10**6)
SEALED_SEED_SPAN = 2**62            # too many to search from one observed price path
REDACTED_STATE_FIELDS: tuple[str, ...] = ("seed", "split")
CLOSED_PATHS: tuple[str, ...] = ("/ws", "/mcp", "/episodes/{episode_id}/truth")
FINISHED_KEPT = 100_000             # a sealed run's finished episodes, kept for its report


class SealedMode:
    """The secret, the run id and the ledger of one sealed run."""

    def __init__(self, allowed_reset_fields: Iterable[str], secret: bytes | None = None):
        env_secret = os.environ.get("MEMEX_SEALED_SECRET")
        self.secret = secret or (env_secret.encode() if env_secret else secrets.token_bytes(32))
        self.run_id = secrets.token_hex(8)
        self.allowed = frozenset(allowed_reset_fields)
        self.drawn = 0

    def draw_seed(self) -> int:
        """The next secret seed of this run."""
        self.drawn += 1
        digest = hmac.new(self.secret, f"{self.run_id}|{self.drawn}".encode(),
                          hashlib.sha256).digest()
        return SEALED_SEED_BASE + int.from_bytes(digest[:8], "big") % SEALED_SEED_SPAN

    def seal(self, options: BaseModel) -> BaseModel:
        """A validated reset body with the secret seed put in; chosen seeds, client episode ids
        and fields the environment does not allow a sealed run to set are refused (403)."""
        chosen = set(options.model_fields_set) - self.allowed
        if chosen:
            raise HTTPException(403, f"sealed evaluation: the server draws seeds and episode "
                                     f"ids; these reset fields are not allowed: "
                                     f"{', '.join(sorted(chosen))} (allowed: "
                                     f"{', '.join(sorted(self.allowed)) or 'none'})")
        return options.model_copy(update={"seed": self.draw_seed()})

    def sign(self, payload: dict[str, Any]) -> str:
        return sign_payload(payload, self.secret)


def sign_payload(payload: dict[str, Any], secret: bytes) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str)
    return hmac.new(secret, canonical.encode(), hashlib.sha256).hexdigest()


def verify_report(report: dict[str, Any], secret: bytes) -> bool:
    """True when `report` (from `GET /sealed/report`) was signed with `secret` unchanged."""
    body = {k: v for k, v in report.items() if k != "signature"}
    return hmac.compare_digest(sign_payload(body, secret), str(report.get("signature", "")))


def redacted_state(state: BaseModel) -> dict[str, Any]:
    return state.model_dump(exclude=set(REDACTED_STATE_FIELDS))


def install_sealed(app: FastAPI, allowed_reset_fields: Iterable[str],
                   secret: bytes | None = None) -> SealedMode:
    """Seal `app` (built by `create_env_app`): see the module docstring."""
    mode = SealedMode(allowed_reset_fields, secret)
    episodes = app.state.http_episodes
    episodes.finished_capacity = max(episodes.finished_capacity, FINISHED_KEPT)
    app.router.routes[:] = [r for r in app.router.routes if not (
        isinstance(r, APIRoute | APIWebSocketRoute) and (
            r.path in CLOSED_PATHS or (r.path == "/state" and "GET" in (r.methods or ()))))]

    app.state.reset_hook = mode.seal
    app.state.sealed = mode
    app.state.settings["sealed"] = True

    @app.get("/state", tags=["State Management"], summary="State of an HTTP episode (sealed: "
             "no seed)")
    async def state(episode_id: str = Query(...)) -> dict[str, Any]:
        return redacted_state(episodes.get(episode_id, touch=False).env.state)

    @app.get("/sealed/report", tags=["Sealed evaluation"],
             summary="The run's episodes and scores, signed with the run id")
    async def report() -> dict[str, Any]:
        rows = []
        for store in (episodes._finished, episodes._episodes):
            for episode_id, ep in store.items():
                st = redacted_state(ep.env.state)
                rows.append({"episode_id": episode_id, "done": bool(st.get("done")),
                             "state": st})
        rows.sort(key=lambda r: r["episode_id"])
        payload = {"run_id": mode.run_id, "episodes_drawn": mode.drawn, "episodes": rows}
        return {**payload, "signature": mode.sign(payload)}

    return mode


def sealed_from_env(flag: bool | None) -> bool:
    """The `sealed` argument of a `create_*_app`, defaulting to `MEMEX_SEALED=1`."""
    return os.environ.get("MEMEX_SEALED", "0") == "1" if flag is None else flag
