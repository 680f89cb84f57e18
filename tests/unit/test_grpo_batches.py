"""What a GRPO generation batch holds and how its decisions are sampled: `--pair-tasks` (one
group of every kind at one seed per batch, TRL's shuffle off) and `--decision-temperature` (the
reply's first token, the tool name's, sampled at its own temperature)."""

from __future__ import annotations

import numpy as np
import pytest

from memex import train_grpo
from memex.envkit.constrained import FirstTokenTemperature
from memex.registry import get_adapter

pytestmark = pytest.mark.unit

ADAPTER = get_adapter("memex")
PAIRED = ["--tasks", "trade_based,fair_trade", "--difficulties", "easy", "--num-prompts", "20",
          "--num-generations", "4", "--batch-size", "8", "--constrained", "--pair-tasks"]


def test_paired_batches_hold_every_kind_at_one_seed_in_a_seeded_order():
    args = train_grpo.parse_args(PAIRED)
    specs = train_grpo.train_specs(ADAPTER, args)
    assert len(specs) == 20
    blocks = [specs[i:i + 2] for i in range(0, len(specs), 2)]
    for block in blocks:  # each batch of 2 groups: both kinds, the same seed and difficulty
        assert sorted(s.task for s in block) == ["fair_trade", "trade_based"]
        assert len({(s.seed, s.difficulty) for s in block}) == 1
    seeds = [b[0].seed for b in blocks]
    assert len(set(seeds)) == len(seeds)
    assert seeds != sorted(seeds)  # shuffled by block ...
    assert [s.key for s in train_grpo.train_specs(ADAPTER, train_grpo.parse_args(PAIRED))] \
        == [s.key for s in specs]  # ... the same way every time
    other = train_grpo.train_specs(ADAPTER, train_grpo.parse_args([*PAIRED, "--seed", "1"]))
    assert [s.key for s in other] != [s.key for s in specs]


def test_pairing_turns_off_trls_shuffle_and_only_that(tmp_path):
    paired = train_grpo.grpo_config(train_grpo.parse_args(PAIRED), tmp_path, cuda=False,
                                    use_vllm=False)
    plain = train_grpo.grpo_config(train_grpo.parse_args(PAIRED[:-1]), tmp_path, cuda=False,
                                   use_vllm=False)
    assert paired.shuffle_dataset is False and plain.shuffle_dataset is True
    specs = train_grpo.train_specs(ADAPTER, train_grpo.parse_args(PAIRED[:-1]))
    assert sorted(s.key for s in specs) == sorted(
        s.key for s in train_grpo.train_specs(ADAPTER, train_grpo.parse_args(PAIRED)))


@pytest.mark.parametrize("extra", [
    ["--batch-size", "4"],  # one group per batch cannot hold a pair
    ["--curriculum", "plr"],  # the buffer, not the dataset, picks each group's level
])
def test_pairing_refuses_batches_that_cannot_hold_whole_pairs(extra, capsys):
    with pytest.raises(SystemExit):
        train_grpo.parse_args([*PAIRED, *extra])
    assert "--pair-tasks" in capsys.readouterr().err


def test_a_decision_temperature_needs_constrained_decoding(capsys):
    with pytest.raises(SystemExit):
        train_grpo.parse_args(["--decision-temperature", "2"])
    assert "--constrained" in capsys.readouterr().err
    assert train_grpo.parse_args([*PAIRED, "--decision-temperature", "2"]
                                 ).decision_temperature == 2.0


def test_the_first_token_alone_is_sampled_at_the_decision_temperature():
    scores = np.array([[2.0, -np.inf, 0.5]])
    flatter = FirstTokenTemperature(2.0)
    first = flatter(None, scores)
    np.testing.assert_array_equal(first, [[1.0, -np.inf, 0.25]])  # masked stays masked
    assert flatter(None, scores) is scores  # later positions pass through
    with pytest.raises(ValueError, match="positive"):
        FirstTokenTemperature(0.0)
