"""Tasks: OpenEnv's Task API over an environment's splits, and the reset aliases that name them.

A **task** is one set of reset options, addressed as `SPLIT/INDEX`. A split is a `Grid` — its
seed range crossed with the cells of its axes (AML: difficulty x kind; the committee: its tasks),
in seed-major order: task `i` is cell `i % len(cells)` on seed `seeds[i // len(cells)]`, so the
first `len(cells)` tasks cover every cell once — or a `Listed` split (the AML adversarial split's
entries). A `TaskCatalog` holds an environment's splits.

`TaskSplits` makes an OpenEnv `Environment` a task provider (OpenEnv's `TaskProvider` protocol):
`list_splits`, `num_tasks`, `list_tasks` (the first `TASK_PREVIEW`; a grid has millions),
`get_task` and `get_task_range` (at most `MAX_TASK_RANGE` per call), which OpenEnv serves at
`GET /{env}/splits`, `POST /{env}/tasks`, `/num_tasks`, `/task`, `/task_range`. An index out of
range is OpenEnv's 400; an unknown split raises `UnknownSplitError`, a 404 (the servers'
error handlers, `envkit.http_episodes`).

Reset aliases (`unalias`), for clients written against OpenEnv's Task API and the prototypes:
`split` + `index` (OpenEnv's selection of a task), `task_id` (a task id `SPLIT/INDEX`, or a name the
environment gives meaning to: an AML difficulty, kind or fixed case; a committee task) and
`parameters` (reset fields in one object). They are replaced by the fields they name; a field
set twice to different values is a `ValueError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

TASK_PREVIEW = 100
MAX_TASK_RANGE = 1_000
RESET_ALIASES = ("task_id", "parameters", "split", "index")
TASK_ID = re.compile(r"^([A-Za-z0-9_.-]{1,64})/(\d{1,12})$")


class UnknownSplitError(LookupError):
    """A split the environment does not have (a 404 over HTTP)."""


def task_record(split: str, index: int, reset: Mapping[str, Any]) -> dict[str, Any]:
    """A task as the Task API serves it: its id, split, index and the reset options."""
    return {"id": f"{split}/{index}", "split": split, "index": index, "reset": dict(reset)}


@dataclass(frozen=True)
class Grid:
    """A split: `seeds` x the cells of `axes` (every combination of the axes' values, the last
    axis fastest), seed-major (see the module docstring). `type` is OpenEnv's split type
    (train / validation / test)."""

    name: str
    type: str
    seeds: range
    axes: Mapping[str, tuple[Any, ...]]
    description: str = ""
    cells: tuple[dict[str, Any], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        combos: list[dict[str, Any]] = [{}]
        for axis, values in self.axes.items():
            combos = [{**c, axis: v} for c in combos for v in values]
        object.__setattr__(self, "cells", tuple(combos))

    def __len__(self) -> int:
        return len(self.seeds) * len(self.cells)

    def reset(self, index: int) -> dict[str, Any]:
        if not 0 <= index < len(self):
            raise IndexError(f"task index {index} out of range for split {self.name!r} "
                             f"({len(self)} tasks)")
        seed = self.seeds[index // len(self.cells)]
        return {**self.cells[index % len(self.cells)], "seed": seed}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "num_tasks": len(self),
                "seeds": [self.seeds.start, self.seeds.stop],
                "axes": {k: list(v) for k, v in self.axes.items()},
                "order": "seed-major, the last axis fastest: task i is cell i % cells on seed "
                         "seeds[0] + i // cells", "cells": len(self.cells),
                "description": self.description}


@dataclass(frozen=True)
class Listed:
    """A split of explicit tasks: `resets()` gives each task's reset options, in order (read
    when asked, so a catalog costs nothing to define)."""

    name: str
    type: str
    resets: Callable[[], Sequence[Mapping[str, Any]]]
    description: str = ""

    def __len__(self) -> int:
        return len(self.resets())

    def reset(self, index: int) -> dict[str, Any]:
        resets = self.resets()
        if not 0 <= index < len(resets):
            raise IndexError(f"task index {index} out of range for split {self.name!r} "
                             f"({len(resets)} tasks)")
        return dict(resets[index])

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "num_tasks": len(self),
                "description": self.description}


@dataclass(frozen=True)
class TaskCatalog:
    """An environment's splits, by name (in the order given)."""

    splits: tuple[Grid | Listed, ...]
    by_name: dict[str, Grid | Listed] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", {s.name: s for s in self.splits})

    def __getitem__(self, name: str) -> Grid | Listed:
        try:
            return self.by_name[name]
        except KeyError:
            raise UnknownSplitError(f"unknown split {str(name)[:64]!r}; splits: "
                                    f"{', '.join(self.by_name)}") from None

    def task(self, split: str, index: int) -> dict[str, Any]:
        return task_record(split, index, self[split].reset(index))

    def tasks(self, split: str, start: int | None = None, stop: int | None = None
              ) -> list[dict[str, Any]]:
        """Tasks `[start:stop]` of `split` (Python slice bounds), at most `MAX_TASK_RANGE`."""
        indices = range(len(self[split]))[slice(start, stop)][:MAX_TASK_RANGE]
        return [self.task(split, i) for i in indices]


