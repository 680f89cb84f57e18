"""The launderer adversary end to end: the search, the launderer served as an OpenEnv
environment, plans through the real AML server (hidden until the end), the adversarial split in
the evaluation harness, docs/adversary.md's defenders table, and scoring over a local
two-worker Ray."""

from __future__ import annotations

import json
from collections import Counter

import httpx
import pytest

from memex.adapter import ADAPTER
from memex.adversary.client import LaunderEnv
from memex.adversary.distributed import ScorerPool
from memex.adversary.models import LaunderAction
from memex.adversary.report import report, score_capped
from memex.adversary.scoring import Scorer
from memex.adversary.search import search
from memex.client import MemexEnv
from memex.envkit.servers import serve
from memex.evaluation.harness import PolicyMaker, main, run_grid
from memex.models import MemexAction
from memex.scenarios.plan import parse
from memex.scenarios.splits import load_split

SQUEEZED = {"kind": "structuring", "variant": "undocumented_cash", "difficulty": "easy",
            "step_budget": 12}


@pytest.fixture(scope="module")
def launderer_server():
    with serve("memex.adversary.server", "--host", "127.0.0.1", "--log-level", "warning",
               timeout_s=300) as s:  # a slow start on a busy 2-core machine
        yield s


def test_search_finds_valid_plans_the_heuristic_fails_quickly():
    # A few trials over the whole space find valid plans; narrowed to short budgets, TPE finds
    # plans the heuristic times out on while the oracle still solves them.
    results = search("heuristic", trials=6, seeds=(0, 1), sampler_seed=1, progress=False,
                     fixed={"difficulty": "easy", "step_budget": 12})
    assert len(results) == 6 and any(r.valid for r in results)
    best = results[0]
    assert best.valid and best.oracle_correct == 1.0
    assert best.failure > 0.5 and best.defender_correct < 1.0
    assert [r.failure for r in results if r.valid] == sorted(
        (r.failure for r in results if r.valid), reverse=True)
    assert all(r.failure == 0.0 for r in results if not r.valid)
    assert parse(best.plan).step_budget == 12
    json.dumps(best.to_dict())  # JSON-ready for the curriculum's level buffer


def test_launderer_environment_over_the_real_server(launderer_server):
    with LaunderEnv(base_url=launderer_server.url).sync() as env:
        first = env.reset(seed=4, defender="heuristic", seeds_per_plan=2, plans=2).observation
        assert first.knob_space["kinds"]["structuring"]["suspicious"] is True
        assert first.seeds == [8, 9] and first.plans_left == 2 and not first.done
        bad = env.step(LaunderAction(plan={"kind": "structuring", "variant": "nope"}))
        assert bad.observation.error.code == "invalid_plan" and bad.reward == 0.0
        assert "variant" in bad.observation.error.message and not bad.done
        good = env.step(LaunderAction(plan=SQUEEZED))
        assert good.done and good.observation.score.valid
        assert good.reward == good.observation.score.failure > 0.5
        assert env.state().plans_tried == 1 and env.state().invalid_plans == 1
    # The same plan scored in process gives the same reward (one environment, two transports).
    local = Scorer("heuristic").score(SQUEEZED, (8, 9))
    assert local.failure == good.reward
    with httpx.Client(base_url=launderer_server.url, timeout=60) as http:
        assert http.post("/reset", json={"defender": "oracle"}).status_code == 422
        assert set(http.get("/knobs").json()) >= {"kinds", "int", "range"}


def test_aml_server_reset_with_a_plan_reveals_it_only_after_the_end(memex_server):
    with MemexEnv(base_url=memex_server.url).sync() as env:
        obs = env.reset(seed=3, plan=SQUEEZED).observation
        assert obs.step_budget == 12
        assert "undocumented_cash" not in obs.model_dump_json()
        assert "undocumented_cash" not in env.state().model_dump_json()
    with httpx.Client(base_url=memex_server.url, timeout=30) as http:
        r = http.post("/reset", json={"seed": 3, "plan": {**SQUEEZED, "hops": 99}})
        assert r.status_code == 422 and "invalid plan: hops" in r.json()["detail"]
        eid = http.post("/reset", json={"seed": 3, "plan": SQUEEZED}).json()["episode_id"]
        assert http.get(f"/episodes/{eid}/truth").status_code == 409
        done = http.post("/step", json={"episode_id": eid, "action": MemexAction(
            tool="close_alert", arguments={"reason": "r", "cited_sections": []}).model_dump(
            exclude={"metadata"})}).json()
        assert done["done"] and "undocumented_cash" not in json.dumps(done)
        truth = http.get(f"/episodes/{eid}/truth").json()
        assert truth["plan"] == parse(SQUEEZED).to_dict() and truth["suspicious"] is True


