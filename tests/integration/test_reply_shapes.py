"""Every reply an endpoint can send is an outcome: a scripted OpenAI-compatible endpoint (TEST
DOUBLE, `memex.testing.scripted_endpoint`, served in process) answers with bodies no
well-behaved server sends; each step is then a no-call step or the episode ends with outcome
"error" and a one-line reason, and a run or a grid goes on. Each test names the reply it pins;
a property-based test generates reply shapes and asserts that no exception escapes."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex import inference
from memex.envkit import llm_options
from memex.envkit.declarations import MAX_ARG_CHARS
from memex.envkit.errors import PolicyFailure
from memex.envkit.llm_options import EndpointError, LLMOptions, check_endpoint, prepare_endpoint
from memex.envkit.replies import NotACompletion, read_call, read_completion
from memex.envkit.servers import serve_app
from memex.evaluation import harness
from memex.inference import LLMPolicy, OpenAIBackend, Warnings
from memex.registry import get_adapter
from memex.server.tools import TOOL_NAMES
from memex.testing.heuristic_openai_server import MODEL_NAME as DOUBLE
from memex.testing.heuristic_openai_server import create_double_app
from memex.testing.scripted_endpoint import (
    MODEL_NAME,
    Script,
    canned,
    completion,
    create_scripted_app,
    tool_call,
)

ADAPTER = get_adapter("memex")
SPEC = ADAPTER.grid("test", ["layering"], ["easy"])[0]
CALL_TEXT = '{"tool": "review_alert", "arguments": {}}'
END = re.compile(r"^\[END\] .* outcome=(\S+)")
# The one-line reasons an episode may end with when the endpoint misbehaves.
ENDPOINT_FAILURES = ("malformed response from ", "HTTP ", "cannot reach the model server",
                     "request timed out", "APIConnectionError")


@pytest.fixture(scope="module")
def script():
    return Script()


@pytest.fixture(scope="module")
def endpoint(script):
    with serve_app(create_scripted_app(script)) as server:
        yield server


@pytest.fixture(autouse=True)
def fresh_script(script):
    script.answer(canned(completion(content="OK")))
    script.models = canned({"object": "list", "data": [{"id": MODEL_NAME}]})


def probes(native: bool) -> list:
    """The two replies of the tool-mode probe: prompt tokens grow with a tool when `native`."""
    return [canned({"choices": [{"message": {"content": "OK"}}],
                    "usage": {"prompt_tokens": n}}) for n in ((5, 50) if native else (5, 5))]


def run_inference(endpoint, capsys, *args: str, tmp_path: Path | None = None
                  ) -> tuple[int, list[str], str]:
    argv = ["--api-base-url", endpoint.url + "/v1", "--model", MODEL_NAME, "--tasks",
            "layering", "--difficulties", "easy", "--max-steps", "1", "--max-retries", "0",
            "--reply-retries", "0", *args]
    if tmp_path is not None:
        argv += ["--trace-dir", str(tmp_path)]
    status = inference.main(argv)
    out = capsys.readouterr()
    return status, out.out.splitlines(), out.err


# ---- the replies that crashed the agent, one by one ---------------------------------------------

@pytest.mark.parametrize("body, reason", [
    (b"{not json", "the body is not JSON (9 bytes, starting '{not json')"),
    (json.dumps(completion(content=CALL_TEXT)).encode()[:40], "the body is not JSON (40 bytes"),
    (b"", "the body is empty"),
])
def test_an_invalid_truncated_or_empty_json_body_ends_the_episode_with_its_reason(
        endpoint, script, capsys, tmp_path, body, reason):
    script.answer(canned(body))
    status, lines, err = run_inference(endpoint, capsys, "--tool-mode", "text",
                                       tmp_path=tmp_path)
    ends = [x for x in lines if x.startswith("[END] ")]
    assert status == 1 and len(ends) == 1 and END.match(ends[0]).group(1) == "error"
    assert f'error="malformed response from {endpoint.url}/v1: {reason}' in ends[0]
    assert "1 requests (0 endpoint retries, 0 re-asks)" in err
    footer = json.loads((tmp_path / f"{SPEC.key}.jsonl").read_text().splitlines()[-1])
    assert footer["outcome"] == "error" and reason in footer["error"]


@pytest.mark.parametrize("content, verdict, reason", [
    (7, "no_call", "content is a number, not text"),
    ([1, {"type": "image_url"}], "no_call", "content is a list without text parts"),
    ([{"type": "text", "text": "Let me look. "}, {"type": "text", "text": CALL_TEXT}],
     "valid", None),
])
def test_content_that_is_a_number_or_a_list_is_read_or_said_not_to_be_text(
        endpoint, script, capsys, content, verdict, reason):
    script.answer(canned(completion(content=content)))
    status, lines, _ = run_inference(endpoint, capsys, "--tool-mode", "text")
    (step,) = [x for x in lines if x.startswith("[STEP] ")]
    assert status == 0 and f"verdict={verdict} reason={json.dumps(reason)}" in step


def test_arguments_sent_as_a_json_object_are_the_call_arguments(endpoint, script, capsys):
    arguments = {"entity_id": "ENT-000000"}
    script.answer([*probes(native=True),
                   canned(completion(tool_calls=[tool_call("get_customer_profile",
                                                           arguments)]))])
    status, lines, _ = run_inference(endpoint, capsys, "--tool-mode", "native")
    (step,) = [x for x in lines if x.startswith("[STEP] ")]
    assert status == 0
    assert 'action=get_customer_profile({"entity_id":"ENT-000000"})' in step
    assert "verdict=valid" in step  # the environment then answers the unknown ID itself


def test_a_null_message_is_a_step_without_a_call(endpoint, script, capsys):
    script.answer(canned({"id": "x", "choices": [{"index": 0, "message": None}]}))
    status, lines, _ = run_inference(endpoint, capsys, "--tool-mode", "text")
    (step,) = [x for x in lines if x.startswith("[STEP] ")]
    assert status == 0
    assert 'verdict=no_call reason="the reply has no message (it is null)"' in step


@pytest.mark.parametrize("models, served", [
    ([{"id": MODEL_NAME, "object": "model"}], [MODEL_NAME]),
    ([MODEL_NAME, "other"], [MODEL_NAME, "other"]),
    ({"object": "list"}, []),
    (42, []),
])
def test_models_answered_as_a_list_or_another_shape_is_read_not_crashed_on(
        endpoint, script, models, served):
    script.models = canned(models)
    assert check_endpoint(LLMOptions(endpoint.url + "/v1", MODEL_NAME)) == served


def test_models_that_name_other_models_or_are_not_json_refuse_the_endpoint(endpoint, script):
    opts = LLMOptions(endpoint.url + "/v1", MODEL_NAME)
    script.models = canned(["someone-else"])
    with pytest.raises(EndpointError, match="does not serve model 'scripted-double'; it "
                                            "serves: someone-else"):
        check_endpoint(opts)
    script.models = canned(b"<html>login</html>", content_type="text/html")
    with pytest.raises(EndpointError, match=r"/models did not answer JSON .*'<html>login"):
        check_endpoint(opts)


@pytest.mark.parametrize("answer", [canned([1, 2]), canned({"usage": [3]}),
                                    canned({"usage": {"prompt_tokens": "many"}})])
def test_a_probe_answer_without_usable_token_counts_means_text_mode(endpoint, script, answer):
    script.answer(answer)
    warnings: list[str] = []
    opts = LLMOptions(endpoint.url + "/v1", MODEL_NAME, tool_mode="auto")
    assert prepare_endpoint(opts, warn=warnings.append).tool_mode == "text"
    assert len(warnings) == 1 and "reports no token usage" in warnings[0]


# ---- client-side bounds: an oversized call never leaves the client ------------------------------

class RecordingSession:
    """The real session; keeps the JSON size of every action it sends."""

    def __init__(self, inner):
        self.inner, self.sent = inner, []

    def reset(self, **options):
        return self.inner.reset(**options)

    def step(self, action):
        self.sent.append(len(action.model_dump_json()))
        return self.inner.step(action)

    def state(self):
        return self.inner.state()

    def close(self):
        self.inner.close()


def test_a_1mb_argument_never_leaves_the_client(endpoint, script, memex_server):
    """The call breaks the note's declared `maxLength`: re-asked, then the step is spent on
    the malformed action; the environment server never sees the megabyte, so the episode goes
    on instead of ending on a closed socket."""
    note = "x" * 1_000_000
    script.answer(canned(completion(tool_calls=[tool_call("write_to_case_file",
                                                          json.dumps({"note": note}))])))
    policy = LLMPolicy(ADAPTER, OpenAIBackend(LLMOptions(endpoint.url + "/v1", MODEL_NAME,
                                                         max_retries=0)),
                       tool_mode="native", reply_retries=1)
    session = RecordingSession(ADAPTER.open(memex_server.url))
    try:
        episode = ADAPTER.play(session, policy, SPEC, max_steps=2)
    finally:
        session.close()
    assert episode.error is None and episode.steps == 2
    assert len(script.requests) == 4  # each step: the reply and one re-ask
    assert max(session.sent) < 1_000
    assert [a.tool for a in episode.actions] == ["", ""]  # the malformed action
    assert all(o.error.code == "unknown_tool" for o in episode.observations[1:])
    reply = episode.replies[0]
    assert reply["verdict"] == "invalid" and reply["attempts"] == 2
    assert "note: String should have at most" in reply["reason"]
    assert len(reply["raw"]) == inference.REPLY_CHARS


@pytest.mark.parametrize("arguments, sent", [
    ({"note": "x" * (MAX_ARG_CHARS + 1)}, False),        # over the declared maxLength
    ({"note": "x", "extra": "y" * MAX_ARG_CHARS}, False),  # a payload in an undeclared key
    ({"note": ["x" * MAX_ARG_CHARS]}, False),            # a payload in a mistyped argument
    ({"note": 5}, True),                                 # small and invalid: the env answers
    ({"nots": "x"}, True),
])
def test_invalid_calls_are_sent_only_when_small(arguments, sent):
    parsed = ADAPTER.parse_call("write_to_case_file", arguments)
    assert parsed.verdict == "invalid" and parsed.error
    assert (parsed.action is not None) == sent


def test_check_watchlist_names_are_bounded_tighter_than_the_default():
    name = "n" * 201
    schema = ADAPTER.tool_specs["check_watchlist"].json_schema()
    assert schema["properties"]["name"]["maxLength"] < len(name) < MAX_ARG_CHARS
    assert ADAPTER.parse_call("check_watchlist", {"name": name}).action is None


# ---- retries, timeouts and warnings say what happened -------------------------------------------

def test_max_retries_1_with_a_500_sends_two_requests_and_the_summary_says_so(
        endpoint, script, capsys):
    script.answer(canned({"detail": "boom"}, status=500))
    status, lines, err = run_inference(endpoint, capsys, "--tool-mode", "text",
                                       "--max-retries", "1")
    assert status == 1 and len(script.requests) == 2
    assert "; 2 requests (1 endpoint retries, 0 re-asks); " in err
    assert "HTTP 500" in lines[-1] and "boom" in lines[-1]


def test_a_native_500_at_temperature_0_is_not_repeated_and_suggests_text_mode_once(
        endpoint, script, capsys):
    script.answer([*probes(native=True), canned({"detail": "Failed to parse tool call"},
                                                status=500)])
    status, lines, err = run_inference(endpoint, capsys, "--tool-mode", "native",
                                       "--max-retries", "2", "--episodes", "2")
    chats = [r for r in script.requests if r.get("max_tokens") != 1]
    assert status == 1 and len(chats) == 2  # one request per episode, none repeated
    assert err.count("--tool-mode text") == 1 and "# hint: " in err
    assert "2 requests (0 endpoint retries, 0 re-asks)" in err


def test_a_native_500_at_a_positive_temperature_is_retried(endpoint, script):
    script.answer(canned({"detail": "Failed to parse tool call"}, status=500))
    said: list[str] = []
    backend = OpenAIBackend(LLMOptions(endpoint.url + "/v1", MODEL_NAME, max_retries=1,
                                       temperature=0.7), Warnings(said.append))
    with pytest.raises(EndpointError, match="HTTP 500") as caught:
        backend.complete([{"role": "user", "content": "hi"}], ADAPTER.tool_schemas())
    assert caught.value.requests == 2 and len(script.requests) == 2 and len(said) == 1


def test_a_hung_tool_mode_probe_reports_the_timeout_it_waited(endpoint, script, monkeypatch):
    monkeypatch.setattr(llm_options, "PROBE_TIMEOUT_S", 1.0)
    script.answer(canned(completion(content="OK"), delay_s=3))
    opts = LLMOptions(endpoint.url + "/v1", MODEL_NAME, timeout_s=0.25, tool_mode="auto")
    started = time.monotonic()
    with pytest.raises(EndpointError, match=r"no answer .* to a 1-token request in 1s "
                                            r"\(the probe waits max\(--timeout, 1s\)"):
        prepare_endpoint(opts)
    assert time.monotonic() - started >= 1.0


def test_a_prompt_over_the_budget_is_warned_about_once_and_counted():
    """Native mode sends ~3,000 tokens of tool schemas that no cut can shorten: every prompt
    under a 2,048-token budget is over it; one warning says why, the stats count them all."""
    said: list[str] = []
    with serve_app(create_double_app()) as llm:
        backend = OpenAIBackend(LLMOptions(llm.url + "/v1", DOUBLE), Warnings(said.append))
        policy = LLMPolicy(ADAPTER, backend, tool_mode="native", prompt_tokens=2048)
        episode = ADAPTER.play(ADAPTER.open(), policy, SPEC, max_steps=3)
        fits = LLMPolicy(ADAPTER, backend, tool_mode="text", prompt_tokens=2048)
        ADAPTER.play(ADAPTER.open(), fits, SPEC, max_steps=3)
    assert episode.steps == 3 and policy.stats["over_budget"] == 3
    assert all(r["prompt_tokens"] > r["budget"] == 2048 for r in episode.replies)
    assert len(said) == 1 and "over --prompt-tokens 2,048" in said[0]
    assert "tokens of tool schemas native mode sends" in said[0]
    assert fits.stats["over_budget"] == 0
    assert "3 prompts over --prompt-tokens 2048" in inference.request_summary(policy.stats,
                                                                              2048)


# ---- a grid goes on, and its report says what the endpoint did ----------------------------------

def test_one_bad_reply_never_aborts_a_grid_and_the_report_counts_it(endpoint, script, tmp_path,
                                                                   capsys):
    script.answer([canned(b"{trunc"), canned(completion(content=None)),
                   canned(completion(content=CALL_TEXT))])
    status = harness.main([
        "--policies", f"heuristic,llm:{MODEL_NAME}", "--api-base-url", endpoint.url + "/v1",
        "--tasks", "layering", "--difficulties", "easy", "--episodes", "2", "--workers", "1",
        "--out", str(tmp_path), "--no-progress", "--tool-mode", "text", "--max-steps", "2",
        "--max-retries", "0", "--reply-retries", "0"])
    capsys.readouterr()
    assert status == 0
    rows = [json.loads(x) for x in (tmp_path / "episodes.jsonl").read_text().splitlines()]
    heuristic, llm = rows[:2], rows[2:]
    assert all(r["policy"] == "heuristic" and r["success"] == 1.0 and "error" not in r
               for r in heuristic)
    assert llm[0]["outcome"] == "error" and "not JSON" in llm[0]["error"]
    assert llm[1]["outcome"] == "unfinished" and llm[1]["steps"] == 2.0
    assert (llm[1]["replies_no_call"], llm[1]["replies_valid"]) == (1, 1)
    report = (tmp_path / "report.md").read_text()
    section = report[report.index("## Errors and replies"):]
    row = next(x for x in section.splitlines() if x.startswith(f"| llm:{MODEL_NAME} "))
    assert row == f"| llm:{MODEL_NAME} | 2 | 1 | 0 | 3 | 0 | 0 | 1 | 0 | 1 | 0.500 |"
    assert "| heuristic | 2 | 0 | 0 | — |" in section
    assert f"- `llm:{MODEL_NAME}` {SPEC.key} (policy): malformed response from" in section


# ---- any reply shape ----------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) |
    st.text(max_size=20),
    lambda children: st.lists(children, max_size=3) |
    st.dictionaries(st.text(max_size=8), children, max_size=3), max_leaves=8)
# Shapes that defeated parsers: a megabyte, nesting deeper than the JSON decoder's stack.
extremes = st.sampled_from(['{"note": "' + "x" * 1_000_000 + '"}', '{"a":' * 5000, "{" * 100_000,
                            '<tool_call>{"name": "review_alert", "arguments": {"a": ' * 2000])
names = st.sampled_from(TOOL_NAMES) | json_values
arguments = json_values | extremes | st.dictionaries(
    st.sampled_from(["entity_id", "note", "query", "name"]), json_values,
    max_size=3).map(json.dumps)
calls = st.fixed_dictionaries({"type": st.just("function"), "function": st.fixed_dictionaries(
    {}, optional={"name": names, "arguments": arguments}) | json_values})
contents = json_values | extremes | st.just(CALL_TEXT) | st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=40) |
                           st.just(CALL_TEXT)}) | json_values, max_size=3)
messages = st.fixed_dictionaries({}, optional={
    "role": json_values, "content": contents,
    "tool_calls": st.lists(calls | json_values, max_size=2) | json_values}) | json_values
choices = st.fixed_dictionaries({}, optional={"index": json_values, "message": messages,
                                              "finish_reason": json_values}) | json_values
bodies = st.fixed_dictionaries({}, optional={
    "choices": st.lists(choices, max_size=2) | json_values, "error": json_values,
    "usage": json_values}) | json_values
raw_bodies = bodies.map(json.dumps).flatmap(
    lambda text: st.sampled_from([text, text[:len(text) // 2], text[:1], ""])).map(str.encode) \
    | st.binary(max_size=64) | st.just(b"\xff\xfe{") | st.just(b"[" * 100_000)
responses = st.builds(canned, raw_bodies, st.sampled_from([200] * 8 + [201, 302, 400, 404, 408,
                                                                       429, 500, 502, 503]),
                      st.sampled_from(["application/json", "application/json; charset=utf-8",
                                       "text/plain", "text/html", "text/event-stream", None]))
SHAPES = settings(max_examples=150, deadline=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                         HealthCheck.function_scoped_fixture])


@SHAPES
@given(response=responses, native=st.booleans(), reply_retries=st.integers(0, 1))
def test_no_reply_shape_raises_out_of_an_episode(endpoint, script, response, native,
                                                 reply_retries):
    script.answer(response)
    policy = LLMPolicy(ADAPTER, OpenAIBackend(LLMOptions(endpoint.url + "/v1", MODEL_NAME,
                                                         max_retries=0), Warnings(lambda m: None)),
                       tool_mode="native" if native else "text", reply_retries=reply_retries)
    episode = ADAPTER.play(ADAPTER.open(), policy, SPEC, max_steps=1)
    if episode.error is None:
        assert episode.steps == 1 and episode.replies[0]["verdict"] in ("valid", "invalid",
                                                                        "no_call")
    else:
        assert episode.error.startswith(ENDPOINT_FAILURES), episode.error
        assert "\n" not in episode.error and len(episode.error) < 600
    assert policy.stats["requests"] == len(script.requests)


@SHAPES
@given(response=responses)
def test_no_models_or_probe_answer_raises_anything_but_an_endpoint_error(endpoint, script,
                                                                         response):
    script.models = response
    script.answer(response)
    opts = LLMOptions(endpoint.url + "/v1", MODEL_NAME, tool_mode="auto")
    try:
        assert prepare_endpoint(opts, warn=lambda m: None).tool_mode in ("native", "text")
    except EndpointError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(body=raw_bodies | st.text().map(str.encode))
def test_read_completion_gives_text_and_calls_or_says_why_not(body):
    try:
        reply = read_completion(body)
    except NotACompletion as exc:
        assert "\n" not in str(exc)
        return
    assert isinstance(reply.text, str)
    assert all(isinstance(n, str) and isinstance(a, str) for n, a in reply.tool_calls)
    assert reply.problem is None or not (reply.tool_calls or reply.text.strip())


@pytest.mark.parametrize("text", ['{"a":' * 100_000, "{" * 200_000, "{" * 50_000 + "}" * 50_000,
                                  "[" * 100_000 + CALL_TEXT, "x" * 2_000_000 + CALL_TEXT])
def test_runaway_replies_are_read_from_their_end(text):
    found = read_call(text, TOOL_NAMES)
    assert (found.call is not None) == text.endswith(CALL_TEXT)
    assert found.call is not None or found.reason


def test_an_unforeseen_failure_on_a_reply_ends_the_episode_not_the_run():
    class Broken:
        label = "broken"

        def complete(self, messages, tools=None):
            return inference.Reply(text=None)  # a reply this code never builds

    episode = ADAPTER.play(ADAPTER.open(), LLMPolicy(ADAPTER, Broken(), tool_mode="text"), SPEC,
                           max_steps=1)
    assert episode.error_source == "policy"
    assert re.match(r"internal error in the LLM policy: AttributeError: .* \(inference\.py:\d+\)$",
                    episode.error), episode.error
    assert issubclass(EndpointError, PolicyFailure)
