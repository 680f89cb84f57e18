"""Environment speed from one run, over the tool mix a rollout really makes: the heuristic
investigator's whole episodes, recorded in process and replayed.

    .venv/bin/python benchmarks/bench_env.py [--episodes 64] [--repeats 3] [--cell-s 8]
        [--sessions 1,64] [--replicas 0] [--report docs/bench_env.md]

1. In process: reset p50, and each tool's step cost (this thread's CPU time, with its share
   of the mix: the p50 of each step's best of `--rounds` replays, and the p50 and mean of
   every replay), next to what OpenEnv's WebSocket loop then spends serialising that step's
   reply (`serialize_observation` + the response's JSON). Target: no tool's p50 above 100 us.
2. WebSocket: Memex next to a trivial echo environment served the same way (same
   `create_env_app`, same uvicorn options, and stepping on the event loop through `step_async`
   like Memex; `memex.testing.echo_server`). Each session replays recorded episodes: in each
   round every session resets (untimed), then all sessions replay one whole episode
   concurrently (timed); the echo gets the same schedule, one echo step per recorded action.
   The cells of one session count are measured together, round by round (the next round goes
   to the server with the least timed seconds so far), so Memex and the echo see the same
   stretch of whatever else the machine runs, until each has `--cell-s` seconds of timed
   steps; that is repeated `--repeats` times, and the table gives each repeat's ratio, the
   spread of the repeats, and the CPU per step of the servers and of this client (what a
   server-bound run's ratio would be, whatever the load). Target: Memex / echo >= 0.6 at 64
   sessions. A third server, the ceiling, answers the same actions with the replies Memex
   gave them, at zero step cost (`memex.testing.ceiling_server`): the ratio no faster step
   can pass while the replies are what they are. With `--replicas N` (0: one per core) N
   Memex processes share the largest session count, round-robin, in the same rounds.
3. Memory per session, on a fresh server (one warm-up episode first, so one-time imports and
   caches are not charged to sessions): RSS after 64 hard-difficulty resets, after replaying a
   heuristic episode in each, after the sessions close, after `gc.collect()` and after glibc's
   `malloc_trim(0)` (a route only the bench's own server has), and after a second open/close
   cycle (whether the memory kept is reused).

Ratios measured in the same run are what this is for: the absolute rates move with whatever
else the machine runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import ctypes.util
import gc
import json
import os
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil
from openenv.core.env_server.serialization import serialize_observation
from openenv.core.env_server.types import WSObservationResponse
from websockets.asyncio.client import connect

from memex.envkit.servers import healthy, run_app, serve, serve_command
from memex.models import MemexAction
from memex.openenv_server import create_memex_app, replica_urls
from memex.server.environment import MemexEnvironment
from memex.testing.ceiling_server import heuristic_episodes

TARGET_TOOL_P50_US = 100
TARGET_RATIO_AT_64 = 0.6
AGREEMENT = 0.10  # repeats of a ratio should agree within this share of their median


@dataclass(frozen=True)
class Recorded:
    """One heuristic episode: its reset and the actions it took, as sent on the wire."""
    seed: int
    difficulty: str
    actions: tuple[dict, ...]


def record_episodes(n: int, difficulty: str, first_seed: int = 0) -> list[Recorded]:
    """The heuristic investigator's actions on `n` cases (seeds from `first_seed`), as sent."""
    return [Recorded(p.seed, p.difficulty,
                     tuple({"tool": a.tool, "arguments": json.loads(json.dumps(a.arguments))}
                           for a in p.actions))
            for p in heuristic_episodes(n, difficulty, first_seed)]


# ---- 1. in process ---------------------------------------------------------------------------
@dataclass
class ToolCosts:
    resets: list[float]
    tools: list[str]                # the tool of each step of the replayed episodes
    step: list[list[float]]         # per step: its CPU seconds in each replay
    wire: list[list[float]]         # per step: CPU seconds to serialise its reply for /ws
    round_means: list[float]        # mean step CPU per replay


