"""scripts/models.py, the model table, on a tiny size: its rows come from real plays (the
takeover plays agree with the learning run's own reference, episode by episode), it reads a
learning run's episodes.jsonl (written here by scripts/learn.py's own row and report format
from a real evaluation of the heuristic) and harness runs (a real one), and its intervals and
pass^k are those of the rows."""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path

import pytest

from memex.evaluation.harness import evaluate
from memex.registry import get_adapter

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
_SPEC = importlib.util.spec_from_file_location("models_table", ROOT / "scripts" / "models.py")
models = importlib.util.module_from_spec(_SPEC)
sys.modules["models_table"] = models
_SPEC.loader.exec_module(models)
learn = models.learn
ADAPTER = get_adapter("memex")


def _learning_run(tmp_path: Path, specs, last: int, turns: int) -> Path:
    """A learning run's files as scripts/learn.py writes them (`run.json`'s argv, and
    `episodes.jsonl`: {"model": NAME, **_row}), its rows from a real evaluation: the
    heuristic reference `learn.evaluate_heuristic` plays."""
    out = tmp_path / "learn"
    out.mkdir()
    argv = ["--size", "small", "--takeover-last", str(last), "--max-turns", str(turns),
            "--test-episodes", str(len(specs))]
    (out / "run.json").write_text(json.dumps({"argv": argv}))
    rows = learn.evaluate_heuristic(ADAPTER, specs, turns, last, learn.DEMONSTRATOR)
    with (out / "episodes.jsonl").open("w") as f:
        for r in rows:
            f.write(json.dumps({"model": "heuristic (reference)", **r}) + "\n")
    return out


def test_the_learning_slice_is_read_from_a_run_and_replayed_the_same(tmp_path):
    base = learn.parse_args(["--size", "small"])
    specs = [s for e in range(2) for s in ADAPTER.grid(
        "test", base.tasks.split(","), [base.difficulty], 1, seed_offset=e)]
    run = models.learning_run(_learning_run(tmp_path, specs, last=1, turns=1))
    args, read = models.learning_slice(ADAPTER, run)
    assert [s.key for s in read] == [s.key for s in specs]
    assert [s.reset for s in read] == [s.reset for s in specs]
    assert (args.takeover_last, args.max_turns) == (1, 1)
    assert "scripts/learn.py --size small" in run["command"] and "UTC" in run["date"]
    # The demonstrator's takeover played here equals the run's reference, episode by episode.
    own = {r["key"]: r for r in run["rows"]["heuristic (reference)"]}
    demonstrator = args.demonstrator
    assert demonstrator == learn.DEMONSTRATOR == "heuristic_documented"
    for spec in read:
        prefix = models.demonstrator_prefix(ADAPTER, spec, 1, demonstrator)
        row = models.play_takeover(ADAPTER, demonstrator, spec, prefix, 1, demonstrator)
        assert row["return"] == pytest.approx(own[spec.key]["return"])
        assert row["decision_accuracy"] == own[spec.key]["decision_accuracy"] == 1.0
        assert row["turns"] == 1
    # Without a run: the slice scripts/learn.py would evaluate (its default size).
    args, derived = models.learning_slice(ADAPTER, None)
    assert len(derived) == learn.parse_args([]).test_episodes == args.test_episodes
    assert {s.task for s in derived} == set(args.tasks.split(","))


def test_a_takeover_probe_decides_at_once_and_a_capped_one_scores_a_timeout():
    spec = ADAPTER.grid("test", ["structuring"], ["easy"], 1)[0]
    prefix = models.demonstrator_prefix(ADAPTER, spec, 3, "heuristic")
    sar = models.play_takeover(ADAPTER, "always_sar", spec, prefix, 1, "heuristic")
    assert sar["outcome"] == "TP" and sar["turns"] == 1 and sar["decision_accuracy"] == 1.0
    spam = models.play_takeover(ADAPTER, "tool_spam", spec, prefix, 2, "heuristic")
    assert spam["outcome"] == "unfinished" and spam["decision_accuracy"] == 0.0
    assert spam["return"] < sar["return"]
    assert spam["return"] <= ADAPTER.timeout_return(ADAPTER.case_for(spec)) + 0.01


