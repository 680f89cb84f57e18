"""LLM agents on real endpoints (issue #17): `transformers serve` hosting the offline
SmolLM2-135M (built by `resolve_model("smollm2-135m")`, started by a fixture, replies bounded
to a few tokens), the heuristic TEST DOUBLE, and a tiny fault proxy (`memex.testing.fault_proxy`)
for the 400 / 500 / dead-server / stalled-server cases. Each test names the defect it pins."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import ClassVar

import pytest

from memex.envkit.adapter import get_adapter
from memex.envkit.llm_options import (
    EndpointError,
    LLMOptions,
    check_endpoint,
    prepare_endpoint,
    token_counter,
)
from memex.envkit.replies import REASON_TRUNCATED
from memex.envkit.servers import serve_command
from memex.evaluation.harness import policy_maker
from memex.inference import LLMPolicy, OpenAIBackend, Reply, resolve_model, run_logged
from memex.testing.fault_proxy import FaultProxy
from memex.testing.heuristic_openai_server import MODEL_NAME as DOUBLE

MAX_TOKENS = 12  # CPU: a few tokens per reply keeps every request short
PROMPT_TOKENS = 2600  # below the full text-mode prompt: forces the compact tool list (faster)
TIMEOUT_S = "300"  # a loaded 2-core CPU needs tens of seconds per request
SERVE_TIMEOUT_S = 300.0
ERROR_END = re.compile(r"^\[END\] success=false .* outcome=error .* error=\".+\"$")


@pytest.fixture(scope="module")
def smollm2_dir() -> str:
    return resolve_model("smollm2-135m")


@pytest.fixture(scope="module")
def smollm2(smollm2_dir):
    """A real OpenAI-compatible server: `transformers serve` pinned to the offline SmolLM2."""
    cli = Path(sys.executable).with_name("transformers")
    argv = [str(cli), "serve", smollm2_dir, "--host", "127.0.0.1", "--port", "{port}",
            "--device", "cpu"]
    with serve_command(argv, name="transformers-serve", timeout_s=SERVE_TIMEOUT_S,
                       env={"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}) as server:
        yield server


def real_options(url: str, model: str, tokenizer: str, **changes) -> LLMOptions:
    base = LLMOptions(base_url=url + "/v1", model=model, max_tokens=MAX_TOKENS,
                      timeout_s=float(TIMEOUT_S), max_retries=1, max_steps=2, tool_mode="text",
                      prompt_tokens=PROMPT_TOKENS,
                      tokenizer=tokenizer, reply_retries=0)
    return base.replace(**changes)


def cli(module: str, *args: str, env: dict[str, str] | None = None, timeout: int = 300):
    clean = {k: v for k, v in os.environ.items()
             if k not in ("API_BASE_URL", "MODEL_NAME", "API_KEY", "OPENAI_API_KEY", "HF_TOKEN")}
    return subprocess.run([sys.executable, "-m", module, *args], capture_output=True, text=True,
                          timeout=timeout, env={**clean, **(env or {})})


# ---- the real model server --------------------------------------------------------------------

def test_full_short_episode_against_transformers_serve(smollm2, smollm2_dir, memex_server,
                                                       tmp_path):
    """A short episode on the real model: [STEP] lines carry verdict, reason and the raw reply
    (defect 6), prompts stay within the budget by the model's own tokenizer (defect 8)."""
    adapter = get_adapter("memex")
    opts = real_options(smollm2.url, smollm2_dir, smollm2_dir)
    count = token_counter(smollm2_dir)
    policy = LLMPolicy(adapter, OpenAIBackend(opts), tool_mode="text", reply_retries=0,
                       prompt_tokens=opts.prompt_tokens, count_tokens=count)
    spec = adapter.grid("test", ["layering"], ["hard"])[0]
    lines: list[str] = []
    session = adapter.open(memex_server.url)
    try:
        episode = run_logged(adapter, session, policy, spec, model=smollm2_dir, log=lines.append,
                             max_steps=opts.max_steps)
    finally:
        session.close()
    assert episode.error is None and episode.steps == 2
    steps = [x for x in lines if x.startswith("[STEP] ")]
    assert len(steps) == 2
    assert all(re.search(r' verdict=(valid|invalid|no_call) reason=(null|".*") reply=".*"$', s)
               for s in steps)
    assert lines[-1].startswith("[END] ") and "outcome=unfinished" in lines[-1]
    trace = adapter.trace(episode)
    replies = [s["reply"] for s in trace.steps[1:]]
    assert all(r["budget"] == PROMPT_TOKENS and r["prompt_tokens"] <= PROMPT_TOKENS and r["raw"]
               for r in replies)
    assert sum(policy.stats["verdicts"].values()) == policy.stats["requests"] == 2


