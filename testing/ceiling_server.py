"""Memex at zero step cost, served exactly like Memex: the ceiling of `benchmarks/bench_env.py`.

Each session replays one of the heuristic investigator's episodes: `reset(seed=...)` returns the
observation Memex returned when the heuristic reset that case, and each step returns the one
Memex returned for that step of the episode (the same object, serialised by OpenEnv afresh on
every send), whatever the action. A session therefore costs what OpenEnv spends parsing Memex's
actions and serialising and sending Memex's replies, and nothing else: the steps per second no
faster environment step can pass while the replies stay what they are. Like the echo baseline
(`memex.testing.echo_server`) it steps on the event loop (`step_async`) under `run_app`.
Not a test double of Memex: a reference point for what its replies cost the framework.

    python -m memex.testing.ceiling_server --port 8021 [--episodes 64] [--difficulty medium]
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, ClassVar

from openenv.core.env_server.interfaces import Environment

from memex.envkit.http_episodes import create_env_app
from memex.envkit.servers import run_app
from memex.evaluation.runs import run_episode
from memex.models import MemexAction, MemexObservation, MemexState
from memex.policies.heuristic import Heuristic
from memex.server.app import MemexResetRequest
from memex.server.environment import MemexEnvironment


@dataclass(frozen=True)
class Played:
    """One heuristic episode, as Memex saw it: the actions, and every observation it returned."""

    seed: int
    difficulty: str
    actions: tuple[MemexAction, ...]
    replies: tuple[MemexObservation, ...]  # the reset's, then each step's


def heuristic_episodes(episodes: int, difficulty: str, first_seed: int = 0) -> list[Played]:
    """The heuristic investigator's in-process episodes on `episodes` cases (seeds from
    `first_seed`), recorded as played."""
    env = MemexEnvironment()
    reset, step = env.reset, env.step
    actions: list[MemexAction] = []
    replies: list[MemexObservation] = []

    def recording_reset(*args: Any, **kwargs: Any) -> MemexObservation:
        replies.append(reset(*args, **kwargs))
        return replies[-1]

    def recording_step(action: MemexAction, *args: Any, **kwargs: Any) -> MemexObservation:
        actions.append(action)
        replies.append(step(action, *args, **kwargs))
        return replies[-1]

    env.reset, env.step = recording_reset, recording_step
    played = []
    for seed in range(first_seed, first_seed + episodes):
        actions.clear()
        replies.clear()
        run_episode(Heuristic(), seed=seed, difficulty=difficulty, env=env)
        played.append(Played(seed, difficulty, tuple(actions), tuple(replies)))
    return played


class CeilingEnvironment(Environment[MemexAction, MemexObservation, MemexState]):
    SUPPORTS_CONCURRENT_SESSIONS = True
    replies: ClassVar[dict[int, tuple[MemexObservation, ...]]] = {}  # seed -> `Played.replies`

    def __init__(self) -> None:
        super().__init__()
        self._episode: tuple[MemexObservation, ...] = ()
        self._at = 0

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              **_: Any) -> MemexObservation:
        self._episode, self._at = self.replies[seed], 0
        return self._episode[0]

    def step(self, action: MemexAction, **_: Any) -> MemexObservation:
        self._at += 1
        return self._episode[self._at]

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **kwargs: Any) -> MemexObservation:
        return self.reset(seed=seed, episode_id=episode_id, **kwargs)

    async def step_async(self, action: MemexAction, **kwargs: Any) -> MemexObservation:
        return self.step(action, **kwargs)

    @property
    def state(self) -> MemexState:
        return MemexState(step_count=self._at)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8021)
    p.add_argument("--episodes", type=int, default=64, help="cases, seeds from 0")
    p.add_argument("--difficulty", default="medium")
    p.add_argument("--max-sessions", type=int, default=256)
    args = p.parse_args(argv)
    CeilingEnvironment.replies = {p.seed: p.replies
                                  for p in heuristic_episodes(args.episodes, args.difficulty)}
    app = create_env_app(CeilingEnvironment, MemexAction, MemexObservation, MemexState,
                         name="ceiling", reset_model=MemexResetRequest,
                         max_sessions=args.max_sessions, idle_timeout_s=900.0,
                         title="Memex's replies at zero step cost")
    run_app(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
