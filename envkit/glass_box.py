"""The Glass Box (`frontend/`, built to `frontend/dist`) served by an environment's own app.

One build serves every environment: the page asks `GET /info` which environment it is talking
to (`env`) and shows that environment's view. `mount_glass_box` serves the page at `/` and at
`/web` (where OpenEnv Spaces and the committee prototype put their playground) and the build's
files at `/assets`; without a build it mounts nothing and says so.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

FRONTEND_DIST = Path(__file__).resolve().parents[1] / "frontend" / "dist"
PAGE_PATHS = ("/", "/web")


def glass_box_built(frontend_dir: Path | None) -> bool:
    return bool(frontend_dir and (frontend_dir / "index.html").exists())


def mount_glass_box(app: FastAPI, frontend_dir: Path | None = FRONTEND_DIST) -> bool:
    """Serve the built Glass Box from `frontend_dir` on `app`; False (nothing mounted) when it
    has not been built (`npm run build` in frontend/)."""
    if not glass_box_built(frontend_dir):
        return False
    assert frontend_dir is not None
    if (frontend_dir / "assets").is_dir():
        app.mount("/assets", StaticFiles(directory=frontend_dir / "assets"), name="assets")
    index = frontend_dir / "index.html"

    async def glass_box() -> FileResponse:
        return FileResponse(index)

    for path in PAGE_PATHS:
        app.add_api_route(path, glass_box, methods=["GET", "HEAD"], include_in_schema=False)
    return True
