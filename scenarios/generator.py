"""`generate(seed, difficulty, kind)`: the one entry point that turns a seed into a `Case`.

The world is a shared surface plus a latent story. For the rule a kind fires, one sampler
(`scenarios.surfaces`) draws everything the alert shows, identically for benign and suspicious
kinds; the kind's story (`scenarios.story`, `scenarios.checks`) writes the views beyond the alert
as cross-checks that corroborate (benign) or expose a cover story (suspicious). The label lives
only in relations between two views; `audit.leak_audit` measures that no single view tells.

One `random.Random` is created per case from `(seed, difficulty)` and passed through every
builder; nothing reads a global RNG, uuid4 or the clock, so the same arguments give the same
case byte for byte. The first two draws always pick the kind and the variant (even when the
caller fixes them), so `generate(s, d)` equals `generate(s, d, kind=<the kind it sampled>)`.

Splits are seed ranges. Train and validation seeds never produce hold-out variants (one per
suspicious typology); test seeds produce every variant, so test scores include schemes a
policy trained on the train split has never seen.
"""

from __future__ import annotations

import random
from typing import Any

from memex.scenarios.benign import (
    cash_business,
    documented_purchase,
    fair_trade,
    family_support,
    group_funding,
    marketplace_seller,
    payroll_fanout,
    pep_wealth,
    screened_hub_trade,
)
from memex.scenarios.builder import CaseBuilder, weighted
from memex.scenarios.case import Case
from memex.scenarios.checks import WATCHLIST
from memex.scenarios.kinds import KindSpec
from memex.scenarios.model import DIFFICULTIES, Difficulty
from memex.scenarios.story import LISTED_ANCHOR_WEIGHT, build_case
from memex.scenarios.typologies import (
    elder_exploitation,
    funnel_account,
    layering,
    loan_back,
    real_estate,
    sanctions_evasion,
    structuring,
    trade_based,
)

KINDS: dict[str, KindSpec] = {
    spec.name: spec for spec in (
        structuring.KIND, layering.KIND, trade_based.KIND, funnel_account.KIND, loan_back.KIND,
        sanctions_evasion.KIND, real_estate.KIND, elder_exploitation.KIND,
        cash_business.KIND, payroll_fanout.KIND, fair_trade.KIND, pep_wealth.KIND,
        marketplace_seller.KIND, group_funding.KIND, screened_hub_trade.KIND,
        documented_purchase.KIND, family_support.KIND,
    )
}
SUSPICIOUS_KINDS = tuple(name for name, spec in KINDS.items() if spec.suspicious)
BENIGN_KINDS = tuple(name for name, spec in KINDS.items() if not spec.suspicious)
KIND_GROUPS = {"benign": BENIGN_KINDS, "suspicious": SUSPICIOUS_KINDS}
# Most alerts of a real queue are false positives; 3 in 4 keeps a suspicious case in every 4
# for an agent to learn from (docs/scoring.md: the costs are chosen against this mix).
DEFAULT_BENIGN_SHARE = 0.75

SPLITS: dict[str, range] = {
    "train": range(0, 1_000_000),
    "validation": range(1_000_000, 1_100_000),
    "test": range(1_100_000, 1_200_000),
}


class UnknownKindError(ValueError):
    pass


def split_of(seed: int) -> str:
    for name, seeds in SPLITS.items():
        if seed in seeds:
            return name
    return "test" if seed >= SPLITS["test"].start else "train"


def _pick(options: tuple[str, ...], u: float) -> str:
    return options[min(int(u * len(options)), len(options) - 1)]


def _pick_variant(spec: KindSpec, pool: tuple[str, ...], u: float) -> str:
    """A variant of `spec` by `u`: every variant weighs 1 except those resting on the watchlist
    check (`story.LISTED_ANCHOR_WEIGHT`: a screening hit is rare, a true match rarer)."""
    return weighted(pool, [LISTED_ANCHOR_WEIGHT[spec.suspicious]
                           if spec.schemes[v].anchor == WATCHLIST else 1.0 for v in pool], u)


def resolve_kind(kind: str | None, u: float, benign_share: float) -> str:
    """Map a requested kind (None, a group name, or a kind name) and a uniform draw to a kind."""
    if kind is None:
        benign = u < benign_share
        pool = BENIGN_KINDS if benign else SUSPICIOUS_KINDS
        inner = u / benign_share if benign else (u - benign_share) / (1 - benign_share)
        return _pick(pool, inner)
    if kind in KIND_GROUPS:
        return _pick(KIND_GROUPS[kind], u)
    if kind not in KINDS:
        raise UnknownKindError(
            f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}, 'benign' or 'suspicious'")
    return kind


def variant_of(seed: int, difficulty: Difficulty, kind: str) -> str:
    """The variant `generate(seed, difficulty, kind)` builds, without building the case."""
    rng = random.Random(f"memex|{seed}|{difficulty}")
    rng.random()
    u_variant = rng.random()
    spec = KINDS[kind]
    pool = spec.variants if split_of(seed) == "test" else tuple(
        v for v in spec.variants if v not in spec.holdout_variants)
    return _pick_variant(spec, pool, u_variant)


def generate(seed: int, difficulty: Difficulty = "medium", kind: str | None = None, *,
             variant: str | None = None, benign_share: float = DEFAULT_BENIGN_SHARE) -> Case:
    """Generate one case. `kind` is a kind name, 'benign', 'suspicious' or None (sampled with
    `benign_share`); `variant` pins a variant of that kind (hold-outs included)."""
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"unknown difficulty {difficulty!r}; choose one of {DIFFICULTIES}")
    if not 0.0 < benign_share < 1.0:
        raise ValueError("benign_share must be strictly between 0 and 1")
    rng = random.Random(f"memex|{seed}|{difficulty}")
    u_kind, u_variant = rng.random(), rng.random()
    spec = KINDS[resolve_kind(kind, u_kind, benign_share)]
    if variant is None:
        pool = spec.variants if split_of(seed) == "test" else tuple(
            v for v in spec.variants if v not in spec.holdout_variants)
        variant = _pick_variant(spec, pool, u_variant)
    elif variant not in spec.variants:
        raise ValueError(f"kind {spec.name!r} has variants {spec.variants}, not {variant!r}")
    return spec.build(CaseBuilder(rng, difficulty), variant)


def generate_from_plan(plan: Any, seed: int) -> Case:
    """The case of a validated `scenarios.plan.CasePlan` and a seed (use `scenarios.plan.build`
    for unvalidated input). Same RNG and draws as `generate`, so a plan fixing only kind,
    variant and difficulty gives `generate(seed, difficulty, kind, variant=variant)`."""
    rng = random.Random(f"memex|{seed}|{plan.difficulty}")
    rng.random(), rng.random()  # the kind and variant draws `generate` makes first
    spec = KINDS[plan.kind]
    b = CaseBuilder(rng, plan.difficulty)
    b.knobs = plan.knobs()
    return build_case(b, kind=spec.name, variant=plan.variant, scheme=plan.scheme(),
                      suspicious=spec.suspicious, typology=spec.name if spec.suspicious else None,
                      layout=plan.layout(), judgement=plan.judgement())