def unalias(options: Mapping[str, Any], catalog: TaskCatalog,
            named: Callable[[str], Mapping[str, Any]]) -> dict[str, Any]:
    """`options` with the reset aliases replaced by the fields they name (module docstring);
    `named(task_id)` gives the fields of a task id that is not `SPLIT/INDEX` of one of the
    catalog's splits (`split` + `index` is that id too), raising `ValueError` for a name it does
    not know. Options without aliases come back unchanged."""
    if not any(k in options for k in RESET_ALIASES):
        return dict(options)
    out = {k: v for k, v in options.items() if k not in RESET_ALIASES}
    sources: list[tuple[str, Mapping[str, Any]]] = []
    parameters = options.get("parameters")
    if parameters is not None:
        if not isinstance(parameters, Mapping):
            raise ValueError("parameters: must be an object of reset fields")
        nested = [k for k in RESET_ALIASES if k in parameters]
        if nested:
            raise ValueError(f"parameters: {', '.join(nested)} cannot be nested in parameters")
        sources.append(("parameters", parameters))
    split, index = options.get("split"), options.get("index")
    if (split is None) != (index is None):
        raise ValueError("split and index: give both (a task of the Task API) or neither")
    if split is not None:
        if not isinstance(split, str) or isinstance(index, bool) or not isinstance(index, int):
            raise ValueError("split and index: a split name and an integer index")
        sources.append((f"task {split}/{index}", _named_task(f"{split}/{index}", catalog,
                                                             named)))
    task_id = options.get("task_id")
    if task_id is not None:
        if not isinstance(task_id, str) or not task_id or len(task_id) > 128:
            raise ValueError("task_id: a task id SPLIT/INDEX or a task name (a string)")
        sources.append((f"task_id {task_id!r}", _named_task(task_id, catalog, named)))
    for source, fields in sources:
        for key, value in fields.items():
            if key in out and out[key] is not None and out[key] != value:
                raise ValueError(f"{key}: {out[key]!r} conflicts with {value!r} from {source}")
            out[key] = value
    return out


def _named_task(task_id: str, catalog: TaskCatalog,
                named: Callable[[str], Mapping[str, Any]]) -> Mapping[str, Any]:
    """The reset fields of a task id: `SPLIT/INDEX` of one of the catalog's splits, else
    whatever `named` makes of it."""
    found = TASK_ID.match(task_id)
    if found is None or found.group(1) not in catalog.by_name:
        return named(task_id)
    try:
        return catalog[found.group(1)].reset(int(found.group(2)))
    except IndexError as exc:
        raise ValueError(str(exc.args[0])) from None


class TaskSplits:
    """Mixin for an OpenEnv `Environment` with a `task_catalog`: OpenEnv's Task API (module
    docstring). Every method is a read of the catalog, so it works on a fresh instance."""

    task_catalog: ClassVar[TaskCatalog]

    def list_splits(self) -> list[dict[str, Any]]:
        return [s.describe() for s in self.task_catalog.splits]

    def num_tasks(self, split: str) -> int:
        return len(self.task_catalog[split])

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        """A preview: the split's first `TASK_PREVIEW` tasks (`num_tasks` counts them all)."""
        return self.task_catalog.tasks(split, 0, TASK_PREVIEW)

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        return self.task_catalog.task(split, index)

    def get_task_range(self, split: str, start: int | None = None,
                       stop: int | None = None) -> list[dict[str, Any]]:
        return self.task_catalog.tasks(split, start, stop)
