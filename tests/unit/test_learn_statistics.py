"""scripts/learn.py's measurement, without a model: bootstrap intervals, paired differences,
the zero-variance share TRL's logs imply, and the heuristic reference under the takeover."""

from __future__ import annotations

import csv
import importlib.util
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

_SPEC = importlib.util.spec_from_file_location(
    "learn", Path(__file__).resolve().parents[2] / "scripts" / "learn.py")
learn = importlib.util.module_from_spec(_SPEC)
sys.modules["learn"] = learn  # its dataclasses look their module up
_SPEC.loader.exec_module(learn)


def test_interval_brackets_the_mean_and_skips_undefined_values():
    cell = learn.interval([0.0, 1.0] * 50 + [None] * 7)
    assert cell["n"] == 100 and cell["mean"] == 0.5
    assert 0.35 < cell["lo"] < 0.5 < cell["hi"] < 0.65
    assert learn.interval([None, None]) == {"n": 0, "mean": None, "lo": None, "hi": None}
    assert learn.interval([0.3, 0.3]) == {"n": 2, "mean": 0.3, "lo": 0.3, "hi": 0.3}


def test_paired_difference_matches_episodes_by_key():
    a = [{"key": "x", "m": 1.0}, {"key": "y", "m": 0.0}, {"key": "z", "m": None}]
    b = [{"key": "y", "m": 0.0}, {"key": "x", "m": 0.0}, {"key": "z", "m": 1.0}]
    d = learn.paired_difference(a, b, "m")
    assert d["n"] == 2 and d["mean"] == 0.5


def test_zero_variance_share_counts_equal_reward_steps(tmp_path):
    path = tmp_path / "metrics.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["step", "reward_std", "frac_reward_zero_std"])
        w.writeheader()
        w.writerows([{"step": 1, "reward_std": 0.4, "frac_reward_zero_std": 0.0},
                     {"step": 2, "reward_std": 1e-9, "frac_reward_zero_std": 0.0},  # float noise
                     {"step": 3, "reward_std": 0.2, "frac_reward_zero_std": 0.5}])
    assert learn.zero_variance(path) == [(1.0, 0.0), (2.0, 1.0), (3.0, 0.5)]


def test_group_decisions_count_groups_with_one_decision_and_right_samples(tmp_path):
    def row(batch, episode, tool, status="ok"):
        return json.dumps({"batch": batch, "episode": episode, "status": status,
                           "reply": json.dumps({"tool": tool, "arguments": {}})})

    rows = [row(1, "trade_based-easy-1-r0", "file_sar"), row(1, "trade_based-easy-1-r0",
                                                                "file_sar"),
            row(1, "fair_trade-easy-2-r0", "file_sar"), row(1, "fair_trade-easy-2-r0",
                                                              "close_alert"),
            row(2, "fair_trade-easy-3-r0", "close_alert"),
            row(2, "fair_trade-easy-3-r0", "review_alert", status="invalid")]
    path = tmp_path / "rollouts.jsonl"
    path.write_text("\n".join(rows) + "\n")
    # batch 1: the trade group agrees (one decision), the fair-trade group splits; 3 of 4 right
    # batch 2: a closure and an invalid reply are two decisions; 1 of 2 right
    assert learn.group_decisions(path) == [{"one_decision": 0.5, "right": 0.75},
                                           {"one_decision": 0.0, "right": 0.5}]


def test_heuristic_reference_plays_whole_episodes_under_a_decision_takeover():
    adapter = learn.get_adapter("memex")
    specs = adapter.grid("test", ["trade_based", "fair_trade"], ["easy"], 1)
    decided = learn.evaluate_heuristic(adapter, specs, max_turns=1, takeover_last=1,
                                      demonstrator=learn.DEMONSTRATOR)
    assert [r["decision_accuracy"] for r in decided] == [1.0, 1.0]
    capped = learn.evaluate_heuristic(adapter, specs, max_turns=1, takeover_last=None,
                                     demonstrator=learn.DEMONSTRATOR)
    assert [r["turns"] for r in capped] == [1, 1] and [r["outcome"] for r in capped] == [
        "unfinished", "unfinished"]
    assert all(c["return"] < d["return"] for c, d in zip(capped, decided, strict=True))