def test_measure_gives_the_rows_intervals_and_pass_k():
    rows = [{"key": f"t-easy-{s}-r0", "task": "t", "difficulty": "easy", "return": r,
             "decision_accuracy": a} for s, (r, a) in enumerate(
                 [(1.0, 1.0), (0.0, 0.0), (1.0, 1.0), (1.0, 1.0)])]
    rows += [{"key": "u-easy-9-r0", "task": "u", "difficulty": "easy", "return": -1.0,
              "decision_accuracy": 0.0, "valid_call_rate": 0.5}]
    m = models.measure(rows)
    assert m["n"] == 5 and m["accuracy"]["mean"] == pytest.approx(0.6)
    assert m["return"]["mean"] == pytest.approx(0.4)
    assert m["return"]["lo"] < 0.4 < m["return"]["hi"]
    # cells: t (4 tries, 3 right), u (1 try, 0 right); pass^2 only where n >= 2
    assert m["pass^1"] == pytest.approx((3 / 4 + 0) / 2)
    assert m["pass^2"] == pytest.approx(3 / 6)
    assert m["pass^3"] == pytest.approx(1 / 4)
    assert m["valid"] == pytest.approx(0.5)  # over the rows that carry it
    line = models.table({"p": rows}).splitlines()[-1]
    assert line.startswith("| p | 5 | 0.600 [") and "+0.400 [" in line


def test_harness_runs_join_the_whole_episode_table_only_on_its_grid(tmp_path):
    grid = ADAPTER.grid("test", ["structuring", "cash_business"], ["easy"], 2)
    same, other = tmp_path / "eval-same", tmp_path / "eval-other"
    evaluate(ADAPTER, ["always_sar"], grid, out=same, workers=1, traces="none",
             progress=False)
    evaluate(ADAPTER, ["always_close"], grid[:2], out=other, workers=1, traces="none",
             progress=False)
    whole = models.play_whole(ADAPTER, ["always_sar"], grid, workers=1)
    others = models.merge_runs(whole, grid, [same, other])
    assert set(whole) == {"always_sar", "always_sar [eval-same]"}
    assert [r["return"] for r in whole["always_sar"]] == \
        [r["return"] for r in whole["always_sar [eval-same]"]]
    assert [o["dir"] for o in others] == [str(other)] and others[0]["sealed"] is None
    assert models.measure(others[0]["rows"]["always_close"])["n"] == 2


def test_a_sealed_run_gets_its_own_table_with_its_reports_verification(tmp_path):
    """A run directory holding a sealed report (a real one from docs/leaderboard/reports) is
    not merged into table 2, and its report is checked: it verifies, and an edited copy does
    not."""
    grid = ADAPTER.grid("test", ["structuring"], ["easy"], 1)
    run_dir = tmp_path / "sealed-run"
    evaluate(ADAPTER, ["random"], grid, out=run_dir, workers=1, traces="none", progress=False)
    shutil.copy(ROOT / "docs" / "leaderboard" / "reports" / "memex-random.json",
                run_dir / "sealed_report.json")
    whole = models.play_whole(ADAPTER, ["random"], grid, workers=1)
    [sealed] = models.merge_runs(whole, grid, [run_dir])
    assert set(whole) == {"random"} and sealed["sealed"]["run_id"] and sealed["problems"] == []
    report = json.loads((run_dir / "sealed_report.json").read_text())
    report["episodes"][0]["score"] = 1.0  # a better score than the server gave
    (run_dir / "sealed_report.json").write_text(json.dumps(report))
    assert models.harness_run(run_dir)["problems"]
