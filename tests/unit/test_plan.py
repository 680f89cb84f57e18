"""Case plans (`scenarios.plan`): validation with typed errors, JSON round-trip, determinism,
the generator hook, and the plan never reaching an observation or the state before the end."""

from __future__ import annotations

import json

import pytest

from memex.envkit.errors import CodedError
from memex.models import MemexAction
from memex.scenarios import KINDS, generate
from memex.scenarios.plan import PlanError, build, mirror, parse
from memex.scenarios.story import SINGLE_VIEW
from memex.server.environment import MemexEnvironment

FULL = {"kind": "layering", "variant": "pep_conduit", "difficulty": "hard",
        "checks": ["trace", "device"], "second_failing": "trace", "layers": 3, "hops": 4,
        "decoys": 5, "history_days": 45, "background_per_month": 6, "threshold_gap_usd": 300.0,
        "cash_deposits": [6, 10], "spread_days": 4, "branches": 5,
        "price_multiple": [1.4, 1.9], "legit_shipments": 0, "step_budget": 30}


def test_round_trip_through_json_and_dict():
    plan = parse(FULL)
    assert parse(plan.to_json()) == plan
    assert parse(plan.to_dict()) == plan
    assert json.loads(plan.to_json())["checks"] == ["trace", "device"]
    assert plan.key() == parse(json.dumps(FULL)).key()
    assert parse({"kind": "structuring", "variant": "undocumented_cash"}).to_dict() == {
        "version": 1, "kind": "structuring", "variant": "undocumented_cash",
        "difficulty": "medium"}


def test_same_plan_and_seed_same_case_byte_for_byte():
    assert build(FULL, 7).to_json() == build(json.dumps(FULL), 7).to_json()
    assert build(FULL, 7).to_json() != build(FULL, 8).to_json()


def test_unset_knobs_reproduce_generate_for_every_kind_and_variant():
    for kind, spec in KINDS.items():
        for variant in spec.variants:
            plan = {"kind": kind, "variant": variant, "difficulty": "easy"}
            assert build(plan, 11).to_json() == generate(11, "easy", kind,
                                                         variant=variant).to_json(), (kind, variant)


def test_knobs_reach_the_case():
    case = build(FULL, 3)
    assert case.public.step_budget == 30
    truth = case.truth
    assert truth.suspicious and truth.kind == "layering" and truth.variant == "pep_conduit"
    hops = [g for g in truth.decisive_evidence if g[0].startswith("HOP-")]
    assert len(hops) == 1 and len(hops[0]) == 5  # the first bank plus `hops` = 4
    # checks: the anchor (source of funds) fails, and the named second check (trace) with it
    assert {f.code for f in truth.red_flags} >= {"PEP_UNEXPLAINED_WEALTH", "ROUND_TRIP"}


@pytest.mark.parametrize(("change", "field"), [
    ({"kind": "nope"}, "kind"),
    ({"variant": "undocumented_cash"}, "variant"),
    ({"hops": 9}, "hops"),
    ({"step_budget": 5}, "step_budget"),
    ({"cash_deposits": [9, 6]}, "cash_deposits"),
    ({"price_multiple": [1.1, 1.5]}, "price_multiple"),
    ({"checks": ["source_of_funds"]}, "checks"),      # the anchor itself
    ({"checks": ["trace", "trace"]}, "checks"),
    ({"checks": ["price"]}, "checks"),                # not in the PEP rule's pool
    ({"second_failing": "device", "checks": ["trace"]}, "second_failing"),
    ({"surprise": 1}, "surprise"),
    ({"difficulty": "brutal"}, "difficulty"),
])
def test_invalid_plans_raise_a_typed_error_naming_the_field(change, field):
    with pytest.raises(PlanError) as err:
        parse({**FULL, **change})
    assert isinstance(err.value, CodedError) and err.value.code == "invalid_plan"
    assert field in str(err.value)


def test_second_failing_only_where_a_second_check_fails():
    with pytest.raises(PlanError, match="second_failing"):
        parse({"kind": "payroll_fanout", "variant": "documented_receipts",
               "checks": ["trace"], "second_failing": "trace"})
    for bad in ("[1, 2]", "not json", ""):
        with pytest.raises(PlanError):
            parse(bad)


def test_mirror_keeps_every_knob_and_flips_the_class():
    plan = parse(FULL)
    twin = parse(mirror(plan))
    assert twin.suspicious is False and plan.suspicious is True
    assert twin.scheme().rule == plan.scheme().rule
    assert twin.scheme().anchor == plan.scheme().anchor
    assert twin.second_failing is None
    same = {k: v for k, v in plan.to_dict().items()
            if k not in ("kind", "variant", "second_failing")}
    assert {k: twin.to_dict()[k] for k in same} == same
    assert not build(twin, 3).truth.suspicious
    assert plan.scheme().anchor in SINGLE_VIEW


def test_env_reset_with_a_plan_hides_it_until_the_end():
    env = MemexEnvironment()
    obs = env.reset(seed=5, plan=FULL)
    assert obs.step_budget == 30
    wire = obs.model_dump_json() + env.state.model_dump_json()
    for secret in ("pep_conduit", "second_failing", "layering"):
        assert secret not in wire
    assert env.plan_if_done() is None
    while not obs.done:
        obs = env.step(MemexAction(tool="close_alert", arguments={
            "reason": "no cross-check failed", "cited_sections": []}))
    assert env.plan_if_done() == parse(FULL).to_dict()
    with pytest.raises(PlanError):
        env.reset(seed=5, plan={"kind": "layering"})
