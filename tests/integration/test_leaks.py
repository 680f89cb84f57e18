"""No ground truth in any observation, state, error or server log a client can read.

A prober calls every tool with valid arguments (IDs it has seen) and invalid ones (IDs that
exist in the case but were never revealed, made-up IDs, wrong types, junk) for 200 episodes
across every kind and difficulty, and every observation and state before the end is scanned
for ground-truth fields and values. A further batch runs over HTTP against the real server and
its log is scanned too.
"""

from __future__ import annotations

import json
import random

import httpx

from memex.models import MemexAction, MemexObservation
from memex.scenarios import KINDS
from memex.scenarios.model import TYPOLOGIES
from memex.scenarios.truth import GroundTruth
from memex.server.environment import MemexEnvironment
from memex.server.tools import TOOL_NAMES
from memex.testing.json_keys import json_keys

TRUTH_KEYS = set(GroundTruth.model_fields) - {"kind", "decision"}
TRUTH_WORDS = sorted({*KINDS, *TYPOLOGIES, *(v for s in KINDS.values() for v in s.variants),
                      "ground truth", "ground_truth", "ubo_id", "red_flags",
                      "justifying_sections", "dispositions", "explanation_ids", "explained_rfi"})
OUTCOMES = {"TP", "TN", "FP", "FN"}




def assert_clean(blob: str, where: str) -> None:
    lowered = blob.lower()
    leaked = [w for w in TRUTH_WORDS if w.lower() in lowered]
    assert not leaked, (where, leaked)


def assert_clean_observation(obs: dict, where: str) -> None:
    assert not (json_keys(obs) & TRUTH_KEYS), (where, json_keys(obs) & TRUTH_KEYS)
    if not obs.get("done"):
        assert "terminal" not in obs.get("metadata", {}), where
        assert not ({json.dumps(obs.get("metadata", {}))} & OUTCOMES)
    # The manual text (kernel) legitimately names typologies; everything else must not.
    stripped = dict(obs)
    stripped["context"] = {**obs["context"], "kernel": []}
    if obs.get("tool") == "search_compliance_manual":
        stripped["result"] = None
        stripped["context"]["ram"] = []
    stripped["context"]["ram"] = [p for p in stripped["context"]["ram"]
                                  if p["tool"] != "search_compliance_manual"]
    assert_clean(json.dumps(stripped), where)


class Prober:
    """Calls every tool, alternating valid and invalid arguments, then decides at random."""

    def __init__(self, rng: random.Random, hidden: list[str]):
        self.rng, self.hidden = rng, hidden

    def actions(self, obs: MemexObservation):
        rng = self.rng
        for tool in rng.sample(list(TOOL_NAMES[:-2]), len(TOOL_NAMES) - 2) * 2:
            seen = sorted({i for p in obs.context.ram for i in p.ids})
            pick = lambda prefix: rng.choice([i for i in seen if i.startswith(prefix)] or  # noqa
                                             [rng.choice(self.hidden)])
            valid = rng.random() < 0.5
            ref = {"entity_id": pick("ENT"), "account_id": pick("ACC"),
                   "transaction_id": pick("TXN"), "invoice_id": pick("INV")}
            if not valid:
                bad = rng.choice([rng.choice(self.hidden), "ENT-ZZZZZZ", 42, "", None, [1]])
                ref = dict.fromkeys(ref, bad)
            args = {
                "get_customer_profile": {"entity_id": ref["entity_id"]},
                "query_transactions": {"account_id": ref["account_id"]},
                "trace_network": {"entity_id": ref["entity_id"]},
                "check_source_of_funds": {"entity_id": ref["entity_id"]},
                "assess_risk": {"entity_id": ref["entity_id"]},
                "check_device_overlap": {"entity_id": ref["entity_id"]},
                "query_beneficial_ownership": {"entity_id": ref["entity_id"]},
                "verify_customs_invoice": {"invoice_id": ref["invoice_id"]},
                "request_wire_trace": {"transaction_id": ref["transaction_id"]},
                "request_information": {"entity_id": ref["entity_id"], "topic": rng.choice(
                    ["identity", "source_of_funds", "weather"])},
                "check_watchlist": {"name": rng.choice(["Trading", "a", "Zed Co", "   "])},
                "check_market_price": {"commodity": rng.choice(["cocoa beans", "gold", ""])},
                "write_to_case_file": {"note": f"see {ref['entity_id']}"},
                "retrieve_async_result": {"job_id": rng.choice(["JOB-1", "JOB-2", "x"])},
                "search_compliance_manual": {"query": rng.choice(["cash", "", "shell"])},
                "update_system_prompt": {"section_id": rng.choice(["2.1", "99", "5.3"])},
            }.get(tool, {})
            obs = yield MemexAction(tool=tool, arguments=args)
        if rng.random() < 0.5:
            yield MemexAction(tool="close_alert", arguments={"reason": "r", "cited_sections": []})
        else:
            yield MemexAction(tool="file_sar", arguments={
                "subjects": [self.hidden[0]], "typology": "layering", "findings": [],
                "cited_sections": ["2.1"], "narrative": "n"})


