"""A trivial OpenEnv echo environment served exactly like Memex (same `create_env_app`, same
session limit, same uvicorn options), used as the same-run baseline in `benchmarks/bench_env.py`.
Not a test double of Memex: it is the reference point for what the framework itself costs.

It runs like Memex (`envkit.servers.run_app`) and steps like Memex too: `step_async` and
`reset_async` run on the event loop. Without them OpenEnv would hop every echo step through a
per-session thread pool while Memex steps on the loop, and the ratio would credit Memex with the
thread hop it avoids rather than measure what it adds.

    python -m memex.testing.echo_server --port 8020
"""

from __future__ import annotations

import argparse
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State

from memex.envkit.http_episodes import ResetFields, create_env_app
from memex.envkit.servers import run_app


class EchoAction(Action):
    message: str = ""


class EchoObservation(Observation):
    echoed: str = ""


class EchoEnvironment(Environment[EchoAction, EchoObservation, State]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._state = State()

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              **_: Any) -> EchoObservation:
        self._state = State(episode_id=episode_id)
        return EchoObservation(echoed="")

    def step(self, action: EchoAction, **_: Any) -> EchoObservation:
        self._state.step_count += 1
        return EchoObservation(echoed=action.message, reward=0.0)

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None,
                          **kwargs: Any) -> EchoObservation:
        return self.reset(seed=seed, episode_id=episode_id, **kwargs)

    async def step_async(self, action: EchoAction, **kwargs: Any) -> EchoObservation:
        return self.step(action, **kwargs)

    @property
    def state(self) -> State:
        return self._state


class EchoReset(ResetFields):
    seed: int | None = None


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8020)
    p.add_argument("--max-sessions", type=int, default=256)
    args = p.parse_args(argv)
    app = create_env_app(EchoEnvironment, EchoAction, EchoObservation, State, name="echo",
                         reset_model=EchoReset, max_sessions=args.max_sessions,
                         idle_timeout_s=900.0, title="echo")
    run_app(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
