"""The toolchain over real WebSocket sessions: an adapter session plays the same episode as in
process, and the evaluation harness runs two baselines and writes the markdown table, PNG plots
and one replayable trace per episode."""

from __future__ import annotations

import json

import pytest

from memex.envkit.traces import read_trace
from memex.evaluation.harness import evaluate
from memex.registry import get_adapter

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def adapter():
    return get_adapter("memex")


def test_websocket_session_plays_the_same_episode_as_in_process(adapter, memex_server):
    spec = adapter.grid("test", ["trade_based"], ["medium"])[0]
    local = adapter.play(adapter.open(), adapter.make_policy("heuristic"), spec)
    session = adapter.open(memex_server.url)
    try:
        remote = adapter.play(session, adapter.make_policy("heuristic"), spec)
    finally:
        session.close()
    assert [a.model_dump() for a in remote.actions] == [a.model_dump() for a in local.actions]
    assert remote.episode_return == local.episode_return
    assert remote.state.page_faults == local.state.page_faults
    assert adapter.metrics(remote) == adapter.metrics(local)


def test_two_baselines_over_websocket_write_table_plots_and_traces(adapter, memex_server,
                                                                   tmp_path):
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
