"""The one interface every case kind implements, suspicious typology or benign look-alike.

A kind is a module exposing `KIND = KindSpec(...)`. `build(builder, variant)` writes the
scheme (or the innocent activity) into the builder and returns the finished `Case`. Adding a
typology means adding a module and listing it in `scenarios.generator.KINDS`.
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
