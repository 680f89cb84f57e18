"""A `Case` pairs the public view with the hidden ground truth.

The environment keeps the `Case`; tools are handed `case.public` only. Serialisation is
deterministic: field order is fixed by the models and every collection is a tuple built in a
seeded order, so the same `(seed, difficulty, kind)` gives byte-identical JSON.
"""

from __future__ import annotations

from memex.scenarios.model import Frozen, PublicCase
from memex.scenarios.truth import GroundTruth


class Case(Frozen):
    public: PublicCase
    truth: GroundTruth

    def to_json(self, indent: int | None = None) -> str:
        return self.model_dump_json(indent=indent)

    def public_json(self, indent: int | None = None) -> str:
        return self.public.model_dump_json(indent=indent)