def test_by_kind_splits_episodes_by_the_key_kind():
    rows = [{"key": "trade_based-easy-1-r0", "decision_accuracy": 1.0, "valid_call_rate": 1.0,
             "outcome": "TP"},
            {"key": "trade_based-easy-2-r0", "decision_accuracy": 0.0, "valid_call_rate": 0.0,
             "outcome": "unfinished"},
            {"key": "fair_trade-easy-1-r0", "decision_accuracy": 1.0, "valid_call_rate": 1.0,
             "outcome": "TN"}]
    kinds = learn.by_kind(rows)
    assert kinds["trade_based"]["n"] == 2
    assert kinds["trade_based"]["decision_accuracy"]["mean"] == 0.5
    assert kinds["trade_based"]["outcomes"] == {"TP": 1, "unfinished": 1}
    assert kinds["fair_trade"]["outcomes"] == {"TN": 1}


def test_always_sar_and_always_close_decide_at_the_takeover_point():
    adapter = learn.get_adapter("memex")
    specs = adapter.grid("test", ["trade_based", "fair_trade"], ["easy"], 1)  # SAR, close
    args = learn.parse_args(["--size", "small"])
    heuristic = learn.evaluate_heuristic(adapter, specs, max_turns=1, takeover_last=1,
                                         demonstrator=learn.DEMONSTRATOR)
    sar = learn.evaluate_probe("always SAR", specs, args)
    close = learn.evaluate_probe("always close", specs, args)
    assert [r["key"] for r in sar] == [r["key"] for r in close] == [s.key for s in specs]
    assert [r["outcome"] for r in sar] == ["TP", "FP"]
    assert [r["outcome"] for r in close] == ["FN", "TN"]
    assert all(r["valid_call_rate"] == 1.0 and r["turns"] == 1 for r in sar + close)
    # the probe's right answer is the heuristic's minus what reading the case adds, never more
    assert sar[0]["return"] <= heuristic[0]["return"]
    assert close[1]["return"] <= heuristic[1]["return"]
    assert close[0]["return"] < sar[0]["return"]  # a missed SAR costs most


def test_grpo_runs_constrained_on_the_outcome_with_batch_scaled_advantages(tmp_path):
    args = learn.parse_args(["--size", "full"])
    argv = learn.grpo_arguments(args, tmp_path)
    grpo = learn.train_grpo.parse_args(argv)
    assert grpo.constrained and grpo.vllm == "off"
    assert (grpo.format_weight, grpo.quality_weight, grpo.outcome_weight, grpo.os_weight) == (
        0.0, 0.0, 1.0, 0.0)
    assert grpo.scale_rewards == "group" and grpo.takeover_last == args.takeover_last
    assert grpo.max_prompt_tokens == args.max_prompt_tokens  # the one prompt cut
    config = learn.train_grpo.grpo_config(grpo, tmp_path, cuda=False, use_vllm=False)
    assert config.gradient_checkpointing is False  # TRL's default is on; not on CPU
    assert config.scale_rewards == "group"
    assert config.reward_weights == [0.0, 0.0, 1.0, 0.0]
    # Each generation batch (its groups whole) is one update, its groups one of each kind at
    # one seed, its decisions drawn half the time uniformly between the two decision tools.
    assert config.generation_batch_size == args.num_generations * args.groups_per_step
    assert config.steps_per_generation == args.steps_per_generation == 1
    assert config.per_device_train_batch_size == config.generation_batch_size
    assert grpo.pair_tasks and config.shuffle_dataset is False
    assert grpo.decision_epsilon == 0.5
    assert grpo.decision_temperature == 1.0 and grpo.temperature == 1.0
    specs = learn.train_grpo.train_specs(learn.get_adapter("memex"), grpo)
    assert len(specs) == args.num_prompts and all(
        {a.task, b.task} == set(args.tasks.split(",")) and a.seed == b.seed
        for a, b in zip(specs[::2], specs[1::2], strict=True))
