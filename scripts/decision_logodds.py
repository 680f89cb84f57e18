"""The learning run's finer instrument: how far each model leans toward the right decision.

Greedy decision accuracy moves only when a decision flips; the log-odds of the decision's first
token moves with every update. For each held-out takeover state of the learning run's slice
(the test episodes `scripts/learn.py` evaluates), the model reads the prompt exactly as in
training and evaluation (`learn.engine_for`: the same renderer, cut and call prefix) and we take
its next-token log-probabilities for the first token of each decision tool's name (`file_sar`,
`close_alert`; the grammar requires names as whole tokens, and the two begin with different
tokens). The margin is log p(right tool) - log p(wrong tool), where right is `file_sar` on a
suspicious case and `close_alert` on a benign one; we report its mean per alert kind and the
share of states with a positive margin (the greedy choice between the two decisions, before the
grammar masks the other tools out).

    .venv/bin/python scripts/decision_logodds.py runs/learn/grpo/warmstart runs/learn/grpo/final \\
        --episodes 40
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

from memex.inference import load_local_model
from memex.registry import get_adapter

_SPEC = importlib.util.spec_from_file_location("learn", Path(__file__).with_name("learn.py"))
learn = importlib.util.module_from_spec(_SPEC)
sys.modules["learn"] = learn
_SPEC.loader.exec_module(learn)

DECISIONS = ("file_sar", "close_alert")


def margins(path: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """One row per held-out takeover state: the episode key, whether the case is suspicious,
    and the margin log p(right first token) - log p(wrong first token)."""
    import torch

    adapter = get_adapter("memex")
    model, tokenizer = load_local_model(path)
    model.eval()
    engine = learn.engine_for(tokenizer, args)
    first = learn.train_grpo.decision_first_tokens(engine.decoder, adapter.tool_specs)
    rows = []
    tasks = args.tasks.split(",")
    per_task = -(-args.episodes // len(tasks))
    specs = [s for e in range(per_task) for s in adapter.grid(
        "test", tasks, [args.difficulty], 1, seed_offset=e)][:args.episodes]
    for spec in specs:
        case = adapter.case_for(spec)
        rollout = learn.train_grpo.Rollout(engine, spec, case)
        _, ids = engine.render(rollout.obs, spec.key)
        rollout.finish()
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0, -1]
        logp = torch.log_softmax(logits.float(), -1)
        suspicious = bool(case.truth.suspicious)  # the grader's truth, never in the prompt
        right, wrong = DECISIONS if suspicious else DECISIONS[::-1]
        rows.append({"key": spec.key, "suspicious": suspicious,
                     "margin": float(logp[first[right]] - logp[first[wrong]])})
    engine.pool.shutdown()
    return rows


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    kinds: dict[str, list[float]] = {}
    for r in rows:
        kinds.setdefault(r["key"].split("-")[0], []).append(r["margin"])
    return {kind: {"n": len(m), "mean_margin": round(sum(m) / len(m), 3),
                   "right_share": round(sum(x > 0 for x in m) / len(m), 3)}
            for kind, m in kinds.items()} | {
        "all": {"n": len(rows), "mean_margin": round(sum(r["margin"] for r in rows)
                                                     / max(1, len(rows)), 3),
                "right_share": round(sum(r["margin"] > 0 for r in rows) / max(1, len(rows)), 3)}}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("models", nargs="+", help="LoRA directories or a base model name")
    p.add_argument("--size", choices=tuple(learn.SIZES), default="full",
                   help="the learning run's slice and prompt settings")
    p.add_argument("--episodes", type=int, default=40)
    p.add_argument("--out", default=None, help="write the rows and summaries as JSON here")
    a = p.parse_args(argv)
    args = learn.parse_args(["--size", a.size])
    args.episodes = a.episodes
    result = {}
    for path in a.models:
        rows = margins(path, args)
        result[path] = {"summary": summary(rows), "rows": rows}
        print(path, json.dumps(result[path]["summary"]))
    if a.out:
        Path(a.out).write_text(json.dumps(result, indent=2))
    return result


if __name__ == "__main__":
    main()
