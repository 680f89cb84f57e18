"""In-process heuristic episodes for tests and benchmarks of the memory hierarchy."""

from __future__ import annotations

import json
from collections.abc import Callable

from memex.agent_os_core.memory_manager import MemoryManager
from memex.baselines import Heuristic
from memex.server.environment import MemexEnvironment


def play_into_memory(memory: MemoryManager, *, seed: int, difficulty: str, kind: str | None,
                     after_step: Callable[[MemoryManager], None] | None = None
                     ) -> MemexEnvironment:
    """Run the heuristic investigator in-process, feeding every step to `memory` as the
    server's JSON (what a remote agent would see); `after_step` runs after each step. Returns
    the finished environment (its `current_case` holds the ground truth to score against)."""
    env = MemexEnvironment()
    obs = env.reset(seed=seed, difficulty=difficulty, kind=kind)
    policy = Heuristic()
    policy.reset(obs)
    memory.observe(None, json.loads(obs.model_dump_json()))
    while not obs.done:
        action = policy.act(obs)
        obs = env.step(action)
        memory.observe(action.model_dump(exclude={"metadata"}), json.loads(obs.model_dump_json()))
        if after_step is not None:
            after_step(memory)
    return env
