"""The call grammar (`envkit.grammar`, enforced by llguidance): derived from the tool
declarations and the state's closed sets, it accepts every call the heuristic makes (written in
the grammar's canonical form) and rejects unknown tools, values outside a closed set and IDs
the agent cannot see."""

from __future__ import annotations

import pytest

from memex.adapter import ADAPTER
from memex.envkit.constrained import byte_decoder
from memex.envkit.episodes import EpisodeSpec, LocalSession
from memex.envkit.grammar import CALL_PREFIX, GrammarError, Limits, call_grammar, canonical_call
from memex.envkit.replies import Reply
from memex.inference import LLMPolicy
from memex.models import MemexAction
from memex.policies.heuristic import Heuristic
from memex.server.environment import MemexEnvironment
from memex.server.tools import TOOLS

pytestmark = pytest.mark.unit

DECODER = byte_decoder()


def named_ids(tool: str, arguments: dict) -> set[str]:
    """The IDs a call names in its closed fields: references, subjects, evidence."""
    ids = {arguments[p] for p in TOOLS[tool].refs if arguments.get(p)}
    ids |= set(arguments.get("subjects") or ()) | set(arguments.get("evidence_ids") or ())
    for finding in arguments.get("findings") or ():
        ids |= set(finding["evidence_ids"])
    return ids


def accepts(obs, tool: str, arguments: dict, **options) -> bool:
    reply = canonical_call(TOOLS, tool, arguments)
    return DECODER.accepts(ADAPTER.state_grammar(obs).lark(**options), reply[len(CALL_PREFIX):])


def raw_accepts(obs, reply: str) -> bool:
    assert reply.startswith(CALL_PREFIX)
    return DECODER.accepts(ADAPTER.state_grammar(obs).lark(), reply[len(CALL_PREFIX):])


EPISODES = [("trade_based", "easy", 1), ("structuring", "medium", 2), ("layering", "hard", 3),
            ("benign", "easy", 4), ("suspicious", "medium", 5), ("benign", "medium", 6),
            ("suspicious", "easy", 7)]


def test_every_call_of_heuristic_episodes_is_accepted():
    tools, outside, calls = set(), 0, 0
    for kind, difficulty, seed in EPISODES:
        env = MemexEnvironment()
        spec = EpisodeSpec(kind, difficulty, seed, {"seed": seed, "difficulty": difficulty,
                                                    "kind": kind})
        episode = ADAPTER.play(LocalSession(env), Heuristic(), spec)
        assert episode.done and episode.final.metadata["terminal"]["outcome"] != "timeout"
        for obs, action in zip(episode.observations, episode.actions, strict=False):
            calls += 1
            visible = set(ADAPTER.closed_sets(obs)[1]["evidence_ids"])
            # The heuristic also remembers IDs outside its context (in Python): a call naming
            # one is valid for the environment but cannot be written from `context`, so the
            # grammar refuses it; every other call is accepted.
            if named_ids(action.tool, action.arguments) <= visible:
                tools.add(action.tool)
                assert accepts(obs, action.tool, action.arguments), (action.tool,
                                                                     action.arguments)
            else:
                outside += 1
                assert not accepts(obs, action.tool, action.arguments)
    assert calls > 60 and outside <= calls // 20
    assert {"file_sar", "close_alert"} <= tools and len(tools) >= 8


def _start():
    env = MemexEnvironment()
    obs = env.reset(seed=3, difficulty="easy", kind="trade_based")
    return env, obs


