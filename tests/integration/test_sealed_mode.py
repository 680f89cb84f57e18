"""Sealed evaluation (`memex.envkit.sealed`) on both servers: only the agent plays, it can
neither replay nor peek, and the signed report is the whole run.

The peek exploit (a second episode on the same seed, opened to read the first one's outcome)
is impossible: chosen seeds are refused, every episode draws its own secret seed, the seed never
shows, the truth endpoint and the seed-taking transports are off. Delegation is refused: every
server-side policy route answers a typed 403. Cherry-picking is impossible: every episode drawn
is in the report, in draw order, with its final status; one deleted, abandoned or left to expire
is scored as its environment scores an unfinished episode; the report is a hash chain signed
with Ed25519, so removing, editing or reordering any entry fails verification; and a full
harness run against a sealed server saves a report that verifies."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fastapi.testclient import TestClient

from memex.committee.environment import CommitteeEnvironment
from memex.committee.models import CommitteeAction
from memex.committee.server.app import create_committee_app
from memex.committee.server.app import main as committee_main
from memex.committee.world.tasks import SPLITS as COMMITTEE_SPLITS
from memex.committee.world.tasks import TASK_NAMES
from memex.envkit.sealed import (
    SEALED_SEED_BASE,
    canonical,
    check_report,
    derive,
    entry_hash,
    genesis,
    public_key_hex,
    verify_report,
)
from memex.envkit.sealed import main as sealed_cli
from memex.envkit.servers import serve_app
from memex.evaluation import harness
from memex.graders.terminal import timeout_score
from memex.openenv_server import main as aml_main
from memex.scenarios import cases as aml_cases
from memex.scenarios import generate as aml_generate
from memex.scenarios import split_of as aml_split_of
from memex.server.app import create_memex_app
from memex.testing.heuristic_openai_server import MODEL_NAME

SECRET = b"organiser-secret"
ROOT = Path(__file__).resolve().parents[2]


def _hold_prices(client: TestClient, episode_id: str, months: int) -> list[dict]:
    out = []
    for _ in range(months):
        r = client.post("/step", json={"episode_id": episode_id,
                                       "action": {"action_type": "hold"}})
        assert r.status_code == 200, r.text
        out.append(r.json()["observation"]["market"]["returns_pct"])
    return out


def test_peek_exploit_works_on_an_open_committee_server():
    with TestClient(create_committee_app(sealed=False)) as c:
        ids = [c.post("/reset", json={"task": "research_risk_conflict", "seed": 1_100_000}
                      ).json()["episode_id"] for _ in range(2)]
        # the peek: the second episode's whole path is the first one's future
        assert _hold_prices(c, ids[1], 20) == _hold_prices(c, ids[0], 20)


def test_peek_exploit_fails_on_a_sealed_committee_server(monkeypatch):
    monkeypatch.setenv("MEMEX_SEALED_SECRET", SECRET.decode())
    with TestClient(create_committee_app(sealed=True)) as c:
        for body in ({"task": "research_risk_conflict", "seed": 1_100_000},
                     {"task": "research_risk_conflict", "seed": None},
                     {"task": "research_risk_conflict", "episode_id": "mine1"}):
            r = c.post("/reset", json=body)
            assert r.status_code == 403, body
        ids = [c.post("/reset", json={"task": "research_risk_conflict"}).json()["episode_id"]
               for _ in range(2)]
        assert _hold_prices(c, ids[1], 3) != _hold_prices(c, ids[0], 3)
        state = c.get("/state", params={"episode_id": ids[0]}).json()
        assert "seed" not in state and "split" not in state and state["task"]
        assert c.get("/info").json()["sealed"] is True
        paths = {getattr(r, "path", None) for r in c.app.router.routes}
        assert "/ws" not in paths and "/mcp" not in paths
        report = c.get("/sealed/report").json()
        assert report["episodes_drawn"] == 2 and len(report["episodes"]) == 2
        assert verify_report(report, SECRET)
        forged = {**report, "episodes_drawn": 1}
        assert not verify_report(forged, SECRET)
        seeds = {c.app.state.http_episodes.get(i, touch=False).env.state.seed for i in ids}
        assert len(seeds) == 2 and min(seeds) >= SEALED_SEED_BASE


def test_peek_exploit_works_on_an_open_aml_server():
    with TestClient(create_memex_app(sealed=False, frontend_dir=None)) as c:
        cases = [c.post("/reset", json={"seed": 4242}).json()["episode_id"] for _ in range(2)]
        ids = [c.get("/state", params={"episode_id": i}).json()["case_id"] for i in cases]
        assert ids[0] == ids[1]  # same seed, same case: the second reveals the first's outcome


@pytest.mark.parametrize("body", [{"seed": 4242}, {"seed": None}, {"case": "anything"},
                                  {"kind": "benign"}, {"episode_id": "mine1"}])
def test_sealed_aml_server_refuses_chosen_seeds_cases_and_ids(monkeypatch, body):
    monkeypatch.setenv("MEMEX_SEALED_SECRET", SECRET.decode())
    with TestClient(create_memex_app(sealed=True, frontend_dir=None)) as c:
        assert c.post("/reset", json=body).status_code == 403


def test_peek_exploit_fails_on_a_sealed_aml_server(monkeypatch):
    monkeypatch.setenv("MEMEX_SEALED_SECRET", SECRET.decode())
    with TestClient(create_memex_app(sealed=True, reveal_truth_after_done=True,
                                     frontend_dir=None)) as c:
        ids = [c.post("/reset", json={"difficulty": "medium"}).json()["episode_id"]
               for _ in range(2)]
        cases = [c.get("/state", params={"episode_id": i}).json()["case_id"] for i in ids]
        assert cases[0] != cases[1]
        assert c.get(f"/episodes/{ids[0]}/truth").status_code in (403, 404, 405)
        report = c.get("/sealed/report").json()
        assert verify_report(report, SECRET) and report["episodes_drawn"] == 2


def test_a_seedless_reset_on_an_open_committee_server_never_plays_a_test_world():
    with TestClient(create_committee_app(sealed=False)) as c:
        for task in TASK_NAMES:
            eid = c.post("/reset", json={"task": task}).json()["episode_id"]
            state = c.get("/state", params={"episode_id": eid}).json()
            assert state["seed"] not in COMMITTEE_SPLITS["test"] and state["split"] == "train"


def test_a_seedless_reset_on_an_open_aml_server_draws_a_train_seed(monkeypatch):
    # a spy on the real generator behind `scenarios.build` (the AML state does not show the seed)
    seeds: list[int] = []

    def spy(seed, *args, **kwargs):
        seeds.append(seed)
        return aml_generate(seed, *args, **kwargs)

    monkeypatch.setattr(aml_cases, "generate", spy)
    with TestClient(create_memex_app(sealed=False, frontend_dir=None)) as c:
        for _ in range(5):
            assert c.post("/reset", json={"difficulty": "easy"}).status_code == 200
    assert len(seeds) == 5 and all(aml_split_of(s) == "train" for s in seeds)


@pytest.mark.parametrize("main", [committee_main, aml_main])
def test_both_servers_take_a_sealed_flag(monkeypatch, main):
    # uvicorn.run is the one thing a test cannot do here: capture the app it would serve
    served = []
    monkeypatch.setattr("uvicorn.run", lambda app, **kw: served.append(app))
    monkeypatch.delenv("MEMEX_SEALED", raising=False)
    main(["--sealed"])
    main([])
    assert [a.state.settings.get("sealed", False) for a in served] == [True, False]
    assert hasattr(served[0].state, "sealed") and not hasattr(served[1].state, "sealed")


# ---- only the agent plays ----------------------------------------------------------------------

def _sealed_app(env: str, **kwargs):
    if env == "memex":
        return create_memex_app(sealed=True, frontend_dir=None, **kwargs)
    return create_committee_app(sealed=True, **kwargs)


RESET = {"memex": {"difficulty": "easy"}, "committee": {"task": "guided_allocation"}}
MOVE = {"memex": {"tool": "search_compliance_manual", "arguments": {"query": "cash deposits"}},
        "committee": {"action_type": "hold"}}


@pytest.mark.parametrize("env", ["memex", "committee"])
def test_agent_step_is_refused_with_a_typed_403_when_sealed(monkeypatch, env):
    monkeypatch.setenv("MEMEX_SEALED_SECRET", SECRET.decode())
    with TestClient(_sealed_app(env)) as c:
        eid = c.post("/reset", json=RESET[env]).json()["episode_id"]
        for body in (None, {"policy": "heuristic"}, {"policy": "random"}):
            r = c.post(f"/episodes/{eid}/agent-step", json=body)
            assert r.status_code == 403
            assert r.json()["detail"]["code"] == "sealed_policy_route"
        info = c.get("/info").json()
        assert info["sealed"] is True and info["agent_policies"] == []
        assert info["sealed_public_key"] == public_key_hex(SECRET)
        # the refused steps played nothing: the episode is where the agent left it
        assert c.get("/state", params={"episode_id": eid}).json()["step_count"] == 0
    with TestClient(create_memex_app(sealed=False, frontend_dir=None)) as c:  # open: it plays
        eid = c.post("/reset", json={"seed": 3}).json()["episode_id"]
        assert c.post(f"/episodes/{eid}/agent-step").status_code == 200


# ---- the report is the run ---------------------------------------------------------------------

def _unfinished_score(env: str, app, eid: str, moves: int) -> float:
    """What the environment gives episode `eid` left after `moves` moves, computed in process
    from its hidden world: the AML timeout score, or the committee's book held to the end."""
    live = app.state.http_episodes.peek(eid).env
    if env == "memex":
        return timeout_score(live.current_case.truth).total
    replay = CommitteeEnvironment()
    obs = replay.reset(seed=live.state.seed, task=live.state.task)
    for _ in range(moves):
        obs = replay.step(CommitteeAction(action_type="hold"))
    while not obs.done:  # a held book: no trade, so holding and leaving score alike
        obs = replay.step(CommitteeAction(action_type="hold"))
    return obs.metadata["score"]


