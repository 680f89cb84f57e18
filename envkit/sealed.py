"""Sealed evaluation mode for any environment served by `create_env_app`: a leaderboard run in
which only the agent plays, that can neither replay nor peek, and whose signed report is the
whole run.

The worlds of both environments are pure functions of `(task, seed)` and the generators are
public, so an open server lets an agent open a second episode on the same seed, read its
outcome, and play the first with hindsight; it also lets a client hand steps to a built-in
policy, or delete the episodes it played badly. A sealed server closes every one of those doors:

- seeds are drawn from a server-held secret (`MEMEX_SEALED_SECRET`, else random per process):
  `HMAC(secret, run_id | n)` mapped far outside the public train/validation/test ranges, one
  fresh seed per episode — a `seed` (or a client-chosen `episode_id`, or any reset field not in
  the environment's allowed list) is refused, and `seed=None` never means a public seed;
- episodes are addressed by opaque random ids only, over HTTP (`/ws` and `/mcp`, which accept
  seeds of their own, are not served), and `GET /state` never shows the seed;
- every truth endpoint (`/episodes/{id}/truth`) is off, and every server-side policy route
  (`POST /episodes/{id}/agent-step`: any route tagged `POLICY_ROUTE_TAG`) answers 403;
- the run is a **ledger**: every episode drawn is an entry, in draw order, and so is its end —
  `finished` (played to its end), `deleted` (`DELETE /episodes/{id}` before the end: the episode
  ends, it is never removed), `expired` (idle past the session timeout, or evicted idle from a
  full pool) or `abandoned` (still running when the run was closed). An episode that did not
  finish is scored as its environment scores an episode left unfinished (`abandon()`: a timeout
  for AML, the book held to the horizon for the committee). Entries are appended, never changed;
  each carries the hash of the one before, so removing, editing or reordering any entry breaks
  the chain;
- `GET /sealed/report` is the ledger with the episodes and summary derived from it, signed with
  Ed25519 by a key derived from the secret; `POST /sealed/close` (body `{"agent": NAME}`, the
  name the client declares) abandons what is still running, appends the closing entry, refuses
  every later reset and returns the final report. Anyone can check a report with the server's
  public key (`GET /info` shows it); the organiser, who holds the secret, derives the same key:

      python -m memex.envkit.sealed verify REPORT.json [--public-key HEX]

Refusals are typed: a 403 whose `detail` is `{"code": ..., "message": ...}` with code
`sealed_reset_field`, `sealed_policy_route`, `sealed_run_closed` or `sealed_run_full`.

`install_sealed(app, allowed_reset_fields=...)` is called by the servers' `create_*_app(...,
sealed=True)`: the `--sealed` flag of both servers (`python -m memex.openenv_server --sealed`,
`python -m memex.committee.server --sealed`) or `MEMEX_SEALED=1`. The environment class must
provide `abandon()` and `episode_result()` (`SealableEnvironment`). A sealed run is one server
process: its ledger lives in that process.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import math
import os
import secrets
import statistics
import sys
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from fastapi import Body, FastAPI, HTTPException, Query
from fastapi.routing import APIRoute, APIWebSocketRoute
from openenv.core.env_server.types import Observation
from pydantic import BaseModel, ConfigDict, Field

from memex.envkit.http_episodes import POLICY_ROUTE_TAG, Episode, HttpEpisodes

SEALED_SEED_BASE = 10**12           # far past every public split (they end below 2 * 10**6)
SEALED_SEED_SPAN = 2**62            # too many to search from one observed price path
REDACTED_STATE_FIELDS: tuple[str, ...] = ("seed", "split")
CLOSED_PATHS: tuple[str, ...] = ("/ws", "/mcp", "/episodes/{episode_id}/truth")
MAX_SEALED_EPISODES = 100_000       # a run's ledger is bounded like every other store
MAX_AGENT_NAME_CHARS = 120
REPORT_FORMAT = "memex-sealed-report/1"
END_STATUSES: tuple[str, ...] = ("finished", "deleted", "expired", "abandoned")
_SIGNING_KEY_CONTEXT = b"memex-sealed-signing-key|"


class SealableEnvironment(Protocol):
    """What a sealed server needs of its environment beyond OpenEnv's interface."""

    def abandon(self) -> Observation:
        """End a running episode now, scored as the environment scores an unfinished one;
        returns the final observation."""

    def episode_result(self) -> dict[str, Any] | None:
        """An ended episode's `outcome`, `score` and `return`; None while it runs."""


