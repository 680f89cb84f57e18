"""The echo environment `benchmarks/bench_env.py` measures Memex against, and the ceiling it
measures Memex's replies with, are served the way Memex is: OpenEnv steps an environment on its
event loop only when the class overrides `step_async` (and resets it there when it overrides
`reset_async`), else in a per-session thread pool, so a baseline without them would be charged a
thread hop per step that Memex never pays. All run under `envkit.servers.run_app`, with the same
uvicorn options and the same collector tuning. The ceiling answers each step with the reply
Memex gave it."""

from __future__ import annotations

import asyncio
import gc

import pytest
import uvicorn
from openenv.core.env_server.http_server import overrides_method
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.serialization import serialize_observation

from memex import openenv_server
from memex.envkit.servers import GC_YOUNG_THRESHOLD
from memex.server.environment import MemexEnvironment
from memex.testing import ceiling_server, echo_server
from memex.testing.ceiling_server import CeilingEnvironment, heuristic_episodes
from memex.testing.echo_server import EchoAction, EchoEnvironment

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("env_cls", [EchoEnvironment, CeilingEnvironment, MemexEnvironment])
def test_the_baseline_and_memex_both_step_on_the_event_loop(env_cls):
    env = env_cls()
    assert overrides_method(env.step_async, Environment.step_async)
    assert overrides_method(env.reset_async, Environment.reset_async)


def test_the_echo_steps_asynchronously_as_it_steps_in_process():
    env = EchoEnvironment()
    asyncio.run(env.reset_async(seed=3))
    obs = asyncio.run(env.step_async(EchoAction(message="hello")))
    assert obs.echoed == "hello" and env.state.step_count == 1
    assert env.step(EchoAction(message="again")).echoed == "again"
    assert env.state.step_count == 2


def test_the_ceiling_answers_each_step_with_the_reply_memex_gave_it(monkeypatch):
    """Memex replayed afresh on the heuristic's recorded actions, and the ceiling given the same
    actions: the same replies on the wire, reset first, and the last one ends the episode."""
    played = heuristic_episodes(3, "medium", first_seed=40)
    monkeypatch.setattr(CeilingEnvironment, "replies", {p.seed: p.replies for p in played})
    for p in played:
        memex, ceiling = MemexEnvironment(), CeilingEnvironment()
        wanted = [memex.reset(seed=p.seed, difficulty="medium"), *map(memex.step, p.actions)]
        got = [asyncio.run(ceiling.reset_async(seed=p.seed))]
        got += [asyncio.run(ceiling.step_async(action)) for action in p.actions]
        assert len(p.actions) > 3 and len(p.replies) == len(p.actions) + 1 and got[-1].done
        assert [serialize_observation(o) for o in got] == \
            [serialize_observation(o) for o in wanted]


@pytest.mark.parametrize("main", [openenv_server.main, echo_server.main, ceiling_server.main])
def test_memex_and_its_baselines_are_served_with_the_same_options_and_collector(main,
                                                                                monkeypatch):
    """What each server's `main` hands uvicorn, with the collector as it stands then: start-up
    objects frozen out of the scans, young collections every `GC_YOUNG_THRESHOLD` allocations."""
    served = []

    def run(app, **options):
        served.append((options, gc.get_freeze_count(), gc.get_threshold()))

    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.setattr(CeilingEnvironment, "replies", {})  # the ceiling's main records its own
    before = gc.get_threshold()
    try:
        main(["--port", "8999", *(["--episodes", "1"] if main is ceiling_server.main else [])])
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
    [(options, frozen, threshold)] = served
    assert options["ws"] == "websockets-sansio" and options["ws_per_message_deflate"] is False
    assert options["port"] == 8999
    assert frozen > 10_000 and threshold == (GC_YOUNG_THRESHOLD, *before[1:])
    if main is ceiling_server.main:  # it replays the heuristic's episode on seed 0
        [(seed, replies)] = CeilingEnvironment.replies.items()
        assert seed == 0 and replies[-1].done and replies[0].step == 0
