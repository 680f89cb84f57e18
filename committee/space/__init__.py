"""The committee's Hugging Face Space: this folder's `Dockerfile` and `README.md` (front matter)
with the committee's manifest (`committee/openenv.yaml`), staged over the whole package.

The committee stands on `memex.envkit`, so its Space cannot be this folder alone. `stage(out)`
builds the Space tree the way `openenv push` stages the AML Space — the repository root copied
with the same ignore file (`.openenvignore`) by openenv's own staging step — and puts the
committee's manifest, Dockerfile and README at its root:

    .venv/bin/python -m memex.committee.space runs/committee_space
    openenv push runs/committee_space --no-interface --repo-id YOU/memex-committee

`tests/integration/test_space_staging.py` checks the staged tree as it checks the AML Space's.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from openenv.cli.commands import push

SPACE_DIR = Path(__file__).resolve().parent
ROOT = SPACE_DIR.parents[1]
MANIFEST = ROOT / "committee" / "openenv.yaml"
IGNORE_FILE = ".openenvignore"
SPACE_FILES = ("Dockerfile", "README.md")


def stage(out: Path, root: Path = ROOT) -> Path:
    """Stage the committee's Space tree at `out` (which must not exist yet); returns `out`."""
    out = Path(out)
    if out.exists():
        raise FileExistsError(f"{out} exists; stage into a new folder")
    patterns = push._load_ignore_patterns(root, IGNORE_FILE)
    push._prepare_staging_directory(root, "memex-committee", out, ignore_patterns=patterns,
                                    enable_interface=False)
    for name in SPACE_FILES:
        shutil.copy(SPACE_DIR / name, out / name)
    shutil.copy(MANIFEST, out / "openenv.yaml")
    return out
