"""The room map, drawn from the code: the package's rooms (every top-level folder holding Python,
and every root module) and the imports between them (arrows).

`ORDER` is the house's layering, bottom to top, as tiers: the framework, the world's data, the
AML environment, its face to the tools above it, then the instruments (audit, curriculum,
evaluation, adversary) and the other environment. A room may import only rooms of lower tiers;
an arrow to the same or a higher tier is an *upward arrow*. `derived_order` layers the rooms
from the imports alone (each room one tier above the highest room it imports) and names the
loop when there is none, so a room graph with a loop has no order at all.

    .venv/bin/python -m memex.testing.rooms [--root DIR]   # rooms, arrows, upward arrows, loops

`tests/unit/test_layout.py` pins what this prints: every room placed, no upward arrow, no loop.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "memex"
FACE = "__init__"  # the package face, `memex/__init__.py`
# Folders that hold no package code: a room is a folder of importable Python.
NOT_ROOMS = frozenset({"frontend", "docs", "notebooks", "node_modules", "build", "dist",
                       "target"})

ORDER: tuple[tuple[str, ...], ...] = (
    ("envkit",),                                  # the framework: imports no environment
    ("scenarios", "state_manager"),               # the world's data; the OS state
    ("models", "graders"),                        # the wire models; scoring against the truth
    ("policies",),                                # scripted AML agents
    ("server",),                                  # the AML environment and its app
    ("client", "openenv_server"),                 # the typed client; the uvicorn entry point
    (FACE,),                                      # `from memex import MemexEnv, ...`
    ("adapter", "gym_face"),                      # the AML environment for the tools above
    ("registry",),                                # environments by name (import paths)
    ("inference",),                               # the LLM agent
    ("agent_os_core",),                           # the batched runtime and memory hierarchy
    # ---- instruments: above what they measure; nothing below imports them ----
    ("audit",),                                   # leak audit, surface probes
    ("curriculum",),                              # prioritized level replay
    ("evaluation",),                              # harness, reports, demo
    ("adversary",),                               # case-plan search, launderer env, self-play
    ("train_grpo",),                              # the trainer
    ("committee",),                               # the second environment
    ("testing",),                                 # test doubles and helpers
    ("benchmarks", "scripts"),                    # entry-point scripts
    ("tests",),
)
INSTRUMENTS = ("audit", "curriculum", "evaluation", "adversary")


@dataclass(frozen=True)
class Import:
    """One import of a project module: where it stands and what it names."""

    path: str
    line: int
    module: str
    local: bool  # inside a function: runs late, where an import cycle hides


def rooms(root: Path = ROOT) -> list[str]:
    """Every room of the tree at `root`: folders of Python (recursively) and root modules."""
    found = []
    for entry in sorted(root.iterdir()):
        if entry.name.startswith((".", "_")) and entry.name != "__init__.py":
            continue
        if entry.is_dir() and entry.name not in NOT_ROOMS and not entry.name.endswith(
                ".egg-info") and any(entry.rglob("*.py")):
            found.append(entry.name)
        elif entry.suffix == ".py":
            found.append(entry.stem)
    return found


def sources(room: str, root: Path = ROOT) -> list[Path]:
    path = root / room
    if path.is_dir():
        return sorted(p for p in path.rglob("*.py") if not set(p.parts) & NOT_ROOMS)
    return [root / f"{room}.py"]


def imports(path: Path, root: Path = ROOT) -> list[Import]:
    """The project imports of one file; `from memex import x` names module `memex.x` when that
    is a module of the tree."""
    rel = str(path.relative_to(root))
    found: list[Import] = []

    def visit(node: ast.AST, local: bool) -> None:
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
            if node.module == PACKAGE:
                names = [f"{PACKAGE}.{a.name}" if _is_module(root, a.name) else PACKAGE
                         for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found.extend(Import(rel, node.lineno, m, local) for m in names
                     if m == PACKAGE or m.startswith(PACKAGE + "."))
        inner = local or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(ast.parse(path.read_text()), False)
    return found


def _is_module(root: Path, name: str) -> bool:
    return (root / f"{name}.py").exists() or (root / name / "__init__.py").exists()


def room_of(module: str) -> str:
    """The room of a project module: `memex.server.tools` -> `server`, `memex` -> the face."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else FACE


def arrows(root: Path = ROOT) -> dict[tuple[str, str], list[Import]]:
    """(importing room, imported room) -> the imports that draw that arrow."""
    out: dict[tuple[str, str], list[Import]] = {}
    for room in rooms(root):
        for path in sources(room, root):
            for imp in imports(path, root):
                target = room_of(imp.module)
                if target != room:
                    out.setdefault((room, target), []).append(imp)
    return out


def tier_of(order: Iterable[Iterable[str]] = ORDER) -> dict[str, int]:
    return {room: i for i, tier in enumerate(order) for room in tier}


def upward(edges: Mapping[tuple[str, str], list[Import]],
           order: Iterable[Iterable[str]] = ORDER) -> list[tuple[str, str]]:
    """Arrows to a room of the same or a higher tier (or between rooms `order` does not place)."""
    tiers = tier_of(order)
    return sorted((a, b) for a, b in edges
                  if a not in tiers or b not in tiers or tiers[b] >= tiers[a])


def loops(edges: Iterable[tuple[str, str]]) -> list[list[str]]:
    """The room loops: strongly connected groups of two or more rooms (Tarjan)."""
    graph: dict[str, list[str]] = {}
    for a, b in edges:
        graph.setdefault(a, []).append(b)
        graph.setdefault(b, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def derived_order(edges: Iterable[tuple[str, str]], all_rooms: Iterable[str]) -> list[list[str]]:
    """Tiers from the imports alone: a room sits one tier above the highest room it imports.
    `ValueError` names the loop when the rooms have no order."""
    edges = list(edges)
    if found := loops(edges):
        raise ValueError("rooms in a loop: " + "; ".join(" <-> ".join(g) for g in found))
    below: dict[str, set[str]] = {r: set() for r in all_rooms}
    for a, b in edges:
        below.setdefault(a, set()).add(b)
        below.setdefault(b, set())
    level: dict[str, int] = {}

    def depth(room: str) -> int:
        if room not in level:
            level[room] = 1 + max((depth(b) for b in below[room]), default=-1)
        return level[room]

    for room in below:
        depth(room)
    tiers: list[list[str]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for room, n in sorted(level.items()):
        tiers[n].append(room)
    return tiers


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Draw the room map from the code's imports.")
    p.add_argument("--root", type=Path, default=ROOT, help="the package's root folder")
    args = p.parse_args(argv)
    found = rooms(args.root)
    edges = arrows(args.root)
    up = upward(edges)
    tiers = tier_of()
    print(f"{len(found)} rooms, {len(edges)} arrows, {len(up)} upward arrows, "
          f"{len(loops(edges))} loops")
    unplaced = [r for r in found if r not in tiers]
    if unplaced:
        print("rooms ORDER does not place: " + ", ".join(unplaced))
    for tier in ORDER:
        for room in tier:
            if room in found:
                targets = sorted(b for a, b in edges if a == room)
                print(f"  {room:<16} -> {', '.join(targets) or '-'}")
    for a, b in up:
        where = ", ".join(f"{i.path}:{i.line}" for i in edges[(a, b)][:3])
        print(f"UPWARD {a} -> {b}  ({where}{', ...' if len(edges[(a, b)]) > 3 else ''})")
    for group in loops(edges):
        print("LOOP " + " <-> ".join(group))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
