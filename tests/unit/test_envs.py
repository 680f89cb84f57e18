"""The environment adapter layer: registry, grid, the one prompt renderer, reply parsing,
in-process sessions, per-episode metrics and training signals."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from memex.envkit.episodes import EpisodeSpec
from memex.envkit.replies import extract_call
from memex.models import MemexObservation
from memex.registry import get_adapter, registered
from memex.scenarios import SPLITS

OBS_BLOCK = '<observation episode="'


@pytest.fixture(scope="module")
def adapter():
    return get_adapter("memex")


def test_registry_resolves_names_and_import_paths_lazily(adapter):
    assert "committee" in registered()
    assert get_adapter("memex.adapter:MemexAdapter").name == "memex"
    with pytest.raises(KeyError):
        get_adapter("no-such-env")
    probe = ("import sys, memex.registry as r; r.get_adapter('memex'); "
             "print(any(m.startswith('memex.committee') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_grid_is_seeded_from_the_split_and_covers_every_cell(adapter):
    specs = adapter.grid("test", episodes=3, repeats=2)
    assert len(specs) == len(adapter.tasks) * len(adapter.difficulties) * 3 * 2
    assert all(s.seed in SPLITS["test"] for s in specs)
    assert specs == adapter.grid("test", episodes=3, repeats=2)
    assert {s.reset["kind"] for s in specs} == set(adapter.tasks)
    assert len({s.key for s in specs}) == len(specs)
    assert EpisodeSpec.from_json(specs[5].to_json()) == specs[5]


def _late_observation(adapter):
    spec = adapter.grid("test", ["layering"], ["hard"])[0]
    episode = adapter.play(adapter.open(), adapter.make_policy("heuristic"), spec)
    evicted = next(o for o in episode.observations if any("evicted" in e for e in o.events))
    return spec, episode, evicted


def test_prompt_is_the_bounded_context_with_the_observation_block(adapter):
    spec, episode, _ = _late_observation(adapter)
    obs = episode.observations[-2]  # the decision step: kernel loaded, alert page long evicted
    system, user = adapter.messages(obs, spec.key)
    assert system["role"] == "system" and user["role"] == "user"
    for section in obs.context.kernel:
        assert section.text in system["content"]
    block = user["content"].split(OBS_BLOCK + spec.key + '">', 1)[1].split("</observation>")[0]
    sent = MemexObservation.model_validate(json.loads(block))
    assert sent.step == obs.step
    assert [p.page_id for p in sent.context.ram] == [p.page_id for p in obs.context.ram]
    # The alert's triggering transactions left RAM long ago and are not on disk in full: the
    # prompt does not carry the alert page.
    alert_page = episode.observations[0].context.ram[0]
    assert alert_page.page_id not in {p.page_id for p in obs.context.ram}
    assert json.dumps(alert_page.content["rule"]["description"]) not in user["content"]


def test_prompt_is_a_function_of_the_observation_alone(adapter):
    spec, episode, obs = _late_observation(adapter)
    first = adapter.messages(obs, spec.key)
    assert first == adapter.messages(obs, spec.key)
    compact = adapter.messages(obs, spec.key, compact=True, max_chars=1500)
    assert len(compact[0]["content"]) < len(first[0]["content"])
    assert OBS_BLOCK in compact[1]["content"]


def test_replies_are_read_as_tool_calls_or_rejected(adapter):
    ok = adapter.parse('I will look at the profile.\n{"tool": "get_customer_profile", '
                       '"arguments": {"entity_id": "ENT-123ABC"}}')
    assert ok.status == "ok" and ok.action.tool == "get_customer_profile"
    tagged = adapter.parse('<tool_call>{"name": "review_alert", "arguments": "{}"}</tool_call>')
    assert tagged.status == "ok" and tagged.action.tool == "review_alert"
    bad_args = adapter.parse('{"tool": "get_customer_profile", "arguments": {"id": 3}}')
    assert bad_args.status == "invalid" and "entity_id" in bad_args.error
    assert bad_args.action is not None  # still sendable: the environment answers with its error
    # Strict: an undeclared tool is no call at all (not sent), with the reason recorded.
    teleport = adapter.parse('{"tool": "teleport", "arguments": {}}')
    assert teleport.verdict == "no_call" and "not a declared tool" in teleport.error
    assert adapter.parse("I think the next step is {tool: oops").status == "unparseable"
    assert extract_call('{"a": 1} then {"tool": "x", "arguments": {}}') == ("x", {})


def test_metrics_follow_the_outcome(adapter):
    benign = adapter.grid("test", ["cash_business"], ["easy"])[0]
    sar = adapter.play(adapter.open(), adapter.make_policy("always_sar"), benign)
    m = adapter.metrics(sar)
    assert adapter.outcome(sar) == "FP"
    assert m["decision_accuracy"] == 0.0 and m["sar_precision"] == 0.0
    assert m["sar_recall"] is None and m["subject_f1"] is None  # undefined on a benign case
    suspicious = adapter.grid("test", ["structuring"], ["easy"])[0]
    good = adapter.metrics(adapter.play(adapter.open(), adapter.make_policy("heuristic"),
                                suspicious))
    assert good["decision_accuracy"] == good["sar_precision"] == good["sar_recall"] == 1.0
    assert good["typology_accuracy"] == 1.0 and good["findings_recall"] > 0.5
    closed = adapter.metrics(adapter.play(adapter.open(), adapter.make_policy("always_close"),
                                  suspicious))
    assert closed["sar_recall"] == 0.0 and closed["findings_recall"] == 0.0


def test_training_signals_reward_evidence_not_tool_count(adapter):
    specs = adapter.grid("train", ["structuring", "layering", "trade_based", "pep_wealth"],
                         ["medium"], episodes=2)

    def mean(policy: str, key: str) -> float:
        values = [adapter.reward_components(adapter.play(adapter.open(),
                                                 adapter.make_policy(policy), s))[key]
                  for s in specs]
        return sum(values) / len(values)

    assert mean("heuristic", "quality") > mean("tool_spam", "quality") + 0.4
    assert mean("heuristic", "quality") > mean("os_farming", "quality") + 0.3
    assert mean("heuristic", "os") > 0.9
    assert mean("tool_spam", "os") == 0.0 and mean("never_decide", "os") == 0.0