def tool_costs(episodes: list[Recorded], rounds: int) -> ToolCosts:
    """Replay `episodes` in process `rounds` times, timing each reset and step."""
    env = MemexEnvironment()
    plays = [(ep, [MemexAction(**a) for a in ep.actions]) for ep in episodes]
    tools = [a.tool for _, actions in plays for a in actions]
    costs = ToolCosts([], tools, [[] for _ in tools], [[] for _ in tools], [])
    for _ in range(rounds):
        i, this_round = 0, []
        for ep, actions in plays:
            t = time.thread_time()
            env.reset(seed=ep.seed, difficulty=ep.difficulty)
            costs.resets.append(time.thread_time() - t)
            for action in actions:
                t = time.thread_time()
                obs = env.step(action)
                t1 = time.thread_time()
                WSObservationResponse(data=serialize_observation(obs)).model_dump_json()
                t2 = time.thread_time()
                costs.step[i].append(t1 - t)
                costs.wire[i].append(t2 - t1)
                this_round.append(t1 - t)
                i += 1
            if not obs.done:
                raise RuntimeError(f"replay of seed {ep.seed} diverged: no terminal step")
        costs.round_means.append(statistics.mean(this_round))
    return costs


def tool_table(costs: ToolCosts, out) -> None:
    """Per tool: the p50 of each step's best replay (the step's own cost, as `timeit` takes the
    best of its repeats: what other work on the machine adds is never less than nothing),
    and the p50 and mean of every replay (what it cost on this machine as loaded)."""
    n = len(costs.round_means)
    every = [x for xs in costs.step for x in xs]
    best = [min(xs) for xs in costs.step]
    wire = [x for xs in costs.wire for x in xs]
    out(f"reset p50 {statistics.median(costs.resets) * 1e3:.2f} ms; step over the mix: "
        f"p50 {statistics.median(best) * 1e6:.0f} us best of {n} replays; every replay p50 "
        f"{statistics.median(every) * 1e6:.0f} us, mean {statistics.mean(every) * 1e6:.0f} us "
        f"CPU (replay means {min(costs.round_means) * 1e6:.0f}-"
        f"{max(costs.round_means) * 1e6:.0f} us); reply serialisation p50 "
        f"{statistics.median(min(xs) for xs in costs.wire) * 1e6:.0f} us best, mean "
        f"{statistics.mean(wire) * 1e6:.0f} us")
    out(f"{'tool':<28}{'share':>7}{f'p50 best of {n}':>15}{'p50 all':>9}{'mean all':>10}"
        f"{'reply p50 best':>16}{'reply mean all':>16}   (us of CPU)")
    worst: tuple[float, str] = (0.0, "")
    for tool in sorted(set(costs.tools), key=lambda t: (-costs.tools.count(t), t)):
        at = [i for i, t in enumerate(costs.tools) if t == tool]
        p50 = statistics.median(best[i] for i in at) * 1e6
        worst = max(worst, (p50, tool))
        runs = [x for i in at for x in costs.step[i]]
        replies = [x for i in at for x in costs.wire[i]]
        out(f"{tool:<28}{len(at) / len(costs.tools):>7.1%}{p50:>15.0f}"
            f"{statistics.median(runs) * 1e6:>9.0f}{statistics.mean(runs) * 1e6:>10.0f}"
            f"{statistics.median(min(costs.wire[i]) for i in at) * 1e6:>16.0f}"
            f"{statistics.mean(replies) * 1e6:>16.0f}")
    out(f"highest tool p50 (best of {n}): {worst[0]:.0f} us, {worst[1]} (target <= "
        f"{TARGET_TOOL_P50_US} us: {'met' if worst[0] <= TARGET_TOOL_P50_US else 'MISSED'})")


# ---- 2. WebSocket ----------------------------------------------------------------------------
Plan = list[tuple[str, list[str]]]  # per episode: the reset message, the step messages


def memex_plan(episodes: list[Recorded]) -> Plan:
    return [(json.dumps({"type": "reset", "data": {"seed": ep.seed,
                                                   "difficulty": ep.difficulty}}),
             [json.dumps({"type": "step", "data": a}) for a in ep.actions])
            for ep in episodes]


def echo_plan(episodes: list[Recorded]) -> Plan:
    """The same schedule for the echo: one echo step per recorded action, carrying it."""
    return [(json.dumps({"type": "reset", "data": {"seed": ep.seed}}),
             [json.dumps({"type": "step", "data": {"message": json.dumps(a)}})
              for a in ep.actions])
            for ep in episodes]


