"""Interfaces derived from the action declarations: the prompt, the action parser, the
`--env committee` adapter and the baseline report."""

from __future__ import annotations

import json

import pytest

from memex.committee import prompting
from memex.committee.environment import CommitteeEnvironment
from memex.committee.models import CommitteeAction
from memex.committee.policies import POLICIES
from memex.committee.reports.baselines import main as report_main
from memex.committee.reports.tuning import main as tuning_main
from memex.committee.scoring import SCORE_SCALE_PTS
from memex.committee.tools import ACTION_NAMES
from memex.committee.world.tasks import SPLITS, TASK_NAMES
from memex.registry import get_adapter


def test_system_prompt_lists_every_action_and_the_task_brief():
    text = prompting.system_prompt("research_risk_conflict")
    for name in ACTION_NAMES:
        assert f"- {name}(" in text
    assert "over-enthusiastic about TECH" in text
    assert prompting.SYSTEM_PROMPT.count("- query_") == 2


def test_rendered_observation_shows_the_book_risk_mandate_and_notes():
    env = CommitteeEnvironment()
    obs = env.reset(task="mandate_drift", seed=2)
    obs = env.step(CommitteeAction(action_type="query_risk", query_target="PORTFOLIO"))
    text = prompting.render_observation(obs)
    for needle in ("period 1 of 20", "Book:", "Risk: vol", "Mandate: max 35.0%/asset",
                   "Risk Officer:", "Reward "):
        assert needle in text
    assert '"order"' in text  # the correlation matrix is compacted to rows


@pytest.mark.parametrize(("text", "expected"), [
    ('Thinking... {"tool": "allocate", "arguments": {"weights": {"NOVA": 0.2}}}',
     {"action_type": "allocate", "weights": {"NOVA": 0.2}}),
    ('{"action_type": "query_risk", "query_target": "MANDATE"}',
     {"action_type": "query_risk", "query_target": "MANDATE"}),
    ('first {"tool": "hold"} then {"name": "move_to_cash", "arguments": {}}',
     {"action_type": "move_to_cash"}),
])
def test_parse_action_reads_the_last_json_action(text, expected):
    action = prompting.parse_action(text)
    assert action.model_dump(exclude_none=True, exclude={"metadata"}) == expected


def test_parse_action_without_json_raises():
    with pytest.raises(ValueError, match="no action found"):
        prompting.parse_action("I would buy some tech.")


def test_adapter_plays_the_grid_and_measures_episodes():
    adapter = get_adapter("committee")
    assert adapter.tasks == TASK_NAMES and adapter.server_module == "memex.committee.server"
    spec = adapter.grid("validation", ["mandate_drift"], None, 1)[0]
    assert spec.reset == {"task": "mandate_drift", "seed": 1_000_000}
    episode = adapter.play(adapter.open(), adapter.make_policy("heuristic"), spec)
    metrics = adapter.metrics(episode)
    assert episode.done and metrics["score"] == episode.final.metadata["score"]
    assert metrics["score"] == pytest.approx(metrics["episode_return"]
                                             / SCORE_SCALE_PTS["mandate_drift"], abs=1e-5)
    assert adapter.outcome(episode) == ("beat_cash" if metrics["edge_pts"] > 0 else "below_cash")
    parts = adapter.reward_components(episode)
    assert 0.0 <= parts["quality"] <= 1.0 and parts["os"] == 1.0
    truth = adapter.truth_json(episode.case)
    assert len(truth["regimes"]) == 20 and truth["mandate_change"]["mandate"]["excluded"] == [
        "PTRL"]
    parsed = adapter.parse('{"tool": "allocate", "arguments": {"weights": {"GOVT": 0.4}}}')
    assert parsed.status == "ok" and adapter.action_call(parsed.action) == (
        "allocate", {"weights": {"GOVT": 0.4}})
    assert adapter.parse('{"tool": "allocate", "arguments": {"wts": 1}}').status == "invalid"
    bad = CommitteeEnvironment()
    bad.reset(task="guided_allocation", seed=1)
    assert bad.step(adapter.malformed_action()).error.code == "unknown_action"
    messages = adapter.messages(episode.observations[3], spec.key)
    assert messages[0]["role"] == "system" and "allocate(" in messages[0]["content"]
    payload = messages[1]["content"].split(">", 1)[1].rsplit("</observation>", 1)[0]
    assert json.loads(payload)["period"] == 3
    oracle = adapter.play(adapter.open(), adapter.make_policy("regime_oracle"), spec)
    assert adapter.metrics(oracle)["score"] >= metrics["score"] - 0.5


def test_report_writes_every_policy_and_task(tmp_path):
    out = tmp_path / "baselines.md"
    report_main(["--split", "validation", "--episodes", "2", "--out", str(out)])
    text = out.read_text()
    assert "python -m memex.committee.reports.baselines --split validation --episodes 2" in text
    for name in ("heuristic", "random", "research_chaser", "always_cash", "query_spammer",
                 "em_filter", "bonds_only", "max_risk"):
        assert f"| {name} |" in text
    assert "## The score is the objective" in text and "Spearman(score, objective)" in text
    for task in TASK_NAMES:
        assert f"`{task}`" in text
    assert set(POLICIES) >= {"heuristic", "regime_oracle"}


def test_the_knob_sweep_runs_on_train_seeds_only(capsys):
    tuning_main(["--start", "1000", "--episodes", "1", "--knob", "VOL_HEADROOM=0.9"])
    out = capsys.readouterr().out
    assert "| (as is) |" in out and "| VOL_HEADROOM | 0.9 |" in out
    with pytest.raises(SystemExit):
        tuning_main(["--start", str(SPLITS["validation"].start), "--episodes", "1"])
