"""Environment speed from one run: in-process reset/step p50, WebSocket steps/s at 1 and 64
sessions next to a trivial OpenEnv echo environment served and measured the same way, and
server memory per live session.

    .venv/bin/python benchmarks/bench_env.py [--rounds 64] [--sessions 1,64]

Both servers run under uvicorn in subprocesses built by the same `create_env_app`; the same
asyncio WebSocket client drives both, so the ratio isolates what Memex adds. Goal: Memex
reaches >= 80% of the echo environment's steps/s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time

import psutil
from tqdm import tqdm
from websockets.asyncio.client import connect

from memex.envkit.servers import serve
from memex.models import MemexAction
from memex.server.environment import MemexEnvironment


def in_process(n: int) -> tuple[float, float]:
    env = MemexEnvironment()
    resets, steps = [], []
    for seed in tqdm(range(n), desc="in-process", leave=False):
        t = time.perf_counter()
        obs = env.reset(seed=seed, difficulty="medium")
        resets.append(time.perf_counter() - t)
        subject = obs.result["subject"]["entity_id"]
        acct = obs.result["account_ids"][0]
        for action in (MemexAction(tool="get_customer_profile", arguments={"entity_id": subject}),
                       MemexAction(tool="query_transactions", arguments={"account_id": acct}),
                       MemexAction(tool="search_compliance_manual", arguments={"query": "cash"})):
            t = time.perf_counter()
            env.step(action)
            steps.append(time.perf_counter() - t)
    return statistics.median(resets) * 1e3, statistics.median(steps) * 1e3


STEPS_PER_EPISODE = 30  # below the smallest step budget, so every step is a real tool call


async def ws_rate(url: str, sessions: int, rounds: int, make_action) -> float:
    """Steps/s over `rounds` rounds; in each round every session resets (untimed), then all
    sessions take STEPS_PER_EPISODE steps concurrently (timed)."""
    conns = [await connect(url.replace("http", "ws") + "/ws", max_size=None)
             for _ in range(sessions)]

    async def reset(ws, seed):
        await ws.send(json.dumps({"type": "reset", "data": {"seed": seed,
                                                              "difficulty": "medium"}}))
        return json.dumps({"type": "step", "data": make_action(
            json.loads(await ws.recv())["data"]["observation"])})

    async def play(ws, action):
        for _ in range(STEPS_PER_EPISODE):
            await ws.send(action)
            await ws.recv()

    timed = 0.0
    for r in range(rounds):
        actions = await asyncio.gather(*(reset(ws, r * sessions + i)
                                         for i, ws in enumerate(conns)))
        start = time.perf_counter()
        await asyncio.gather(*(play(ws, a) for ws, a in zip(conns, actions, strict=True)))
        timed += time.perf_counter() - start
    for ws in conns:
        await ws.close()
    return rounds * sessions * STEPS_PER_EPISODE / timed


def memex_action(first: dict) -> dict:
    """A real investigation call (the redundant-call penalty does not change its cost)."""
    return {"tool": "get_customer_profile",
            "arguments": {"entity_id": first["result"]["subject"]["entity_id"]}}


def echo_action(_first: dict) -> dict:
    return {"message": "hello"}


async def _hold(url: str, n: int) -> list:
    conns = []
    for i in range(n):
        ws = await connect(url.replace("http", "ws") + "/ws", max_size=None)
        await ws.send(json.dumps({"type": "reset", "data": {"seed": i, "difficulty": "hard"}}))
        await ws.recv()
        conns.append(ws)
    return conns


def memory_per_session(url: str, pid: int, n: int) -> float:
    proc = psutil.Process(pid)

    async def run():
        before = proc.memory_info().rss
        conns = await _hold(url, n)
        after = proc.memory_info().rss
        for ws in conns:
            await ws.close()
        return (after - before) / n

    return asyncio.run(run())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=64,
                   help="episodes per session count (divided by the session count, min 2)")
    p.add_argument("--sessions", default="1,64")
    p.add_argument("--episodes", type=int, default=200, help="in-process resets")
    args = p.parse_args()
    reset_ms, step_ms = in_process(args.episodes)
    print(f"in-process: reset p50 {reset_ms:.2f} ms, step p50 {step_ms:.3f} ms")
    counts = [int(x) for x in args.sessions.split(",")]
    with serve("memex.openenv_server", "--log-level", "warning") as memex, \
            serve("memex.testing.echo_server") as echo:
        print(f"{'sessions':>8} {'memex steps/s':>14} {'echo steps/s':>13} {'memex/echo':>10}")
        for n in counts:
            rounds = max(2, args.rounds // n)
            m = asyncio.run(ws_rate(memex.url, n, rounds, memex_action))
            e = asyncio.run(ws_rate(echo.url, n, rounds, echo_action))
            print(f"{n:>8} {m:>14.0f} {e:>13.0f} {m / e:>10.2f}")
        per = memory_per_session(memex.url, memex.process.pid, 64)
        print(f"server memory per live hard-difficulty session: {per / 1024:.0f} KiB")


if __name__ == "__main__":
    main()
