"""Load, fault and bad-input run against a Memex server on loopback (`make soak`): bounded in
count and time, 127.0.0.1 only. Writes docs/reliability.md with the figures.

Phases: capacity (many finished episodes through a small pool, then a full pool), huge and
malformed inputs, concurrent steps on one episode, idle reaping of a WebSocket session, a
server restart (recovery time, the typed client's honest error), and a timed soak of N HTTP
episodes from concurrent clients with the server's RSS sampled at start, middle and end.

    python benchmarks/soak.py --episodes 5000 --out docs/reliability.md
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import websockets
from websockets.sync.client import connect as ws_connect

from memex.client import EpisodeLostError, MemexEnv
from memex.envkit.servers import free_port
from memex.models import MemexAction

CLOSE = {"tool": "close_alert", "arguments": {"reason": "explained", "cited_sections": []}}
HOST = "127.0.0.1"


class Stats:
    def __init__(self) -> None:
        self.codes: Counter[int] = Counter()

    def record(self, r: httpx.Response) -> httpx.Response:
        self.codes[r.status_code] += 1
        return r

    @property
    def sent(self) -> int:
        return sum(self.codes.values())

    @property
    def server_errors(self) -> int:
        return sum(n for c, n in self.codes.items() if c >= 500 and c != 503)


def start_server(port: int, env: dict[str, str]) -> tuple[subprocess.Popen, float]:
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "memex.openenv_server", "--host", HOST,
                             "--port", str(port), "--log-level", "warning"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, **env})
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://{HOST}:{port}/health", timeout=1).status_code == 200:
                return proc, time.perf_counter() - t0
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise TimeoutError("server did not start")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def episode(http: httpx.Client, stats: Stats, seed: int) -> None:
    r = stats.record(http.post("/reset", json={"seed": seed, "difficulty": "easy"}))
    if r.status_code != 200:
        return
    eid = r.json()["episode_id"]
    for action in ({"tool": "review_alert"},
                   {"tool": "check_watchlist", "arguments": {"name": f"Soak Name {seed}"}},
                   CLOSE):
        stats.record(http.post("/step", json={"episode_id": eid, "action": action}))


def phase_capacity(url: str, stats: Stats, pool: int) -> dict:
    with httpx.Client(base_url=url, timeout=30) as http:
        for i in range(pool * 4):  # four times the pool, every episode finished
            episode(http, stats, i)
        finished_ok = stats.codes[503] == 0
        ids = []
        for i in range(pool):
            r = stats.record(http.post("/reset", json={"seed": i}))
            ids.append(r.json().get("episode_id"))
        full = stats.record(http.post("/reset", json={}))
        for eid in ids:
            stats.record(http.delete(f"/episodes/{eid}"))
    return {"finished_episodes_through_pool": pool * 4, "no_503_while_finishing": finished_ok,
            "full_pool_status": full.status_code,
            "retry_after_s": full.headers.get("Retry-After")}


def timed(fn) -> tuple[httpx.Response, float]:
    t0 = time.perf_counter()
    r = fn()
    return r, (time.perf_counter() - t0) * 1000


def phase_inputs(url: str, stats: Stats) -> list[tuple[str, int, float, int]]:
    rows = []
    with httpx.Client(base_url=url, timeout=60) as http:
        eid = stats.record(http.post("/reset", json={"seed": 1})).json()["episode_id"]

        def step(action):
            return http.post("/step", json={"episode_id": eid, "action": action})
        cases = {
            "1 MB check_watchlist name": lambda: step(
                {"tool": "check_watchlist", "arguments": {"name": "A" * 1_000_000}}),
            "10 MB body": lambda: http.post("/step", content=b"x" * 10_000_000,
                                            headers={"content-type": "application/json"}),
            "100 kB name (under body limit)": lambda: step(
                {"tool": "check_watchlist", "arguments": {"name": "A" * 100_000}}),
            "lone surrogate in a note": lambda: http.post(
                "/step", content=('{"episode_id": "' + eid + '", "action": {"tool": '
                                  '"write_to_case_file", "arguments": {"note": "\\ud800"}}}'),
                headers={"content-type": "application/json"}),
            "100k-deep JSON": lambda: http.post(
                "/step", content="[" * 100_000 + "]" * 100_000,
                headers={"content-type": "application/json"}),
            "30 kB unknown id": lambda: http.get("/state", params={"episode_id": "x" * 30_000}),
            "seed: true": lambda: http.post("/reset", json={"seed": True}),
            'seed: "7"': lambda: http.post("/reset", json={"seed": "7"}),
            "HEAD /": lambda: http.head("/"),
            "episode still usable": lambda: step({"tool": "review_alert"}),
        }
        for name, fn in cases.items():
            r, ms = timed(fn)
            stats.record(r)
            rows.append((name, r.status_code, ms, len(r.content)))
        stats.record(http.delete(f"/episodes/{eid}"))
    return rows


def phase_concurrent_steps(url: str, stats: Stats, threads: int = 8, each: int = 3) -> dict:
    with httpx.Client(base_url=url, timeout=30) as http:
        eid = stats.record(http.post("/reset", json={"seed": 3, "difficulty": "hard"})
                           ).json()["episode_id"]

    def worker(_):
        with httpx.Client(base_url=url, timeout=30) as h:
            for _ in range(each):
                stats.record(h.post("/step", json={"episode_id": eid,
                                                   "action": {"tool": "review_alert"}}))
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(worker, range(threads)))
    with httpx.Client(base_url=url, timeout=30) as http:
        steps = http.get("/state", params={"episode_id": eid}).json()["step_count"]
        stats.record(http.delete(f"/episodes/{eid}"))
    return {"requests": threads * each, "step_count": steps}


def phase_ws(url: str, idle_s: float) -> dict:
    ws_url = url.replace("http", "ws") + "/ws"
    out = {}
    with ws_connect(ws_url) as ws:
        ws.send(json.dumps({"type": "reset", "data": {"seed": 2}}))
        ws.recv(timeout=30)
        ws.send(b"\x00\x01")
        out["binary_frame"] = json.loads(ws.recv(timeout=30))["data"]["code"]
        ws.send(json.dumps({"type": "step", "data": {"tool": "review_alert"}}))
        out["session_alive_after_bad_frame"] = json.loads(ws.recv(timeout=30))["type"]
        t0 = time.perf_counter()
        try:
            ws.recv(timeout=idle_s * 4)
        except websockets.ConnectionClosed as exc:
            out["idle_close_code"] = exc.rcvd.code if exc.rcvd else None
            out["idle_close_after_s"] = round(time.perf_counter() - t0, 2)
    return out


def phase_restart(port: int, env: dict[str, str],
                  proc: subprocess.Popen) -> tuple[dict, subprocess.Popen]:
    url = f"http://{HOST}:{port}"
    with MemexEnv(base_url=url).sync() as client:
        client.reset(seed=2, difficulty="easy")
        client.step(MemexAction(tool="review_alert"))
        proc.terminate()
        proc.wait(timeout=10)
        proc, start_s = start_server(port, env)
        try:
            client.step(MemexAction(tool="review_alert"))
            honest = "fake result returned"
        except EpisodeLostError as exc:
            honest = f"EpisodeLostError ({str(exc)[:60]}...)"
        t0 = time.perf_counter()
        client.reset(seed=2, difficulty="easy")
        reset_s = time.perf_counter() - t0
    return {"restart_to_healthy_s": round(start_s, 2), "client_after_restart": honest,
            "first_reset_after_restart_ms": round(reset_s * 1000, 1)}, proc


def phase_soak(url: str, pid: int, stats: Stats, episodes: int, workers: int) -> dict:
    samples = {"start": rss_mb(pid)}
    t0 = time.perf_counter()
    half = episodes // 2

    def run(seeds):
        def worker(chunk):
            with httpx.Client(base_url=url, timeout=60) as http:
                for s in chunk:
                    episode(http, stats, s)
        chunks = [seeds[i::workers] for i in range(workers)]
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(worker, chunks))
    run(list(range(half)))
    samples["middle"] = rss_mb(pid)
    run(list(range(half, episodes)))
    samples["end"] = rss_mb(pid)
    wall = time.perf_counter() - t0
    return {"episodes": episodes, "workers": workers, "wall_s": round(wall, 1),
            "requests_per_s": round(episodes * 4 / wall, 1),
            "rss_mb": {k: round(v, 1) for k, v in samples.items()}}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--episodes", type=int, default=5000)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--pool", type=int, default=32, help="MEMEX_MAX_SESSIONS for the run")
    p.add_argument("--idle-s", type=float, default=2.0, help="MEMEX_SESSION_TIMEOUT_S")
    p.add_argument("--out", default="docs/reliability.md")
    args = p.parse_args(argv)
    port = free_port()
    env = {"MEMEX_MAX_SESSIONS": str(args.pool), "MEMEX_SESSION_TIMEOUT_S": str(args.idle_s),
           "PYTHONUNBUFFERED": "1"}
    proc, boot_s = start_server(port, env)
    url = f"http://{HOST}:{port}"
    stats = Stats()
    try:
        capacity = phase_capacity(url, stats, args.pool)
        print("capacity", capacity, flush=True)
        inputs = phase_inputs(url, stats)
        print("inputs done", flush=True)
        concurrent = phase_concurrent_steps(url, stats)
        ws = phase_ws(url, args.idle_s)
        print("ws", ws, flush=True)
        # The restarted server keeps the pool but a realistic idle timeout for the timed soak
        # (2 s would expire episodes whose next request waits behind 8 busy clients).
        restart, proc = phase_restart(port, {**env, "MEMEX_SESSION_TIMEOUT_S": "60"}, proc)
        print("restart", restart, flush=True)
        soak = phase_soak(url, proc.pid, stats, args.episodes, args.workers)
        print("soak", soak, flush=True)
        alive = httpx.get(url + "/health", timeout=5).status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    write_report(Path(args.out), args, boot_s, stats, capacity, inputs, concurrent, ws,
                 restart, soak, alive)
    print(f"wrote {args.out}: {stats.sent} requests, {stats.server_errors} 5xx")


def write_report(path, args, boot_s, stats, capacity, inputs, concurrent, ws, restart, soak,
                 alive) -> None:
    rss = soak["rss_mb"]
    codes = ", ".join(f"{c}: {n}" for c, n in sorted(stats.codes.items()))
    lines = [
        "# Reliability: load, faults and bad inputs on loopback",
        "",
        f"Generated by `make soak` (`benchmarks/soak.py --episodes {args.episodes} "
        f"--workers {args.workers} --pool {args.pool} --idle-s {args.idle_s}`), one server "
        f"process on 127.0.0.1 (boot {boot_s:.1f} s), on a shared 2-core machine. Regression "
        "tests for each defect of issue #12 are in `tests/integration/test_reliability.py`.",
        "",
        "## Totals",
        "",
        f"- HTTP requests sent (all phases, HTTP only): **{stats.sent}**; status codes: {codes}",
        f"- 5xx other than 503-with-Retry-After: **{stats.server_errors}**",
        f"- server healthy at the end: {alive}",
        "",
        "## Capacity that frees itself",
        "",
        f"- {capacity['finished_episodes_through_pool']} finished episodes through a pool of "
        f"{args.pool}: no 503 = {capacity['no_503_while_finishing']} (a finished episode "
        "frees its slot at once).",
        f"- Pool full of unfinished episodes, one more reset: status "
        f"{capacity['full_pool_status']}" + (
            f", Retry-After {capacity['retry_after_s']} s" if capacity["retry_after_s"] else
            " (the least recently used episode, idle longer than the eviction age "
            f"min({args.idle_s} s, 60 s), was evicted for it)") + ".",
        "",
        "## Huge and malformed inputs (one live episode)",
        "",
        "| input | status | ms | reply bytes |",
        "|---|---:|---:|---:|",
        *[f"| {n} | {c} | {ms:.1f} | {b} |" for n, c, ms, b in inputs],
        "",
        "## Concurrent steps on one episode",
        "",
        f"- {concurrent['requests']} steps from 8 threads: step_count {concurrent['step_count']}"
        " (steps are serialised by the episode's lock).",
        "",
        "## WebSocket: bad frames and idle reaping",
        "",
        f"- binary frame → typed error `{ws.get('binary_frame')}`, the session then answers "
        f"`{ws.get('session_alive_after_bad_frame')}`.",
        f"- idle session (timeout {args.idle_s} s): socket closed with code "
        f"{ws.get('idle_close_code')} after {ws.get('idle_close_after_s')} s of silence.",
        "",
        "## Restart",
        "",
        f"- restart to healthy: {restart['restart_to_healthy_s']} s; typed client's next step: "
        f"{restart['client_after_restart']}; first reset after: "
        f"{restart['first_reset_after_restart_ms']} ms.",
        "",
        "## Timed soak",
        "",
        f"- {soak['episodes']} HTTP episodes (reset + 3 steps each) from {soak['workers']} "
        f"concurrent clients in {soak['wall_s']} s ({soak['requests_per_s']} requests/s; the "
        "restarted server, session timeout 60 s, pool "
        f"{args.pool} — every episode ends, so the pool never fills).",
        f"- server RSS: start {rss['start']} MB, middle {rss['middle']} MB, end {rss['end']} MB.",
        "",
        "## Before (issue #12's measurements, old code)",
        "",
        "256 finished episodes locked the HTTP pool for 15 minutes (503, no Retry-After); a "
        "1 MB name froze every client for ~6.6 s and 10-50 MB bodies were accepted (a 50 MB "
        "query: 33 s stall, RSS 224 → 1,102 MB); reaped WebSocket sessions kept working "
        "(cap 8 → 16); 256 HTTP-MCP session creates locked out every WebSocket client; a lone "
        "surrogate broke an episode for good (every later step a 500); the typed client "
        "reported a fake `done` after a reconnect. Each is now a test in "
        "`tests/integration/test_reliability.py` that fails on the old code.",
        "",
        "## Not done (issue #12)",
        "",
        "- Replicas (`--replicas N`, clients spreading sessions) and the throughput targets "
        "(Memex ÷ echo at 64 sessions, in-process step p50) were not implemented or measured.",
        "- Tool work still runs on the event loop: bounded arguments (2,000 characters, 64 "
        "items, 200 for a watchlist name) keep a step's worst case to milliseconds, but there "
        "is no per-step deadline.",
        "- With `MEMEX_API_TOKEN` set, the Glass Box cannot yet send the token (its page and "
        "API calls get 401); the API, `/ws` and the truth endpoint are guarded.",
        "",
    ]
    path.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
