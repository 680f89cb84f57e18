"""Levels: full case specifications a curriculum samples, and the space new ones come from.

A `Level` names one case exactly: its seed, difficulty, kind and variant (None: the variant the
generator draws for that seed), and an optional `plan` — the story knobs the launderer adversary
chose (a `scenarios.plan.CasePlan` as a JSON-able dict; `env.reset(seed=..., plan=...)` builds
the case from it; `Level.from_plan(plan, seed)` takes kind, difficulty and variant from it).
`Level.case` is its `scenarios.CaseSpec` (the one reset contract), and `Level.to_spec()` the
`EpisodeSpec` every play loop takes (the trainer's rollouts, the evaluation harness,
`EnvAdapter.play`); `Level.from_spec` goes back. `Level.key` is a canonical JSON string: two
levels are the same level exactly when their keys are equal.

A `LevelSpace` draws fresh levels uniformly over kind x difficulty x seed from one split's seed
range, with the RNG the caller passes (so a sampler that owns the RNG stays deterministic).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memex.envkit.episodes import EpisodeSpec
from memex.scenarios import CaseSpec


@dataclass(frozen=True)
class Level:
    """One case specification. `plan` is compared and hashed through its canonical JSON."""

    seed: int
    difficulty: str
    kind: str
    variant: str | None = None
    plan: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)

    def __post_init__(self) -> None:
        if type(self.seed) is not int or self.seed < 0:
            raise ValueError(f"a level's seed must be a non-negative int, not {self.seed!r}")
        if self.plan is not None:
            if not isinstance(self.plan, Mapping):
                raise TypeError(f"a level's plan must be a JSON object, not {type(self.plan)}")
            # A private JSON copy: JSON-able (else TypeError), and later edits to the caller's
            # dict cannot change this level's identity.
            object.__setattr__(self, "plan", json.loads(json.dumps(self.plan, sort_keys=True)))
            for name in ("kind", "difficulty", "variant"):  # a plan fixes these: agree with it
                if self.plan.get(name) is not None and self.plan[name] != getattr(self, name):
                    raise ValueError(f"level {name} {getattr(self, name)!r} disagrees with its "
                                     f"plan's {self.plan[name]!r}; use Level.from_plan")

    @classmethod
    def from_plan(cls, plan: Mapping[str, Any], seed: int) -> Level:
        """The level of an adversary's plan (`scenarios.plan.CasePlan` as a dict) on `seed`:
        kind, difficulty and variant come from the plan."""
        return cls(int(seed), str(plan.get("difficulty") or "medium"), str(plan["kind"]),
                   plan.get("variant"), plan)

    @property
    def key(self) -> str:
        """Canonical identity: equal keys, same case."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Level) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)

    @property
    def label(self) -> str:
        """Short human label: kind/difficulty/seed, with the variant and a plan mark if set."""
        text = f"{self.kind}/{self.difficulty}/{self.seed}"
        if self.variant:
            text += f"/{self.variant}"
        return text + ("+plan" if self.plan is not None else "")

    def to_json(self) -> dict[str, Any]:
        return {"seed": self.seed, "difficulty": self.difficulty, "kind": self.kind,
                "variant": self.variant,
                "plan": json.loads(json.dumps(self.plan)) if self.plan is not None else None}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Level:
        return cls(int(data["seed"]), str(data["difficulty"]), str(data["kind"]),
                   data.get("variant"), data.get("plan"))

    @property
    def case(self) -> CaseSpec:
        """The case this level names (seed, difficulty, kind, the variant and plan when set)."""
        fixed = {"variant": self.variant} if self.variant is not None else {}
        if self.plan is not None:
            fixed["plan"] = json.loads(json.dumps(self.plan))
        return CaseSpec(seed=self.seed, difficulty=self.difficulty, kind=self.kind, **fixed)

    def to_spec(self, repeat: int = 0) -> EpisodeSpec:
        """The episode spec of this level: its case's, the task label being the kind."""
        return self.case.episode(repeat)

    @classmethod
    def from_spec(cls, spec: EpisodeSpec) -> Level:
        case = CaseSpec.of(spec.reset)
        if case.seed is None or case.kind is None:
            raise ValueError(f"episode {spec.key} names no seed and kind: it is not a level")
        return cls(case.seed, case.difficulty, case.kind, case.variant, case.plan)


@dataclass(frozen=True)
class LevelSpace:
    """Fresh levels, uniform over kinds x difficulties x seeds (variant left to the generator)."""

    kinds: Sequence[str]
    difficulties: Sequence[str]
    seeds: range

    def __post_init__(self) -> None:
        if not self.kinds or not self.difficulties or not len(self.seeds):
            raise ValueError("a level space needs at least one kind, difficulty and seed")

    @classmethod
    def of(cls, adapter: Any, split: str = "train", kinds: Sequence[str] | None = None,
           difficulties: Sequence[str] | None = None, seeds: int | None = None,
           seed_offset: int = 0) -> LevelSpace:
        """The space of `adapter`'s split (all of it, or `seeds` seeds from `seed_offset`)."""
        split_seeds = adapter.splits[split]
        start = split_seeds.start + seed_offset
        stop = split_seeds.stop if seeds is None else start + seeds
        if start not in split_seeds or stop - 1 not in split_seeds:
            raise ValueError(f"seeds {start}..{stop - 1} are outside the {split} split")
        kinds = [k for k in (kinds or adapter.tasks) if k != "1mdb"]  # the fixed case: no seed
        return cls(tuple(kinds), tuple(difficulties or adapter.difficulties), range(start, stop))

    @property
    def size(self) -> int:
        return len(self.kinds) * len(self.difficulties) * len(self.seeds)

    def sample(self, rng: random.Random) -> Level:
        kind = self.kinds[rng.randrange(len(self.kinds))]
        difficulty = self.difficulties[rng.randrange(len(self.difficulties))]
        return Level(self.seeds[rng.randrange(len(self.seeds))], difficulty, kind)