def test_native_mode_falls_back_to_text_when_the_chat_template_drops_tools(smollm2,
                                                                          smollm2_dir,
                                                                          heuristic_llm):
    """Defect 4: SmolLM2's template renders the same prompt with and without tools=; the probe
    sees it and chooses text mode with a warning. A server that renders tools keeps native."""
    warnings: list[str] = []
    opts = real_options(smollm2.url, smollm2_dir, smollm2_dir, tool_mode="native")
    assert prepare_endpoint(opts, warn=warnings.append).tool_mode == "text"
    assert len(warnings) == 1 and "--tool-mode text" in warnings[0]
    double = LLMOptions(base_url=heuristic_llm.url + "/v1", model=DOUBLE, tool_mode="auto")
    assert prepare_endpoint(double, warn=warnings.append).tool_mode == "native"
    # Text mode lists every declared tool in the system prompt.
    adapter = get_adapter("memex")
    obs = adapter.open().reset(**adapter.grid("test", ["layering"], ["easy"])[0].reset)
    system = adapter.system_prompt(obs, tool_list=True)
    assert all(name in system for name in adapter.tool_specs)


def test_a_server_pinned_to_another_model_is_refused_with_its_own_message(smollm2, smollm2_dir):
    """Defect 9: the endpoint is checked before anything runs, and the server's message (not
    just "Error code: 400") reaches the user."""
    wrong = real_options(smollm2.url, "gpt-4.1-mini", smollm2_dir)
    with pytest.raises(EndpointError, match=r"does not serve model 'gpt-4\.1-mini'"):
        check_endpoint(wrong)
    with pytest.raises(EndpointError, match=r"HTTP 400 .*Server is pinned to"):
        OpenAIBackend(wrong).complete([{"role": "user", "content": "hi"}])


def test_server_killed_mid_run_ends_episodes_with_error_outcomes(smollm2, smollm2_dir,
                                                                 memex_server, tmp_path):
    """Defect 1: the model server dies after one reply. Each episode ends with outcome "error",
    its [END] line and trace are written, the run goes on to the next episode, the first
    failure is one line (no traceback), and the exit status says no episode ran cleanly."""
    with FaultProxy(smollm2.url, die_after=1) as proxy:
        out = cli("memex.inference", "--env-url", memex_server.url,
                  "--api-base-url", proxy.url + "/v1", "--model", smollm2_dir,
                  "--difficulties", "easy,medium", "--tool-mode", "text",
                  "--max-tokens", str(MAX_TOKENS), "--max-steps", "3", "--max-retries", "1",
                  "--reply-retries", "0", "--timeout", TIMEOUT_S,
                  "--prompt-tokens", str(PROMPT_TOKENS), "--tokenizer", smollm2_dir,
                  "--trace-dir", str(tmp_path), timeout=600)
    ends = [x for x in out.stdout.splitlines() if x.startswith("[END] ")]
    assert out.returncode == 1, out.stderr
    assert len(ends) == 2 and all(ERROR_END.match(e) for e in ends), out.stdout
    assert "Traceback" not in out.stderr
    assert "cannot reach the model server" in out.stderr
    assert "2 ended by endpoint errors" in out.stderr
    footers = [json.loads(p.read_text().splitlines()[-1]) for p in sorted(tmp_path.iterdir())]
    assert len(footers) == 2 and all(f["type"] == "footer" and f["outcome"] == "error"
                                     for f in footers)


