"""Both OpenEnv manifests declare what the code declares and pass `openenv validate`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from memex.committee.tools import ACTION_NAMES
from memex.committee.world.tasks import TASK_NAMES
from memex.models import TOOL_NAMES, MemexAction
from memex.server.environment import MemexEnvironment
from memex.server.tools import TOOLS
from memex.testing.openenv_validation import validate_runtime

ROOT = Path(__file__).resolve().parents[2]


def test_openenv_manifest_matches_the_tools_and_validates(tmp_path):
    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text())
    assert manifest["validation"]["capabilities"]["declared_tools"] == list(TOOL_NAMES)
    module, _, attr = manifest["app"].partition(":")
    assert (ROOT / (module.replace(".", "/") + ".py")).exists() and attr == "app"
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    for rel in tracked + ["openenv.yaml"]:
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, tmp_path / rel)
    exe = Path(sys.executable).with_name("openenv")
    out = subprocess.run([str(exe), "validate", str(tmp_path), "--level", "static",
                          "--skip-build"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Verdict: PASS" in out.stdout, out.stdout + out.stderr


def test_committee_manifest_declares_the_actions_and_validates(tmp_path):
    root = ROOT
    manifest = yaml.safe_load((root / "committee" / "openenv.yaml").read_text())
    assert manifest["validation"]["capabilities"]["declared_tools"] == list(ACTION_NAMES)
    assert manifest["tasks"] == list(TASK_NAMES)
    module, _, attr = manifest["app"].partition(":")
    assert module == "memex.committee.server.app" and attr == "app"
    assert (root / "committee" / "server" / "app.py").exists()
    shutil.copytree(root / "committee", tmp_path / "committee",
                    ignore=shutil.ignore_patterns("__pycache__"))
    exe = Path(sys.executable).with_name("openenv")
    out = subprocess.run([str(exe), "validate", str(tmp_path / "committee"), "--level",
                          "static", "--skip-build"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Verdict: PASS" in out.stdout, out.stdout + out.stderr


def test_probe_plan_is_a_valid_episode_of_declared_tools():
    """The runtime probe (validation/runtime.json) calls declared tools with arguments their
    schemas accept and ends its episode, whatever case the generator makes of its reset."""
    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text())
    plan = json.loads((ROOT / manifest["validation"]["execution"]["probe_path"]).read_text())
    for action in plan["actions"]:
        TOOLS[action["tool"]].args_model.model_validate(action["arguments"])
    env = MemexEnvironment()
    obs = env.reset(**plan["reset"]["options"], seed=plan["reset"]["seed"],
                    episode_id=plan["reset"]["episode_id"])
    for action in plan["actions"]:
        obs = env.step(MemexAction(**action))
    assert obs.done and env.state.episode_id == plan["reset"]["episode_id"]


def test_openenv_validate_passes_at_the_runtime_level():
    """OpenEnv's own validation up to the runtime level (`run_validation`: the manifest's
    execution block, its probe plan played over /ws, the runtime graders), with the server run
    as a local process in place of the image: there is no Docker daemon here."""
    report = validate_runtime("memex")
    status = {r.check_id: r.status.value for r in report.results}
    for check in ("static.manifest", "runtime.startup", "runtime.observation_schema",
                  "runtime.reward_well_formed", "runtime.state_contract"):
        assert status.get(check) == "pass", (check, report.model_dump_json(indent=1)[:4000])
    assert "fail" not in status.values() and report.verdict.value != "fail"
