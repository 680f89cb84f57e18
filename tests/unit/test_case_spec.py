"""The one reset contract: `CaseSpec` names a case, `scenarios.build` makes it, and the HTTP
body, the environment's reset, the adapter, the split and the curriculum all go through them."""

from __future__ import annotations

import pytest

from memex.adapter import ADAPTER
from memex.curriculum import Level
from memex.scenarios import (
    DIFFICULTIES,
    SUSPICIOUS_KINDS,
    TYPOLOGIES,
    CaseSpec,
    build,
    generate,
)
from memex.scenarios.cases import resolved
from memex.scenarios.plan import PlanError
from memex.scenarios.splits import load_split
from memex.server.app import MemexResetRequest
from memex.server.environment import MemexEnvironment

pytestmark = pytest.mark.unit
PLAN = {"kind": "layering", "variant": "pep_conduit", "difficulty": "hard", "layers": 3}


def test_the_typologies_are_the_suspicious_kinds():
    assert set(TYPOLOGIES) == set(SUSPICIOUS_KINDS)
    assert DIFFICULTIES == ("easy", "medium", "hard")


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_a_spec_builds_the_generators_case_byte_for_byte(difficulty):
    spec = CaseSpec(seed=41, difficulty=difficulty, kind="structuring",
                    variant="listed_depositor")
    assert build(spec).to_json() == generate(41, difficulty, "structuring",
                                             variant="listed_depositor").to_json()


def test_a_split_reference_is_its_entry_on_the_entrys_seed_unless_a_seed_is_given():
    entry = load_split()[3]
    named = resolved(CaseSpec(plan="adversarial/3"))
    assert (named.seed, named.plan) == (entry.seed, entry.plan.to_dict())
    assert build(CaseSpec(plan="adversarial/3")).to_json() == build(entry.spec()).to_json()
    assert resolved(CaseSpec(seed=5, plan="adversarial/3")).seed == 5
    with pytest.raises(PlanError, match="no adversarial split entry"):
        build(CaseSpec(plan="adversarial/100000"))


def test_the_reset_keywords_round_trip_and_bad_ones_are_one_line_errors():
    spec = CaseSpec.from_plan(PLAN, 12)
    assert spec.options() == {"seed": 12, "difficulty": "hard", "kind": "layering",
                              "variant": "pep_conduit", "plan": PLAN}
    assert CaseSpec.of({**spec.options(), "ram_pages": 4}) == spec  # OS sizes are not the case's
    assert spec.episode(2).key == "layering-hard-12-r2"
    for bad, field in (({"seed": True}, "seed"), ({"seed": -1}, "seed"),
                       ({"difficulty": "extreme"}, "difficulty"), ({"benign_share": 1.0},
                                                                   "benign_share")):
        with pytest.raises(ValueError, match=f"^{field}: ") as err:
            CaseSpec.of(bad)
        assert "\n" not in str(err.value)


def test_the_http_body_is_the_spec_plus_the_machine():
    assert set(MemexResetRequest.model_fields) == {*CaseSpec.model_fields, "episode_id",
                                                   "ram_pages", "kernel_capacity"}
    assert issubclass(MemexResetRequest, CaseSpec)


def test_the_environment_and_the_adapter_build_the_same_case_from_one_spec():
    for spec in (CaseSpec(seed=9, difficulty="easy", kind="fair_trade"),
                 CaseSpec(case="1mdb"), CaseSpec.from_plan(PLAN, 4),
                 CaseSpec(plan="adversarial/0")):
        env = MemexEnvironment()
        env.reset(**spec.options())
        assert env.current_case.to_json() == ADAPTER.case_for(spec.episode()).to_json()
    assert ADAPTER.case_for(CaseSpec(kind="layering").episode()) is None  # the server draws it


def test_a_level_is_a_case_spec():
    level = Level.from_plan(PLAN, 12)
    assert level.case == CaseSpec.from_plan(PLAN, 12)
    assert level.to_spec(1) == level.case.episode(1)
    assert Level.from_spec(level.to_spec()) == level
    with pytest.raises(ValueError, match="not a level"):
        Level.from_spec(CaseSpec(case="1mdb").episode())
