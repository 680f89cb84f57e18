"""The leaderboard is generated from signed sealed-run reports and publishes nothing else: every
listed report verifies against a listed organiser key and is closed, the page is what the
generator writes from them, and a report that is tampered with, signed by another key, not
closed or listed twice stops the generation."""

from __future__ import annotations

import copy
import json

import pytest

from memex.envkit.sealed import SealedMode
from memex.evaluation.leaderboard import (
    KEYS_FILE,
    PAGE,
    RUNS_DIR,
    LeaderboardError,
    load_keys,
    load_runs,
    main,
    render,
)


def test_every_listed_report_verifies_against_a_listed_key_and_the_page_is_current():
    keys = load_keys()
    runs = load_runs(sorted(RUNS_DIR.glob("*.json")), keys)
    envs = {r.report["env"] for r in runs}
    agents = {(r.report["env"], r.summary["agent"]) for r in runs}
    assert envs == {"memex", "memex-committee"}
    assert {("memex", "heuristic"), ("memex", "random"), ("memex-committee", "heuristic"),
            ("memex-committee", "random")} <= agents
    assert len(agents) > 4  # and a model's run
    assert all(r.summary["closed"] and r.summary["playing"] == 0 for r in runs)
    assert PAGE.read_text() == render(runs, keys)
    assert main(["--check"]) == 0


def _report(secret: bytes, statuses: tuple[str, ...], close: bool = True) -> dict:
    mode = SealedMode(["difficulty"], secret=secret, env="memex")
    for n, status in enumerate(statuses):
        mode.ledger.draw(f"ep{n}", {"difficulty": "easy"})
        mode.ledger.end(f"ep{n}", status, {"outcome": "TN", "score": 0.5 + n / 10,
                                           "return": 0.4}, {})
    if close:
        mode.ledger.close("agent-x")
    return mode.report()


def test_a_report_that_cannot_be_published_stops_the_generation(tmp_path):
    good = _report(b"organiser", ("finished", "deleted"))
    keys = {good["public_key"]: "the organiser"}
    path = tmp_path / "good.json"
    path.write_text(json.dumps(good))
    assert [r.scores for r in load_runs([path], keys)] == [[0.5, 0.6]]

    tampered = copy.deepcopy(good)
    tampered["entries"][3]["score"] = 1.0  # the deleted episode's score
    cases = {
        "tampered": tampered,
        "foreign key": _report(b"someone else", ("finished",)),
        "not closed": _report(b"organiser", ("finished",), close=False),
    }
    for name, report in cases.items():
        bad = tmp_path / f"{name}.json"
        bad.write_text(json.dumps(report))
        with pytest.raises(LeaderboardError):
            load_runs([path, bad], keys)
    twice = tmp_path / "again.json"
    twice.write_text(json.dumps(good))
    with pytest.raises(LeaderboardError, match="again"):
        load_runs([path, twice], keys)
    assert main([str(path), str(tmp_path / "tampered.json"), "--keys", str(KEYS_FILE),
                 "--out", str(tmp_path / "page.md")]) == 1
    assert not (tmp_path / "page.md").exists()