# ---- the chain -----------------------------------------------------------------------------

def canonical(obj: Any) -> bytes:
    """The bytes a report's hashes and signature cover: sorted keys, no spaces, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str).encode()


def genesis(run_id: str) -> str:
    """The `prev` of a run's first entry: binds the chain to its run id."""
    return hashlib.sha256(f"memex-sealed|{run_id}".encode()).hexdigest()


def entry_hash(entry: dict[str, Any]) -> str:
    """An entry's hash: SHA-256 of the canonical entry without its own `hash` (its `prev`, the
    previous entry's hash, included)."""
    return hashlib.sha256(canonical({k: v for k, v in entry.items() if k != "hash"})).hexdigest()


def derive(entries: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The report's `episodes` (one per draw, in draw order, with its final status, or
    `playing`) and `summary`, from the chain alone — what a verifier recomputes."""
    episodes: dict[int, dict[str, Any]] = {}
    agent, closed = None, False
    for e in entries:
        if e["event"] == "drawn":
            episodes[e["draw"]] = {"draw": e["draw"], "episode_id": e["episode_id"],
                                   "options": e["options"], "status": "playing",
                                   "outcome": None, "score": None, "return": None}
        elif e["event"] == "ended":
            episodes[e["draw"]].update({k: e[k] for k in ("status", "outcome", "score",
                                                          "return")})
        elif e["event"] == "closed":
            agent, closed = e["agent"], True
    rows = [episodes[k] for k in sorted(episodes)]
    ended = [r for r in rows if r["status"] != "playing"]
    scores = [r["score"] for r in ended if r["score"] is not None]
    returns = [r["return"] for r in ended if r["return"] is not None]
    by_status = Counter(r["status"] for r in rows)
    summary = {"drawn": len(rows), "ended": len(ended), "playing": by_status["playing"],
               "by_status": {s: by_status[s] for s in END_STATUSES},
               "mean_score": round(statistics.fmean(scores), 6) if scores else None,
               "mean_return": round(statistics.fmean(returns), 6) if returns else None,
               "closed": closed, "agent": agent}
    return rows, summary


class Ledger:
    """A sealed run's append-only, hash-chained record of draws, ends and the closing."""

    def __init__(self, run_id: str):
        self.run_id = run_id
        self.entries: list[dict[str, Any]] = []
        self._draws: dict[str, int] = {}        # episode_id -> draw number
        self._ended: set[str] = set()
        self.closed = False
        self._lock = threading.Lock()

    def _append(self, event: str, **fields: Any) -> dict[str, Any]:
        with self._lock:
            prev = self.entries[-1]["hash"] if self.entries else genesis(self.run_id)
            entry = {"seq": len(self.entries), "event": event, **fields, "prev": prev}
            entry["hash"] = entry_hash(entry)
            self.entries.append(entry)
            return entry

    @property
    def drawn(self) -> int:
        return len(self._draws)

    def draw(self, episode_id: str, options: dict[str, Any]) -> int:
        number = len(self._draws) + 1
        self._draws[episode_id] = number
        self._append("drawn", draw=number, episode_id=episode_id, options=options)
        return number

    def running(self, episode_id: str) -> bool:
        return episode_id in self._draws and episode_id not in self._ended

    def end(self, episode_id: str, status: str, result: dict[str, Any],
            state: dict[str, Any]) -> None:
        self._ended.add(episode_id)
        self._append("ended", draw=self._draws[episode_id], episode_id=episode_id,
                     status=status, outcome=result.get("outcome"), score=result.get("score"),
                     state=state, **{"return": result.get("return")})

    def close(self, agent: str | None) -> None:
        self.closed = True
        self._append("closed", agent=agent, drawn=self.drawn)


# ---- keys and signatures -------------------------------------------------------------------

def signing_key(secret: bytes) -> Ed25519PrivateKey:
    """The run's Ed25519 key, derived from the server secret (so the organiser can re-derive
    its public key from the secret alone)."""
    return Ed25519PrivateKey.from_private_bytes(
        hashlib.sha256(_SIGNING_KEY_CONTEXT + secret).digest())


