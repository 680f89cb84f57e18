"""The inference agent end to end: the real environment server and a local OpenAI-compatible
server whose "model" is the heuristic investigator (TEST DOUBLE, `memex.testing`; the
malformed-reply variant served in process, so no test waits for another interpreter)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from memex.envkit.llm_options import LLMOptions
from memex.envkit.servers import serve_app
from memex.inference import LLMPolicy, OpenAIBackend, run_logged
from memex.registry import get_adapter
from memex.testing.heuristic_openai_server import MODEL_NAME, create_double_app


class RecordingBackend:
    """Passes every request to the real backend and keeps the messages it sent."""

    def __init__(self, inner: OpenAIBackend):
        self.inner, self.label, self.sent = inner, inner.label, []

    def complete(self, messages, tools=None):
        self.sent.append(messages)
        return self.inner.complete(messages, tools)


def test_cli_runs_easy_medium_hard_and_prints_the_three_line_kinds(memex_server, heuristic_llm):
    out = subprocess.run(
        [sys.executable, "-m", "memex.inference", "--env-url", memex_server.url,
         "--api-base-url", heuristic_llm.url + "/v1", "--model", MODEL_NAME],
        capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    starts = [x for x in lines if x.startswith("[START] ")]
    ends = [x for x in lines if x.startswith("[END] ")]
    assert len(starts) == 3 and len(ends) == 3
    assert {re.search(r"-(easy|medium|hard)-", s).group(1) for s in starts} == \
        {"easy", "medium", "hard"}
    assert all("env=memex" in s and f"model={MODEL_NAME}" in s for s in starts)
    steps = [x for x in lines if x.startswith("[STEP] ")]
    assert len(steps) >= 3
    assert all(re.match(r"\[STEP\] step=\d+ action=\w+\(.*\) reward=-?\d+\.\d{3} "
                        r"done=(true|false) error=\S+ verdict=valid reason=null reply=\".+\"$",
                        s) for s in steps)
    assert all("success=true" in e and re.search(r"outcome=(TP|TN)", e) for e in ends)


@pytest.mark.parametrize("tool_mode", ["native", "text"])
def test_malformed_replies_cost_a_retry_not_a_crash(memex_server, tool_mode):
    adapter = get_adapter("memex")
    with serve_app(create_double_app(malformed_every=3)) as llm:
        backend = RecordingBackend(OpenAIBackend(LLMOptions(llm.url + "/v1", MODEL_NAME)))
        policy = LLMPolicy(adapter, backend, tool_mode=tool_mode)
        session = adapter.open(memex_server.url)
        lines: list[str] = []
        try:
            episodes = [run_logged(adapter, session, policy, spec, model=MODEL_NAME,
                                   log=lines.append)
                        for spec in adapter.grid("test", ["layering", "pep_wealth"], ["medium"])]
        finally:
            session.close()
    assert all(ep.done and adapter.success(ep) for ep in episodes)
    assert policy.stats["reasks"] > 0 and policy.stats["rejected_steps"] == 0
    # No malformed reply reached the environment.
    assert all(ep.state.invalid_actions == 0 for ep in episodes)
    assert sum(x.startswith("[END] success=true") for x in lines) == 2
    # Every request is one fresh prompt built from the current observation, not a history.
    assert all(len(m) == 2 and '<observation episode="' in m[1]["content"]
               for m in backend.sent)
    assert any("previous reply was rejected" in m[1]["content"] for m in backend.sent)
    assert ("Tools:" in backend.sent[0][0]["content"]) == (tool_mode == "text")


def test_same_agent_in_process_matches_the_heuristic_baseline(heuristic_llm):
    adapter = get_adapter("memex")
    spec = adapter.grid("test", ["trade_based"], ["hard"])[0]
    policy = LLMPolicy(adapter, OpenAIBackend(LLMOptions(heuristic_llm.url + "/v1", MODEL_NAME)))
    via_llm = adapter.play(adapter.open(), policy, spec)
    direct = adapter.play(adapter.open(), adapter.make_policy("heuristic"), spec)
    assert [a.model_dump() for a in via_llm.actions] == [a.model_dump() for a in direct.actions]
    assert via_llm.episode_return == direct.episode_return
