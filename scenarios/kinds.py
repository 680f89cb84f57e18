"""The one interface every case kind implements, suspicious typology or benign look-alike.

A kind is a module exposing `KIND = KindSpec(...)`. Kinds do not write their own alerts: each
monitoring rule has one surface sampler (`scenarios.surfaces`) shared by every kind that fires it,
so the alert is drawn from one distribution whatever the label. A kind is a latent story: its
`build(builder, variant)` names the rule, the class and the variant's anchor cross-check, and
`scenarios.story.build_case` writes the rest of the world — consistent for benign kinds, with the
anchor's cover story failing for suspicious ones. Adding a typology means adding a module (its
variants and their anchor checks) and listing it in `scenarios.generator.KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memex.scenarios.builder import CaseBuilder
from memex.scenarios.case import Case


@dataclass(frozen=True)
class KindSpec:
    name: str
    suspicious: bool
    variants: tuple[str, ...]
    rules: tuple[str, ...]
    build: Callable[[CaseBuilder, str], Case]
    holdout_variants: tuple[str, ...] = ()
