"""The 1MDB demo: one investigation of the fixed case, as a trace and a readable summary."""

from __future__ import annotations

from memex.envkit.traces import read_trace
from memex.evaluation.demo import main


def test_1mdb_demo_with_the_heuristic_writes_a_trace_and_a_summary(tmp_path):
    assert main(["--out", str(tmp_path), "--quiet"]) == 0
    trace = read_trace(tmp_path / "1mdb-heuristic.jsonl")
    assert trace.header["case"] == "1mdb" and trace.header["policy"] == "heuristic"
    assert trace.footer is not None and trace.footer["truth"]["variant"] == "1mdb"
    actions = [s["action"]["tool"] for s in trace.steps[1:]]
    # The heuristic weighs its way to the SAR: the subscription agreement far short of the
    # inflows (the customer stalls when asked) and the round trip back to the state fund.
    assert actions[-1] == "file_sar" and trace.footer["outcome"] == "TP"
    summary = (tmp_path / "1mdb-heuristic.md").read_text()
    assert "Crimson Harbor Pictures LLC" in summary  # the alert's subject, by name
    for heading in ("## The investigation", "## The decision", "## Score",
                    "## Ground truth (revealed after the episode)"):
        assert heading in summary
    assert summary.count("\n| ") >= len(actions)  # one table row per step
    assert f"Outcome **{trace.footer['outcome']}**" in summary


def test_1mdb_demo_with_the_oracle_files_the_sar(tmp_path):
    assert main(["--out", str(tmp_path), "--quiet", "--policy", "oracle"]) == 0
    trace = read_trace(tmp_path / "1mdb-oracle.jsonl")
    assert trace.footer["outcome"] == "TP"
    assert "Filed a SAR, typology **layering**" in (tmp_path / "1mdb-oracle.md").read_text()
