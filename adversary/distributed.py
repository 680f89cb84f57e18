"""Scale-out over Ray: a pool of actors, each scoring plans on its own environment replica (in
process) or on its own WebSocket session of a server (`base_url`).

`ray.init()` starts a local Ray by default; `ray_address` ("auto" or "ray://host:10001") joins
a cluster instead. Used by `search.search(workers=N)` and `evaluate_split(workers=N)`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from memex.adversary.scoring import ScoredPlan, Scorer
from memex.scenarios.plan import CasePlan


class _Worker:
    """One Ray actor: a `Scorer` (its own environment replica or server session)."""

    def __init__(self, defender: Any, base_url: str | None, llm: Any, lifted: bool = False):
        self.scorer = Scorer(defender, base_url=base_url, llm=llm, lifted=lifted)

    def score(self, plan: dict[str, Any], seeds: tuple[int, ...]) -> dict[str, Any]:
        return self.scorer.score(plan, seeds).to_dict()

    def pid(self) -> int:
        return os.getpid()


class ScorerPool:
    """`workers` Ray actors scoring (plan, seeds) items round-robin; results in input order."""

    def __init__(self, defender: Any = "heuristic", *, workers: int = 2,
                 base_url: str | None = None, ray_address: str | None = None,
                 llm: Any = None, num_cpus: int | None = None, lifted: bool = False):
        import ray

        self._ray = ray
        self._started = not ray.is_initialized()
        if self._started:
            ray.init(address=ray_address, num_cpus=num_cpus if ray_address is None else None,
                     include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
        actor = ray.remote(num_cpus=1)(_Worker)
        self.actors = [actor.remote(defender, base_url, llm, lifted)
                       for _ in range(max(1, workers))]

    def score_many(self, items: Sequence[tuple[CasePlan | dict[str, Any], Sequence[int]]],
                   ) -> list[ScoredPlan]:
        refs = [self.actors[i % len(self.actors)].score.remote(
            p.to_dict() if isinstance(p, CasePlan) else p, tuple(s))
            for i, (p, s) in enumerate(items)]
        return [_from_dict(d) for d in self._ray.get(refs)]

    def pids(self) -> list[int]:
        return self._ray.get([a.pid.remote() for a in self.actors])

    def close(self) -> None:
        for a in self.actors:
            self._ray.kill(a)
        self.actors = []
        if self._started:
            self._ray.shutdown()


def _from_dict(d: dict[str, Any]) -> ScoredPlan:
    return ScoredPlan(**{**d, "seeds": tuple(d["seeds"]), "outcomes": tuple(d["outcomes"]),
                         "lifted_outcomes": tuple(d.get("lifted_outcomes", ()))})
