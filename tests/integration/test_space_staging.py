"""What `openenv push` would upload to the Hugging Face Spaces, staged offline: the AML Space
(the repository root) and the investment committee's (`memex.committee.space`).

openenv 0.10's push copies the environment directory into a temporary staging folder (its
`_prepare_staging_directory`, with the default ignore patterns plus the `--exclude` file), then
uploads that folder. This runs the same staging step on this checkout, with the options the
documented command uses (`openenv push --no-interface --exclude .openenvignore`; for the
committee, on the tree `python -m memex.committee.space OUT` stages), and checks the staged
tree: everything the Dockerfile copies is there, the README's front matter configures a Docker
Space on the manifest's port, and nothing local (virtual environments, node_modules, runs,
build outputs) is."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

push = pytest.importorskip("openenv.cli.commands.push")
committee_space = pytest.importorskip("memex.committee.space")

ROOT = Path(__file__).resolve().parents[2]
IGNORE_FILE = ".openenvignore"
# Hugging Face rejects plain (non-LFS) files over 10 MB; a Space repository should stay small.
MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_TOTAL_BYTES = 50 * 1024 * 1024
FORBIDDEN = (".venv", ".git", "node_modules", "runs", "agent_os_core/target", "frontend/dist",
             "__pycache__", "artifacts", ".pytest_cache")


# Each Space: the folder `openenv push` is given (None: the committee's, staged first), the
# manifest name, the Dockerfile it must stage as written, and files the image serves from.
SPACES = {
    "memex": (ROOT, "memex", ROOT / "Dockerfile",
              ("openenv_server.py", "server/app.py", "server/environment.py")),
    "committee": (None, "memex-committee", ROOT / "committee" / "space" / "Dockerfile",
                  ("committee/server/app.py", "committee/server/__main__.py",
                   "committee/environment.py", "envkit/http_episodes.py")),
}


@pytest.fixture(scope="module", params=sorted(SPACES))
def space(request, tmp_path_factory) -> tuple[str, Path]:
    """(name, the staged tree `openenv push --no-interface --exclude .openenvignore` uploads)."""
    name = request.param
    source, expected_name, _, _ = SPACES[name]
    if source is None:
        source = committee_space.stage(tmp_path_factory.mktemp("committee") / "space")
    env_name, manifest = push._validate_openenv_directory(source)
    assert env_name == manifest["name"] == expected_name
    # The committee's tree was staged with the ignore file already (and holds no dot-files):
    # its documented push names none.
    patterns = push._load_ignore_patterns(source, IGNORE_FILE if name == "memex" else None)
    staging = tmp_path_factory.mktemp("space") / "staging"
    push._prepare_staging_directory(source, env_name, staging, ignore_patterns=patterns,
                                    enable_interface=False)
    return name, staging


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_staged_tree_has_what_the_space_builds_from(space):
    name, staged = space
    _, _, dockerfile_source, served = SPACES[name]
    for name in ("openenv.yaml", "Dockerfile", "README.md", "pyproject.toml", "requirements.txt",
                 "constraints.txt", "__init__.py", *served, "frontend/package.json",
                 "frontend/package-lock.json", "frontend/index.html"):
        assert (staged / name).is_file(), name
    assert any((staged / "frontend" / "src").rglob("*.tsx"))
    # Every COPY source of the Dockerfile (outside the frontend build stage's own output) exists.
    dockerfile = (staged / "Dockerfile").read_text()
    for line in dockerfile.splitlines():
        words = shlex.split(line) if line.startswith("COPY") else []
        if not words or any(w.startswith("--from") for w in words):
            continue
        sources = [w for w in words[1:-1] if not w.startswith("--")]
        for src in sources:
            assert (staged / src).exists(), f"Dockerfile copies {src}, not staged"
    # `--no-interface`: the Dockerfile is staged as written (our servers serve their own /web).
    assert dockerfile == dockerfile_source.read_text()
    # The package's Python modules, as pyproject.toml names them, are all there.
    for package in re.findall(r'"memex\.([a-z_.]+)"', (staged / "pyproject.toml").read_text()):
        assert (staged / package.replace(".", "/") / "__init__.py").is_file(), package


def test_readme_front_matter_configures_a_docker_space_on_the_served_port(space):
    name, staged = space
    text = (staged / "README.md").read_text()
    assert text.startswith("---\n")
    front = yaml.safe_load(text.split("---\n")[1])
    manifest = yaml.safe_load((staged / "openenv.yaml").read_text())
    port = {"memex": 7860, "committee": 7861}[name]
    assert front["sdk"] == "docker"
    assert front["app_port"] == manifest["port"] == port
    assert "openenv" in front["tags"]
    assert re.search(rf"\bPORT={port}\b", (staged / "Dockerfile").read_text())


def test_staged_tree_is_free_of_local_state_and_small(space):
    _, staged = space
    files = _files(staged)
    rel = [p.relative_to(staged).as_posix() for p in files]
    for bad in FORBIDDEN:
        hits = [r for r in rel if r == bad or r.startswith(bad + "/") or f"/{bad}/" in f"/{r}"]
        assert not hits, (bad, hits[:5])
    assert not [r for r in rel if r.endswith((".pyc", ".safetensors", ".gguf"))]
    sizes = {r: p.stat().st_size for r, p in zip(rel, files, strict=True)}
    big = {r: s for r, s in sizes.items() if s > MAX_FILE_BYTES}
    assert not big, big
    total = sum(sizes.values())
    assert total < MAX_TOTAL_BYTES, f"staged Space is {total / 1e6:.1f} MB"