def _finish(c: TestClient, env: str, eid: str) -> dict:
    if env == "memex":
        action = {"tool": "close_alert", "arguments": {"reason": "explained", "cited_sections": []}}
        return c.post("/step", json={"episode_id": eid, "action": action}).json()
    while True:
        r = c.post("/step", json={"episode_id": eid, "action": MOVE[env]}).json()
        if r["done"]:
            return r


@pytest.mark.parametrize("env", ["memex", "committee"])
def test_deleted_abandoned_and_expired_episodes_are_in_the_report_scored_as_unfinished(
        monkeypatch, env):
    monkeypatch.setenv("MEMEX_SEALED_SECRET", SECRET.decode())
    app = _sealed_app(env, idle_timeout_s=0.5)
    with TestClient(app) as c:
        ids = [c.post("/reset", json=RESET[env]).json()["episode_id"] for _ in range(5)]
        for eid in ids:
            assert c.post("/step", json={"episode_id": eid, "action": MOVE[env]}).status_code \
                == 200
        expected = {eid: _unfinished_score(env, app, eid, 1) for eid in ids}
        time.sleep(0.7)  # all five idle past the timeout
        for eid in ids[1:]:  # a late step finds its episode expired (the first: the report)
            assert c.post("/step", json={"episode_id": eid, "action": MOVE[env]}).status_code \
                == 404
        report = c.get("/sealed/report").json()
    assert verify_report(report, SECRET)
    assert [e["episode_id"] for e in report["episodes"]] == ids
    assert [e["status"] for e in report["episodes"]] == ["expired"] * 5
    assert [e["score"] for e in report["episodes"]] == pytest.approx(
        [expected[eid] for eid in ids], abs=1e-6)

    app = _sealed_app(env)
    with TestClient(app) as c:
        ids = [c.post("/reset", json=RESET[env]).json()["episode_id"] for _ in range(4)]
        for eid in ids:
            c.post("/step", json={"episode_id": eid, "action": MOVE[env]})
        expected = {eid: _unfinished_score(env, app, eid, 1) for eid in ids}
        finished = _finish(c, env, ids[2])           # the third one is played to its end
        assert c.delete(f"/episodes/{ids[0]}").status_code == 200   # the first is deleted
        assert c.delete(f"/episodes/{ids[2]}").status_code == 200   # deleting a finished one
        assert c.post("/step", json={"episode_id": ids[0], "action": MOVE[env]}).status_code \
            == 404  # a deleted episode has ended: nothing more is played in it
        mid = c.get("/sealed/report").json()
        assert [e["status"] for e in mid["episodes"]] == ["deleted", "playing", "finished",
                                                          "playing"]
        assert not mid["final"] and verify_report(mid, SECRET)
        final = c.post("/sealed/close", json={"agent": "tester"}).json()
        assert c.post("/reset", json=RESET[env]).json()["detail"]["code"] == "sealed_run_closed"
    assert verify_report(final, SECRET) and final["final"]
    rows = final["episodes"]
    assert [r["draw"] for r in rows] == [1, 2, 3, 4] and [r["episode_id"] for r in rows] == ids
    assert [r["status"] for r in rows] == ["deleted", "abandoned", "finished", "abandoned"]
    for r in rows:
        if r["status"] == "finished":
            assert r["score"] == (finished["metadata"]["terminal"]["score"] if env == "memex"
                                  else finished["metadata"]["score"])
        else:
            assert r["score"] == pytest.approx(expected[r["episode_id"]], abs=1e-6)
            assert r["outcome"] == "timeout" or env == "committee"
    assert final["summary"]["by_status"] == {"finished": 1, "deleted": 1, "expired": 0,
                                             "abandoned": 2}
    assert final["summary"]["agent"] == "tester" and final["summary"]["playing"] == 0
    assert final["summary"]["mean_score"] == pytest.approx(
        sum(r["score"] for r in rows) / 4, abs=1e-6)
    # the chain: draws in draw order, ends in the order they came, the closing last
    events = [(e["event"], e.get("draw")) for e in final["entries"]]
    assert events == [("drawn", 1), ("drawn", 2), ("drawn", 3), ("drawn", 4), ("ended", 3),
                      ("ended", 1), ("ended", 2), ("ended", 4), ("closed", None)]


