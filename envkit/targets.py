"""Objects named by import path ("package.module:ATTRIBUTE"), imported on first use.

A registry that names what it lists by path (the environments by name, an environment's
policies, an adapter's environment class) costs nothing to import and points at nothing it
must load: the module is imported only when the name is used, so a registry at the bottom of
the house can list rooms far above it without an import arrow up.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any


def resolve(target: str) -> Any:
    """The object at `target` ("package.module:ATTRIBUTE"); `ValueError` for a malformed path,
    `ImportError` / `AttributeError` for one that names nothing."""
    module, sep, attr = target.partition(":")
    if not sep or not module or not attr:
        raise ValueError(f"{target!r} is not an import path 'package.module:ATTRIBUTE'")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


class Targets(Mapping[str, Any]):
    """A read-only name -> object mapping whose objects are import paths resolved on first
    access (and kept): iterating and `in` import nothing."""

    def __init__(self, targets: Mapping[str, str]):
        self.targets = dict(targets)
        self._resolved: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._resolved:
            self._resolved[name] = resolve(self.targets[name])
        return self._resolved[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.targets)

    def __len__(self) -> int:
        return len(self.targets)

    def __contains__(self, name: object) -> bool:
        return name in self.targets
