"""LLM agents on real endpoints: `transformers serve` hosting the offline SmolLM2-135M
(built by `resolve_model("smollm2-135m")`, started once for the module and sent five chat
requests in all: a two-step episode on the test split's smallest alert under a 1,000-token
prompt budget with 8-token replies, two 1-token tool-mode probes and one refused request), the
heuristic TEST DOUBLE, a tiny fault proxy (`memex.testing.fault_proxy`) for the 400 / 500 /
stalled-server cases, and real server processes killed with SIGKILL mid-run (the model server,
and the environment server). The entry points run in process (`main(argv)` returns the exit
status) so no test pays for a new interpreter. Each test names the defect it pins."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from memex import inference
from memex.envkit.llm_options import (
    EndpointError,
    LLMOptions,
    check_endpoint,
    options_markdown,
    prepare_endpoint,
    token_counter,
)
from memex.envkit.replies import REASON_TRUNCATED
from memex.envkit.servers import free_port, healthy, serve, serve_app, serve_command
from memex.evaluation import demo, harness
from memex.evaluation.harness import policy_maker
from memex.inference import LLMPolicy, OpenAIBackend, Reply, resolve_model, run_logged
from memex.registry import get_adapter
from memex.testing.fault_proxy import FaultProxy
from memex.testing.heuristic_openai_server import MODEL_NAME as DOUBLE
from memex.testing.heuristic_openai_server import create_double_app

MAX_TOKENS = 8  # CPU: a few tokens per reply keeps every request short
# CPU prefill dominates a real request: the prompt budget (the feature under test) keeps it
# small. pep_wealth-medium has the test split's smallest alert (~1,310 SmolLM2 tokens with the
# compact tool list, the pinned alert header and PEP alerts listing every transfer they count;
# its full text-mode prompts are ~3,000), so 1,400 tokens holds the first prompt whole and makes
# the second elide the alert's RAM page.
REAL_TASK, REAL_DIFFICULTY = "pep_wealth", "medium"
PROMPT_TOKENS = 1400
TIMEOUT_S = "300"  # a loaded 2-core CPU needs tens of seconds per request
SERVE_TIMEOUT_S = 300.0  # bounds on server start-up, not timing checks
RUN_TIMEOUT_S = 300.0
ERROR_END = re.compile(r"^\[END\] success=false .* outcome=error .* error=\".+\"$")
KEY_VARIABLES = ("API_BASE_URL", "MODEL_NAME", "API_KEY", "OPENAI_API_KEY", "HF_TOKEN",
                 "ENV_URL")


@pytest.fixture(autouse=True)
def no_endpoint_variables(monkeypatch):
    """Every endpoint a test uses is named by its flags, none by the environment."""
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def smollm2_dir() -> str:
    return resolve_model("smollm2-135m")


@pytest.fixture(scope="module")
def smollm2(smollm2_dir):
    """A real OpenAI-compatible server: `transformers serve` pinned to the offline SmolLM2,
    started once for the module."""
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


def in_background(main, argv: list[str]):
    """Run an entry point's `main(argv)` in a thread (its exit status is the future's result),
    so the test can kill a server while it runs."""
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(main, argv)
    pool.shutdown(wait=False)
    return future


def start_env_server(port: int) -> subprocess.Popen:
    """The real Memex server on a given port (a restart reuses it), healthy on return."""
    proc = subprocess.Popen([sys.executable, "-m", "memex.openenv_server", "--host",
                             "127.0.0.1", "--port", str(port), "--log-level", "warning"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + SERVE_TIMEOUT_S
    while True:
        assert proc.poll() is None, "the environment server exited early"
        if healthy(f"http://127.0.0.1:{port}"):
            return proc
        assert time.monotonic() < deadline, "the environment server did not become healthy"
        time.sleep(0.1)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()


class RecordingBackend(OpenAIBackend):
    """The real backend; keeps every prompt it sent."""

    def __init__(self, options: LLMOptions):
        super().__init__(options)
        self.sent: list[list[dict[str, str]]] = []

    def complete(self, messages, tools=None):
        self.sent.append(messages)
        return super().complete(messages, tools)


class RecordingProxy(FaultProxy):
    """The fault proxy; keeps each chat request's body and Authorization header."""

    def __init__(self, upstream: str, **kwargs):
        super().__init__(upstream, **kwargs)
        self.requests: list[tuple[dict, str | None]] = []

    def _forward(self, handler, body):
        if body is not None and handler.path.endswith("/chat/completions"):
            self.requests.append((json.loads(body), handler.headers.get("Authorization")))
        super()._forward(handler, body)


def traces(folder: Path) -> list[list[dict]]:
    return [[json.loads(x) for x in p.read_text().splitlines()]
            for p in sorted(folder.rglob("*.jsonl"))]


