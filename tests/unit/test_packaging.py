"""Project plumbing: pins agree, CI calls the README's test command."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
