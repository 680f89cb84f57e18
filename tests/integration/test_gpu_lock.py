"""requirements-gpu.lock, the GPU extra's lock (unsloth, vllm and the torch / transformers / trl
they accept): it pins every requirement of requirements-gpu.in, and it resolves.

The resolution check runs uv's resolver (`uv pip compile`, the dev extra's uv) over the lock for
the lock's target (Linux x86_64, CPython 3.11): a dry run that reads package metadata from the
registry (PyPI's per-file metadata, no wheel downloaded) and must return exactly the lock's
pins, so the pins are mutually consistent and the lock misses no dependency. It needs the
registry reachable; without it the test is skipped and says so. pip's own resolver agrees:
`pip install --dry-run --ignore-installed --only-binary=:all: --python-version 3.11
--platform manylinux_2_28_x86_64 ... -r requirements-gpu.lock` (minutes, not seconds).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements-gpu.lock"
SOURCE = ROOT / "requirements-gpu.in"
TARGET = ["--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28"]
PIN = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)==(\S+)$")
OFFLINE = ("dns error", "failed to connect", "Could not connect", "network", "timed out")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = PIN.match(line.split("#")[0].strip())
        if m:
            out[_norm(m.group(1))] = m.group(2)
    return out


def test_the_lock_pins_every_requirement_of_the_gpu_extra():
    lock = pins(LOCK.read_text())
    for line in SOURCE.read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        name, _, version = line.partition("==")
        assert _norm(name) in lock, f"{name} is not in the lock"
        if version:
            assert lock[_norm(name)] == version, (name, lock[_norm(name)], version)
    # The stack the GPU paths need, at versions that accept each other.
    assert {"torch", "transformers", "trl", "vllm", "unsloth", "llguidance", "peft"} <= set(lock)
    assert lock["llguidance"] == "1.7.6"  # the same grammar library as the train extra


def _uv() -> str:
    found = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
    if found is None:
        pytest.skip("uv is not installed (the dev extra pins it)")
    return found


@pytest.mark.timeout(600)
def test_the_lock_resolves_to_itself():
    run = subprocess.run([_uv(), "pip", "compile", str(LOCK), *TARGET, "--no-header",
                          "--no-annotate", "--quiet"], capture_output=True, text=True,
                         timeout=540, cwd=ROOT)
    if run.returncode != 0 and any(s.lower() in run.stderr.lower() for s in OFFLINE):
        pytest.skip(f"the package registry is not reachable: {run.stderr.strip()[-300:]}")
    assert run.returncode == 0, run.stderr[-3000:]
    assert pins(run.stdout) == pins(LOCK.read_text())
