"""The house rules of the layout: imports point one way, no function-local import of a project
module (the way cycles hide), and the package face is cheap."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROOMS_IMPORTED_BY_NO_FRAMEWORK = ("memex.server", "memex.scenarios", "memex.committee",
                                  "memex.graders", "memex.policies", "memex.models",
                                  "memex.adapter", "memex.client", "memex.evaluation")
AML = ("memex.server", "memex.scenarios", "memex.graders", "memex.models", "memex.adapter",
       "memex.client", "memex.state_manager", "memex.policies.heuristic",
       "memex.policies.probes", "memex.policies.oracle", "memex.policies.registry",
       "memex.policies.scripted", "memex.evaluation.runs", "memex.evaluation.demo")


def _sources(*rels: str) -> list[Path]:
    paths = []
    for rel in rels:
        path = ROOT / rel
        paths += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return paths


def _imports(path: Path, *, top_level_only: bool = False) -> set[str]:
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else ast.walk(tree)
    mods = set()
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            mods.add(node.module)
        elif isinstance(node, ast.Import):
            mods |= {a.name for a in node.names}
    return mods


def _offending(paths: list[Path], banned: tuple[str, ...]) -> dict[str, list[str]]:
    bad = {}
    for path in paths:
        hits = sorted(m for m in _imports(path) if m.startswith(banned))
        if hits:
            bad[str(path.relative_to(ROOT))] = hits
    return bad


def test_models_and_graders_import_nothing_from_the_server():
    assert _offending(_sources("models.py", "graders"), ("memex.server",)) == {}


def test_the_framework_imports_no_environment():
    assert _offending(_sources("envkit"), ROOMS_IMPORTED_BY_NO_FRAMEWORK) == {}


def test_the_committee_imports_no_aml_module():
    assert _offending(_sources("committee"), AML) == {}


def test_the_server_imports_only_the_agents_it_serves_from_policies():
    served = {m for p in _sources("server") for m in _imports(p) if m.startswith("memex.policies")}
    assert served == {"memex.policies.heuristic", "memex.policies.probes"}
    assert _offending(_sources("server"), ("memex.evaluation", "memex.adapter")) == {}


@pytest.mark.parametrize("room", ["envkit", "server", "graders", "policies", "evaluation",
                                  "committee", "agent_os_core", "testing", "models.py",
                                  "adapter.py", "client.py", "inference.py", "train_grpo.py",
                                  "openenv_server.py", "state_manager.py"])
def test_no_function_local_import_of_a_project_module(room):
    local = {}
    for path in _sources(room):
        everywhere = {m for m in _imports(path) if m.startswith("memex")}
        nested = everywhere - _imports(path, top_level_only=True)
        if nested:
            local[str(path.relative_to(ROOT))] = sorted(nested)
    assert local == {}


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
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "FastAPI"
