"""The adversarial test split: a fixed, versioned set of adversary-made (plan, seed) cases.

The split is data at the bottom of the house: the server opens its entries by reference
("adversarial/3"), the evaluation harness plays them, and the adversary (`memex.adversary`),
which made them, writes them. `scenarios/splits/adversarial_v1.json` holds the plans the
launderer's search found hardest for its defender, each with its *mirror*
(`scenarios.plan.mirror`: the same knobs with a kind of the other class, same rule and anchor
check), so the split is balanced between classes and its knobs carry no label
(`memex.audit.adversarial` checks that no single view tells). Every plan is replayed on
test-split seeds it was not searched on, and kept only when the oracle solves both it and its
mirror there. The file's header records the exact command that regenerated it:

    .venv/bin/python -m memex.adversary build-split --defender heuristic --trials 200 \
        --plans 20 --seeds-per-plan 3 --no-progress --out scenarios/splits/adversarial_v1.json

The evaluation harness plays it like any other split: `--split adversarial` (the newest
version) or `--split adversarial_v1`.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memex.envkit.episodes import EpisodeSpec
from memex.scenarios.plan import CasePlan, PlanError, parse
from memex.scenarios.spec import CaseSpec

SPLITS_DIR = Path(__file__).resolve().parent / "splits"
LATEST = "adversarial_v1"
ALIASES = {"adversarial": LATEST}
SEED_BASE = 1_150_000   # inside the test seed range, far from the seeds the harness uses


@dataclass(frozen=True)
class SplitEntry:
    plan: CasePlan
    seed: int
    role: str          # "adversary" (found by the search) or "mirror" (its other-class twin)
    pair: int          # entries of one plan and its mirror share a pair number

    def spec(self) -> CaseSpec:
        return CaseSpec.from_plan(self.plan.to_dict(), self.seed)


def split_names() -> tuple[str, ...]:
    return (*ALIASES, *sorted(p.stem for p in SPLITS_DIR.glob("*.json")))


def is_split(name: str) -> bool:
    return name in ALIASES or (SPLITS_DIR / f"{name}.json").exists()


@functools.cache
def _read(name: str) -> dict[str, Any]:
    path = SPLITS_DIR / f"{ALIASES.get(name, name)}.json"
    if not path.exists():
        raise KeyError(f"unknown adversarial split {name!r}; have {', '.join(split_names())}")
    return json.loads(path.read_text())


def header(name: str = LATEST) -> dict[str, Any]:
    """The split file's header: version, command, defender, search settings."""
    return {k: v for k, v in _read(name).items() if k != "entries"}


def load_split(name: str = LATEST) -> list[SplitEntry]:
    """The split's entries (plans validated on load)."""
    return [SplitEntry(parse(e["plan"]), int(e["seed"]), e["role"], int(e["pair"]))
            for e in _read(name)["entries"]]


def split_specs(name: str = LATEST, tasks: list[str] | None = None,
                difficulties: list[str] | None = None, repeats: int = 1) -> list[EpisodeSpec]:
    """Episode specs of the split (optionally only some kinds/difficulties), x `repeats`."""
    return [e.spec().episode(r) for e in load_split(name)
            if (not tasks or e.plan.kind in tasks)
            and (not difficulties or e.plan.difficulty in difficulties) for r in range(repeats)]


def write_split(path: Path, entries: list[SplitEntry], head: dict[str, Any]) -> None:
    rows = [{"pair": e.pair, "role": e.role, "seed": e.seed, "plan": e.plan.to_dict()}
            for e in entries]
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps({**head, "entries": rows}, indent=1)
    path.write_text(text + "\n")
    _read.cache_clear()


def resolve(ref: str) -> SplitEntry:
    """The entry a reference names: "NAME/INDEX" (e.g. "adversarial/3", the Glass Box's way
    to open an adversary-made case without the browser ever holding its plan)."""
    name, _, index = ref.partition("/")
    try:
        entries = load_split(name or LATEST)
        return entries[int(index)]
    except (KeyError, ValueError, IndexError):
        raise PlanError(f"no adversarial split entry {ref!r} (NAME/INDEX, e.g. "
                        "'adversarial/0')") from None