def test_invalid_calls_are_rejected():
    env, obs = _start()
    header = obs.context.alert
    subject = header.subject.entity_id
    assert accepts(obs, "get_customer_profile", {"entity_id": subject})
    assert not raw_accepts(obs, CALL_PREFIX + 'launder", "arguments": {}}')  # unknown tool
    # An entity that exists in the case but that the agent has not seen.
    hidden = next(e.id for e in env.current_case.public.entities
                  if e.id not in obs.context.ram[-1].ids)
    assert not accepts(obs, "get_customer_profile", {"entity_id": hidden})
    # An ID of the wrong record type for the parameter.
    assert not accepts(obs, "get_customer_profile", {"entity_id": header.subject.account_ids[0]})
    txn = header.transaction_ids[0]
    sar = {"subjects": [subject], "typology": "trade_based",
           "findings": [{"code": "", "evidence_ids": [txn]}], "cited_sections": [],
           "narrative": "x"}
    red_flag = TOOLS["file_sar"].json_schema()["properties"]["findings"]["items"][
        "properties"]["code"]["enum"][0]
    sar["findings"][0]["code"] = red_flag
    assert accepts(obs, "file_sar", sar)
    # Out-of-set typology (the environment rejects it too: canonical_call validates).
    with pytest.raises(ValueError):
        canonical_call(TOOLS, "file_sar", {**sar, "typology": "tax_evasion"})
    reply = canonical_call(TOOLS, "file_sar", sar)
    assert not raw_accepts(obs, reply.replace('"trade_based"', '"tax_evasion"'))
    assert not raw_accepts(obs, reply.replace(red_flag, "RF-MADE-UP"))
    # A section not loaded in the kernel cannot be cited; once loaded it can.
    assert not accepts(obs, "file_sar", {**sar, "cited_sections": ["2.1"]})
    obs = env.step(MemexAction(tool="update_system_prompt", arguments={"section_id": "2.1"}))
    assert accepts(obs, "file_sar", {**sar, "cited_sections": ["2.1"]})
    # Evidence the agent cannot see, and a made-up section to load.
    assert not accepts(obs, "file_sar", {**sar, "findings": [
        {"code": red_flag, "evidence_ids": [hidden]}]})
    assert not raw_accepts(obs, CALL_PREFIX + 'update_system_prompt", "arguments": '
                                              '{"section_id": "99.9"}}')
    # No job in the table: retrieve_async_result is not callable at all.
    assert not raw_accepts(obs, CALL_PREFIX + 'retrieve_async_result", "arguments": '
                                              '{"job_id": "JOB-1"}}')


def test_limits_bound_free_text_and_tool_names_can_be_whole_tokens():
    env, obs = _start()
    closing = {"reason": "r" * 50, "cited_sections": []}
    assert accepts(obs, "close_alert", closing)
    assert not accepts(obs, "close_alert", closing, limits=Limits(text_chars=40))
    # A note may name the IDs the agent can see, and dates; not an ID it cannot see (the
    # environment refuses a note naming an unknown ID), and it is not blank.
    alert_id = obs.context.alert.alert_id
    hidden = next(e.id for e in env.current_case.public.entities
                  if e.id not in obs.context.ram[-1].ids)
    assert accepts(obs, "write_to_case_file", {"note": f"Alert {alert_id} of 2025-02-27."})
    assert not accepts(obs, "write_to_case_file", {"note": f"See {hidden}."})
    assert not accepts(obs, "write_to_case_file", {"note": " "})
    account = obs.context.alert.subject.account_ids[0]
    for day in ("2025-13-01", "2025-04-31", "2025-02-30"):
        assert not accepts(obs, "query_transactions", {"account_id": account, "start_date": day})
    for day in ("2025-01-31", "2025-04-30", "2024-02-29", "2025-05-29"):  # every month-end
        assert accepts(obs, "query_transactions", {"account_id": account, "start_date": day})
    assert not accepts(obs, "check_watchlist", {"name": "A."})
    # With name tokens, the name must be exactly those tokens (here: one byte token per byte
    # would be the free form; a single made-up token id stands for the whole name).
    names = {name: [ord(name[0])] for name in TOOLS}
    grammar = ADAPTER.state_grammar(obs).lark(name_tokens=names)
    assert "<[" in grammar and DECODER.accepts(grammar, 'r", "arguments": {}}')
    assert not DECODER.accepts(grammar, 'review_alert", "arguments": {}}')


def test_a_state_with_no_callable_tool_is_a_typed_error():
    with pytest.raises(GrammarError):
        call_grammar({"get_customer_profile": TOOLS["get_customer_profile"]}, {}, {})


def test_a_constrained_llm_policy_sends_each_states_grammar():
    class Recorder:
        label = "recorder"

        def __init__(self):
            self.grammars = []

        def complete(self, messages, tools=None, grammar=None):
            self.grammars.append(grammar)
            return Reply(CALL_PREFIX + 'review_alert", "arguments": {}}')

    env, obs = _start()
    backend = Recorder()
    policy = LLMPolicy(ADAPTER, backend, tool_mode="text", constrained=True)
    policy.reset(obs)
    assert policy.act(obs).tool == "review_alert"
    (grammar,) = backend.grammars
    assert grammar.closed == ADAPTER.closed_sets(obs)[1]
    schema = grammar.response_format()["json_schema"]["schema"]
    assert {b["properties"]["tool"]["const"] for b in schema["anyOf"]} == \
        set(TOOLS) - {"retrieve_async_result", "check_market_price"}  # no job, no commodity
    with pytest.raises(ValueError):
        LLMPolicy(ADAPTER, backend, tool_mode="native", constrained=True)
