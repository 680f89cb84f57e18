"""Tasks and reset aliases (`envkit.tasks`): the seed-major grid, the aliases' resolution and
refusals, and both environments reading them in process (the path of a `/ws` reset)."""

from __future__ import annotations

import pytest

from memex.committee.environment import CommitteeEnvironment
from memex.committee.world.tasks import TASK_GRIDS, TASK_NAMES
from memex.envkit.tasks import Grid, Listed, TaskCatalog, UnknownSplitError, unalias
from memex.scenarios import DIFFICULTIES, KINDS, SPLITS, CaseSpec
from memex.scenarios.tasks import TASKS
from memex.server.environment import MemexEnvironment

pytestmark = pytest.mark.unit

GRID = Grid("test", "test", range(100, 103), {"difficulty": ("easy", "hard"), "kind": ("a", "b",
                                                                                         "c")})
CATALOG = TaskCatalog((GRID, Listed("extra", "test", lambda: [{"plan": "x/0"}])))


def _named(task_id: str) -> dict:
    if task_id in ("easy", "hard"):
        return {"difficulty": task_id}
    raise ValueError(f"unknown name {task_id!r}")


def test_a_grid_is_seed_major_with_the_last_axis_fastest():
    assert len(GRID) == 3 * 6
    assert [GRID.reset(i) for i in (0, 1, 3, 6)] == [
        {"difficulty": "easy", "kind": "a", "seed": 100},
        {"difficulty": "easy", "kind": "b", "seed": 100},
        {"difficulty": "hard", "kind": "a", "seed": 100},
        {"difficulty": "easy", "kind": "a", "seed": 101}]
    with pytest.raises(IndexError):
        GRID.reset(18)
    assert CATALOG.task("test", 7) == {"id": "test/7", "split": "test", "index": 7,
                                       "reset": {"difficulty": "easy", "kind": "b",
                                                 "seed": 101}}
    assert [t["index"] for t in CATALOG.tasks("test", -2)] == [16, 17]
    with pytest.raises(UnknownSplitError, match="splits: test, extra"):
        CATALOG["nope"]


def test_aliases_name_fields_and_a_field_named_twice_must_agree():
    assert unalias({"seed": 1}, CATALOG, _named) == {"seed": 1}  # no alias: unchanged
    assert unalias({"task_id": "hard"}, CATALOG, _named) == {"difficulty": "hard"}
    assert unalias({"task_id": "test/7"}, CATALOG, _named) == GRID.reset(7)
    assert unalias({"split": "test", "index": 7, "seed": None}, CATALOG, _named) == \
        GRID.reset(7)
    assert unalias({"split": "extra", "index": 0}, CATALOG, _named) == {"plan": "x/0"}
    assert unalias({"parameters": {"seed": 4}, "task_id": "easy", "difficulty": "easy"},
                   CATALOG, _named) == {"seed": 4, "difficulty": "easy"}
    for bad, message in (
            ({"task_id": "easy", "difficulty": "hard"}, "conflicts"),
            ({"split": "test"}, "give both"),
            ({"split": "test", "index": True}, "integer index"),
            ({"task_id": "test/99"}, "out of range"),
            ({"task_id": "medium"}, "unknown name"),
            ({"parameters": [1]}, "object of reset fields"),
            ({"parameters": {"task_id": "easy"}}, "cannot be nested"),
            ({"task_id": 3}, "task_id")):
        with pytest.raises(ValueError, match=message):
            unalias(bad, CATALOG, _named)


def test_the_aml_tasks_are_every_difficulty_and_kind_of_each_seed_split():
    test = TASKS["test"]
    assert len(test) == len(SPLITS["test"]) * len(DIFFICULTIES) * len(KINDS)
    assert [s.name for s in TASKS.splits] == [*SPLITS, "adversarial"]
    assert CaseSpec.of({"task_id": "test/5"}) == CaseSpec(**test.reset(5))
    assert CaseSpec.of({"task_id": "easy"}).difficulty == "easy"
    assert CaseSpec.of({"task_id": "adversarial/1"}).plan == "adversarial/1"
    env = MemexEnvironment()  # a /ws reset passes its data as these keywords
    assert env.reset(task_id="test/5").model_dump() == \
        MemexEnvironment().reset(**test.reset(5)).model_dump()


def test_the_committee_reads_the_aliases_in_process():
    env = CommitteeEnvironment()
    obs = env.reset(task_id="test/6")
    assert obs.task == TASK_NAMES[2] and env.state.seed == TASK_GRIDS["test"].reset(6)["seed"]
    assert CommitteeEnvironment().reset(parameters={"task": "mandate_drift"}).task == \
        "mandate_drift"
    with pytest.raises(ValueError, match="not a task"):
        CommitteeEnvironment().reset(task_id="nope")
