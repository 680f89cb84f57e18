"""Sealed evaluation (`memex.envkit.sealed`) closes the peek exploit on both servers: a second
episode on the same seed, opened to read the first one's outcome, is impossible — chosen seeds
are refused, every episode draws its own secret seed, the seed never shows, the truth endpoint
and the seed-taking transports are off, and the run's report is signed."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memex.committee.server.app import create_committee_app
from memex.committee.server.app import main as committee_main
from memex.committee.world.tasks import SPLITS as COMMITTEE_SPLITS
from memex.committee.world.tasks import TASK_NAMES
from memex.envkit.sealed import SEALED_SEED_BASE, verify_report
from memex.openenv_server import main as aml_main
from memex.scenarios import cases as aml_cases
from memex.scenarios import generate as aml_generate
from memex.scenarios import split_of as aml_split_of
from memex.server.app import create_memex_app

SECRET = b"organiser-secret"


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