def test_harness_grid_survives_a_400_and_a_500_and_counts_them(smollm2, smollm2_dir,
                                                                memex_server, tmp_path):
    """Defects 1, 3 and 5: a 400 (context length; not retried) and a 500 (a tool call whose
    JSON never closed; retried once) each end one episode; the grid continues to the real
    model, writes every row, trace and the error counts, and is bounded by LLM flags."""
    faults = {1: (400, "This model's maximum context length is 8192 tokens"),
              2: (500, "Failed to parse tool call: unterminated JSON object"),
              3: (500, "Failed to parse tool call: unterminated JSON object")}
    with FaultProxy(smollm2.url, faults=faults) as proxy:
        out = cli("memex.evaluation.harness", "--policies", f"llm:{smollm2_dir}",
                  "--env-url", memex_server.url, "--api-base-url", proxy.url + "/v1",
                  "--tasks", "layering", "--difficulties", "easy", "--episodes", "3",
                  "--workers", "1", "--out", str(tmp_path), "--no-progress",
                  "--tool-mode", "text", "--max-tokens", str(MAX_TOKENS), "--max-steps", "1",
                  "--max-retries", "1", "--reply-retries", "0", "--timeout", TIMEOUT_S,
                  "--api-key", "local", "--prompt-tokens", str(PROMPT_TOKENS),
                  "--tokenizer", smollm2_dir, timeout=600)
        chat_requests = proxy.chat_requests
    assert out.returncode == 0, out.stderr
    assert chat_requests == 4  # 400 once, 500 twice (one retry), then one real reply
    rows = [json.loads(x) for x in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["error", "error", "unfinished"]
    assert "maximum context length" in rows[0]["error"] and "HTTP 400" in rows[0]["error"]
    assert "HTTP 500" in rows[1]["error"] and "unterminated JSON" in rows[1]["error"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    stats = summary["policies"][f"llm:{smollm2_dir}"]["all"]
    assert stats["endpoint_errors"] == 2 and sum(stats["replies"].values()) == 1
    assert len(list((tmp_path / "traces").rglob("*.jsonl"))) == 3
    assert "Traceback" not in out.stderr and out.stderr.count("endpoint error in") == 1


# ---- the heuristic test double and the fault proxy ---------------------------------------------

def test_timeouts_and_retries_are_the_users_and_the_client_adds_none(heuristic_llm):
    """Defect 2: a stalled server times out after --timeout and is not retried (it is still
    generating); a 503 is retried --max-retries times with backoff, no silent extra retries."""
    messages = [{"role": "user", "content": "hi"}]
    with FaultProxy(heuristic_llm.url, delay_s=2.0) as slow:
        opts = LLMOptions(base_url=slow.url + "/v1", model=DOUBLE, timeout_s=0.5, max_retries=3)
        with pytest.raises(EndpointError, match=r"timed out after 0.5s"):
            OpenAIBackend(opts).complete(messages)
        assert slow.chat_requests == 1
    faults = {n: (503, "overloaded") for n in range(1, 10)}
    with FaultProxy(heuristic_llm.url, faults=faults) as busy:
        opts = LLMOptions(base_url=busy.url + "/v1", model=DOUBLE, max_retries=2)
        with pytest.raises(EndpointError, match=r"HTTP 503 .*overloaded"):
            OpenAIBackend(opts).complete(messages)
        assert busy.chat_requests == 3


def test_verdicts_reasons_and_raw_replies_reach_steps_traces_and_summary(memex_server,
                                                                        tmp_path):
    """Defect 6: with malformed replies and no re-asks, [STEP] lines and traces show the raw
    reply, verdict no_call and why; the summary counts valid / invalid / no-call replies."""
    from memex.envkit.servers import serve

    with serve("memex.testing.heuristic_openai_server", "--malformed-every", "2",
               health_path="/v1/models") as llm:
        out = cli("memex.inference", "--env-url", memex_server.url,
                  "--api-base-url", llm.url + "/v1", "--model", DOUBLE,
                  "--difficulties", "easy", "--max-steps", "4", "--reply-retries", "0",
                  "--trace-dir", str(tmp_path))
    assert out.returncode == 0, out.stderr
    steps = [x for x in out.stdout.splitlines() if x.startswith("[STEP] ")]
    rejected = [s for s in steps if "verdict=no_call" in s]
    assert rejected and all('reply="I think the next step is {tool: oops"' in s
                            for s in rejected)
    assert all('reason="truncated JSON' in s for s in rejected)
    assert re.search(r"replies: \d+ valid, 0 invalid, \d+ no-call \(truncated JSON \d+\)",
                     out.stderr), out.stderr
    trace = [json.loads(x) for x in next(tmp_path.iterdir()).read_text().splitlines()]
    verdicts = [s["reply"]["verdict"] for s in trace if s["type"] == "step" and s["action"]]
    assert "no_call" in verdicts and "valid" in verdicts


def test_an_echoed_observation_object_is_not_a_tool_call():
    """Defect 7: an object with a string "name" that is no declared tool is no call; a reply
    cut off mid-call is recognised as truncated (defect 5's cause)."""
    adapter = get_adapter("memex")
    echo = adapter.parse('The subject is {"name": "Yuki Petrov", "country": "CY"}.')
    assert echo.verdict == "no_call" and "'Yuki Petrov' is not a declared tool" in echo.error
    cut = adapter.parse('<tool_call>{"name": "get_customer_profile", "arguments": {"entity_')
    assert cut.verdict == "no_call" and cut.error.startswith(REASON_TRUNCATED)
    native = adapter.parse_call("Yuki Petrov", {})
    assert native.verdict == "no_call" and native.action is None

    class Echo:
        label = "echo"

        def complete(self, messages, tools=None):
            return Reply('{"name": "Yuki Petrov", "risk": "high"}')

    policy = LLMPolicy(adapter, Echo(), tool_mode="text", reply_retries=1)
    spec = adapter.grid("test", ["layering"], ["easy"])[0]
    episode = adapter.play(adapter.open(), policy, spec, max_steps=1)
    assert episode.actions[0].tool != "Yuki Petrov"
    assert episode.replies[0]["verdict"] == "no_call" and episode.replies[0]["attempts"] == 2


def test_prompts_fit_the_token_budget_by_eliding_the_oldest_ram_first(heuristic_llm):
    """Defect 8: the heuristic's path on a hard case outgrows a small context; with a budget
    every prompt fits, the kernel and the latest result are kept, the budget is traced."""
    adapter = get_adapter("memex")
    spec = adapter.grid("test", ["trade_based"], ["hard"])[0]
    count = token_counter()

    class Recording(OpenAIBackend):
        sent: ClassVar[list] = []

        def complete(self, messages, tools=None):
            self.sent.append(messages)
            return super().complete(messages, tools)

    opts = LLMOptions(base_url=heuristic_llm.url + "/v1", model=DOUBLE)
    free = Recording(opts)
    Recording.sent = []
    episode = adapter.play(adapter.open(), LLMPolicy(adapter, free, tool_mode="text"), spec)
    sizes = [sum(count(m["content"]) + 8 for m in msgs) for msgs in Recording.sent]
    budget = int(max(sizes) * 0.7)
    assert max(sizes) > budget and episode.done
    Recording.sent = []
    policy = LLMPolicy(adapter, Recording(opts), tool_mode="text", prompt_tokens=budget,
                       count_tokens=count)
    bounded = adapter.play(adapter.open(), policy, spec)
    assert all(r["prompt_tokens"] <= budget and r["budget"] == budget for r in bounded.replies)
    elided = [m for m in Recording.sent if "content elided to fit" in m[1]["content"]]
    assert elided
    for system, user in elided:
        data = json.loads(re.search(r"<observation[^>]*>(.*)</observation>",
                                    user["content"], re.S).group(1))
        assert "elided" not in json.dumps(data["result"])  # the latest result is whole
        if data["context"]["kernel"]:  # loaded sections stay in the system prompt
            assert "KERNEL (loaded compliance manual sections)" in system["content"]
    assert adapter.trace(bounded).steps[1]["reply"]["budget"] == budget


def test_no_endpoint_no_start_and_no_public_default():
    """Defect 9: without --api-base-url / --model nothing starts (exit 2, one line); no
    request goes to a public API."""
    out = cli("memex.inference", "--difficulties", "easy", timeout=120)
    assert out.returncode == 2
    assert "no LLM endpoint configured" in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == ""
    with pytest.raises(EndpointError, match="MODEL_NAME"):
        LLMOptions(base_url="http://127.0.0.1:9/v1").require()


def test_prompts_are_identical_run_to_run_unless_a_run_token_is_asked_for():
    """Defect 10: no pid, timestamp or random token in the prompt; `--run-token` adds one."""
    adapter = get_adapter("memex")
    spec = adapter.grid("test", ["layering"], ["easy"])[0]
    obs = adapter.open().reset(**spec.reset)

    class Nothing:
        label = "nothing"

    def first_prompt(**kwargs) -> list[dict[str, str]]:
        policy = LLMPolicy(adapter, Nothing(), tool_mode="text", **kwargs)
        policy.episode_key = spec.key
        policy.reset(obs)
        return policy.messages(obs)[0]

    assert first_prompt() == first_prompt()
    assert first_prompt(run_token=True) != first_prompt(run_token=True)
    opts = LLMOptions(base_url="http://127.0.0.1:9/v1", model="m", tool_mode="text")
    maker = policy_maker(adapter, "llm:m", llm=opts, prepared={"llm:m": opts})
    assert maker.build(spec).episode_key == spec.key == maker.build(spec).episode_key


def test_one_set_of_llm_options_for_every_entry_point(capsys):
    """The inference agent, the harness, the demo and AgentOS read the same options; the
    README's table is generated from the same definitions."""
    import argparse

    from memex import inference
    from memex.agent_os_core.agent_os import LLMConfig
    from memex.envkit.llm_options import add_llm_arguments, options_from_args, options_markdown
    from memex.evaluation import demo, harness

    for main in (inference.main, harness.main, demo.main):
        with pytest.raises(SystemExit):
            main(["--help"])
        text = capsys.readouterr().out
        assert all(flag in text for flag in ("--timeout", "--max-retries", "--max-tokens",
                                             "--max-steps", "--tool-mode", "--prompt-tokens",
                                             "--api-key")), main.__module__
    parser = argparse.ArgumentParser()
    add_llm_arguments(parser)
    opts = options_from_args(parser.parse_args(
        ["--api-base-url", "http://h/v1", "--model", "m", "--timeout", "5", "--tool-mode",
         "text", "--max-tokens", "32"]))
    config = LLMConfig.from_options(opts)
    assert (config.base_url, config.model, config.timeout_s, config.tool_mode,
            config.max_tokens) == ("http://h/v1", "m", 5.0, "json", 32)
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert options_markdown() in readme
