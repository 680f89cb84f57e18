"""Environment speed from one run: in-process reset/step p50, WebSocket steps/s at 1 and 64
sessions next to a trivial OpenEnv echo environment served and measured the same way, the
total of Memex replicas (`--replicas`, one process per core), and server memory per session.

    .venv/bin/python benchmarks/bench_env.py [--rounds 64] [--sessions 1,64] [--replicas 0]
        [--step-rounds 5]

Both servers run under uvicorn in subprocesses built by the same `create_env_app`; the same
asyncio WebSocket client drives both, so the ratio isolates what Memex adds. Targets (2
cores): Memex / echo >= 0.6 at 64 sessions through one process; in-process step p50
<= 100 us (three tools right after each reset; a second line gives the p50 over the heuristic
investigator's whole episodes). The replicas line spreads the same 64 sessions round-robin
over N processes.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

import psutil
from tqdm import tqdm
from websockets.asyncio.client import connect

from memex.envkit.servers import healthy, serve, serve_command
from memex.evaluation.runs import run_episode
from memex.models import MemexAction
from memex.openenv_server import replica_urls
from memex.policies.heuristic import Heuristic
from memex.server.environment import MemexEnvironment


def in_process(n: int) -> tuple[float, float, float, dict[str, float]]:
    """Reset p50 (ms), step p50 (ms) in wall time, and step p50 (ms) in this thread's CPU time
    (what a step costs, whatever else the machine is running), overall and per tool."""
    env = MemexEnvironment()
    resets, steps, cpu = [], [], []
    per_tool: dict[str, list[float]] = {}
    for seed in tqdm(range(n), desc="in-process", leave=False):
        t = time.perf_counter()
        obs = env.reset(seed=seed, difficulty="medium")
        resets.append(time.perf_counter() - t)
        subject = obs.result["subject"]["entity_id"]
        acct = obs.result["account_ids"][0]
        for action in (MemexAction(tool="get_customer_profile", arguments={"entity_id": subject}),
                       MemexAction(tool="query_transactions", arguments={"account_id": acct}),
                       MemexAction(tool="search_compliance_manual", arguments={"query": "cash"})):
            c, t = time.thread_time(), time.perf_counter()
            env.step(action)
            steps.append(time.perf_counter() - t)
            cpu.append(time.thread_time() - c)
            per_tool.setdefault(action.tool, []).append(cpu[-1])
    return (statistics.median(resets) * 1e3, statistics.median(steps) * 1e3,
            statistics.median(cpu) * 1e3,
            {tool: statistics.median(xs) * 1e3 for tool, xs in per_tool.items()})


def in_process_episodes(n: int) -> tuple[float, int]:
    """Step p50 (ms, this thread's CPU time) over whole episodes of the heuristic investigator:
    the tool mix a rollout really makes, most steps some way into an episode."""
    env, cpu = MemexEnvironment(), []
    step = env.step

    def timed(action, *args, **kwargs):
        c = time.thread_time()
        obs = step(action, *args, **kwargs)
        cpu.append(time.thread_time() - c)
        return obs

    env.step = timed
    for seed in tqdm(range(n), desc="heuristic episodes", leave=False):
        run_episode(Heuristic(), seed=seed, difficulty="medium", env=env)
    return statistics.median(cpu) * 1e3, len(cpu)


STEPS_PER_EPISODE = 30  # below the smallest step budget, so every step is a real tool call


async def ws_rate(url: str | list[str], sessions: int, rounds: int, make_action) -> float:
    """Steps/s over `rounds` rounds; in each round every session resets (untimed), then all
    sessions take STEPS_PER_EPISODE steps concurrently (timed). Several URLs (replicas): the
    sessions go to them in turn."""
    urls = [url] if isinstance(url, str) else url
    conns = [await connect(urls[i % len(urls)].replace("http", "ws") + "/ws", max_size=None)
             for i in range(sessions)]

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


def _wait_healthy(urls: list[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    for url in urls:
        while not healthy(url):
            if time.monotonic() > deadline:
                raise TimeoutError(f"replica {url} did not become healthy")
            time.sleep(0.2)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=64,
                   help="episodes per session count (divided by the session count, min 2)")
    p.add_argument("--sessions", default="1,64")
    p.add_argument("--episodes", type=int, default=200, help="in-process resets per round")
    p.add_argument("--step-rounds", type=int, default=5, help="rounds of the in-process measures")
    p.add_argument("--report", default=None,
                   help="also write the results here as markdown (soak.py includes the file)")
    p.add_argument("--replicas", type=int, default=0,
                   help="Memex processes for the replicas line (0: one per core; 1: skip it)")
    args = p.parse_args()
    lines: list[str] = []

    def out(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    # The in-process numbers move by up to 2x between runs seconds apart on a shared machine, so
    # each is measured in several rounds and reported as the median round, with the range.
    rounds = [in_process(args.episodes) for _ in range(args.step_rounds)]
    reset_ms, step_ms, step_cpu_ms = (statistics.median(r[i] for r in rounds) for i in range(3))
    cpu_range = f"{min(r[2] for r in rounds) * 1e3:.0f}-{max(r[2] for r in rounds) * 1e3:.0f}"
    tool_cpu_ms = {tool: statistics.median(r[3][tool] for r in rounds) for tool in rounds[0][3]}
    out(f"in-process (median of {args.step_rounds} rounds of {args.episodes} resets): reset p50 "
        f"{reset_ms:.2f} ms, step p50 {step_ms * 1e3:.0f} us wall, {step_cpu_ms * 1e3:.0f} us "
        f"CPU (rounds {cpu_range} us; target <= 100 us); CPU p50 by tool: "
        + ", ".join(f"{tool} {ms * 1e3:.0f} us" for tool, ms in tool_cpu_ms.items()))
    episode_rounds = [in_process_episodes(args.episodes // 4) for _ in range(args.step_rounds)]
    episode_ms = statistics.median(ms for ms, _ in episode_rounds)
    out(f"in-process, {args.episodes // 4} heuristic-investigator episodes "
        f"({episode_rounds[0][1]} steps) x {args.step_rounds} rounds: step p50 "
        f"{episode_ms * 1e3:.0f} us CPU (rounds {min(episode_rounds)[0] * 1e3:.0f}-"
        f"{max(episode_rounds)[0] * 1e3:.0f} us)")
    counts = [int(x) for x in args.sessions.split(",")]
    rates: dict[int, tuple[float, float]] = {}
    with serve("memex.openenv_server", "--log-level", "warning", timeout_s=600) as memex, \
            serve("memex.testing.echo_server", timeout_s=600) as echo:
        out(f"{'sessions':>8} {'memex steps/s':>14} {'echo steps/s':>13} {'memex/echo':>10}")
        for n in counts:
            rounds = max(2, args.rounds // n)
            m = asyncio.run(ws_rate(memex.url, n, rounds, memex_action))
            e = asyncio.run(ws_rate(echo.url, n, rounds, echo_action))
            rates[n] = (m, e)
            out(f"{n:>8} {m:>14.0f} {e:>13.0f} {m / e:>10.2f}"
                + ("   (target >= 0.6 at 64)" if n == 64 else ""))
        per = memory_per_session(memex.url, memex.process.pid, 64)
        out(f"server memory per live hard-difficulty session: {per / 1024:.0f} KiB")
    replicas = args.replicas or len(os.sched_getaffinity(0))
    if replicas > 1:
        n = max(counts)
        argv = [sys.executable, "-m", "memex.openenv_server", "--port", "{port}",
                "--replicas", str(replicas), "--log-level", "warning"]
        with serve_command(argv, name="replicas", timeout_s=600) as first:
            urls = replica_urls("127.0.0.1", first.port, replicas)
            _wait_healthy(urls, timeout_s=600)
            total = asyncio.run(ws_rate(urls, n, max(2, args.rounds // n), memex_action))
        m, e = rates[n]
        out(f"{replicas} replicas, {n} sessions: {total:.0f} steps/s in total = "
            f"{total / m:.2f} x one process, {total / e:.2f} x the echo env")

    if args.report:
        Path(args.report).write_text(
            f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
            f"{len(os.sched_getaffinity(0))} cores (load average at the end "
            f"{os.getloadavg()[0]:.1f}): `benchmarks/bench_env.py "
            f"{' '.join(sys.argv[1:])}`\n\n```\n" + "\n".join(lines) + "\n```\n")


if __name__ == "__main__":
    main()
