"""Project plumbing: pins agree, CI calls the README's test command."""

from __future__ import annotations

import ast
import json
import re
import tomllib
from pathlib import Path

import pytest
import yaml

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


# The Space images and the Makefile targets that serve the same environment. There is no Docker
# daemon where the suite runs, so the images are never built here: these checks pin that each
# Dockerfile installs and starts what the Makefile's tested path installs and starts.
SPACE_IMAGES = {
    "memex": ("Dockerfile", "run", "openenv.yaml"),
    "committee": ("committee/space/Dockerfile", "run-committee", "committee/openenv.yaml"),
}


def _recipe(makefile: str, target: str) -> str:
    """The recipe lines of `target` in the Makefile."""
    block = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", makefile, flags=re.M)
    assert block, target
    return block.group(1)


def _served_module(command: str) -> str:
    found = re.search(r"python3?\s+-m\s+([\w.]+)|\$\(PY\)\s+-m\s+([\w.]+)", command)
    assert found, command
    return found.group(1) or found.group(2)


@pytest.mark.parametrize("space", sorted(SPACE_IMAGES))
def test_space_image_installs_and_serves_as_the_makefile_does(space):
    dockerfile_name, target, manifest_name = SPACE_IMAGES[space]
    dockerfile = (ROOT / dockerfile_name).read_text()
    makefile = (ROOT / "Makefile").read_text()
    # Install: the Makefile pins every transitive dependency through constraints.txt; so does
    # the image, having copied it before installing the server's requirements.
    assert re.search(r"^CONSTRAINTS\s*:=\s*-c constraints\.txt\s*$", makefile, flags=re.M)
    assert "$(CONSTRAINTS)" in _recipe(makefile, "$(VENV)/.core")
    installs = re.findall(r"^RUN pip install (.+)$", dockerfile, flags=re.M)
    assert installs[0].split() == ["-c", "constraints.txt", "-r", "requirements.txt"], installs
    assert installs[1].split() == ["--no-deps", "-e", "."], installs  # the package, nothing more
    copy = re.search(r"^COPY --chown=user (.+) \./$", dockerfile, flags=re.M)
    assert copy and {"requirements.txt", "constraints.txt"} <= set(copy.group(1).split())
    assert dockerfile.index(copy.group(0)) < dockerfile.index("RUN pip install -c")
    # Entry point: the module the Makefile serves, on the manifest's port.
    cmd = re.search(r"^CMD (.+)$", dockerfile, flags=re.M)
    assert cmd and _served_module(cmd.group(1)) == _served_module(_recipe(makefile, target))
    port = yaml.safe_load((ROOT / manifest_name).read_text())["port"]
    assert f"PORT={port}" in dockerfile and f"${{PORT:-{port}}}" in cmd.group(1)
    assert f"EXPOSE {port}" in dockerfile and "--host 0.0.0.0" in cmd.group(1)
    assert all(step in dockerfile for step in ("npm ci", "npm run build", "frontend/dist"))
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", ".git", "**/node_modules"} <= set(ignored)


def _notebook_parameters() -> dict[str, object]:
    """The literal parameters of the Colab notebook's `parameters` cell."""
    nb = json.loads((ROOT / "notebooks" / "memex_grpo_colab.ipynb").read_text())
    cell = next(c for c in nb["cells"] if "parameters" in c["metadata"].get("tags", []))
    tree = ast.parse("".join(cell["source"]))
    return {t.id: ast.literal_eval(node.value) for node in tree.body
            if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}


def test_notebook_clones_the_repository_pyproject_names():
    """The notebook's REPO_URL is the repository URL pyproject.toml declares, never a URL of its
    own: both empty until the repository's URL is set in `[project.urls] Repository`."""
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("urls", {})
    assert _notebook_parameters()["REPO_URL"] == urls.get("Repository", "")
