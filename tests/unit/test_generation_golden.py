"""Golden digests of generated cases: the generator's output is pinned byte for byte.

Splits, the leak audit, the baselines and the adversarial split are all computed from generated
cases, so an optimisation or refactor of `memex.scenarios` must not change a single byte of any
case (nor the RNG draw order that produces it). This test hashes the full serialised `Case`
(public view and ground truth, `Case.to_json()`) for a grid that covers every kind at every
difficulty, every variant (hold-outs included, on test-split seeds), sampled kinds, case plans
with knob overrides, and the fixed 1MDB case, and compares with digests recorded from the code.

A change that is meant to change the cases regenerates the digests with
`.venv/bin/python tests/unit/test_generation_golden.py --write` and says so in its review.

The generator builds records without re-validating them (it guarantees validity itself), so the
second test validates the grid's cases through the real models: each must parse back and
serialise to the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from memex.scenarios import DIFFICULTIES, KINDS, generate
from memex.scenarios.case import Case
from memex.scenarios.generator import SPLITS
from memex.scenarios.onemdb import build_case as build_onemdb
from memex.scenarios.plan import build as build_plan

pytestmark = pytest.mark.unit

GOLDEN = Path(__file__).parent / "data" / "generation_golden.json"
TEST_SEED = SPLITS["test"].start

PLANS = {
    "full": {"kind": "layering", "variant": "pep_conduit", "difficulty": "hard",
             "checks": ["trace", "device"], "second_failing": "trace", "layers": 3, "hops": 4,
             "decoys": 5, "history_days": 45, "background_per_month": 6,
             "threshold_gap_usd": 300.0, "cash_deposits": [6, 10], "spread_days": 4,
             "branches": 5, "price_multiple": [1.4, 1.9], "legit_shipments": 0,
             "step_budget": 30},
    "cash": {"kind": "structuring", "variant": "undocumented_cash", "difficulty": "easy",
             "checks": ["device", "trace"], "second_failing": "trace",
             "threshold_gap_usd": 200.0, "cash_deposits": [10, 12], "spread_days": 24,
             "branches": 1, "background_per_month": 30, "history_days": 180, "decoys": 6},
    "trade": {"kind": "fair_trade", "variant": "priced_in_band", "difficulty": "medium",
              "checks": ["holdings"], "legit_shipments": 5, "hops": 1, "layers": 4,
              "price_multiple": [1.34, 2.0], "decoys": 0},
    "kind_only": {"kind": "elder_exploitation", "variant": "payee_listed"},
}


def grid() -> Iterator[tuple[str, Callable[[], Case]]]:
    """(label, case maker) pairs; labels are stable keys of the golden file."""
    for i, kind in enumerate(KINDS):
        for j, difficulty in enumerate(DIFFICULTIES):
            seed = 101 * i + 7 * j
            yield f"kind/{kind}/{difficulty}/{seed}", (
                lambda s=seed, d=difficulty, k=kind: generate(s, d, k))
    n = 0
    for kind, spec in KINDS.items():
        for variant in spec.variants:
            seed, difficulty = TEST_SEED + 13 * n, DIFFICULTIES[n % 3]
            n += 1
            yield f"variant/{kind}/{variant}/{difficulty}/{seed}", (
                lambda s=seed, d=difficulty, k=kind, v=variant: generate(s, d, k, variant=v))
    for seed in (1, 2, 17, 99_991, 1_000_003, TEST_SEED + 5):
        difficulty = DIFFICULTIES[seed % 3]
        yield f"sampled/{difficulty}/{seed}", (lambda s=seed, d=difficulty: generate(s, d))
    for name, plan in PLANS.items():
        for seed in (3, 4):
            yield f"plan/{name}/{seed}", (lambda p=plan, s=seed: build_plan(p, s))
    yield "onemdb", build_onemdb


def digest(case: Case) -> str:
    return hashlib.sha256(case.to_json().encode()).hexdigest()


def digests() -> dict[str, str]:
    return {label: digest(make()) for label, make in grid()}


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    """The grid's serialised cases, generated once for both tests."""
    return {label: make().to_json() for label, make in grid()}


def test_generated_cases_match_the_golden_digests(texts):
    golden = json.loads(GOLDEN.read_text())
    now = {label: hashlib.sha256(text.encode()).hexdigest() for label, text in texts.items()}
    assert now.keys() == golden.keys(), "the grid changed; regenerate the golden digests"
    changed = [label for label in golden if now[label] != golden[label]]
    assert not changed, f"{len(changed)} of {len(golden)} cases changed, e.g. {changed[:5]}"


def test_generated_cases_are_valid_models(texts):
    """Every case of the grid passes the models' validation and serialises back to its bytes
    (a field of the wrong type, e.g. an int where the model says float, would not)."""
    for label, text in texts.items():
        assert Case.model_validate_json(text).to_json() == text, label


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {sys.argv[0]} --write  (only when the cases are meant to change)")
    GOLDEN.parent.mkdir(exist_ok=True)
    GOLDEN.write_text(json.dumps(digests(), indent=1) + "\n")
    print(f"wrote {GOLDEN}")