def cpu_s(procs: list[psutil.Process]) -> float:
    """User + system CPU seconds the processes have used."""
    return sum(sum(p.cpu_times()[:2]) for p in procs)


@dataclass
class Cell:
    steps_per_s: float
    server_cpu_us: float  # server CPU per step, over the timed steps
    client_cpu_us: float  # this process's CPU per step, over the timed steps
    reply_chars: float  # mean length of a step's reply (JSON text)


@dataclass
class Target:
    """One server (or set of replicas) and what a cell replays against it."""
    urls: list[str]
    processes: list[psutil.Process]
    plan: Plan
    expect_done: bool


class Sessions:
    """`n` open sessions on a target, replaying its plan a round at a time."""

    def __init__(self, target: Target, n: int):
        self.target, self.n, self.conns = target, n, []
        self.rounds = self.steps = self.reply_chars = 0
        self.timed = self.server_cpu = self.client_cpu = 0.0

    async def open(self) -> None:
        urls = self.target.urls
        self.conns = [await connect(urls[i % len(urls)].replace("http", "ws") + "/ws",
                                    max_size=None) for i in range(self.n)]

    async def close(self) -> None:
        for ws in self.conns:
            await ws.close()

    async def round(self) -> None:
        """Every session resets (untimed), then all replay one whole episode concurrently
        (timed, with the CPU the servers and this client spent: every reply is in before the
        clock starts or stops, so it is the steps' CPU alone)."""
        plan, n, me = self.target.plan, self.n, [psutil.Process()]
        chosen = [plan[(self.rounds * n + i) % len(plan)] for i in range(n)]
        await asyncio.gather(*(self._reset(ws, m)
                               for ws, (m, _) in zip(self.conns, chosen, strict=True)))
        cpu0, mine0, start = cpu_s(self.target.processes), cpu_s(me), time.perf_counter()
        await asyncio.gather(*(self._play(ws, s)
                               for ws, (_, s) in zip(self.conns, chosen, strict=True)))
        self.timed += time.perf_counter() - start
        self.server_cpu += cpu_s(self.target.processes) - cpu0
        self.client_cpu += cpu_s(me) - mine0
        self.steps += sum(len(s) for _, s in chosen)
        self.rounds += 1

    @staticmethod
    async def _reset(ws, message: str) -> None:
        await ws.send(message)
        await ws.recv()

    async def _play(self, ws, steps: list[str]) -> None:
        reply = ""
        for message in steps:
            await ws.send(message)
            reply = await ws.recv()
            self.reply_chars += len(reply)
        if self.target.expect_done and not json.loads(reply)["data"].get("done"):
            raise RuntimeError("a replayed episode did not end: the replay diverged")

    def cell(self) -> Cell:
        return Cell(self.steps / self.timed, self.server_cpu / self.steps * 1e6,
                    self.client_cpu / self.steps * 1e6, self.reply_chars / self.steps)


async def interleaved(targets: dict[str, Target], n: int, min_s: float) -> dict[str, Cell]:
    """One cell per target at `n` sessions, measured in interleaved rounds: the next round
    always goes to the target with the least timed seconds so far, so every target is
    measured through the same stretch of whatever else the machine runs, until each has
    `min_s` seconds (and two rounds)."""
    runs = {name: Sessions(target, n) for name, target in targets.items()}
    for run in runs.values():
        await run.open()
    while True:
        behind = min(runs.values(), key=lambda r: (r.rounds >= 2, r.timed))
        if behind.rounds >= 2 and behind.timed >= min_s:
            break
        await behind.round()
    for run in runs.values():
        await run.close()
    return {name: run.cell() for name, run in runs.items()}


def spread(xs: list[float]) -> float:
    """(max - min) / median: how far the repeats of one measure disagree."""
    return (max(xs) - min(xs)) / statistics.median(xs)


