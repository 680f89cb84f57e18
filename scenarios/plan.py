"""Case plans: a bounded, documented knob space over the generator's story space.

A `CasePlan` names everything a case designer (the launderer adversary, `memex.adversary`) may
choose about a case; `build(plan, seed)` turns (plan, seed) into a `Case` deterministically
(same plan and seed, same case byte for byte). Every knob left `None` is drawn as `generate`
draws it, so a plan that fixes only `kind`, `variant` and `difficulty` gives exactly
`generate(seed, difficulty, kind, variant=variant)`.

| knob | bounds | what it changes (both classes alike) |
|---|---|---|
| kind, variant | `generator.KINDS` | the latent story: its rule, class and anchor cross-check |
| difficulty | easy/medium/hard | the base `difficulty.Knobs` every unset knob keeps |
| checks | the rule's pool minus the anchor, 1+ | which other cross-checks are written |
| second_failing | one of `checks` | suspicious, single-view anchor: which check also fails |
| layers | 1-4 | companies between a company subject and its owner |
| hops | 1-4 | correspondent hops a wire trace follows |
| decoys | 0-6 | near-miss watchlist names, namesake news, innocent one-offs |
| history_days | 30-180 | ledger history before the alert window |
| background_per_month | 4-30 | legitimate background lines per month |
| threshold_gap_usd | 200-1,500 | how close just-below-$10,000 deposits sit |
| cash_deposits | 5-12 (lo <= hi) | cash deposits in an aggregate-cash alert |
| spread_days | 3-24 | days the alerted cash is spread over |
| branches | 1-5 | most branches the alerted cash is deposited at |
| price_multiple | 1.34-2.0 (lo <= hi) | mispricing vs the band's edge (>= 1/0.75, manual 6.2) |
| legit_shipments | 0-5 | earlier shipments with the same partner |
| step_budget | 10-44 | steps before the episode times out (validity: the oracle fits) |
| innocent_anomalies | 0-4 | checks not left unexplained with an explained anomaly (capped) |
| explanation_reach | file/deep/request | where those explanations live |
| benign_noise | true/false | a benign story leaves one check unexplained (suspicious: no effect) |
| misleading_reply | true/false | replies point the wrong way (unexplained: look explanatory) |
| near_band | true/false | an unexplained anomaly sits inside the innocent band |

The last five are the judgement knobs (`story.Judgement` says what each writes): cover quality
(a suspicious story's documented cover, its anomalies near the innocent bands, a reply that
looks explanatory), innocent anomalies on benign twins and the reach of explanations. None of
them moves the label, the count of unexplained checks (manual 1.7).

The plan names the failing check, so it is ground truth: the environment keeps it with the
case and serves it only with the truth of a finished episode. Bad plans raise `PlanError`
(a `CodedError`, code `invalid_plan`) saying which field is wrong and why.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from memex.envkit.errors import CodedError, validation_message
from memex.scenarios.case import Case
from memex.scenarios.difficulty import KNOBS, Knobs
from memex.scenarios.generator import KINDS, generate_from_plan
from memex.scenarios.model import Difficulty
from memex.scenarios.story import POOLS, REACHES, SINGLE_VIEW, Judgement, Scheme

PLAN_VERSION = 1
# (low, high) of every numeric knob; the search (`memex.adversary.search`) reads the same table.
INT_BOUNDS: dict[str, tuple[int, int]] = {
    "layers": (1, 4), "hops": (1, 4), "decoys": (0, 6), "history_days": (30, 180),
    "background_per_month": (4, 30), "spread_days": (3, 24), "branches": (1, 5),
    "legit_shipments": (0, 5), "step_budget": (10, 44),
}
FLOAT_BOUNDS: dict[str, tuple[float, float]] = {"threshold_gap_usd": (200.0, 1_500.0)}
RANGE_BOUNDS: dict[str, tuple[float, float]] = {"cash_deposits": (5, 12),
                                                "price_multiple": (1.34, 2.0)}
# The judgement knobs (`story.Judgement`): each name with its choices (the search reads these).
JUDGEMENT_CHOICES: dict[str, tuple[Any, ...]] = {
    "innocent_anomalies": (0, 1, 2, 3, 4), "explanation_reach": REACHES,
    "benign_noise": (False, True), "misleading_reply": (False, True), "near_band": (False, True),
}


class PlanError(CodedError):
    """A plan that is not in the knob space; `str(err)` says which field and why."""

    def __init__(self, message: str):
        super().__init__("invalid_plan", f"invalid plan: {message}")


def _int(name: str) -> Any:
    lo, hi = INT_BOUNDS[name]
    return Field(default=None, ge=lo, le=hi)


class CasePlan(BaseModel):
    """One point of the knob space (see the module docstring). `None` = drawn as usual."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: Literal[1] = PLAN_VERSION
    kind: str = Field(max_length=64)
    variant: str = Field(max_length=64)
    difficulty: Difficulty = "medium"
    checks: tuple[str, ...] | None = Field(default=None, min_length=1, max_length=5)
    second_failing: str | None = Field(default=None, max_length=32)
    layers: int | None = _int("layers")
    hops: int | None = _int("hops")
    decoys: int | None = _int("decoys")
    history_days: int | None = _int("history_days")
    background_per_month: int | None = _int("background_per_month")
    threshold_gap_usd: float | None = Field(default=None, ge=200.0, le=1_500.0)
    cash_deposits: tuple[int, int] | None = None
    spread_days: int | None = _int("spread_days")
    branches: int | None = _int("branches")
    price_multiple: tuple[float, float] | None = None
    legit_shipments: int | None = _int("legit_shipments")
    step_budget: int | None = _int("step_budget")
    innocent_anomalies: int | None = Field(default=None, ge=0, le=4, strict=True)
    explanation_reach: Literal["file", "deep", "request"] | None = None
    benign_noise: bool | None = Field(default=None, strict=True)
    misleading_reply: bool | None = Field(default=None, strict=True)
    near_band: bool | None = Field(default=None, strict=True)

    # ---- derived ---------------------------------------------------------------------------
    def scheme(self) -> Scheme:
        """The variant's `story.Scheme` (rule, anchor), from its kind's `KindSpec.schemes`."""
        return KINDS[self.kind].schemes[self.variant]

    @property
    def suspicious(self) -> bool:
        return KINDS[self.kind].suspicious

    def knobs(self) -> Knobs:
        """The difficulty's knobs with this plan's overrides."""
        fixed = {k: getattr(self, k) for k in (*INT_BOUNDS, *FLOAT_BOUNDS, *RANGE_BOUNDS)
                 if getattr(self, k) is not None}
        if self.checks is not None:
            fixed["cross_checks"] = len(self.checks) + 1
        return dataclasses.replace(KNOBS[self.difficulty], **fixed)

    def judgement(self) -> Judgement | None:
        """What `story.build_case(judgement=...)` fixes (None: every judgement knob unset)."""
        if all(getattr(self, k) is None for k in JUDGEMENT_CHOICES):
            return None
        return Judgement(innocent_anomalies=self.innocent_anomalies,
                         explanation_reach=self.explanation_reach,
                         benign_noise=self.benign_noise,
                         misleading_reply=bool(self.misleading_reply),
                         near_band=bool(self.near_band))

    def layout(self) -> tuple[tuple[str, ...], str | None] | None:
        """What `story.build_case(layout=...)` fixes: the other checks, the second failure."""
        return None if self.checks is None else (self.checks, self.second_failing)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, unset knobs left out; `parse(plan.to_dict()) == plan`."""
        return self.model_dump(mode="json", exclude_none=True)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    def key(self) -> str:
        """A short stable digest (episode keys, file names)."""
        return hashlib.blake2b(self.to_json().encode(), digest_size=6).hexdigest()


def parse(data: CasePlan | dict[str, Any] | str) -> CasePlan:
    """A validated plan from a plan, a dict or JSON text; `PlanError` says what is wrong."""
    if isinstance(data, CasePlan):
        plan = data
    else:
        try:
            if isinstance(data, str | bytes):
                data = json.loads(data)
            if not isinstance(data, dict):
                raise PlanError("a plan is a JSON object")
            plan = CasePlan.model_validate(data)
        except ValidationError as exc:
            raise PlanError(validation_message(exc)) from None
        except json.JSONDecodeError as exc:
            raise PlanError(f"not JSON: {exc.msg}") from None
    _check(plan)
    return plan


def _check(plan: CasePlan) -> None:
    spec = KINDS.get(plan.kind)
    if spec is None:
        raise PlanError(f"kind: unknown {plan.kind!r}; choose one of {', '.join(KINDS)}")
    if plan.variant not in spec.variants:
        raise PlanError(f"variant: kind {plan.kind!r} has {', '.join(spec.variants)}, "
                        f"not {plan.variant!r}")
    for name, (lo, hi) in RANGE_BOUNDS.items():
        pair = getattr(plan, name)
        if pair is not None and not lo <= pair[0] <= pair[1] <= hi:
            raise PlanError(f"{name}: needs {lo} <= low <= high <= {hi}, got {list(pair)}")
    scheme = plan.scheme()
    allowed = [c for c in POOLS[scheme.rule] if c != scheme.anchor]
    if plan.checks is not None:
        bad = [c for c in plan.checks if c not in allowed]
        if bad or len(set(plan.checks)) != len(plan.checks):
            raise PlanError(f"checks: distinct checks among {', '.join(allowed)} (the anchor "
                            f"{scheme.anchor!r} is always present), got {list(plan.checks)}")
    if plan.second_failing is not None:
        if not (plan.suspicious and scheme.anchor in SINGLE_VIEW):
            raise PlanError("second_failing: only a suspicious variant whose anchor fails in one "
                            f"view has a second failing check ({plan.variant!r} has none)")
        if plan.checks is None:
            raise PlanError("second_failing: needs checks (it must be one of them)")
        pool = [c for c in plan.checks if c not in SINGLE_VIEW] or list(plan.checks)
        if plan.second_failing not in pool:
            raise PlanError(f"second_failing: one of {', '.join(pool)}, "
                            f"not {plan.second_failing!r}")


def build(plan: CasePlan | dict[str, Any] | str, seed: int) -> Case:
    """The case of (plan, seed): `generator.generate_from_plan` after validation."""
    return generate_from_plan(parse(plan), seed)


def mirror(plan: CasePlan) -> CasePlan:
    """The same plan with a kind of the other class: same rule, same anchor check, every
    structural knob kept (so a set of plans with their mirrors shows no class in its knobs)."""
    scheme = plan.scheme()
    for spec in KINDS.values():
        if spec.suspicious == plan.suspicious:
            continue
        for variant, other in spec.schemes.items():
            if other.rule == scheme.rule and other.anchor == scheme.anchor:
                return plan.model_copy(update={"kind": spec.name, "variant": variant,
                                               "second_failing": None})
    raise PlanError(f"no {'benign' if plan.suspicious else 'suspicious'} variant fires "
                    f"{scheme.rule} with anchor {scheme.anchor!r}")
