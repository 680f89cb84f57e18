"""`train_grpo --takeover-last N`: the heuristic plays each episode up to its last N actions and
the model takes over there — in the trainer's rollouts, its GRPO groups (forks replay the
prefix), the warm start's pairs and the learning run's reference.

The model is a test double: a byte-level tokenizer and a scripted generator that answers each
prompt with a reply chosen by the episode key the prompt carries. Everything else is real: the
in-process environment, the renderer, the reply parser and the rewards."""

from __future__ import annotations

import json
import re

import pytest

from memex import train_grpo
from memex.envkit.grammar import CALL_PREFIX
from memex.registry import get_adapter

pytestmark = pytest.mark.unit

ADAPTER = get_adapter("memex")
TASKS = ["trade_based", "fair_trade"]


class ByteTokenizer:
    """Test double of a Hugging Face tokenizer: one token per UTF-8 byte."""

    eos_token_id = 0

    def encode(self, text, add_special_tokens=False):
        return list(text.encode())

    def apply_chat_template(self, messages, add_generation_prompt, tokenize, return_dict):
        return list("".join(f"<{m['role']}>{m['content']}" for m in messages).encode())

    def decode(self, ids):
        return bytes(ids).decode("utf-8", "replace")

    def batch_decode(self, rows, skip_special_tokens):
        return [self.decode(r) for r in rows]


class ScriptedGenerator:
    """Test double of the trainer's `_generate_single_turn`: `reply(episode_key)` per prompt."""

    def __init__(self, reply):
        self.reply = reply
        self.prompts: list[str] = []

    def _generate_single_turn(self, prompt_ids, images, fields, num_generations):
        out = []
        for ids in prompt_ids:
            text = bytes(ids).decode("utf-8", "replace")
            self.prompts.append(text)
            key = re.search(r'<observation episode="([^"]+)">', text).group(1)
            out.append(list(self.reply(key).encode()))
        return out, None


class Mute:
    """Test double of the trainer's generator that answers every prompt with no call (a prompt
    cut at the front no longer shows its episode key)."""

    def _generate_single_turn(self, prompt_ids, images, fields, num_generations):
        return [list(b"no call") for _ in prompt_ids], None


def _engine(**kw) -> train_grpo.RolloutEngine:
    # Prompts are never cut here: the byte tokenizer makes one token per byte.
    return train_grpo.RolloutEngine(ADAPTER, ByteTokenizer(), env_url=None, max_turns=1,
                                    compact=True, max_prompt_chars=600,
                                    max_prompt_tokens=1_000_000, seed=0, workers=2, **kw)


def _specs(n: int = 2):
    return [s for e in range(n) for s in ADAPTER.grid("test", TASKS, ["easy"], 1, seed_offset=e)]


def test_model_takes_over_at_the_heuristics_terminal_decision():
    specs = _specs()
    full = {s.key: train_grpo.demonstrator_episode(ADAPTER, s) for s in specs}
    engine = _engine(takeover_last=1)
    generator = ScriptedGenerator(lambda key: ADAPTER.action_text(full[key].actions[-1]))
    rollouts = [train_grpo.Rollout(engine, s, ADAPTER.case_for(s)) for s in specs]
    engine.advance(rollouts, generator)
    assert len(generator.prompts) == len(specs)  # one model turn each: the decision
    for r in rollouts:
        r.finish()
        ref = full[r.episode.spec.key]
        assert r.prefix_len == len(ref.actions) - 1 and len(r.turns) == 1
        assert r.episode.actions[:-1] == ref.actions[:-1]
        # the model saw the heuristic's last observation, rendered as in training
        assert r.turns[0].prompt_text == engine.render(ref.observations[-2], ref.spec.key)[0]
        assert r.turns[0].parsed.status == "ok"
        assert r.turns[0].parsed.action.tool in ("file_sar", "close_alert")
        # the heuristic's decision, taken by the "model", scores what the heuristic scored
        assert ADAPTER.outcome(r.episode) == ADAPTER.outcome(ref) in ("TP", "TN")
        assert r.rewards(0)["outcome"] == pytest.approx(ref.episode_return)
    engine.pool.shutdown()