def public_key_hex(secret: bytes) -> str:
    return signing_key(secret).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw).hex()


def _signed_part(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "signature"}


def check_report(report: Any, public_key: str | None = None,
                 secret: bytes | None = None) -> list[str]:
    """What is wrong with `report` (empty: it verifies). Checks its format, the hash chain
    entry by entry, that `head`, `episodes` and `summary` are what the chain says, and the
    Ed25519 signature over everything else — with `public_key` (hex), or the key `secret`
    derives, or else the report's own `public_key` (which proves integrity, not authorship)."""
    if not isinstance(report, dict):
        return ["a report is a JSON object"]
    missing = [k for k in ("format", "run_id", "public_key", "entries", "episodes", "summary",
                           "head", "signature") if k not in report]
    if missing:
        return [f"missing fields: {', '.join(missing)}"]
    if report["format"] != REPORT_FORMAT:
        return [f"format {report['format']!r} is not {REPORT_FORMAT!r}"]
    problems: list[str] = []
    entries = report["entries"]
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return ["entries must be a list of objects"]
    prev = genesis(str(report["run_id"]))
    for i, e in enumerate(entries):
        if e.get("seq") != i or e.get("prev") != prev or e.get("hash") != entry_hash(e):
            problems.append(f"the chain breaks at entry {i} (removed, edited or reordered "
                            "entries)")
            break
        prev = e["hash"]
    if not problems:
        if report["head"] != prev:
            problems.append("head is not the last entry's hash (entries removed at the end)")
        try:
            episodes, summary = derive(entries)
        except (KeyError, TypeError):
            problems.append("an entry lacks what its event needs")
        else:
            if report["episodes"] != episodes:
                problems.append("episodes do not match the chain")
            if report["summary"] != summary or report.get("final") != summary["closed"] \
                    or report.get("episodes_drawn") != summary["drawn"]:
                problems.append("summary does not match the chain")
    key = public_key or (public_key_hex(secret) if secret is not None else None)
    if key is not None and key != report["public_key"]:
        problems.append("signed with another key than the one given")
    try:
        Ed25519PublicKey.from_public_bytes(bytes.fromhex(str(report["public_key"]))).verify(
            bytes.fromhex(str(report["signature"])), canonical(_signed_part(report)))
    except (ValueError, InvalidSignature):
        problems.append("bad signature")
    return problems


def verify_report(report: Any, secret: bytes | None = None, *,
                  public_key: str | None = None) -> bool:
    """True when `report` is an unbroken chain signed with the key of `secret` (or
    `public_key`); see `check_report`."""
    if secret is None and public_key is None:
        raise ValueError("verify_report needs the secret or the organiser's public key")
    return not check_report(report, public_key=public_key, secret=secret)


# ---- the sealed server ---------------------------------------------------------------------

def refusal(code: str, message: str) -> HTTPException:
    """A typed 403 of sealed mode."""
    return HTTPException(403, {"code": code, "message": message})


def redacted_state(state: BaseModel) -> dict[str, Any]:
    return state.model_dump(exclude=set(REDACTED_STATE_FIELDS))