# ---- 3. memory -------------------------------------------------------------------------------
def memory_server(port: int) -> None:
    """Serve Memex as `openenv_server` does, plus `POST /bench/gc` and `POST /bench/trim`
    (gc.collect(); glibc's malloc_trim(0)) for the memory measure. Only this bench serves it."""
    app = create_memex_app()
    libc = ctypes.CDLL(ctypes.util.find_library("c"))

    @app.post("/bench/gc")
    async def collect() -> dict[str, int]:
        return {"collected": gc.collect()}

    @app.post("/bench/trim")
    async def trim() -> dict[str, int]:
        return {"released": int(libc.malloc_trim(0))}

    run_app(app, host="127.0.0.1", port=port)


async def _open(url: str, plan: Plan) -> list:
    conns = []
    for reset_message, _ in plan:
        ws = await connect(url.replace("http", "ws") + "/ws", max_size=None)
        await ws.send(reset_message)
        await ws.recv()
        conns.append(ws)
    return conns


async def _replay(conns: list, plan: Plan) -> None:
    async def play(ws, steps):
        for message in steps:
            await ws.send(message)
            await ws.recv()
    await asyncio.gather(*(play(ws, s) for ws, (_, s) in zip(conns, plan, strict=True)))


def _wait_closed(url: str, timeout_s: float = 10.0) -> None:
    """Until the server holds no live WebSocket session (it frees them after the socket
    closes)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if httpx.get(url + "/info", timeout=2.0).json().get("ws_sessions", 0) == 0:
            return
        time.sleep(0.1)


def memory(url: str, pid: int, plan: Plan, out) -> None:
    proc = psutil.Process(pid)
    n = len(plan)

    def rss() -> int:
        return proc.memory_info().rss

    async def cycle() -> tuple[int, int]:
        conns = await _open(url, plan)
        after_reset = rss()
        await _replay(conns, plan)
        after_episode = rss()
        for ws in conns:
            await ws.close()
        return after_reset, after_episode

    async def warm_up() -> None:
        conns = await _open(url, plan[:1])
        await _replay(conns, plan[:1])
        await conns[0].close()

    asyncio.run(warm_up())
    _wait_closed(url)
    base = rss()
    after_reset, after_episode = asyncio.run(cycle())
    _wait_closed(url)
    closed = rss()
    httpx.post(url + "/bench/gc", timeout=30)
    collected = rss()
    httpx.post(url + "/bench/trim", timeout=30)
    trimmed = rss()
    asyncio.run(cycle())
    _wait_closed(url)
    second = rss()
    mib = 1024 * 1024
    out(f"fresh server, {n} hard-difficulty sessions (RSS {base / mib:.0f} MiB after one warm-up "
        f"episode): per session {(after_reset - base) / n / 1024:.0f} KiB after reset, "
        f"{(after_episode - base) / n / 1024:.0f} KiB after a heuristic episode "
        f"({statistics.mean(len(s) for _, s in plan):.1f} steps)")
    out(f"after the {n} sessions close: {(closed - base) / mib:+.1f} MiB kept; after gc.collect() "
        f"{(collected - base) / mib:+.1f} MiB; after malloc_trim(0) {(trimmed - base) / mib:+.1f} "
        f"MiB; after a second open/close cycle {(second - base) / mib:+.1f} MiB ("
        + ("the memory kept is reused" if second - trimmed < 0.25 * (closed - base)
           else "it GROWS: look for a leak") + ")")


def python_memory_left(episodes: list[Recorded]) -> tuple[float, float, float]:
    """In this process: MiB of Python allocations (tracemalloc) while one environment per
    episode holds its played episode, and after they are all deleted; and RSS kept then."""
    warm = MemexEnvironment()
    warm.reset(seed=episodes[0].seed, difficulty=episodes[0].difficulty)
    del warm
    gc.collect()
    proc = psutil.Process()
    rss0 = proc.memory_info().rss
    tracemalloc.start()
    envs = [MemexEnvironment() for _ in episodes]
    for env, ep in zip(envs, episodes, strict=True):
        env.reset(seed=ep.seed, difficulty=ep.difficulty)
        for action in ep.actions:
            env.step(MemexAction(**action))
    live = tracemalloc.get_traced_memory()[0]
    del envs, env
    gc.collect()
    left = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    mib = 1024 * 1024
    return live / mib, left / mib, (proc.memory_info().rss - rss0) / mib


# ---- the run ---------------------------------------------------------------------------------
def _wait_healthy(urls: list[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    for url in urls:
        while not healthy(url):
            if time.monotonic() > deadline:
                raise TimeoutError(f"replica {url} did not become healthy")
            time.sleep(0.2)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--episodes", type=int, default=64,
                   help="heuristic episodes recorded per difficulty (medium for speed, hard "
                        "for memory)")
    p.add_argument("--rounds", type=int, default=3, help="in-process replays of the episodes")
    p.add_argument("--repeats", type=int, default=3, help="interleaved repeats of each WS cell")
    p.add_argument("--cell-s", type=float, default=8.0, help="timed seconds per WS cell")
    p.add_argument("--sessions", default="1,64")
    p.add_argument("--replicas", type=int, default=0,
                   help="Memex processes for the replicas cell (0: one per core; 1: skip it)")
    p.add_argument("--report", default=None,
                   help="also write the results here as markdown (soak.py includes the file)")
    p.add_argument("--memory-server", type=int, default=None, metavar="PORT",
                   help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.memory_server is not None:
        return memory_server(args.memory_server)
    lines: list[str] = []

    def out(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    medium = record_episodes(args.episodes, "medium")
    hard = record_episodes(64, "hard", first_seed=10_000)
    out(f"tool mix: {args.episodes} heuristic-investigator episodes at medium difficulty, "
        f"{sum(len(e.actions) for e in medium)} steps")
    out("")
    out(f"## in process ({args.rounds} replays)")
    tool_table(tool_costs(medium, args.rounds), out)

    counts = [int(x) for x in args.sessions.split(",")]
    replicas = args.replicas or len(os.sched_getaffinity(0))
    plans = {"memex": memex_plan(medium), "echo": echo_plan(medium)}
    cells: dict[tuple[str, int], list[Cell]] = {}
    out("")
    out(f"## WebSocket ({args.repeats} repeats of interleaved rounds, >= {args.cell_s:g} s of "
        f"timed steps per cell)")
    with contextlib.ExitStack() as stack:
        memex = stack.enter_context(serve("memex.openenv_server", "--log-level", "warning",
                                          timeout_s=600))
        echo = stack.enter_context(serve("memex.testing.echo_server", timeout_s=600))
        ceiling = stack.enter_context(serve("memex.testing.ceiling_server", "--episodes",
                                            str(args.episodes), timeout_s=600))
        replica_list = []
        if replicas > 1:
            first = stack.enter_context(serve_command(
                [sys.executable, "-m", "memex.openenv_server", "--port", "{port}",
                 "--replicas", str(replicas), "--log-level", "warning"],
                name="replicas", timeout_s=600))
            replica_list = replica_urls("127.0.0.1", first.port, replicas)
            _wait_healthy(replica_list, timeout_s=600)
        targets = {"memex": Target([memex.url], [psutil.Process(memex.process.pid)],
                                   plans["memex"], True),
                   "echo": Target([echo.url], [psutil.Process(echo.process.pid)],
                                  plans["echo"], False),
                   "ceiling": Target([ceiling.url], [psutil.Process(ceiling.process.pid)],
                                     plans["memex"], True)}
        if replica_list:
            targets["replicas"] = Target(replica_list,
                                         psutil.Process(first.process.pid).children(),
                                         plans["memex"], True)
        for _ in range(args.repeats):
            for n in counts:
                chosen = {name: t for name, t in targets.items()
                          if name != "replicas" or n == max(counts)}
                for name, cell in asyncio.run(interleaved(chosen, n, args.cell_s)).items():
                    cells.setdefault((name, n), []).append(cell)
        rates = {key: [c.steps_per_s for c in cs] for key, cs in cells.items()}
        out(f"{'sessions':>8} {'repeat':>6} {'steps/s memex, echo, ceiling':>29} "
            f"{'memex/echo':>10} {'ceiling/echo':>12} "
            f"{'server CPU us/step memex, echo, ceiling':>40} "
            f"{'client CPU us/step memex, echo':>31}")
        for n in counts:
            for rep in range(args.repeats):
                m, e, c = (cells[(name, n)][rep] for name in ("memex", "echo", "ceiling"))
                out(f"{n:>8} {rep + 1:>6} "
                    f"{f'{m.steps_per_s:.0f}, {e.steps_per_s:.0f}, {c.steps_per_s:.0f}':>29} "
                    f"{m.steps_per_s / e.steps_per_s:>10.2f} "
                    f"{c.steps_per_s / e.steps_per_s:>12.2f} "
                    f"{f'{m.server_cpu_us:.0f}, {e.server_cpu_us:.0f}, {c.server_cpu_us:.0f}':>40} "
                    f"{f'{m.client_cpu_us:.0f}, {e.client_cpu_us:.0f}':>31}")
        for n in counts:
            ms, es, cs = (rates[(name, n)] for name in ("memex", "echo", "ceiling"))
            ratios = [m / e for m, e in zip(ms, es, strict=True)]
            ceilings = [c / e for c, e in zip(cs, es, strict=True)]
            agree = spread(ratios) <= AGREEMENT
            met = statistics.median(ratios) >= TARGET_RATIO_AT_64
            out(f"{n} sessions: memex/echo median {statistics.median(ratios):.2f} (repeats "
                f"{min(ratios):.2f}-{max(ratios):.2f}, spread {spread(ratios):.0%}: "
                f"{'within' if agree else 'NOT within'} {AGREEMENT:.0%}); spread of the rates "
                f"themselves, which follow the machine's load: memex {spread(ms):.0%}, echo "
                f"{spread(es):.0%}"
                + (f"; target >= {TARGET_RATIO_AT_64} at 64: {'met' if met else 'MISSED'}"
                   if n == 64 else ""))
            cpu = {name: statistics.median(c.server_cpu_us for c in cells[(name, n)])
                   for name in ("memex", "echo", "ceiling")}
            out(f"{n} sessions: server CPU per step (median) memex {cpu['memex']:.0f} us, echo "
                f"{cpu['echo']:.0f} us: echo/memex {cpu['echo'] / cpu['memex']:.2f}, the ratio "
                f"a server-bound run would reach; a step's reply is "
                f"{cells[('memex', n)][0].reply_chars:,.0f} characters (memex) and "
                f"{cells[('echo', n)][0].reply_chars:,.0f} (echo)")
            out(f"{n} sessions: ceiling (Memex's own replies to Memex's own actions at zero step "
                f"cost) / echo median {statistics.median(ceilings):.2f} (repeats "
                f"{min(ceilings):.2f}-{max(ceilings):.2f}), server CPU {cpu['ceiling']:.0f} "
                f"us/step: the most any faster step could reach with these replies; Memex's "
                f"step, with what it brings (fresh observations, more live memory), is "
                f"{cpu['memex'] - cpu['ceiling']:.0f} us of its {cpu['memex']:.0f}")
        if replica_list:
            n = max(counts)
            totals = rates[("replicas", n)]
            vs_one = [t / m for t, m in zip(totals, rates[("memex", n)], strict=True)]
            out(f"{replicas} replicas, {n} sessions: median {statistics.median(totals):.0f} "
                f"steps/s in total = {statistics.median(vs_one):.2f} x one process (repeats "
                f"{min(vs_one):.2f}-{max(vs_one):.2f})")

    out("")
    out("## memory")
    with serve_command([sys.executable, __file__, "--memory-server", "{port}"], name="memory",
                       timeout_s=600) as server:
        memory(server.url, server.process.pid, memex_plan(hard), out)
    live, left, kept = python_memory_left(hard)
    out(f"why (the same {len(hard)} episodes in process): Python allocations {live:.1f} MiB "
        f"while they live, {left:.2f} MiB once deleted (tracemalloc), RSS kept {kept:+.1f} MiB"
        + (": the objects are freed; the allocators keep the pages (pymalloc arenas and glibc's "
           "heap stay mapped while any block in them is in use)" if left < 0.1 * live else ""))

    if args.report:
        Path(args.report).write_text(
            f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
            f"{len(os.sched_getaffinity(0))} cores, shared with other work (load average at the "
            f"end {os.getloadavg()[0]:.1f}): `benchmarks/bench_env.py "
            f"{' '.join(sys.argv[1:])}`\n\n```\n" + "\n".join(lines) + "\n```\n")


if __name__ == "__main__":
    main()