# ---- the real model server --------------------------------------------------------------------

def test_full_short_episode_against_transformers_serve(smollm2, smollm2_dir, memex_server):
    """A short episode on the real model: [STEP] lines carry verdict, reason and the raw reply
    (defect 6); prompts stay within the budget by the model's own tokenizer, the second one
    by eliding the oldest RAM page (defect 8)."""
    adapter = get_adapter("memex")
    opts = real_options(smollm2.url, smollm2_dir, smollm2_dir)
    count = token_counter(smollm2_dir)
    backend = RecordingBackend(opts)
    policy = LLMPolicy(adapter, backend, tool_mode="text", reply_retries=0,
                       prompt_tokens=opts.prompt_tokens, count_tokens=count)
    spec = adapter.grid("test", [REAL_TASK], [REAL_DIFFICULTY])[0]
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
    # Without the budget the second prompt would not fit; with it the alert page is elided.
    whole = LLMPolicy(adapter, backend, tool_mode="text", count_tokens=count)
    assert whole.messages(episode.observations[1])[1] > PROMPT_TOKENS
    assert "content elided to fit" in backend.sent[1][1]["content"]


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


def test_harness_grid_survives_a_400_and_a_500_and_counts_them(heuristic_llm, memex_server,
                                                                tmp_path, capsys):
    """Defects 1, 3 and 5: a 400 (context length; not retried) and a 500 (a tool call whose
    JSON never closed; retried once) each end one episode; the grid continues to the model
    (the test double: the real model adds nothing here), writes every row, trace and the
    error counts, and is bounded by the LLM flags (--max-steps and --max-retries fix the
    request count; --max-tokens, --api-key and the temperature reach every request)."""
    faults = {1: (400, "This model's maximum context length is 8192 tokens"),
              2: (500, "Failed to parse tool call: unterminated JSON object"),
              3: (500, "Failed to parse tool call: unterminated JSON object")}
    with RecordingProxy(heuristic_llm.url, faults=faults) as proxy:
        status = harness.main([
            "--policies", f"llm:{DOUBLE}", "--env-url", memex_server.url,
            "--api-base-url", proxy.url + "/v1", "--tasks", "layering", "--difficulties", "easy",
            "--episodes", "3", "--workers", "1", "--out", str(tmp_path), "--no-progress",
            "--tool-mode", "text", "--max-tokens", str(MAX_TOKENS), "--max-steps", "1",
            "--max-retries", "1", "--reply-retries", "0", "--timeout", TIMEOUT_S,
            "--api-key", "local", "--prompt-tokens", str(PROMPT_TOKENS)])
        chat_requests = proxy.chat_requests
    err = capsys.readouterr().err
    assert status == 0, err
    assert chat_requests == 4  # 400 once, 500 twice (one retry), then one real reply
    assert all((body["max_tokens"], body["temperature"], key) == (MAX_TOKENS, 0.0, "Bearer local")
               for body, key in proxy.requests) and len(proxy.requests) == 4
    rows = [json.loads(x) for x in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [r["outcome"] for r in rows] == ["error", "error", "unfinished"]
    assert "maximum context length" in rows[0]["error"] and "HTTP 400" in rows[0]["error"]
    assert "HTTP 500" in rows[1]["error"] and "unterminated JSON" in rows[1]["error"]
    assert [r.get("error_source") for r in rows] == ["policy", "policy", None]
    summary = json.loads((tmp_path / "summary.json").read_text())
    stats = summary["policies"][f"llm:{DOUBLE}"]["all"]
    assert stats["endpoint_errors"] == 2 and stats["env_errors"] == 0
    assert stats["replies"] == {"valid": 1, "invalid": 0, "no_call": 0}
    assert len(traces(tmp_path / "traces")) == 3
    assert err.count("model endpoint error in") == 1


# ---- servers killed mid-run (real processes, SIGKILL) -----------------------------------------

def test_model_server_killed_mid_run_ends_episodes_with_error_outcomes(memex_server, tmp_path,
                                                                       capsys):
    """Defect 1: the model server process is SIGKILLed while a request is in flight (the test
    double stalls its second reply until the kill). Each episode ends with outcome "error",
    its [END] line and trace are written, the run goes on to the next episode, the first
    failure is one line, and the exit status (1) says no episode ran cleanly."""
    with serve("memex.testing.heuristic_openai_server", "--stall-after", "1",
               health_path="/v1/models", timeout_s=SERVE_TIMEOUT_S) as llm:
        run = in_background(inference.main, [
            "--env-url", memex_server.url, "--api-base-url", llm.url + "/v1",
            "--model", DOUBLE, "--tasks", "layering", "--difficulties", "easy,medium",
            "--tool-mode", "text", "--max-steps", "3", "--max-retries", "1", "--timeout", "60",
            "--trace-dir", str(tmp_path)])
        deadline = time.monotonic() + RUN_TIMEOUT_S
        while "stalled at request 2" not in llm.log():
            assert time.monotonic() < deadline and not run.done(), llm.log()
            time.sleep(0.05)
        llm.process.send_signal(signal.SIGKILL)
        llm.process.wait()
        status = run.result(timeout=RUN_TIMEOUT_S)
    out = capsys.readouterr()
    ends = [x for x in out.out.splitlines() if x.startswith("[END] ")]
    assert status == 1, out.err
    assert len(ends) == 2 and all(ERROR_END.match(e) for e in ends), out.out
    assert "steps=1 " in ends[0] and "steps=0 " in ends[1]
    assert out.err.count("# model endpoint error in") == 1
    assert "cannot reach the model server" in out.err
    assert "2 ended by errors (2 model endpoint, 0 environment server)" in out.err
    footers = [t[-1] for t in traces(tmp_path)]
    assert len(footers) == 2 and all(f["type"] == "footer" and f["outcome"] == "error"
                                     for f in footers)


def test_env_server_killed_mid_episode_ends_it_and_the_run_goes_on(heuristic_llm, tmp_path,
                                                                   capsys):
    """The environment server (not the model server) is SIGKILLed mid-episode and restarted:
    that episode ends with outcome "error" (trace and [END] written, one-line message), the
    next episode runs on the new server, the summary counts the error by source and the exit
    status is 0 (an episode ran)."""
    port = free_port()
    servers = [start_env_server(port)]
    try:
        with FaultProxy(heuristic_llm.url, hold_at=2) as proxy:
            run = in_background(inference.main, [
                "--env-url", f"http://127.0.0.1:{port}", "--api-base-url", proxy.url + "/v1",
                "--model", DOUBLE, "--tasks", "layering", "--difficulties", "easy,medium",
                "--tool-mode", "text", "--max-steps", "3", "--timeout", str(RUN_TIMEOUT_S),
                "--trace-dir", str(tmp_path)])
            assert proxy.held.wait(RUN_TIMEOUT_S)  # episode 1 waits for its second reply
            stop(servers[0])
            servers.append(start_env_server(port))
            proxy.release()
            status = run.result(timeout=RUN_TIMEOUT_S)
    finally:
        for proc in servers:
            stop(proc)
    out = capsys.readouterr()
    ends = [x for x in out.out.splitlines() if x.startswith("[END] ")]
    assert status == 0, out.err
    assert len(ends) == 2 and ERROR_END.match(ends[0]) and "steps=1 " in ends[0], out.out
    assert re.search(r'error="environment server http://127\.0\.0\.1:\d+: ', ends[0])
    assert "outcome=unfinished" in ends[1] and "steps=3 " in ends[1]
    assert out.err.count("# environment server error in layering-easy-") == 1
    assert "1 ended by errors (0 model endpoint, 1 environment server)" in out.err
    first, second = traces(tmp_path)
    assert first[-1]["outcome"] == "error" and "environment server" in first[-1]["error"]
    assert len([s for s in first if s["type"] == "step"]) == 2  # the reset and one step
    assert [s["type"] for s in second[1:]] == ["step"] * 4  # unfinished: no footer


def test_harness_grid_goes_on_when_the_env_server_dies(heuristic_llm, tmp_path, capsys):
    """The environment server is SIGKILLed mid-episode and stays down: the harness ends that
    episode and the next (whose reset is refused) with outcome "error", writes both rows and
    traces, counts them as environment errors apart from endpoint errors, and exits 1."""
    port = free_port()
    server = start_env_server(port)
    try:
        with FaultProxy(heuristic_llm.url, hold_at=2) as proxy:
            run = in_background(harness.main, [
                "--policies", f"llm:{DOUBLE}", "--env-url", f"http://127.0.0.1:{port}",
                "--api-base-url", proxy.url + "/v1", "--tasks", "layering",
                "--difficulties", "easy", "--episodes", "2", "--workers", "1",
                "--out", str(tmp_path), "--no-progress", "--tool-mode", "text",
                "--max-steps", "3", "--timeout", str(RUN_TIMEOUT_S)])
            assert proxy.held.wait(RUN_TIMEOUT_S)
            stop(server)
            proxy.release()
            status = run.result(timeout=RUN_TIMEOUT_S)
    finally:
        stop(server)
    out = capsys.readouterr()
    err = out.err
    assert status == 1, err
    rows = [json.loads(x) for x in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    assert [(r["outcome"], r["error_source"], r["steps"]) for r in rows] == \
        [("error", "environment", 1.0), ("error", "environment", 0.0)]
    assert all("environment server" in r["error"] for r in rows)
    stats = json.loads((tmp_path / "summary.json").read_text())["policies"][f"llm:{DOUBLE}"]
    assert stats["all"]["env_errors"] == 2 and stats["all"]["endpoint_errors"] == 0
    footers = [t[-1] for t in traces(tmp_path / "traces")]
    assert len(footers) == 2 and all(f["outcome"] == "error" for f in footers)
    assert err.count("# environment server error in") == 1 and "env errors 2" in out.out


def test_an_unreachable_env_server_stops_the_run_before_any_episode(heuristic_llm, tmp_path,
                                                                    capsys):
    """No environment server at --env-url: inference and the demo say so in one line and exit
    2 (nothing ran), as for an endpoint that fails its check."""
    dead = f"http://127.0.0.1:{free_port()}"
    assert inference.main(["--env-url", dead, "--api-base-url", heuristic_llm.url + "/v1",
                           "--model", DOUBLE, "--tool-mode", "text"]) == 2
    assert demo.main(["--env-url", dead, "--out", str(tmp_path), "--quiet"]) == 2
    out = capsys.readouterr()
    lines = out.err.splitlines()
    assert out.out == "" and len(lines) == 2
    assert all(x.startswith(f"error: environment server {dead}: Failed to connect")
               for x in lines), lines


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
                                                                        tmp_path, capsys):
    """Defect 6: with malformed replies and no re-asks, [STEP] lines and traces show the raw
    reply, verdict no_call and why; the summary counts valid / invalid / no-call replies."""
    with serve_app(create_double_app(malformed_every=2)) as llm:
        status = inference.main([
            "--env-url", memex_server.url, "--api-base-url", llm.url + "/v1",
            "--model", DOUBLE, "--difficulties", "easy", "--max-steps", "4",
            "--reply-retries", "0", "--trace-dir", str(tmp_path)])
    out = capsys.readouterr()
    assert status == 0, out.err
    steps = [x for x in out.out.splitlines() if x.startswith("[STEP] ")]
    rejected = [s for s in steps if "verdict=no_call" in s]
    assert rejected and all('reply="I think the next step is {tool: oops"' in s
                            for s in rejected)
    assert all('reason="truncated JSON' in s for s in rejected)
    assert re.search(r"replies: \d+ valid, 0 invalid, \d+ no-call \(truncated JSON \d+\)",
                     out.err), out.err
    trace = traces(tmp_path)[0]
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
    opts = LLMOptions(base_url=heuristic_llm.url + "/v1", model=DOUBLE)
    free = RecordingBackend(opts)
    episode = adapter.play(adapter.open(), LLMPolicy(adapter, free, tool_mode="text"), spec)
    sizes = [sum(count(m["content"]) + 8 for m in msgs) for msgs in free.sent]
    budget = int(max(sizes) * 0.7)
    assert max(sizes) > budget and episode.done
    recording = RecordingBackend(opts)
    policy = LLMPolicy(adapter, recording, tool_mode="text", prompt_tokens=budget,
                       count_tokens=count)
    bounded = adapter.play(adapter.open(), policy, spec)
    assert all(r["prompt_tokens"] <= budget and r["budget"] == budget for r in bounded.replies)
    elided = [m for m in recording.sent if "content elided to fit" in m[1]["content"]]
    assert elided
    for system, user in elided:
        data = json.loads(re.search(r"<observation[^>]*>(.*)</observation>",
                                    user["content"], re.S).group(1))
        assert "elided" not in json.dumps(data["result"])  # the latest result is whole
        if data["context"]["kernel"]:  # loaded sections stay in the system prompt
            assert "KERNEL (loaded compliance manual sections)" in system["content"]
    assert adapter.trace(bounded).steps[1]["reply"]["budget"] == budget


def test_no_endpoint_no_start_and_no_public_default(capsys):
    """Defect 9: without --api-base-url / --model nothing starts (exit 2, one line); no
    request goes to a public API."""
    assert inference.main(["--difficulties", "easy"]) == 2
    out = capsys.readouterr()
    assert "no LLM endpoint configured" in out.err and len(out.err.splitlines()) == 1
    assert out.out == ""
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
    """The inference agent, the harness and the demo read the same options (AgentOS too:
    `test_agent_os_orchestrator`); the inference page's table is generated from the same
    definitions."""
    for main in (inference.main, harness.main, demo.main):
        with pytest.raises(SystemExit):
            main(["--help"])
        text = capsys.readouterr().out
        assert all(flag in text for flag in ("--timeout", "--max-retries", "--max-tokens",
                                             "--max-steps", "--tool-mode", "--prompt-tokens",
                                             "--api-key")), main.__module__
    page = (Path(__file__).parents[2] / "docs" / "inference.md").read_text()
    assert options_markdown() in page