class SealedMode:
    """The secret, the run id and the ledger of one sealed run; the HTTP episodes' watcher
    (`envkit.http_episodes.EpisodeWatcher`): it seals each reset, records each draw and ends
    every episode in the ledger, however it ends."""

    def __init__(self, allowed_reset_fields: Iterable[str], secret: bytes | None = None,
                 env: str = ""):
        env_secret = os.environ.get("MEMEX_SEALED_SECRET")
        self.secret = secret or (env_secret.encode() if env_secret else secrets.token_bytes(32))
        self.run_id = secrets.token_hex(8)
        self.env = env
        self.allowed = frozenset(allowed_reset_fields)
        self.ledger = Ledger(self.run_id)
        self._key = signing_key(self.secret)
        self.public_key = public_key_hex(self.secret)
        self._nonce = 0

    @property
    def drawn(self) -> int:
        return self.ledger.drawn

    def draw_seed(self) -> int:
        """The next secret seed of this run."""
        self._nonce += 1
        digest = hmac.new(self.secret, f"{self.run_id}|{self._nonce}".encode(),
                          hashlib.sha256).digest()
        return SEALED_SEED_BASE + int.from_bytes(digest[:8], "big") % SEALED_SEED_SPAN

    # -- the watcher --
    def seal(self, options: BaseModel) -> BaseModel:
        """A validated reset body with the secret seed put in; chosen seeds, client episode ids
        and fields the environment does not allow a sealed run to set are refused (403), and so
        is every reset once the run is closed or full."""
        if self.ledger.closed:
            raise refusal("sealed_run_closed", "sealed evaluation: this run is closed; its "
                                               "report is final (GET /sealed/report)")
        if self.ledger.drawn >= MAX_SEALED_EPISODES:
            raise refusal("sealed_run_full", f"sealed evaluation: this run has drawn its "
                                             f"{MAX_SEALED_EPISODES} episodes")
        chosen = set(options.model_fields_set) - self.allowed
        if chosen:
            raise refusal("sealed_reset_field",
                          f"sealed evaluation: the server draws seeds and episode ids; these "
                          f"reset fields are not allowed: {', '.join(sorted(chosen))} "
                          f"(allowed: {', '.join(sorted(self.allowed)) or 'none'})")
        return options.model_copy(update={"seed": self.draw_seed()})

    def opened(self, episode_id: str, ep: Episode, options: BaseModel) -> None:
        """Record the draw with the options the client may set, each as played (a field left
        to the server's default is read back from the episode's state)."""
        chosen = options.model_dump(mode="json", include=set(self.allowed))
        state = ep.env.state
        self.ledger.draw(episode_id, {k: v if v is not None else getattr(state, k, None)
                                      for k, v in sorted(chosen.items())})

    def ended(self, episode_id: str, ep: Episode, reason: str) -> None:
        """Record how an episode of this run ended; one that did not finish is first ended by
        its environment (`abandon()`), scored as an unfinished episode."""
        if not self.ledger.running(episode_id):
            return  # never drawn (a failed reset), or already recorded
        if ep.last is None or not ep.last.done:
            ep.last = ep.env.abandon()
        status = "finished" if reason == "finished" else reason
        self.ledger.end(episode_id, status, ep.env.episode_result() or {},
                        redacted_state(ep.env.state))

    # -- the report --
    def report(self) -> dict[str, Any]:
        entries = list(self.ledger.entries)
        episodes, summary = derive(entries)
        payload = {"format": REPORT_FORMAT, "env": self.env, "run_id": self.run_id,
                   "public_key": self.public_key, "final": summary["closed"],
                   "episodes_drawn": summary["drawn"], "summary": summary,
                   "episodes": episodes, "entries": entries,
                   "head": entries[-1]["hash"] if entries else genesis(self.run_id)}
        return {**payload, "signature": self._key.sign(canonical(payload)).hex()}


class CloseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    agent: str | None = Field(default=None, max_length=MAX_AGENT_NAME_CHARS,
                              description="The agent that played the run, as the client "
                                          "declares it (recorded in the closing entry).")


