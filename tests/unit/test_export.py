"""The trajectory export (`python -m memex.evaluation.export`): traces of a harness-shaped run
(both environments, scripted policies and an LLM policy) become steps.parquet and
episodes.parquet, which `datasets.load_dataset("parquet", ...)` loads back row for row; each
step row holds the prompt the agent saw (for the LLM policy: the very messages its endpoint
received), its reply, the reward and the outcome. The Hub upload is checked offline, through a
named double of `Dataset.push_to_hub`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

datasets = pytest.importorskip("datasets")

from memex.committee.adapter import ADAPTER as COMMITTEE  # noqa: E402
from memex.committee.policies import Heuristic as CommitteeHeuristic  # noqa: E402
from memex.envkit.replies import Reply  # noqa: E402
from memex.evaluation import export as export_module  # noqa: E402
from memex.evaluation.export import CONFIGS, export, push_to_hub, rows  # noqa: E402
from memex.evaluation.runs import run_episode  # noqa: E402
from memex.inference import LLMPolicy  # noqa: E402
from memex.policies.heuristic import Heuristic  # noqa: E402
from memex.registry import get_adapter  # noqa: E402

pytestmark = pytest.mark.unit
AML = get_adapter("memex")


class RecordingBackend:
    """Test double of an LLM endpoint: replies with a fixed valid call and keeps every prompt
    it was sent, so the export's prompts can be compared with what the model really saw."""

    label = "recording-double"

    def __init__(self, reply: str):
        self.reply = reply
        self.prompts: list[list[dict[str, str]]] = []

    def complete(self, messages, tools=None):
        self.prompts.append([dict(m) for m in messages])
        return Reply(self.reply)


class HubPushDouble:
    """Test double of `Dataset.push_to_hub`: records each upload instead of reaching the Hub."""

    def __init__(self, monkeypatch):
        self.calls: list[dict] = []

        def push_to_hub(dataset, repo_id, **kwargs):
            self.calls.append({"repo_id": repo_id, "rows": dataset.to_list(), **kwargs})

        monkeypatch.setattr(datasets.Dataset, "push_to_hub", push_to_hub)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> tuple[Path, RecordingBackend]:
    """A folder shaped like a harness run: traces/<policy>/<episode>.jsonl and episodes.jsonl."""
    root = tmp_path_factory.mktemp("run")
    traces = root / "traces"
    aml = run_episode(Heuristic(), 3, "easy", kind="structuring", record=True).trace
    aml.write(traces / "heuristic" / "structuring-easy-3-r0.jsonl")
    spec = COMMITTEE.grid("test", ["mandate_drift"], episodes=1)[0]
    committee = COMMITTEE.play(COMMITTEE.open(), CommitteeHeuristic(), spec)
    COMMITTEE.trace(committee).write(traces / "committee-heuristic" / f"{spec.key}.jsonl")
    backend = RecordingBackend('{"tool": "review_alert", "arguments": {}}')
    llm = LLMPolicy(AML, backend, tool_mode="text", reply_retries=0, compact=True,
                    max_prompt_chars=3000)
    llm_spec = AML.grid("test", ["layering"], ["easy"], episodes=1)[0]
    llm.episode_key = llm_spec.key
    episode = AML.play(AML.open(), llm, llm_spec, max_steps=3)  # unfinished: no footer
    AML.trace(episode).write(traces / "llm" / f"{llm_spec.key}.jsonl")
    (root / "episodes.jsonl").write_text('{"policy": "heuristic"}\n')  # not a trace
    return root, backend


def _load(path: Path, cache: Path) -> list[dict]:
    return datasets.load_dataset("parquet", data_files=str(path), split="train",
                                 cache_dir=str(cache)).to_list()


def test_export_round_trips_through_load_dataset(run_dir, tmp_path):
    root, _ = run_dir
    written = export([root], tmp_path / "out")
    assert set(written) == set(CONFIGS)
    expected_steps, expected_episodes = [], []
    for path in export_module.trace_files([root]):
        steps, episode = rows(path)
        expected_steps += steps
        expected_episodes.append(episode)
    assert len(expected_episodes) == 3  # the two heuristics and the LLM; episodes.jsonl skipped
    assert _load(written["steps"], tmp_path / "cache") == expected_steps
    assert _load(written["episodes"], tmp_path / "cache") == expected_episodes


def test_step_rows_hold_the_prompt_the_agent_saw_its_reply_reward_and_outcome(run_dir):
    root, backend = run_dir
    llm_trace = next((root / "traces" / "llm").glob("*.jsonl"))
    steps, episode = rows(llm_trace)
    # The LLM's prompts are the messages its endpoint received, byte for byte.
    assert [s["prompt"] for s in steps] == backend.prompts and len(steps) == 3
    assert all(s["reply"] == '{"tool": "review_alert", "arguments": {}}' for s in steps)
    assert all(s["reply_source"] == "model" and s["verdict"] == "valid" for s in steps)
    assert episode["outcome"] == "unfinished" and episode["steps"] == 3
    assert episode["prompt"] == backend.prompts[0]

    aml_steps, aml = rows(next((root / "traces" / "heuristic").glob("*.jsonl")))
    footer = json.loads(next((root / "traces" / "heuristic").glob("*.jsonl")).read_text()
                        .splitlines()[-1])
    assert aml["outcome"] == footer["outcome"] == aml_steps[-1]["outcome"]
    assert aml["episode_return"] == pytest.approx(sum(s["reward"] for s in aml_steps))
    assert aml["score"] == footer["terminal"]["score"] and aml_steps[-1]["done"]
    assert json.loads(aml["truth"])["kind"] == "structuring"
    for step in aml_steps:  # a scripted reply is the action, as the canonical call
        parsed = AML.parse(step["reply"])
        assert parsed.status == "ok" and step["reply_source"] == "scripted"
        assert json.loads(step["action"]) == {"tool": parsed.name, "arguments": parsed.arguments}
        assert step["prompt"][0]["role"] == "system" and "<observation" in \
            step["prompt"][1]["content"]

    c_steps, committee = rows(next((root / "traces" / "committee-heuristic").glob("*.jsonl")))
    assert committee["env"] == "committee" and committee["steps"] == len(c_steps) == 20
    assert committee["score"] == pytest.approx(json.loads(committee["metrics"])["score"])
    beliefs = [json.loads(s["insight"])["regime_belief"] for s in c_steps]
    assert all(sum(b.values()) == pytest.approx(1, abs=1e-3) for b in beliefs)


def test_push_to_hub_uploads_both_configurations(run_dir, tmp_path, monkeypatch):
    root, _ = run_dir
    double = HubPushDouble(monkeypatch)
    written = export([root], tmp_path / "out")
    push_to_hub(written, "someone/memex-trajectories", private=True)
    assert [(c["repo_id"], c["config_name"], c["private"]) for c in double.calls] == [
        ("someone/memex-trajectories", "steps", True),
        ("someone/memex-trajectories", "episodes", True)]
    assert len(double.calls[1]["rows"]) == 3
    assert export_module.main([str(root), "--out", str(tmp_path / "cli"),
                               "--push-to-hub", "someone/x"]) == 0
    assert [c["config_name"] for c in double.calls[2:]] == ["steps", "episodes"]


def test_no_traces_is_a_one_line_error(tmp_path, capsys):
    (tmp_path / "episodes.jsonl").write_text('{"policy": "x"}\n')
    assert export_module.main([str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "no memex-trace/1 files found" in capsys.readouterr().err
