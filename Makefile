# The two commands of the README: `make run` (serve / main job) and `make test` (whole suite).
# Each does its own set-up on a fresh machine: a virtual environment inside the repo with the
# pinned dependencies. Re-running skips set-up steps whose inputs have not changed.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
SEED ?= 7
DIFFICULTY ?= medium

.PHONY: run test lint bench clean

$(VENV)/.deps: pyproject.toml requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q -e ".[dev]"
	touch $@

run: $(VENV)/.deps
	$(PY) -m memex.scenarios --seed $(SEED) --difficulty $(DIFFICULTY)

lint: $(VENV)/.deps
	$(VENV)/bin/ruff check .

test: lint
	$(PY) -m pytest -q

bench: $(VENV)/.deps
	$(PY) benchmarks/bench_generation.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