def install_sealed(app: FastAPI, allowed_reset_fields: Iterable[str],
                   secret: bytes | None = None) -> SealedMode:
    """Seal `app` (built by `create_env_app`): see the module docstring."""
    episodes: HttpEpisodes = app.state.http_episodes
    for method in ("abandon", "episode_result"):
        if not callable(getattr(episodes.factory, method, None)):
            raise TypeError(f"sealed mode needs {episodes.factory.__name__}.{method}() "
                            "(envkit.sealed.SealableEnvironment)")
    mode = SealedMode(allowed_reset_fields, secret, env=app.state.env_name)
    policy_routes = [r for r in app.router.routes
                     if isinstance(r, APIRoute) and POLICY_ROUTE_TAG in (r.tags or ())]
    app.router.routes[:] = [r for r in app.router.routes if r not in policy_routes and not (
        isinstance(r, APIRoute | APIWebSocketRoute) and (
            r.path in CLOSED_PATHS or (r.path == "/state" and "GET" in (r.methods or ()))))]
    for route in policy_routes:
        _refuse_policy_route(app, route)

    episodes.watcher = mode
    app.state.sealed = mode
    app.state.settings.update({
        "sealed": True, "agent_policies": [], "sealed_run_id": mode.run_id,
        "sealed_public_key": mode.public_key, "sealed_reset_fields": sorted(mode.allowed)})

    @app.get("/state", tags=["State Management"], summary="State of an HTTP episode (sealed: "
             "no seed)")
    async def state(episode_id: str = Query(...)) -> dict[str, Any]:
        return redacted_state(episodes.get(episode_id, touch=False).env.state)

    @app.get("/sealed/report", tags=["Sealed evaluation"],
             summary="The run's ledger, episodes and summary, signed (Ed25519)")
    async def report() -> dict[str, Any]:
        episodes.reap()  # an episode idle past the timeout is listed as expired, not playing
        return mode.report()

    @app.post("/sealed/close", tags=["Sealed evaluation"],
              summary="Close the run: abandon what still runs; returns the final report")
    async def close(request: CloseRequest | None = Body(default=None)) -> dict[str, Any]:
        if mode.ledger.closed:
            raise HTTPException(409, {"code": "sealed_run_closed",
                                      "message": "this run is already closed; GET "
                                                 "/sealed/report has its final report"})
        mode.ledger.closed = True  # no reset from here on, while the live ones are ended
        for episode_id in episodes.live_ids():
            ep = episodes.peek(episode_id)
            if ep is not None:
                async with ep.lock:
                    episodes.close(episode_id, reason="abandoned")
        mode.ledger.close(request.agent if request else None)
        return mode.report()

    return mode


def _refuse_policy_route(app: FastAPI, route: APIRoute) -> None:
    """The same path and methods, answering the typed 403: only the agent plays."""

    async def refused() -> None:
        raise refusal("sealed_policy_route", "sealed evaluation: only the agent plays; "
                                             "built-in policies are off on a sealed server "
                                             "(send your own actions with POST /step)")

    app.add_api_route(route.path, refused, methods=sorted(route.methods or ()),
                      tags=list(route.tags or ()), summary=f"{route.summary} (sealed: 403)",
                      status_code=403)


def sealed_from_env(flag: bool | None) -> bool:
    """The `sealed` argument of a `create_*_app`, defaulting to `MEMEX_SEALED=1`."""
    return os.environ.get("MEMEX_SEALED", "0") == "1" if flag is None else flag


# ---- the verifier CLI ----------------------------------------------------------------------

def _mean_interval(values: Sequence[float]) -> str:
    if not values:
        return "n/a"
    mean = statistics.fmean(values)
    if len(values) < 2:
        return f"{mean:.3f}"
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values))
    return f"{mean:.3f} [{mean - half:.3f}, {mean + half:.3f}]"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m memex.envkit.sealed",
                                description="Sealed evaluation reports.")
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="check a saved report: chain, derived parts, signature")
    v.add_argument("report", type=Path)
    v.add_argument("--public-key", default=None,
                   help="the organiser's public key (hex); else the key MEMEX_SEALED_SECRET "
                        "derives, else only the report's own key (integrity, not authorship)")
    args = p.parse_args(argv)
    try:
        report = json.loads(args.report.read_text())
    except (OSError, ValueError) as exc:
        print(f"{args.report}: cannot read a report ({exc})", file=sys.stderr)
        return 2
    env_secret = os.environ.get("MEMEX_SEALED_SECRET")
    secret = env_secret.encode() if env_secret and not args.public_key else None
    problems = check_report(report, public_key=args.public_key, secret=secret)
    if problems:
        print(f"{args.report}: INVALID", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem}", file=sys.stderr)
        return 1
    s = report["summary"]
    scores = [e["score"] for e in report["episodes"] if e["score"] is not None]
    trust = ("the given key" if args.public_key else "the key of MEMEX_SEALED_SECRET"
             if secret else "its own key only — pass --public-key to check who signed it")
    print(f"{args.report}: valid ({len(report['entries'])} entries, signed by "
          f"{report['public_key'][:16]}…, checked against {trust})")
    print(f"  run {report['run_id']} ({report.get('env') or 'env ?'}), agent "
          f"{s['agent']!r}, {'closed' if s['closed'] else 'NOT closed (still open)'}")
    print(f"  drawn {s['drawn']}: " + ", ".join(f"{k} {n}" for k, n in s["by_status"].items())
          + f", playing {s['playing']}; mean score {_mean_interval(scores)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
