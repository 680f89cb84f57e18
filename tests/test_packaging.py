"""Project plumbing: pins agree, CI calls the README's test command."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pins(lines):
    return {re.split(r"[=<>~!]", ln)[0].strip().lower(): ln.strip() for ln in lines
            if ln.strip() and not ln.lstrip().startswith("#")}


def test_requirements_txt_matches_pyproject_dependencies():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert _pins((ROOT / "requirements.txt").read_text().splitlines()) == _pins(
        project["dependencies"])


def test_every_dependency_is_pinned_exactly():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    deps = list(project["dependencies"])
    for extra in project["optional-dependencies"].values():
        deps += extra
    assert all("==" in d for d in deps), [d for d in deps if "==" not in d]


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"^\s*(make \w+)\s*$", quick, flags=re.M)
    assert commands == ["make run", "make test"], commands
    ci = (ROOT / ".ci" / "run").read_text()
    assert re.search(r"^make test\s*$", ci, flags=re.M)


def test_dockerfile_serves_on_the_space_port_with_the_glass_box():
    text = (ROOT / "Dockerfile").read_text()
    assert "PORT=7860" in text and "${PORT:-7860}" in text and "EXPOSE 7860" in text
    assert "pip install -r requirements.txt" in text
    assert "npm ci" in text and "npm run build" in text and "frontend/dist" in text
    assert re.search(r"CMD .*memex\.openenv_server", text)
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", ".git", "**/node_modules"} <= set(ignored)


def test_openenv_manifest_matches_the_tools_and_validates(tmp_path):
    import shutil
    import subprocess
    import sys

    import yaml

    from memex.server.tools import TOOL_NAMES

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
