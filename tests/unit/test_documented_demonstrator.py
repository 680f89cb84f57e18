"""The learning run's demonstrator (`heuristic_documented`): the heuristic investigator, also
writing to the case file how each anomaly was settled. A model that takes over its decision
reads only the context, so the context must carry what the heuristic decided on — and the
warm start's targets must be calls the generation grammar can write."""

from __future__ import annotations

import pytest

from memex.adapter import ADAPTER
from memex.envkit.constrained import byte_decoder
from memex.envkit.grammar import CALL_PREFIX, Limits, canonical_call
from memex.train_grpo import demonstrator_episode

pytestmark = pytest.mark.unit

SLICE = ["trade_based", "fair_trade"]
LIMITS = Limits(text_chars=48, list_items=2)  # scripts/learn.py's generation bounds


def _specs(n: int, tasks=SLICE, difficulty="easy"):
    return [s for e in range(n) for s in ADAPTER.grid("train", tasks, [difficulty], 1,
                                                       seed_offset=e)]


def test_it_decides_like_the_heuristic_and_its_notes_say_what_decided():
    specs = _specs(8) + _specs(2, ["structuring", "benign", "layering"], "medium")
    for spec in specs:
        plain = demonstrator_episode(ADAPTER, spec, policy="heuristic")
        documented = demonstrator_episode(ADAPTER, spec, policy="heuristic_documented")
        assert documented.actions[-1].tool == plain.actions[-1].tool, spec.key
        assert ADAPTER.outcome(documented) == ADAPTER.outcome(plain), spec.key
        extra = [a for a in documented.actions if a.tool == "write_to_case_file"
                 and a.arguments["note"].startswith(("Explained ", "Unexplained "))]
        # At most one more step per note (a note can also fill a wait for a reply).
        assert len(plain.actions) <= len(documented.actions) <= len(plain.actions) + len(extra)
        # What the decision weighed is on disk: a SAR needs two unexplained anomalies.
        notes = [n.text for n in documented.observations[-1].context.disk]
        unexplained = sum(t.startswith("Unexplained ") for t in notes)
        assert (unexplained >= 2) == (documented.actions[-1].tool == "file_sar"), (spec.key,
                                                                                  notes)
    # Both outcomes, and both kinds of settlement, occur on the slice.
    tools = {demonstrator_episode(ADAPTER, s, policy="heuristic_documented").actions[-1].tool
             for s in _specs(8)}
    assert tools == {"file_sar", "close_alert"}


def test_the_warm_start_targets_are_calls_the_generation_grammar_accepts():
    decoder = byte_decoder()
    clipped = 0
    for spec in _specs(6):
        episode = demonstrator_episode(ADAPTER, spec, policy="heuristic_documented")
        obs, action = episode.observations[-2], episode.actions[-1]
        arguments = ADAPTER.state_grammar(obs).writable(action.arguments, LIMITS)
        clipped += arguments != action.arguments
        grammar = ADAPTER.state_grammar(obs).lark(limits=LIMITS)
        reply = canonical_call(ADAPTER.tool_specs, action.tool, arguments)
        assert decoder.accepts(grammar, reply[len(CALL_PREFIX):]), (spec.key, reply)
    assert clipped  # the heuristic's filings are longer than the bounds: the cut matters


def test_clip_cuts_lists_and_free_text_but_never_an_id_or_a_code():
    limits = Limits(text_chars=10, list_items=1)
    value = {"subjects": ["ENT-1", "ENT-2"], "narrative": "a long narrative text",
             "findings": [{"code": "SHARED_DEVICE_ACROSS_ENTITIES", "evidence_ids": ["A", "B"]}]}
    assert limits.clip(value) == {
        "subjects": ["ENT-1"], "narrative": "a long nar",
        "findings": [{"code": "SHARED_DEVICE_ACROSS_ENTITIES", "evidence_ids": ["A"]}]}
    assert Limits().clip(value) == value
