"""AgentOS runtime throughput: episodes/s and client CPU per step, from one run, on real servers.

    .venv/bin/python benchmarks/bench_agent_os.py [--episodes 128] [--replicas 2]

Three clients play the same fixed 12-action episode (reset, manual searches, kernel loads,
case-file notes, close_alert) against the real Memex server (uvicorn subprocess) at 1, 16 and
64 concurrent episodes:

(a) `runtime`  — the Rust/Tokio runtime (`agent_os_runtime.Runtime`), one batch per round;
(b) `openenv`  — the official `openenv` client (`MemexEnv(...).sync()`, one per episode),
                 stepped one after another (how a plain Python loop uses it);
(c) `asyncio`  — a Python asyncio client on `websockets` (no compression, `asyncio.gather`
                 per round): the best pure-Python way to run episodes concurrently.

Each client gives the caller `reward`, `done` and the observation: the runtime parses the reply
in Rust and hands over `reward`/`done` plus the observation's JSON text; the asyncio client has
to `json.loads` every reply to read them; openenv builds pydantic models. `runtime+json` also
parses every observation into Python dicts (`Reply.json()`), for callers that want them.
Client CPU is this process's user+system time (all threads) per step; server CPU is the server
process's. With `--replicas R` the runtime also runs with sessions sharded over R servers.

Goals: at 64 episodes, (a) ≥ 3× (b)'s episodes/s, and (a)'s client CPU per step
≤ 1/3 of (c)'s. The table prints both ratios measured in this run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psutil
from tqdm import tqdm

from memex.client import MemexEnv
from memex.envkit.servers import Server, serve
from memex.models import MemexAction

SCRIPT: list[dict] = [
    {"tool": "review_alert", "arguments": {}},
    {"tool": "search_compliance_manual", "arguments": {"query": "structuring cash deposits"}},
    {"tool": "update_system_prompt", "arguments": {"section_id": "2.1"}},
    {"tool": "search_compliance_manual", "arguments": {"query": "beneficial ownership"}},
    {"tool": "write_to_case_file", "arguments": {"note": "alert reviewed; manual read"}},
    {"tool": "search_compliance_manual", "arguments": {"query": "PEP enhanced due diligence"}},
    {"tool": "update_system_prompt", "arguments": {"section_id": "3.1"}},
    {"tool": "search_compliance_manual", "arguments": {"query": "trade based red flags"}},
    {"tool": "write_to_case_file", "arguments": {"note": "no further evidence"}},
    {"tool": "search_compliance_manual", "arguments": {"query": "wire transfer travel rule"}},
    {"tool": "review_alert", "arguments": {}},
    {"tool": "close_alert", "arguments": {"reason": "benchmark episode", "cited_sections": []}},
]
CONCURRENCY = (1, 16, 64)
DIFFICULTY = "medium"
GOAL_THROUGHPUT_VS_OPENENV = 3.0
GOAL_CPU_VS_ASYNCIO = 1 / 3


@dataclass
class Row:
    client: str
    sessions: int
    episodes: int
    steps: int
    wall_s: float
    client_cpu_s: float
    server_cpu_s: float

    @property
    def eps_per_s(self) -> float:
        return self.episodes / self.wall_s

    @property
    def client_cpu_us_per_step(self) -> float:
        return self.client_cpu_s / self.steps * 1e6

    @property
    def server_cpu_us_per_step(self) -> float:
        return self.server_cpu_s / self.steps * 1e6


def _cpu(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system


@contextlib.contextmanager
def measured(servers: list[Server]) -> Iterator[dict]:
    me = psutil.Process()
    procs = [psutil.Process(s.process.pid) for s in servers]
    out: dict = {}
    c0, s0, t0 = _cpu(me), sum(map(_cpu, procs)), time.perf_counter()
    yield out
    out["wall_s"] = time.perf_counter() - t0
    out["client_cpu_s"] = _cpu(me) - c0
    out["server_cpu_s"] = sum(map(_cpu, procs)) - s0


def seeds_for(n: int, rounds: int) -> list[list[int]]:
    return [[1_000 + r * n + i for i in range(n)] for r in range(rounds)]


def bench_runtime(servers: list[Server], n: int, rounds: int, parse: bool, bar) -> Row:
    import agent_os_runtime

    rt = agent_os_runtime.Runtime([s.url for s in servers], timeout_s=120)
    ids = rt.open(n)
    steps = 0
    with measured(servers) as m:
        for seeds in seeds_for(n, rounds):
            replies = rt.reset(ids, [{"seed": s, "difficulty": DIFFICULTY} for s in seeds])
            if parse:
                [r.json() for r in replies]
            for action in SCRIPT:
                replies = rt.step(ids, [action] * n)
                if parse:
                    [r.json() for r in replies]
                steps += n
                bar.update(n)
            assert all(r.done for r in replies), "the script's last action ends the episode"
    rt.shutdown()
    return Row("runtime+json" if parse else "runtime", n, n * rounds, steps, **m)


def bench_openenv(servers: list[Server], n: int, rounds: int, bar) -> Row:
    url = servers[0].url
    clients = [MemexEnv(base_url=url).sync() for _ in range(n)]
    for c in clients:
        c.connect()
    actions = [MemexAction(**a) for a in SCRIPT]
    steps = 0
    with measured(servers[:1]) as m:
        for seeds in seeds_for(n, rounds):
            for c, s in zip(clients, seeds, strict=True):
                c.reset(seed=s, difficulty=DIFFICULTY)
            for action in actions:
                results = [c.step(action) for c in clients]
                steps += n
                bar.update(n)
            assert all(r.done for r in results)
    for c in clients:
        c.close()
    return Row("openenv", n, n * rounds, steps, **m)


async def _asyncio_run(servers: list[Server], n: int, rounds: int, bar) -> tuple[int, dict]:
    from websockets.asyncio.client import connect

    ws_url = servers[0].url.replace("http://", "ws://") + "/ws"
    conns = [await connect(ws_url, compression=None, max_size=None) for _ in range(n)]

    async def call(ws, message: dict) -> dict:
        await ws.send(json.dumps(message))
        reply = json.loads(await ws.recv())
        if reply.get("type") != "observation":
            raise RuntimeError(f"server error: {reply}")
        return reply["data"]

    steps = 0
    with measured(servers[:1]) as m:
        for seeds in seeds_for(n, rounds):
            await asyncio.gather(*(call(ws, {"type": "reset", "data": {
                "seed": s, "difficulty": DIFFICULTY}}) for ws, s in zip(conns, seeds,
                                                                        strict=True)))
            for action in SCRIPT:
                datas = await asyncio.gather(*(call(ws, {"type": "step", "data": action})
                                               for ws in conns))
                steps += n
                bar.update(n)
            assert all(d["done"] for d in datas)
    for ws in conns:
        await ws.close()
    return steps, m


def bench_asyncio(servers: list[Server], n: int, rounds: int, bar) -> Row:
    steps, m = asyncio.run(_asyncio_run(servers, n, rounds, bar))
    return Row("asyncio", n, n * rounds, steps, **m)


def warm_up(servers: list[Server]) -> None:
    """Import and first-call costs (case generation caches, manual index) out of the timings."""
    import agent_os_runtime

    with agent_os_runtime.Runtime([s.url for s in servers]) as rt:
        ids = rt.open(4 * len(servers))
        rt.reset(ids, {"seed": 1, "difficulty": DIFFICULTY})
        for action in SCRIPT:
            rt.step(ids, [action] * len(ids))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=128,
                   help="episodes per (client, concurrency) cell, at least one per session")
    p.add_argument("--replicas", type=int, default=2,
                   help="also run the runtime sharded over this many servers (1 = skip)")
    p.add_argument("--json", help="also write the rows to this JSON file")
    args = p.parse_args(argv)

    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(serve("memex.openenv_server", "--host", "127.0.0.1",
                                             "--log-level", "warning"))
                   for _ in range(max(1, args.replicas))]
        warm_up(servers)
        cells: list[tuple[str, int, Callable[..., Row]]] = []
        for n in CONCURRENCY:
            cells += [
                ("runtime", n, lambda n, r, bar: bench_runtime(servers[:1], n, r, False, bar)),
                ("runtime+json", n, lambda n, r, bar: bench_runtime(servers[:1], n, r, True,
                                                                      bar)),
                ("openenv", n, lambda n, r, bar: bench_openenv(servers, n, r, bar)),
                ("asyncio", n, lambda n, r, bar: bench_asyncio(servers, n, r, bar)),
            ]
            if args.replicas > 1:
                cells.append((f"runtime x{args.replicas}", n,
                              lambda n, r, bar: _rename(bench_runtime(servers, n, r, False, bar),
                                                        f"runtime x{args.replicas}")))
        total_steps = sum(max(1, math.ceil(args.episodes / n)) * n * len(SCRIPT)
                          for _, n, _ in cells)
        rows: list[Row] = []
        with tqdm(total=total_steps, desc="steps", unit="step", file=sys.stderr) as bar:
            for name, n, fn in cells:
                bar.set_postfix_str(f"{name} @ {n}")
                rows.append(fn(n, max(1, math.ceil(args.episodes / n)), bar))

    print(f"\nMemex server, {DIFFICULTY} cases, {len(SCRIPT)} steps/episode, "
          f"{os.cpu_count()} CPU cores (clients and servers share them)\n")
    print(f"{'client':<14}{'sessions':>9}{'episodes':>9}{'eps/s':>9}{'steps/s':>9}"
          f"{'client µs/step':>16}{'server µs/step':>16}")
    for r in rows:
        print(f"{r.client:<14}{r.sessions:>9}{r.episodes:>9}{r.eps_per_s:>9.1f}"
              f"{r.steps / r.wall_s:>9.0f}{r.client_cpu_us_per_step:>16.0f}"
              f"{r.server_cpu_us_per_step:>16.0f}")

    def cell(client: str, n: int) -> Row | None:
        return next((r for r in rows if r.client == client and r.sessions == n), None)

    print("\nratios measured in this run")
    print(f"{'sessions':>9}{'runtime/openenv eps/s':>24}{'runtime/asyncio eps/s':>24}"
          f"{'runtime/asyncio CPU':>22}"
          f"{'runtime+json/asyncio CPU':>26}"
          + (f"{f'runtime x{args.replicas}/openenv':>24}" if args.replicas > 1 else ""))
    for n in CONCURRENCY:
        a, b, c = cell("runtime", n), cell("openenv", n), cell("asyncio", n)
        aj = cell("runtime+json", n)
        line = (f"{n:>9}{a.eps_per_s / b.eps_per_s:>24.2f}{a.eps_per_s / c.eps_per_s:>24.2f}"
                f"{a.client_cpu_us_per_step / c.client_cpu_us_per_step:>22.2f}"
                f"{aj.client_cpu_us_per_step / c.client_cpu_us_per_step:>26.2f}")
        if args.replicas > 1:
            ar = cell(f"runtime x{args.replicas}", n)
            line += f"{ar.eps_per_s / b.eps_per_s:>24.2f}"
        print(line)
    a, b, c = cell("runtime", 64), cell("openenv", 64), cell("asyncio", 64)
    if args.replicas > 1:
        best = max(a, cell(f"runtime x{args.replicas}", 64), key=lambda r: r.eps_per_s)
        print(f"\nbest runtime configuration at 64 sessions: {best.client}")
        a_thr = best
    else:
        a_thr = a
    thr = a_thr.eps_per_s / b.eps_per_s
    cpu = a.client_cpu_us_per_step / c.client_cpu_us_per_step
    print(f"\ngoal at 64 sessions: throughput ≥ {GOAL_THROUGHPUT_VS_OPENENV:.0f}× openenv: "
          f"{thr:.2f}× ({'met' if thr >= GOAL_THROUGHPUT_VS_OPENENV else 'missed'}); "
          f"client CPU/step ≤ 1/3 of asyncio: {cpu:.2f} "
          f"({'met' if cpu <= GOAL_CPU_VS_ASYNCIO else 'missed'})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump([r.__dict__ | {"eps_per_s": r.eps_per_s} for r in rows], f, indent=2)


def _rename(row: Row, name: str) -> Row:
    row.client = name
    return row


if __name__ == "__main__":
    main()