def test_a_broken_decision_is_scored_as_a_timeout_after_the_prefix():
    spec = _specs(1)[0]
    engine = _engine(takeover_last=1)
    rollout = train_grpo.Rollout(engine, spec, ADAPTER.case_for(spec))
    engine.advance([rollout], ScriptedGenerator(lambda key: "I am not sure."))
    rollout.finish()
    assert rollout.truncated and rollout.turns[0].parsed.status != "ok"
    prefix_return = sum(o.reward or 0.0 for o in rollout.episode.observations[1:])
    expected = prefix_return + ADAPTER.timeout_return(rollout.episode.case)
    assert rollout.rewards(0)["outcome"] == pytest.approx(expected, abs=1e-6)
    assert rollout.rewards(0)["format"] == 0.0
    engine.pool.shutdown()


def test_grpo_groups_share_the_takeover_prompt_and_forks_replay_the_prefix():
    specs = _specs(1)
    full = {s.key: train_grpo.demonstrator_episode(ADAPTER, s) for s in specs}
    engine = _engine(takeover_last=1)
    # alternate a right and a wrong decision within each group: non-zero reward variance
    calls = iter(range(10_000))

    def reply(key):
        right = full[key].actions[-1]
        if next(calls) % 2 == 0:
            return ADAPTER.action_text(right)
        wrong = "close_alert" if right.tool == "file_sar" else "file_sar"
        args = ({"reason": "Explained.", "cited_sections": []} if wrong == "close_alert" else
                {"subjects": [], "typology": "trade_based", "findings": [],
                 "cited_sections": [], "narrative": "Suspicious."})
        return json.dumps({"tool": wrong, "arguments": args})

    G = 3
    prompts = [json.dumps(s.to_json(), sort_keys=True) for s in specs for _ in range(G)]
    out = engine(prompts, ScriptedGenerator(reply))
    assert len(set(map(tuple, out["prompt_ids"]))) == len(specs)  # one state per group
    for g in range(len(specs)):  # right and wrong decisions, each scored by the environment
        group = out["rollout"][g * G:(g + 1) * G]
        assert len({row["outcome"] for row in group}) == 2
    assert all(row["branch_step"] == 0.0 and row["turns"] == 1.0 for row in out["rollout"])
    assert max(r["correct"] for r in out["rollout"]) == 1.0
    assert min(r["correct"] for r in out["rollout"]) == 0.0
    engine.pool.shutdown()


def _call(target_ids: list[int]) -> dict:
    assert target_ids[-1] == ByteTokenizer.eos_token_id  # the target ends the reply
    return json.loads(bytes(target_ids[:-1]).decode())


def test_warm_start_pairs_are_the_decisions_after_the_takeover_point():
    pairs = train_grpo.demonstrations(_engine(takeover_last=1), 6, 0, TASKS, ["easy"],
                                      max_step=1)
    assert len(pairs) == 6
    assert {_call(target)["tool"] for _, target in pairs} == {"file_sar", "close_alert"}
    plain = train_grpo.demonstrations(_engine(), 6, 0, TASKS, ["easy"], max_step=1)
    assert {_call(target)["tool"] for _, target in plain} == {"request_wire_trace"}


def test_warm_start_prompt_is_the_rollout_prompt_of_the_same_state():
    # the warm start's episodes for seed 0: train-split seeds from offset 500,000
    specs = [ADAPTER.grid("train", ["fair_trade"], ["easy"], 1, seed_offset=500_000 + e)[0]
             for e in range(4)]
    engine = _engine(takeover_last=1)
    engine.max_prompt_tokens = 900  # a cut that bites: the same in both
    # one pair, drawn from the decisions of the first 4 episodes
    (prompt, target), = train_grpo.demonstrations(engine, 1, 0, ["fair_trade"], ["easy"],
                                                  max_step=1)
    rollouts = [train_grpo.Rollout(engine, s, ADAPTER.case_for(s)) for s in specs]
    engine.advance(rollouts, Mute())
    prompts = []
    for r in rollouts:
        r.finish()
        prompts.append(r.turns[0].prompt_ids)
    assert all(len(p) == 900 for p in prompts)
    assert prompt in prompts
    spec = specs[prompts.index(prompt)]
    decision = train_grpo.demonstrator_episode(ADAPTER, spec).actions[-1]
    assert _call(target) == json.loads(ADAPTER.action_text(decision))
    engine.pool.shutdown()


