"""In-process heuristic episodes for tests and benchmarks of the memory hierarchy."""

from __future__ import annotations

import json
from collections.abc import Callable

from memex.agent_os_core.memory_manager import MemoryManager
from memex.envkit.episodes import Episode, LocalSession, play
from memex.policies.heuristic import Heuristic
from memex.scenarios import CaseSpec
from memex.server.environment import MemexEnvironment


def play_into_memory(memory: MemoryManager, *, seed: int, difficulty: str, kind: str | None,
                     after_step: Callable[[MemoryManager], None] | None = None
                     ) -> MemexEnvironment:
    """Run the heuristic investigator in-process, feeding every step to `memory` as the
    server's JSON (what a remote agent would see); `after_step` runs after each step. Returns
    the finished environment (its `current_case` holds the ground truth to score against)."""
    env = MemexEnvironment()

    def feed(episode: Episode) -> None:
        if len(episode.observations) == 2:  # the reset observation, before the first action
            memory.observe(None, json.loads(episode.observations[0].model_dump_json()))
        memory.observe(episode.actions[-1].model_dump(exclude={"metadata"}),
                       json.loads(episode.final.model_dump_json()))
        if after_step is not None:
            after_step(memory)

    play(LocalSession(env), Heuristic(),
         CaseSpec(seed=seed, difficulty=difficulty, kind=kind).episode(), on_step=feed)
    return env
