"""The reference a PM's month-by-month NAV is drawn against in the Glass Box: the heuristic PM
(`policies/heuristic.py`, the reference a trained PM is compared against) played in process on
the same world.

A world is a pure function of `(task, seed)` and the generator is public, so this tells a client
nothing it could not compute itself from an open server's seed; a sealed server, whose seeds are
secret, does not serve it (`server/app.py`).
"""

from __future__ import annotations

import functools
from typing import Any

from memex.committee.adapter import DIFFICULTY
from memex.committee.environment import CommitteeEnvironment, default_task
from memex.committee.policies import POLICIES
from memex.committee.scoring import episode_metrics
from memex.envkit.episodes import EpisodeSpec, LocalSession, play

REFERENCE_POLICY = "heuristic"
CACHED_WORLDS = 128


@functools.lru_cache(maxsize=CACHED_WORLDS)
def reference_path(task: str | None, seed: int | None) -> dict[str, Any]:
    """The reference PM's episode on `(task, seed)` (None: the server's default task, the task's
    canonical seed): its NAV after each period (`nav[0]` the opening NAV), its monthly rewards
    and its score. Raises `ValueError` for an unknown task."""
    task = task or default_task()
    options = {"task": task, "seed": seed}
    episode = play(LocalSession(CommitteeEnvironment()), POLICIES[REFERENCE_POLICY](),
                   EpisodeSpec(task, DIFFICULTY, seed, options))
    return {"policy": REFERENCE_POLICY, "task": task, "seed": episode.state.seed,
            "periods": [o.period for o in episode.observations],
            "nav": [o.portfolio.nav for o in episode.observations],
            "rewards": episode.rewards, "score": episode_metrics(episode.final)["score"]}
