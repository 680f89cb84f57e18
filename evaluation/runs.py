"""One in-process AML episode, played by the one episode loop and summarised as a row (the
baseline tests, the AgentOS comparison and the Glass Box fixtures use it).

For tables over many seeds use the harness: `python -m memex.evaluation.harness`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from memex.adapter import ADAPTER
from memex.envkit.episodes import LocalSession
from memex.envkit.policy import Policy
from memex.envkit.traces import Trace
from memex.scenarios import CaseSpec
from memex.server.environment import MemexEnvironment

_SYSTEM_RNG = random.SystemRandom()


@dataclass
class EpisodeResult:
    policy: str
    seed: int | None
    difficulty: str
    kind: str
    suspicious: bool
    decision: str | None
    outcome: str
    episode_return: float
    terminal_score: float
    steps: int
    page_faults: int
    async_timeouts: int
    trace: Trace | None = None

    @property
    def correct(self) -> bool:
        return self.outcome in ("TP", "TN")


def run_episode(policy: Policy, seed: int | None, difficulty: str, kind: str | None = None,
                env: MemexEnvironment | None = None, record: bool = False,
                **case: Any) -> EpisodeResult:
    """Play one in-process episode on the case `seed`, `difficulty`, `kind` and the other
    `CaseSpec` keywords in `case` name (a random seed when `seed` is None and no fixed case is
    named); with `record`, keep a `memex-trace/1` trace (truth in the footer, since the runner
    generated the case)."""
    if seed is None and "case" not in case:
        seed = _SYSTEM_RNG.randrange(1_000_000)
    spec = CaseSpec(seed=seed, difficulty=difficulty, kind=kind, **case).episode()
    episode = ADAPTER.play(LocalSession(env or MemexEnvironment()), policy, spec)
    terminal = episode.final.metadata["terminal"]
    state, truth = episode.state, episode.case.truth
    return EpisodeResult(policy.name, seed, difficulty, truth.kind, truth.suspicious,
                         state.decision, terminal["outcome"], episode.episode_return,
                         terminal["score"], episode.final.step, state.page_faults,
                         state.async_timeouts, ADAPTER.trace(episode) if record else None)
