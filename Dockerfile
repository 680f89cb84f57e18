# Hugging Face Space image: the Memex environment server with the Glass Box.
# The Space (or `docker run -e PORT=...`) sets PORT; the default is 7860.

# --- Glass Box: built to static files that the server serves ---------------------------------
FROM node:20-slim AS frontend
WORKDIR /app/frontend
COPY frontend/package.json frontend/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY frontend/ ./
RUN npm run build

# --- environment server ------------------------------------------------------------------------
FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    PORT=7860
# Spaces run containers as uid 1000.
RUN useradd --create-home --uid 1000 user
WORKDIR /home/user/app
# The server's dependencies, every transitive one pinned by constraints.txt (as `make run` installs).
COPY --chown=user requirements.txt constraints.txt ./
RUN pip install -c constraints.txt -r requirements.txt
COPY --chown=user . .
COPY --chown=user --from=frontend /app/frontend/dist ./frontend/dist
# Editable install: the package is this directory (OpenEnv convention), so the server finds
# frontend/dist next to it.
RUN pip install --no-deps -e .
USER user
EXPOSE 7860
HEALTHCHECK --interval=30s --timeout=5s CMD python -c "import os, urllib.request; urllib.request.urlopen(f'http://127.0.0.1:{os.environ.get(\"PORT\", \"7860\")}/health')"
# No truth is served by default: on a public Space a second episode on the same seed would give
# the first one's answer. A local demo turns the Glass Box's post-episode overlay on with
# `docker run -e MEMEX_REVEAL_TRUTH_AFTER_DONE=1 ...`; `-e MEMEX_SEALED=1` serves a sealed run.
CMD ["sh", "-c", "exec python -m memex.openenv_server --host 0.0.0.0 --port ${PORT:-7860}"]
