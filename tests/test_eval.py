"""The evaluation harness: pass^k, and a real run of two baselines over WebSocket sessions that
writes the markdown table, PNG plots and one replayable trace per episode."""

from __future__ import annotations

import json

import pytest

from memex.envs import get_adapter
from memex.eval_harness import evaluate, pass_hat_k, summarize
from memex.traces import read_trace

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_pass_hat_k_on_a_hand_made_example():
    # Three cases tried four times: always, half the time, never.
    trials = [(4, 4), (4, 2), (4, 0)]
    assert pass_hat_k(trials, 1) == pytest.approx((1 + 0.5 + 0) / 3)
    assert pass_hat_k(trials, 2) == pytest.approx((1 + 1 / 6 + 0) / 3)  # C(2,2)/C(4,2)
    assert pass_hat_k(trials, 3) == pytest.approx(1 / 3)  # C(2,3) = 0
    assert pass_hat_k(trials, 4) == pytest.approx(1 / 3)
    assert pass_hat_k(trials, 5) is None  # no case was tried five times
    assert pass_hat_k([(3, 3), (1, 0)], 2) == pytest.approx(1.0)  # only cases with n >= k count


def test_summary_averages_each_measure_where_defined():
    rows = [{"task": "a", "difficulty": "easy", "seed": 1, "success": 1.0, "return": 0.5,
             "steps": 3.0, "sar_precision": None},
            {"task": "a", "difficulty": "easy", "seed": 1, "success": 0.0, "return": -0.5,
             "steps": 5.0, "sar_precision": 0.0}]
    s = summarize(rows, ["sar_precision"])
    assert s["success"] == 0.5 and s["return"] == 0.0 and s["steps"] == 4.0
    assert s["sar_precision"] == 0.0  # the one episode where it is defined
    assert s["pass^1"] == 0.5 and s["pass^2"] == 0.0 and s["pass^3"] is None


def test_two_baselines_over_websocket_write_table_plots_and_traces(memex_server, tmp_path):
    adapter = get_adapter("memex")
    specs = adapter.grid("test", ["structuring", "fair_trade"], ["easy", "hard"], episodes=2,
                         repeats=2)
    result = evaluate(adapter, ["heuristic", "always_close"], specs, out=tmp_path,
                      base_url=memex_server.url, workers=3, command="(test)",
                      grid_note="test grid", progress=False)
    rows = result["rows"]
    assert len(rows) == 2 * len(specs)
    summary = result["summary"]
    assert summary["heuristic"]["all"]["decision_accuracy"] == 1.0
    assert summary["always_close"]["all"]["decision_accuracy"] == 0.5  # the benign half
    assert summary["heuristic"]["all"]["pass^2"] == 1.0
    assert summary["heuristic"]["all"]["pass^3"] is None  # two repeats only

    report = (tmp_path / "report.md").read_text()
    assert ("| policy | easy decision accuracy | hard decision accuracy | easy return | "
            "hard return |" in report)
    assert "| heuristic | 1.000 | 1.000 |" in report
    for heading in ("## All measures", "## pass^k", "### easy", "### hard", "## Plots"):
        assert heading in report
    assert len(result["plots"]) == 4
    for png in result["plots"]:
        assert png.read_bytes()[:8] == PNG_MAGIC
        assert f"({png.name})" in report

    lines = (tmp_path / "episodes.jsonl").read_text().splitlines()
    episodes = [json.loads(line) for line in lines]
    assert len(episodes) == len(rows)
    traces = sorted((tmp_path / "traces").rglob("*.jsonl"))
    assert len(traces) == len(rows)
    trace = read_trace(tmp_path / rows[0]["trace"])
    assert trace.header["env"] == "memex" and trace.header["policy"] == rows[0]["policy"]
    assert trace.footer["truth"]["kind"] == rows[0]["task"]
    assert trace.steps[0]["action"] is None and len(trace.steps) == rows[0]["steps"] + 1
    assert trace.footer["outcome"] == rows[0]["outcome"]
