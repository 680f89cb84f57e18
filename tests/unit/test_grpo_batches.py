"""What a GRPO generation batch holds and how its decisions are sampled: `--pair-tasks` (one
group of every kind at one seed per batch, TRL's shuffle off), `--decision-temperature` (the
reply's first token, the tool name's, sampled at its own temperature) and `--decision-epsilon`
(that token drawn uniformly among the decision tools' first tokens a share of the time)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from memex import train_grpo
from memex.envkit.constrained import FirstTokenMixture, FirstTokenTemperature, byte_decoder
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


def test_a_decision_epsilon_needs_constrained_decoding_and_a_share(capsys):
    for extra in (["--decision-epsilon", "0.5"], [*PAIRED, "--decision-epsilon", "1.5"]):
        with pytest.raises(SystemExit):
            train_grpo.parse_args(extra)
        assert "--decision-epsilon" in capsys.readouterr().err
    assert train_grpo.parse_args([*PAIRED, "--decision-epsilon", "0.5"]).decision_epsilon == 0.5
    assert train_grpo.parse_args(PAIRED).decision_epsilon == 0.0


def test_the_first_token_is_drawn_from_the_policy_mixed_with_a_uniform_decision():
    # Token 0 the policy's favourite, 1 and 3 the decisions (3 masked in the second row), 2
    # masked by the grammar.
    scores = torch.tensor([[4.0, 0.0, -np.inf, 1.0], [4.0, 0.0, -np.inf, -np.inf]])
    mix = FirstTokenMixture(0.5, [3, 1], temperature=2.0)
    first = mix(None, scores.clone())
    policy = torch.softmax(scores / 2.0, dim=-1)
    expected = torch.stack([0.5 * policy[0] + torch.tensor([0, 0.25, 0, 0.25]),
                            0.5 * policy[1] + torch.tensor([0, 0.5, 0, 0])])
    # transformers' temperature warper divides the returned scores by the temperature next
    sampled = torch.softmax(first / 2.0, dim=-1)
    torch.testing.assert_close(sampled, expected)
    assert torch.isinf(first[:, 2]).all() and torch.isinf(first[1, 3])  # masked stays masked
    assert mix(None, scores) is scores  # later positions pass through
    lone = FirstTokenMixture(0.5, [2])(None, scores.clone())  # no decision allowed: the policy
    torch.testing.assert_close(torch.softmax(lone, dim=-1), torch.softmax(scores, dim=-1))
    for bad in ({"epsilon": 0.0, "tokens": [1]}, {"epsilon": 0.5, "tokens": []},
                {"epsilon": 0.5, "tokens": [1], "temperature": 0.0}):
        with pytest.raises(ValueError):
            FirstTokenMixture(**bad)


def test_the_decisions_are_told_apart_by_their_first_token():
    decoder = byte_decoder()  # one token per byte: `file_sar` and `close_alert` start f and c
    assert train_grpo.decision_first_tokens(decoder, ADAPTER.tool_specs) == [ord("c"), ord("f")]
    with pytest.raises(ValueError, match="apart"):
        train_grpo.decision_first_tokens(decoder, {
            name: ADAPTER.tool_specs["file_sar"] for name in ("file_sar", "file_str")})
