"""Trajectories as a Hugging Face `datasets` dataset, for SFT, reward modelling or sharing.

    .venv/bin/python -m memex.evaluation.export runs/baselines --out runs/dataset
    .venv/bin/python -m memex.evaluation.export traces/*.jsonl --out runs/dataset \\
        --push-to-hub YOU/memex-trajectories            # needs HF_TOKEN and the network

Input: `memex-trace/1` files (`envkit.traces`) — a harness run's folder (its `traces/`), the
inference agent's `--trace-dir`, the demo's — named as files or folders (searched recursively;
JSONL files that are not traces, such as `episodes.jsonl`, are passed over). Every environment
of the registry exports the same way: the trace header names it.

Output in `--out`: `steps.parquet` (one row per step) and `episodes.parquet` (one row per
episode), each loadable with `datasets.load_dataset("parquet", data_files=...)`;
`--push-to-hub REPO` uploads them as the configurations `steps` and `episodes` of one dataset.

A step row is one decision: `prompt`, the chat messages the agent was shown — rebuilt from the
observation it answered by the environment's one prompt renderer (`EnvAdapter.messages`, which
the inference agent, the trainer and the harness share), with the LLM agent's own rendering
settings where its trace recorded them (`reply.render`), else the default text-mode prompt;
`reply`, the model's raw reply (LLM policies; truncated as the trace keeps it) or, for a scripted
policy, its action as the canonical JSON call; `reply_source` ("model" / "scripted") and the
reply's `verdict`; the `action` taken (JSON), the step's `reward`, `done`, the typed `error`
code if any and the policy's `insight` (JSON) if it exposed one. Each row also names its
episode (`episode`, the trace file's stem), `env`, `policy`, `task`, `difficulty`, `seed` and
the episode's `outcome` and `episode_return`; `(policy, episode)` names one episode.

An episode row: the same names, `steps`, the first `prompt`, every `reply` and `reward` in
order, `episode_return`, `outcome`, `score` (`EnvAdapter.score`), `success`, `metrics` and the
final observation's `terminal` metadata (JSON), and `truth` (JSON) when the trace's writer
generated the case and recorded its ground truth in the footer.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from datasets import Dataset

from memex.envkit.adapter import EnvAdapter
from memex.envkit.episodes import Episode, EpisodeSpec
from memex.envkit.traces import TRACE_FORMAT, Trace, read_trace
from memex.registry import get_adapter

STEPS_FILE = "steps.parquet"
EPISODES_FILE = "episodes.parquet"
CONFIGS = {"steps": STEPS_FILE, "episodes": EPISODES_FILE}
DEFAULT_RENDER = {"tool_list": True, "compact": False, "max_chars": None, "note": None}


def trace_files(paths: Iterable[str | Path]) -> list[Path]:
    """The `memex-trace/1` files among `paths` (files, or folders searched recursively), sorted
    within each folder; other JSONL files are passed over."""
    found: list[Path] = []
    for path in map(Path, paths):
        candidates = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
        found += [p for p in candidates if _is_trace(p)]
    return found


def _is_trace(path: Path) -> bool:
    try:
        with path.open() as f:
            head = json.loads(f.readline() or "{}")
    except (OSError, ValueError):
        return False
    return isinstance(head, dict) and head.get("type") == "header" and \
        head.get("format") == TRACE_FORMAT


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"),
                                                 default=str)


def _spec(header: dict[str, Any]) -> EpisodeSpec:
    reset = dict(header.get("reset") or {})
    task = reset.get("task") or reset.get("kind") or header.get("case") or ""
    return EpisodeSpec(str(task), str(header.get("difficulty") or ""), header.get("seed"), reset)


def replay(adapter: EnvAdapter, trace: Trace) -> Episode:
    """The trace as the `Episode` record the adapter measures (observations and actions typed
    again; no state, the case only as far as the footer's truth goes)."""
    observation_cls = adapter.client_cls.observation_cls
    episode = Episode(_spec(trace.header), str(trace.header.get("policy", "")))
    for line in trace.steps:
        episode.observations.append(observation_cls.model_validate(line["observation"]))
        if line.get("action") is not None:
            episode.actions.append(adapter.trace_action(line["action"]))
            episode.replies.append(line.get("reply"))
            episode.insights.append(line.get("insight"))
    return episode


def _prompt(adapter: EnvAdapter, obs: Any, key: str, reply: dict[str, Any] | None
            ) -> list[dict[str, str]]:
    render = {**DEFAULT_RENDER, "key": key, **((reply or {}).get("render") or {})}
    return adapter.messages(obs, **render)


def rows(path: Path) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """The step rows and the episode row of one trace file (no rows for an episode that never
    started: its reset failed, the trace holds no observation)."""
    trace = read_trace(path)
    if not trace.steps:
        return [], None
    adapter = get_adapter(str(trace.header.get("env", "memex")))
    episode = replay(adapter, trace)
    footer = trace.footer or {}
    outcome = footer.get("outcome") or adapter.episode_outcome(episode)
    episode_return = float(footer.get("episode_return", episode.episode_return))
    spec = episode.spec
    names = {"episode": path.stem, "env": adapter.name, "policy": episode.policy,
             "task": spec.task, "difficulty": spec.difficulty, "seed": spec.seed}
    steps, replies = [], []
    for t, (action, reply, insight) in enumerate(zip(episode.actions, episode.replies,
                                                     episode.insights, strict=True)):
        obs, after = episode.observations[t], episode.observations[t + 1]
        text = reply["raw"] if reply else adapter.action_text(action)
        replies.append(text)
        error = getattr(after, "error", None)
        steps.append({**names, "step": t + 1, "prompt": _prompt(adapter, obs, path.stem, reply),
                      "reply": text, "reply_source": "model" if reply else "scripted",
                      "verdict": reply.get("verdict") if reply else None,
                      "action": _json(trace.steps[t + 1]["action"]),
                      "reward": float(after.reward or 0.0), "done": bool(after.done),
                      "error": getattr(error, "code", None), "insight": _json(insight),
                      "outcome": outcome, "episode_return": episode_return})
    first = episode.observations[0]
    first_reply = episode.replies[0] if episode.replies else None
    metrics = adapter.metrics(episode)
    episode_row = {**names, "steps": episode.steps,
                   "prompt": _prompt(adapter, first, path.stem, first_reply),
                   "replies": replies, "rewards": episode.rewards,
                   "episode_return": episode_return, "outcome": outcome,
                   "score": adapter.score(episode), "success": adapter.success(episode)
                   if episode.done else False, "metrics": _json(metrics),
                   "terminal": _json(footer.get("terminal")), "truth": _json(footer.get("truth"))}
    return steps, episode_row


def export(paths: Iterable[str | Path], out: str | Path) -> dict[str, Path]:
    """Write `steps.parquet` and `episodes.parquet` for the traces among `paths` into `out`;
    returns {configuration: file}. Raises `ValueError` when no trace is found."""
    files = trace_files(paths)
    if not files:
        raise ValueError("no memex-trace/1 files found")
    steps: list[dict[str, Any]] = []
    episodes: list[dict[str, Any]] = []
    for path in files:
        s, e = rows(path)
        steps += s
        episodes += [e] if e is not None else []
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name, table in (("steps", steps), ("episodes", episodes)):
        written[name] = out / CONFIGS[name]
        Dataset.from_list(table).to_parquet(str(written[name]))
    return written


def push_to_hub(written: dict[str, Path], repo_id: str, *, private: bool = False,
                token: str | None = None) -> None:
    """Upload the exported files as the configurations of one dataset repository (the Hub
    client of `datasets`: HF_TOKEN, the network and `HF_HUB_OFFLINE` unset are needed)."""
    for name, path in written.items():
        Dataset.from_parquet(str(path)).push_to_hub(repo_id, config_name=name,
                                                    private=private, token=token)


def _counts(written: dict[str, Path]) -> Iterator[str]:
    for name, path in written.items():
        yield f"{name}: {len(Dataset.from_parquet(str(path)))} rows in {path}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Export memex-trace/1 traces as a Hugging Face "
                                            "dataset (parquet: steps and episodes).")
    p.add_argument("paths", nargs="+", help="trace files, or folders holding them (a harness "
                                            "run's --out)")
    p.add_argument("--out", required=True, help="folder for steps.parquet and episodes.parquet")
    p.add_argument("--push-to-hub", default=None, metavar="REPO",
                   help="also upload to this dataset repository (configurations steps and "
                        "episodes)")
    p.add_argument("--private", action="store_true", help="create the repository private")
    args = p.parse_args(argv)
    try:
        written = export(args.paths, args.out)
    except ValueError as exc:
        print(f"error: {exc} in {' '.join(args.paths)}", file=sys.stderr)
        return 2
    for line in _counts(written):
        print(line)
    if args.push_to_hub:
        push_to_hub(written, args.push_to_hub, private=args.private)
        print(f"pushed to https://huggingface.co/datasets/{args.push_to_hub}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
