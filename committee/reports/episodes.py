"""Scored committee episodes played in process: one (`run_episode`) or a seeded grid of
policies over a split (`run_grid`, optionally one process per task)."""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from memex.committee.adapter import ADAPTER, DIFFICULTY
from memex.committee.environment import CommitteeEnvironment
from memex.committee.policies import BASELINES, Policy, make_policy
from memex.committee.scoring import episode_metrics
from memex.committee.world.tasks import TASK_NAMES, episode_grid, split_of
from memex.envkit.episodes import EpisodeSpec, LocalSession


@dataclass
class EpisodeResult:
    policy: str
    task: str
    seed: int
    split: str
    score: float
    episode_return: float
    steps: int
    metrics: dict[str, Any]


def run_episode(policy: Policy, task: str, seed: int | None = None,
                env: CommitteeEnvironment | None = None) -> EpisodeResult:
    """Play one in-process, scored episode of `task` (seed None: the canonical instance)."""
    spec = EpisodeSpec(task, DIFFICULTY, seed, ADAPTER.reset_options(task, DIFFICULTY, seed))
    episode = ADAPTER.play(LocalSession(env or CommitteeEnvironment()), policy, spec)
    metrics = episode_metrics(episode.final)
    world_seed = episode.state.seed
    return EpisodeResult(policy.name, task, world_seed, split_of(world_seed), metrics["score"],
                         episode.episode_return, episode.steps, metrics)


def _run_task(args: tuple[str, str, int, tuple[str, ...]]) -> list[EpisodeResult]:
    task, split, episodes, policies = args
    grid = episode_grid(split, episodes, (task,))
    return [run_episode(make_policy(p, g["seed"]), g["task"], g["seed"])
            for p in policies for g in grid]


def run_grid(split: str, episodes: int, policies: Sequence[str] = BASELINES,
             workers: int = 1) -> list[EpisodeResult]:
    """Every policy on the first `episodes` seeds of `split`, task by task."""
    jobs = [(t, split, episodes, tuple(policies)) for t in TASK_NAMES]
    if workers <= 1:
        return [r for job in jobs for r in _run_task(job)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return [r for rs in pool.map(_run_task, jobs) for r in rs]