# ---- tampering ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def saved_report(tmp_path_factory):
    """A closed sealed AML run of four episodes (one finished, one deleted, two abandoned)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MEMEX_SEALED_SECRET", SECRET.decode())
        with TestClient(_sealed_app("memex")) as c:
            ids = [c.post("/reset", json=RESET["memex"]).json()["episode_id"] for _ in range(4)]
            _finish(c, "memex", ids[1])
            c.delete(f"/episodes/{ids[0]}")
            report = c.post("/sealed/close", json={"agent": "tamper-test"}).json()
    path = tmp_path_factory.mktemp("sealed") / "report.json"
    path.write_text(json.dumps(report))
    return path


def _tampered(report: dict) -> list[tuple[str, dict]]:
    """Every removal, edit and swap of an entry, and of the derived parts."""
    out = []
    n = len(report["entries"])
    for i in range(n):
        removed = copy.deepcopy(report)
        del removed["entries"][i]
        out.append((f"remove {i}", removed))
        edited = copy.deepcopy(report)
        entry = edited["entries"][i]
        if "score" in entry:
            entry["score"] = 1.0
        else:
            entry["episode_id" if "episode_id" in entry else "agent"] = "someone-else"
        out.append((f"edit {i}", edited))
        if i + 1 < n:
            swapped = copy.deepcopy(report)
            e = swapped["entries"]
            e[i], e[i + 1] = e[i + 1], e[i]
            out.append((f"swap {i}", swapped))
    for field, value in (("summary", {**report["summary"], "mean_score": 1.0}),
                         ("episodes", report["episodes"][1:]), ("episodes_drawn", 3),
                         ("final", False), ("run_id", "0" * 16)):
        out.append((f"edit {field}", {**copy.deepcopy(report), field: value}))
    return out


def test_removing_editing_or_reordering_any_entry_of_a_saved_report_fails_verification(
        saved_report, capsys):
    key = public_key_hex(SECRET)
    report = json.loads(saved_report.read_text())
    assert check_report(report, public_key=key) == []
    assert sealed_cli(["verify", str(saved_report), "--public-key", key]) == 0
    assert "valid" in capsys.readouterr().out
    cases = _tampered(report)
    assert len(cases) > 3 * len(report["entries"])
    for name, forged in cases:
        assert check_report(forged, public_key=key), name
        assert not verify_report(forged, SECRET), name
    forged_path = saved_report.with_name("forged.json")
    forged_path.write_text(json.dumps(cases[0][1]))
    assert sealed_cli(["verify", str(forged_path), "--public-key", key]) == 1
    assert "INVALID" in capsys.readouterr().err


def test_a_rechained_or_resigned_report_fails_against_the_organisers_key(saved_report):
    # a forger who drops the deleted episode and rebuilds the chain, the derived parts and
    # the signature with a key of their own: consistent with itself, not with the organiser
    report = json.loads(saved_report.read_text())
    entries = [e for e in report["entries"] if e.get("episode_id") != report["episodes"][0][
        "episode_id"]]
    prev = genesis(report["run_id"])
    for seq, e in enumerate(entries):
        e["seq"], e["prev"] = seq, prev
        e["hash"] = entry_hash(e)
        prev = e["hash"]
    forged = dict(report, entries=entries, head=prev)
    assert check_report(forged, public_key=public_key_hex(SECRET))
    mallory = Ed25519PrivateKey.generate()
    episodes, summary = derive(entries)
    forged.update(episodes=episodes, summary=summary, episodes_drawn=summary["drawn"])
    forged["public_key"] = mallory.public_key().public_bytes_raw().hex()
    forged["signature"] = mallory.sign(canonical(
        {k: v for k, v in forged.items() if k != "signature"})).hex()
    assert check_report(forged) == []          # consistent against its own key...
    assert "signed with another key than the one given" in check_report(
        forged, public_key=public_key_hex(SECRET))
    assert not verify_report(forged, SECRET)   # ...never against the organiser's


# ---- a sealed run from the harness -------------------------------------------------------------

@pytest.mark.parametrize("env,policy,cells,episodes,statuses", [
    ("memex", "heuristic", ["--difficulties", "easy,hard"], 2, {"finished"}),
    ("committee", "heuristic", ["--tasks", "guided_allocation,mandate_drift"], 2, {"finished"}),
])
def test_a_full_sealed_harness_run_saves_a_report_that_verifies(monkeypatch, tmp_path, env,
                                                                policy, cells, episodes,
                                                                statuses):
    monkeypatch.setenv("MEMEX_SEALED_SECRET", SECRET.decode())
    with serve_app(_sealed_app(env)) as server:
        rc = harness.main(["--env", env, "--policies", policy, "--sealed-url", server.url,
                           "--episodes", str(episodes), *cells, "--out", str(tmp_path),
                           "--workers", "2", "--no-progress", "--traces", "none"])
    assert rc == 0
    report = json.loads((tmp_path / "sealed_report.json").read_text())
    assert verify_report(report, SECRET)
    assert sealed_cli(["verify", str(tmp_path / "sealed_report.json"), "--public-key",
                       public_key_hex(SECRET)]) == 0
    s = report["summary"]
    assert s["closed"] and s["agent"] == policy and s["drawn"] == 4 and s["playing"] == 0
    assert {e["status"] for e in report["episodes"]} == statuses
    rows = [json.loads(line) for line in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["seed"] is None for r in rows)
    score = "terminal_score" if env == "memex" else "score"
    assert sorted(r[score] for r in rows) == sorted(e["score"] for e in report["episodes"])


def test_a_sealed_harness_run_ends_what_its_agent_leaves_unfinished(monkeypatch, tmp_path,
                                                                   heuristic_llm):
    # an LLM policy capped at two steps: every episode is left undecided; the harness deletes
    # it and the report lists it, scored as a timeout
    monkeypatch.setenv("MEMEX_SEALED_SECRET", SECRET.decode())
    with serve_app(_sealed_app("memex")) as server:
        rc = harness.main(["--env", "memex", "--policies", f"llm:{MODEL_NAME}",
                           "--api-base-url", heuristic_llm.url + "/v1", "--max-steps", "2",
                           "--sealed-url", server.url, "--episodes", "2", "--difficulties",
                           "medium", "--out", str(tmp_path), "--no-progress",
                           "--agent", "double-capped"])
    assert rc == 0
    report = json.loads((tmp_path / "sealed_report.json").read_text())
    assert verify_report(report, SECRET) and report["summary"]["agent"] == "double-capped"
    assert [(e["status"], e["outcome"]) for e in report["episodes"]] == [("deleted", "timeout")] * 2
    assert all(e["score"] < 0 for e in report["episodes"])


def test_a_sealed_run_refuses_the_oracle_and_an_open_server(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("MEMEX_SEALED_SECRET", SECRET.decode())
    with serve_app(_sealed_app("memex")) as server:
        assert harness.main(["--policies", "oracle", "--sealed-url", server.url, "--out",
                             str(tmp_path), "--episodes", "1", "--no-progress"]) == 2
        assert "reads the hidden world" in capsys.readouterr().err
        assert harness.main(["--policies", "heuristic,random", "--sealed-url", server.url,
                             "--out", str(tmp_path)]) == 2
    with serve_app(create_memex_app(sealed=False, frontend_dir=None)) as server:
        assert harness.main(["--policies", "heuristic", "--sealed-url", server.url, "--out",
                             str(tmp_path), "--no-progress"]) == 2
        assert "not a sealed server" in capsys.readouterr().err


# ---- the Docker image ----------------------------------------------------------------------------

def test_the_docker_image_serves_no_truth_unless_an_environment_variable_enables_it(monkeypatch):
    dockerfile = (ROOT / "Dockerfile").read_text()
    cmd = next(line for line in dockerfile.splitlines() if line.startswith("CMD"))
    assert "--reveal-truth-after-done" not in cmd and "memex.openenv_server" in cmd
    args = json.loads(cmd[3:])[-1].split("memex.openenv_server", 1)[1].split()
    args = [a.replace("${PORT:-7860}", "7860") for a in args]
    served = []
    monkeypatch.setattr("uvicorn.run", lambda app, **kw: served.append(app))
    monkeypatch.delenv("MEMEX_SEALED", raising=False)
    monkeypatch.delenv("MEMEX_REVEAL_TRUTH_AFTER_DONE", raising=False)
    aml_main(args)
    monkeypatch.setenv("MEMEX_REVEAL_TRUTH_AFTER_DONE", "1")
    aml_main(args)
    reveals = []
    for app in served:
        with TestClient(app) as c:
            reveals.append(c.get("/info").json()["reveal_truth_after_done"])
    assert reveals == [False, True]
