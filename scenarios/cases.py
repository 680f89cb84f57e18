"""`build(spec)`: every case comes from here, whoever asks (the environment's reset, the
adapter's hidden-case regeneration, the leak audit, the adversary, the curriculum).

A spec names one of three things (`scenarios.spec.CaseSpec`): a fixed case by name, a case plan
on a seed (directly, or through a reference to an adversarial split entry), or the generator's
case of (seed, difficulty, kind, variant, benign share).
"""

from __future__ import annotations

from collections.abc import Callable

from memex.scenarios import onemdb
from memex.scenarios.case import Case
from memex.scenarios.generator import generate
from memex.scenarios.plan import CasePlan, parse
from memex.scenarios.plan import build as build_from_plan
from memex.scenarios.spec import CaseSpec
from memex.scenarios.splits import resolve as split_entry

FIXED_CASES: dict[str, Callable[[], Case]] = {onemdb.CASE_NAME: onemdb.build_case}


def resolved(spec: CaseSpec) -> CaseSpec:
    """`spec` with a split reference replaced by the entry's plan (and seed, unless the spec
    gives one); a reference to no entry raises the typed `invalid_plan` error."""
    if not spec.is_reference:
        return spec
    entry = split_entry(spec.plan)
    return spec.model_copy(update={"plan": entry.plan.to_dict(),
                                   "seed": entry.seed if spec.seed is None else spec.seed})


def plan_of(spec: CaseSpec) -> CasePlan | None:
    """The validated plan the case is built from (None: no plan, or a fixed case)."""
    spec = resolved(spec)
    return parse(spec.plan) if spec.plan is not None and spec.case is None else None


def build(spec: CaseSpec) -> Case:
    """The case `spec` names. `ValueError` for an unknown fixed case, a missing seed or an
    unknown kind, variant or difficulty; `scenarios.plan.PlanError` (code `invalid_plan`) for
    a plan outside the knob space."""
    if spec.case is not None:
        if spec.case not in FIXED_CASES:
            raise ValueError(f"unknown fixed case {spec.case!r}; the fixed case is "
                             f"{', '.join(map(repr, FIXED_CASES))}")
        return FIXED_CASES[spec.case]()
    spec = resolved(spec)
    if spec.seed is None:
        raise ValueError("a generated case needs a seed")
    if spec.plan is not None:
        return build_from_plan(spec.plan, spec.seed)
    return generate(spec.seed, spec.difficulty, spec.kind, variant=spec.variant,
                    benign_share=spec.benign_share)
