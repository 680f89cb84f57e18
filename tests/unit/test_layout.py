"""The house rules of the layout, drawn from the code's imports (`memex.testing.rooms`): every
room placed in the layering, every import pointing down, no loop between rooms, the server and
the framework free of what sits above them, no function-local import of a project module (the
way cycles hide), and cheap imports where they matter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memex.testing import rooms as R

ROOMS = R.rooms()
ARROWS = R.arrows()
AML = ("memex.server", "memex.scenarios", "memex.graders", "memex.models", "memex.adapter",
       "memex.client", "memex.state_manager", "memex.policies", "memex.audit",
       "memex.adversary", "memex.evaluation.runs", "memex.evaluation.demo")
ENVIRONMENTS = ("server", "scenarios", "graders", "policies", "models", "state_manager",
                "adapter", "client", "openenv_server", "committee", "adversary")
# What the server, the data below it and the framework must never import.
BELOW_THE_INSTRUMENTS = ("server", "scenarios", "graders", "policies", "envkit", "models",
                         "state_manager")


def _imported_by(room: str) -> set[str]:
    return {b for (a, b) in ARROWS if a == room}


def test_every_room_has_a_place_in_the_layering():
    tiers = R.tier_of()
    assert [r for r in ROOMS if r not in tiers] == []
    assert {"audit", "adversary", "curriculum", "evaluation", "registry"} <= set(ROOMS)


def test_no_import_points_up():
    up = {f"{a} -> {b}": [f"{i.path}:{i.line}" for i in ARROWS[(a, b)]]
          for a, b in R.upward(ARROWS)}
    assert up == {}


def test_the_rooms_have_an_order_of_their_own_and_it_agrees_with_the_layering():
    derived = R.derived_order(ARROWS, ROOMS)  # raises, naming the loop, if the rooms loop
    level = {room: n for n, tier in enumerate(derived) for room in tier}
    tiers = R.tier_of()
    for a, b in ARROWS:
        assert level[b] < level[a] and tiers[b] < tiers[a], (a, b)


def test_the_readme_map_lists_every_room_bottom_to_top():
    block = (R.ROOT / "README.md").read_text().split("## Layout", 1)[1].split("```")[1]
    listed = [word.rstrip("/").removesuffix(".py") for line in block.splitlines()
              for word in line.split("   ")[0].split() if word.endswith(("/", ".py"))]
    rooms = [r for r in listed if r in R.tier_of()]
    assert set(rooms) == set(ROOMS) - {R.FACE}
    tiers = [R.tier_of()[r] for r in rooms]
    assert tiers == sorted(tiers), rooms


def test_a_loop_between_rooms_is_found_and_named():
    edges = [("server", "adversary"), ("adversary", "evaluation"), ("evaluation", "server"),
             ("server", "scenarios")]
    assert R.loops(edges) == [["adversary", "evaluation", "server"]]
    with pytest.raises(ValueError, match="adversary <-> evaluation <-> server"):
        R.derived_order(edges, ["scenarios"])
    assert R.upward({("scenarios", "server"): []}) == [("scenarios", "server")]


@pytest.mark.parametrize("room", BELOW_THE_INSTRUMENTS)
def test_the_server_and_what_it_stands_on_import_no_instrument(room):
    assert _imported_by(room) & set(R.INSTRUMENTS) == set()


def test_the_framework_imports_no_environment():
    assert _imported_by("envkit") == set()


def test_the_committee_imports_no_aml_module():
    hits = sorted(f"{i.path}:{i.line} {i.module}" for (a, _), imps in ARROWS.items()
                  if a == "committee" for i in imps if i.module.startswith(AML))
    assert hits == []


def test_the_server_imports_only_the_agents_it_serves_from_policies():
    served = {i.module for (a, b), imps in ARROWS.items() if (a, b) == ("server", "policies")
              for i in imps}
    assert served == {"memex.policies.heuristic", "memex.policies.probes"}
    assert _imported_by("server") & {"adapter", "registry", "client"} == set()


@pytest.mark.parametrize("room", ROOMS)
def test_no_function_local_import_of_a_project_module(room):
    nested = [f"{i.path}:{i.line} {i.module}" for path in R.sources(room)
              for i in R.imports(path) if i.local]
    assert nested == []


def _loaded(statement: str) -> dict[str, bool]:
    probe = (f"import sys, json; {statement}; ms = set(sys.modules); print(json.dumps({{"
             "'optuna': 'optuna' in ms, 'ray': 'ray' in ms, 'tqdm': 'tqdm' in ms, "
             "'environment': 'memex.server.environment' in ms, "
             "'app': 'memex.server.app' in ms, "
             "'instruments': sorted({m.split('.')[1] for m in ms if m.split('.')[0] == 'memex' "
             "and len(m.split('.')) > 1 and m.split('.')[1] in "
             f"{list(R.INSTRUMENTS)!r}}})}}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def test_the_environment_loads_no_search_no_ray_no_progress_bar_and_no_instrument():
    loaded = _loaded("import memex.server.environment")
    assert loaded == {"optuna": False, "ray": False, "tqdm": False, "environment": True,
                      "app": False, "instruments": []}


def test_agent_os_loads_neither_the_environment_nor_an_instrument():
    loaded = _loaded("import memex.agent_os_core.agent_os")
    assert (loaded["environment"], loaded["app"], loaded["instruments"]) == (False, False, [])


def test_the_package_face_is_the_client_and_models_and_builds_no_index():
    probe = ("import sys; from memex import MemexEnv, MemexAction, MemexObservation; "
             "print(MemexEnv.__name__, MemexAction.__name__, MemexObservation.__name__, "
             "any(m.startswith(('memex.server', 'memex.scenarios', 'bm25s')) "
             "for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["MemexEnv", "MemexAction", "MemexObservation", "False"]


def test_uvicorn_finds_the_app_from_the_repository_root():
    probe = "import openenv_server; print(type(openenv_server.app).__name__)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=R.ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "FastAPI"
