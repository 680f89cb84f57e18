"""The one interface every case kind implements, suspicious typology or benign look-alike.

A kind is a module exposing `KIND = KindSpec(...)`. Kinds do not write their own alerts: each
monitoring rule has one surface sampler (`scenarios.surfaces`) shared by every kind that fires it,
so the alert is drawn from one distribution whatever the label. A kind is a latent story: its
`schemes` name, per variant, the rule it fires and its anchor cross-check, and its
`build(builder, variant)` hands them to `scenarios.story.build_case`, which writes the rest of
the world — consistent for benign kinds, with the anchor's cover story failing for suspicious
ones. Adding a typology means adding a module (its variants and their anchor checks) and
listing it in `scenarios.generator.KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case
from memex.scenarios.story import Scheme


@dataclass(frozen=True)
class KindSpec:
    name: str
    suspicious: bool
    schemes: Mapping[str, Scheme]  # variant -> (the rule it fires, its anchor check)
    build: Callable[[CaseBuilder, str], Case]
    holdout_variants: tuple[str, ...] = ()
    variants: tuple[str, ...] = field(init=False)
    rules: tuple[str, ...] = field(init=False)  # the rules its variants fire, first seen first

    def __post_init__(self) -> None:
        object.__setattr__(self, "variants", tuple(self.schemes))
        object.__setattr__(self, "rules", tuple(dict.fromkeys(
            s.rule for s in self.schemes.values())))