def test_harness_plays_the_adversarial_split(tmp_path):
    entries = load_split("adversarial")
    kind = min(Counter(e.plan.kind for e in entries).items(), key=lambda kv: kv[1])[0]
    assert main(["--split", "adversarial", "--tasks", kind, "--policies", "oracle",
                 "--out", str(tmp_path), "--workers", "1", "--no-progress",
                 "--traces", "none"]) == 0
    rows = [json.loads(x) for x in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    expected = [e for e in entries if e.plan.kind == kind]
    assert len(rows) == len(expected) and {r["seed"] for r in rows} == {e.seed for e in expected}
    assert all(r["decision_accuracy"] == 1.0 for r in rows)   # every split case is solvable
    assert "adversarial split" in (tmp_path / "report.md").read_text()


def test_report_plays_every_defender_on_the_same_episodes_and_meets_the_target(tmp_path):
    doc = tmp_path / "adversary.md"
    doc.write_text("intro\n<!-- adversary-report:begin -->\nold\n<!-- adversary-report:end -->\n"
                   "outro\n")
    report(["heuristic", "oracle"], test_episodes=1, seeds_per_plan=1, out=tmp_path / "r",
           doc=doc, progress=False)
    rows = [json.loads(x) for x in (tmp_path / "r" / "episodes.jsonl").read_text().splitlines()]
    keys = {d: sorted(r["key"] for r in rows if r["policy"] == d) for d in ("heuristic", "oracle")}
    n_plans = len({(e.pair, e.role) for e in load_split()})
    assert keys["heuristic"] == keys["oracle"] and len(keys["oracle"]) == 17 * 3 + n_plans
    assert Counter(r["role"] for r in rows if r["split"] == "adversarial") == {
        "adversary": n_plans, "mirror": n_plans}

    def accuracy(policy: str, split: str) -> float:
        mine = [r for r in rows if r["policy"] == policy and r["split"] == split]
        return sum(r["outcome"] in ("TP", "TN") for r in mine) / len(mine)

    # The split's target (and the split still fools the current heuristic).
    assert accuracy("oracle", "adversarial") >= 0.95 and accuracy("heuristic", "adversarial") <= 0.6
    assert accuracy("heuristic", "test") >= 0.9
    body = doc.read_text()
    assert body.startswith("intro\n") and body.endswith("outro\n") and "\nold\n" not in body
    assert "| heuristic | " in body and "| oracle | 1.000 |" in body


def test_a_turn_capped_episode_is_scored_as_a_timeout():
    spec = load_split()[0].spec().episode()
    capped = PolicyMaker("capped", lambda s: ADAPTER.make_policy("heuristic"), max_steps=2)
    [row] = run_grid(ADAPTER, [capped], [spec], workers=1, traces="none", progress=False)
    assert row["outcome"] == "unfinished" and row["steps"] == 2
    scored = score_capped(ADAPTER, spec, row)
    assert scored["outcome"] == "timeout" and scored["capped"]
    timeout = ADAPTER.timeout_return(ADAPTER.case_for(spec))
    assert timeout < 0 and scored["return"] == round(row["return"] + timeout, 6)


def test_scoring_over_a_local_two_worker_ray():
    plans = [SQUEEZED, {**SQUEEZED, "step_budget": 40}]
    pool = ScorerPool("heuristic", workers=2, num_cpus=2)
    try:
        assert len(set(pool.pids())) == 2   # two replicas, one per worker process
        remote = pool.score_many([(p, (0, 1)) for p in plans])
    finally:
        pool.close()
    scorer = Scorer("heuristic")
    local = [scorer.score(p, (0, 1)) for p in plans]
    assert [r.to_dict() for r in remote] == [r.to_dict() for r in local]
    assert remote[0].failure > 0.5 > remote[1].failure
