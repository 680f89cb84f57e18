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
    assert train_grpo.decision_first_tokens(decoder, ADAPTER.tool_specs) == {
        "close_alert": ord("c"), "file_sar": ord("f")}
    with pytest.raises(ValueError, match="apart"):
        train_grpo.decision_first_tokens(decoder, {
            name: ADAPTER.tool_specs["file_sar"] for name in ("file_sar", "file_str")})


def test_on_cpu_the_lm_head_scores_only_the_completion_and_the_same_way(monkeypatch):
    """`score_completions_only_on_cpu`: TRL's fused LM head on a tiny Llama, every position
    (TRL's CPU default) against the completion's alone: the kernel sees only the labelled rows,
    and the log-probabilities and entropies it returns for them are unchanged."""
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl.trainer import utils as trl_utils

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)).eval()
    trl_utils.add_fused_lm_head(model, outputs=("log_probs", "entropy"))
    ids = torch.randint(0, 97, (3, 20))
    mask = torch.ones_like(ids)
    mask[0, :4] = 0  # left padding, as TRL's prompts
    labels = ids.masked_fill(mask == 0, -100)
    labels[:, :-6] = -100  # the last 6 tokens are the completion
    seen: list[int] = []
    apply = trl_utils._ChunkedLogProbFunction.apply

    def spy(hidden, *rest):
        seen.append(hidden.shape[0])
        return apply(hidden, *rest)

    monkeypatch.setattr(trl_utils._ChunkedLogProbFunction, "apply", spy)
    monkeypatch.setattr(trl_utils, "_use_triton", trl_utils._use_triton)  # restored after
    with torch.no_grad():
        every = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
        assert train_grpo.score_completions_only_on_cpu()
        assert train_grpo.score_completions_only_on_cpu()  # idempotent: wrapped once
        compact = model(input_ids=ids, attention_mask=mask, labels=labels, fused_lm_head=True)
    assert seen == [3 * 19, 3 * 6]  # shifted by one: 19 positions a row, then the 6 labelled
    scored = labels[:, 1:] != -100
    for name in ("log_probs", "entropy"):
        a, b = getattr(every, name), getattr(compact, name)
        assert torch.allclose(a[scored], b[scored], atol=1e-5), name
        assert torch.all(b[~scored] == 0)
    assert torch.all(every.log_probs[scored] < 0)