def test_constrained_warm_start_target_is_the_rest_of_the_call_after_the_prefix():
    engine = _engine(takeover_last=1)
    engine.prefix_ids = list(CALL_PREFIX.encode())  # what constrained=True sets up
    specs = [ADAPTER.grid("train", ["fair_trade"], ["easy"], 1, seed_offset=500_000 + e)[0]
             for e in range(4)]  # the episodes the one pair is drawn from
    refs = [train_grpo.demonstrator_episode(ADAPTER, s) for s in specs]
    (prompt, target), = train_grpo.demonstrations(engine, 1, 0, ["fair_trade"], ["easy"],
                                                  max_step=1)
    rendered = [engine.render(r.observations[-2], s.key)[1]
                for r, s in zip(refs, specs, strict=True)]
    assert prompt in rendered and bytes(prompt).decode().endswith(CALL_PREFIX)
    ref = refs[rendered.index(prompt)]
    assert not bytes(target).decode().startswith(CALL_PREFIX)
    # The demonstrator's call as a model could write it in that state (its visible IDs, the
    # generation limits): here the closure with its reason cut to 160 characters.
    decision = ref.actions[-1]
    writable = ADAPTER.state_grammar(ref.observations[-2]).writable(decision.arguments,
                                                                     engine.limits)
    assert json.loads(CALL_PREFIX + bytes(target[:-1]).decode()) == {
        "tool": decision.tool, "arguments": writable}
    assert writable["reason"] == decision.arguments["reason"][:160].rstrip()
    assert writable["cited_sections"] == decision.arguments["cited_sections"]
    engine.pool.shutdown()


def test_a_wrong_decision_earns_no_format_quality_or_os_credit():
    spec = ADAPTER.grid("test", ["fair_trade"], ["easy"], 1)[0]  # benign: closing is right
    engine = _engine(takeover_last=1)
    sar = json.dumps({"tool": "file_sar", "arguments": {
        "subjects": [], "typology": "trade_based", "findings": [], "cited_sections": [],
        "narrative": "Suspicious."}})
    close = json.dumps({"tool": "close_alert", "arguments": {
        "reason": "Explained.", "cited_sections": []}})
    rewards = {}
    for name, reply in (("wrong", sar), ("right", close)):
        rollout = train_grpo.Rollout(engine, spec, ADAPTER.case_for(spec))
        engine.advance([rollout], ScriptedGenerator(lambda key, reply=reply: reply))
        rollout.finish()
        assert rollout.turns[0].parsed.status == "ok"
        rewards[name] = (ADAPTER.outcome(rollout.episode), rollout.rewards(0))
    (wrong_outcome, wrong), (right_outcome, right) = rewards["wrong"], rewards["right"]
    assert wrong_outcome == "FP" and right_outcome == "TN"
    assert wrong["format"] == wrong["quality"] == wrong["os"] == 0.0
    assert right["format"] == 1.0 and right["quality"] > 0.0
    assert wrong["outcome"] < right["outcome"]
    engine.pool.shutdown()


def test_without_takeover_the_model_plays_from_the_reset():
    spec = _specs(1)[0]
    engine = _engine()
    rollout = train_grpo.Rollout(engine, spec, ADAPTER.case_for(spec))
    assert rollout.prefix_len == 0 and rollout.episode.actions == []
    rollout.finish()
    engine.pool.shutdown()


def test_forks_replay_the_prefix_and_the_model_turns_before_the_branch_point():
    specs = _specs(2)
    full = {s.key: train_grpo.demonstrator_episode(ADAPTER, s) for s in specs}
    engine = _engine(takeover_last=1)
    engine.max_turns = 2
    seen: dict[str, int] = {}

    def reply(key):  # first a manual search, then the heuristic's decision
        seen[key] = seen.get(key, 0) + 1
        if seen[key] % 2 == 1:
            return json.dumps({"tool": "search_compliance_manual",
                               "arguments": {"query": f"trade {seen[key]}"}})
        return ADAPTER.action_text(full[key].actions[-1])

    G = 2
    prompts = [json.dumps(s.to_json(), sort_keys=True) for s in specs for _ in range(G)]
    out = engine(prompts, ScriptedGenerator(reply))  # raises if a replay diverged
    assert {row["turns"] for row in out["rollout"]} <= {1.0, 2.0}
    for g in range(len(specs)):
        rows = out["rollout"][g * G:(g + 1) * G]
        assert len({r["branch_step"] for r in rows}) == 1
        assert len({tuple(out["prompt_ids"][g * G + i]) for i in range(G)}) == 1
    engine.pool.shutdown()