def _hidden_ids(env: MemexEnvironment, obs: MemexObservation) -> list[str]:
    visible = {i for p in obs.context.ram for i in p.ids}
    return [i for i in env.current_case.public.all_ids() if i not in visible][:50]


def test_no_ground_truth_in_observations_states_or_errors_over_200_episodes():
    rng = random.Random(2024)
    kinds = list(KINDS)
    for episode in range(200):
        env = MemexEnvironment()
        obs = env.reset(seed=10_000 + episode, difficulty=("easy", "medium", "hard")[episode % 3],
                        kind=kinds[episode % len(kinds)])
        prober = Prober(rng, _hidden_ids(env, obs))
        gen = prober.actions(obs)
        action = next(gen)
        while True:
            dumped = json.loads(obs.model_dump_json())
            assert_clean_observation(dumped, f"episode {episode} step {obs.step}")
            state = env.state.model_dump()
            assert not (set(state) & TRUTH_KEYS)
            assert_clean(json.dumps(state), f"state {episode}")
            if obs.error is not None:
                assert_clean(obs.error.message, "error")
            obs = env.step(action)
            if obs.done:
                break
            try:
                action = gen.send(obs)
            except StopIteration:
                break


def test_no_ground_truth_in_http_responses_or_server_logs(memex_server):
    rng = random.Random(7)
    with httpx.Client(base_url=memex_server.url, timeout=30) as http:
        for episode in range(20):
            r = http.post("/reset", json={"seed": 20_000 + episode,
                                          "kind": list(KINDS)[episode % len(KINDS)]}).json()
            eid = r["episode_id"]
            obs = MemexObservation(**r["observation"])
            env = MemexEnvironment()  # only to know which IDs exist but are hidden
            env.reset(seed=20_000 + episode, kind=list(KINDS)[episode % len(KINDS)])
            gen = Prober(rng, _hidden_ids(env, obs)).actions(obs)
            action = next(gen)
            while True:
                resp = http.post("/step", json={"episode_id": eid,
                                                "action": action.model_dump(
                                                    exclude={"metadata"})})
                assert resp.status_code == 200
                body = resp.json()
                if body["done"]:
                    break
                assert_clean_observation({**body["observation"], "done": body["done"]},
                                         f"http {episode}")
                assert_clean(json.dumps(http.get("/state", params={"episode_id": eid}).json()),
                             "http state")
                obs = MemexObservation(**body["observation"])
                try:
                    action = gen.send(obs)
                except StopIteration:
                    break
            truth = http.get(f"/episodes/{eid}/truth")
            assert truth.status_code in (200, 409)
    assert_clean(memex_server.log(), "server log")
