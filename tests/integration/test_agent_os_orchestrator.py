"""AgentOS end to end: concurrent investigations on the real Memex server, decided by a local
OpenAI-compatible server that serves the heuristic investigator (TEST DOUBLE, see
`memex.testing.heuristic_openai_server`), through the Rust runtime and the memory hierarchy.

The double answers from the observation block alone, so every episode must follow exactly the
trajectory of the in-process heuristic: same steps, same return. That pins the prompt protocol,
the batching, the result ordering and the session refills."""

from __future__ import annotations

import argparse

import pytest

from memex.testing.builds import require_agent_os

require_agent_os()

from memex.agent_os_core.agent_os import (
    AgentOS,
    LLMConfig,
    MalformedReply,
    MemoryConfig,
    parse_tool_call,
)
from memex.agent_os_core.l3_index import L3Index
from memex.envkit.llm_options import add_llm_arguments, options_from_args
from memex.envkit.servers import serve
from memex.evaluation.runs import run_episode
from memex.policies.heuristic import Heuristic
from memex.scenarios import CaseSpec
from memex.testing.heuristic_openai_server import MODEL_NAME

SPECS = [CaseSpec(seed=1_100_000 + i, difficulty=d)
         for i, d in enumerate(["hard", "easy", "hard", "medium", "hard"])]


@pytest.fixture(scope="module")
def l3():
    with L3Index() as index:
        yield index


def reference(spec: CaseSpec):
    return run_episode(Heuristic(), spec.seed, spec.difficulty, spec.kind)


def test_concurrent_investigations_follow_the_heuristic_exactly(memex_server, heuristic_llm,
                                                                 l3):
    aos = AgentOS(memex_server.url, LLMConfig(heuristic_llm.url + "/v1", MODEL_NAME),
                  concurrency=3, memory=MemoryConfig(l1_tokens=1_500), l3=l3)
    outcomes = aos.run(SPECS, progress=False)
    assert [o.spec for o in outcomes] == SPECS
    for o in outcomes:
        ref = reference(o.spec)
        assert o.done and o.error is None
        assert o.outcome == ref.outcome
        assert o.steps == ref.steps
        assert o.episode_return == pytest.approx(ref.episode_return, abs=1e-6)
        assert o.terminal["score"] == pytest.approx(ref.terminal_score, abs=1e-6)
    hard = [o for o in outcomes if o.spec.difficulty == "hard"]
    assert sum(o.memory["evicted"] for o in hard) > 0, "hard cases overflow a 1,500-token L1"
    assert all(o.memory["archived_chunks"] > 0 for o in hard if o.memory["evicted"])
    assert sum(o.memory["recalled"] for o in hard) > 0, "L3 facts reached the prompts"
    # Three sessions, five episodes: rounds are shared, so fewer rounds than total steps.
    assert aos.rounds < sum(o.steps for o in outcomes)


def test_malformed_replies_are_retried_and_json_mode_works(memex_server, l3):
    with serve("memex.testing.heuristic_openai_server", "--malformed-every", "3",
               health_path="/v1/models") as flaky:
        specs = SPECS[1:3]
        for mode in ("native", "text"):
            aos = AgentOS(memex_server.url,
                          LLMConfig(flaky.url + "/v1", MODEL_NAME, tool_mode=mode),
                          concurrency=2, memory=MemoryConfig(l1_tokens=2_000), l3=l3)
            outcomes = aos.run(specs, progress=False)
            assert sum(o.llm_retries for o in outcomes) > 0
            for o in outcomes:
                ref = reference(o.spec)
                assert o.done and o.steps == ref.steps
                assert o.episode_return == pytest.approx(ref.episode_return, abs=1e-6)


def test_an_llm_that_never_answers_properly_ends_the_episode_with_an_error(memex_server, l3):
    with serve("memex.testing.heuristic_openai_server", "--malformed-every", "1",
               health_path="/v1/models") as broken:
        aos = AgentOS(memex_server.url, LLMConfig(broken.url + "/v1", MODEL_NAME,
                                                  max_retries=2), concurrency=1, l3=l3)
        (o,) = aos.run(SPECS[1:2], progress=False)
        assert o.outcome == "llm_error" and not o.done
        assert o.llm_calls == 3 and "truncated JSON" in o.error  # the strict parser says why


def test_prompt_layout_puts_l2_first_l3_last_and_the_observation_block_at_the_end(
        memex_server, heuristic_llm, l3):
    aos = AgentOS(memex_server.url, LLMConfig(heuristic_llm.url + "/v1", MODEL_NAME),
                  concurrency=1, memory=MemoryConfig(l1_tokens=900), l3=l3)
    captured = []
    original = aos.llm.choose_all

    async def spy(prompts):
        captured.extend(prompts)
        return await original(prompts)

    aos.llm.choose_all = spy
    aos.run([CaseSpec(seed=1_100_003, difficulty="hard", kind="structuring")],
            progress=False)
    late = captured[-1]
    assert late[0]["role"] == "system" and "SCRATCHPAD" in late[0]["content"]
    assert late[0]["content"].index("investigator") < late[0]["content"].index("SCRATCHPAD")
    last = late[-1]["content"]
    assert last.rstrip().endswith("Choose the next tool call.")
    assert '<observation episode="ep0-s1100003">' in last
    with_recall = [p for p in captured if "RECALLED FROM THE ARCHIVE" in p[-1]["content"]]
    assert with_recall, "gated L3 facts appear once pages have been archived"
    content = with_recall[-1][-1]["content"]
    assert content.index("RECALLED FROM THE ARCHIVE") < content.index("<observation")


def test_parse_tool_call_accepts_native_calls_and_json_text():
    native = {"tool_calls": [{"function": {"name": "review_alert", "arguments": "{}"}}]}
    assert parse_tool_call(native) == {"tool": "review_alert", "arguments": {}}
    text = {"content": 'Sure: {"tool": "check_watchlist", "arguments": {"name": "A B"}}'}
    assert parse_tool_call(text)["arguments"] == {"name": "A B"}
    as_object = {"tool_calls": [{"function": {"name": "check_watchlist",
                                              "arguments": {"name": "A B"}}}]}
    assert parse_tool_call(as_object)["arguments"] == {"name": "A B"}
    for bad in ({"content": "no json"}, {"content": '{"tool": "nope", "arguments": {}}'},
                {"tool_calls": [{"function": {"name": "review_alert", "arguments": "{x"}}]},
                None, {"content": 7}, {"content": [1]}, {"tool_calls": "x"},
                {"tool_calls": [{"function": {"name": None, "arguments": "{}"}}]},
                {"tool_calls": [{"function": {"name": "write_to_case_file",
                                              "arguments": {"note": "x" * 1_000_000}}}]}):
        with pytest.raises(MalformedReply):
            parse_tool_call(bad)


def test_agent_os_reads_the_llm_options_of_every_entry_point():
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    opts = options_from_args(parser.parse_args(
        ["--api-base-url", "http://h/v1", "--model", "m", "--timeout", "5", "--tool-mode",
         "text", "--max-tokens", "32"]))
    config = LLMConfig.from_options(opts)
    assert (config.base_url, config.model, config.timeout_s, config.tool_mode,
            config.max_tokens) == ("http://h/v1", "m", 5.0, "text", 32)
