"""The 1MDB demo: one investigation of the fixed 1MDB-shaped case, as a trace and a readable
summary.

The agent is the heuristic investigator by default, or any evaluation policy (`oracle`,
`llm:MODEL` on an OpenAI-compatible endpoint, `ckpt:PATH`). The run writes
`<out>/1mdb-<policy>.jsonl` (a `memex-trace/1` trace the Glass Box replays, with the ground truth
in its footer) and `<out>/1mdb-<policy>.md`: the alert, every step with what it revealed and the
OS events it caused, the decision and its score, and — after the episode — the ground truth
beside what the agent found and missed.

    .venv/bin/python -m memex.evaluation.demo             # heuristic, in process
    .venv/bin/python -m memex.evaluation.demo --policy llm:gpt-4.1-mini \\
        --api-base-url https://api.openai.com/v1 --env-url http://localhost:7860

LLM policies take the shared LLM options (`envkit.llm_options`: `--api-base-url`, `--timeout`,
`--max-tokens`, `--max-steps`, `--tool-mode`, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from memex.envkit.adapter import EnvAdapter
from memex.envkit.episodes import EnvSessionError, Episode
from memex.envkit.llm_options import EndpointError, add_llm_arguments, options_from_args
from memex.evaluation.harness import policy_maker
from memex.inference import ERROR_SOURCES, play_recorded
from memex.registry import get_adapter
from memex.scenarios import CaseSpec
from memex.scenarios.manual import SECTIONS
from memex.scenarios.onemdb import CASE_NAME


def _names(episode: Episode) -> dict[str, str]:
    """Entity ID -> name, from everything the agent was shown."""
    names: dict[str, str] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for id_key, name_key in (("entity_id", "name"), ("from_party_id", "from_party"),
                                     ("to_party_id", "to_party"), ("party_id", "party_name"),
                                     ("counterparty_id", "counterparty")):
                if isinstance(node.get(id_key), str) and isinstance(node.get(name_key), str):
                    names.setdefault(node[id_key], node[name_key])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for obs in episode.observations:
        walk(obs.result)
    return names


def _short(arguments: dict[str, Any], limit: int = 90) -> str:
    text = json.dumps(arguments, separators=(", ", ": "))
    return text if len(text) <= limit else text[:limit - 3] + "..."


def summary_markdown(adapter: EnvAdapter, episode: Episode) -> str:
    """A readable account of one Memex investigation (post-episode, truth included)."""
    alert = episode.observations[0].result
    names = _names(episode)
    label = lambda i: f"{names[i]} ({i})" if i in names else i  # noqa: E731
    terminal = (episode.final.metadata or {}).get("terminal") or {}
    m = adapter.metrics(episode)
    lines = [f"# 1MDB-shaped case — investigated by `{episode.policy}`", "",
             f"**Alert {alert['alert_id']}** ({alert['rule']['code']}, "
             f"{alert['rule']['name']}): {alert['rule']['description']}", "",
             f"Subject: {alert['subject']['name']} ({alert['subject']['entity_id']}, "
             f"{alert['subject']['country']}). Window {alert['window']['start']} to "
             f"{alert['window']['end']}. Figures: "
             + ", ".join(f"{k} {v:,.0f}" for k, v in alert["figures"].items()) + ".", "",
             "## The investigation", "",
             "| step | action | revealed | OS events | reward |", "|---|---|---|---|---|"]
    for i, (action, obs) in enumerate(zip(episode.actions, episode.observations[1:],
                                          strict=True), start=1):
        name, arguments = adapter.action_call(action)
        if obs.error is not None:
            revealed = f"error `{obs.error.code}`: {obs.error.message}"
        elif obs.done:
            revealed = f"**{terminal.get('outcome', '?')}**, terminal score " \
                       f"{terminal.get('score', 0):.3f}"
        else:
            page = obs.context.ram[-1] if obs.context.ram else None
            revealed = f"{len(page.ids)} IDs" if page is not None and page.step == obs.step \
                else "—"
        events = "; ".join(e for e in obs.events if not e.startswith("page ") or "fault" in e)
        lines.append(f"| {i} | `{name}` {_short(arguments)} | {revealed} | {events or '—'} | "
                     f"{float(obs.reward or 0):+.3f} |")

    last = episode.actions[-1] if episode.actions else None
    lines += ["", "## The decision", ""]
    if last is not None and last.tool == "file_sar":
        a = last.arguments
        lines += [f"Filed a SAR, typology **{a.get('typology')}**.", "",
                  "Subjects: " + (", ".join(label(s) for s in a.get("subjects", [])) or "none"),
                  "", "Findings:"]
        lines += [f"- `{f['code']}`: " + ", ".join(f["evidence_ids"])
                  for f in a.get("findings", [])] or ["- none"]
        cited = a.get("cited_sections", [])
    elif last is not None and last.tool == "close_alert":
        lines.append(f"Closed the alert: {last.arguments.get('reason', '')}")
        cited = last.arguments.get("cited_sections", [])
    else:
        lines.append("No decision (the step budget ran out).")
        cited = []
    lines += ["", "Cited sections: " + (", ".join(f"§{s} {SECTIONS[s].title}" if s in SECTIONS
                                                  else s for s in cited) or "none"), ""]
    lines += ["## Score", "",
              f"Outcome **{adapter.outcome(episode)}**, terminal score "
              f"{terminal.get('score', 0):.3f}, episode return {episode.episode_return:.3f} "
              f"over {episode.steps} steps.", ""]
    if terminal.get("components"):
        lines += ["| component | points |", "|---|---|"]
        lines += [f"| {k} | {v:.3f} |" for k, v in terminal["components"].items()]
        lines.append("")
    lines += [f"OS: {m['page_faults']:.0f} page faults, {m['async_timeouts']:.0f} early polls, "
              f"{m['kernel_loads']:.0f} manual sections loaded, "
              f"{len(episode.final.context.disk)} case-file notes.", ""]

    truth = episode.case.truth if episode.case is not None else None
    if truth is not None:
        seen = {i for o in episode.observations for p in o.context.ram for i in p.ids}
        disk = {i for n in episode.final.context.disk for i in n.ids}
        lines += ["## Ground truth (revealed after the episode)", "",
                  f"Suspicious: **{truth.suspicious}**, typology {truth.typology}, correct "
                  f"decision `{truth.decision}`. Ultimate beneficial owner: "
                  f"{label(truth.ubo_id) if truth.ubo_id else '—'}.", "",
                  "Subjects: " + ", ".join(
                      f"{label(s)}{'' if s in seen else ' (never seen)'}"
                      for s in truth.subject_ids), "",
                  "| red flag | evidence | seen by the agent | kept on disk |",
                  "|---|---|---|---|"]
        for flag in truth.red_flags:
            ev = flag.evidence_ids
            lines.append(f"| `{flag.code}` | {', '.join(ev[:4])}{' ...' if len(ev) > 4 else ''}"
                         f" | {sum(e in seen for e in ev)}/{len(ev)} | "
                         f"{sum(e in disk for e in ev)}/{len(ev)} |")
        lines += ["", "Justifying sections: " + ", ".join(
            f"§{s} {SECTIONS[s].title}" for s in truth.justifying_sections), ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Investigate the 1MDB-shaped case; write a trace "
                                            "and a readable summary.")
    p.add_argument("--policy", default="heuristic",
                   help="baseline name, llm:MODEL or ckpt:PATH (default heuristic)")
    p.add_argument("--env-url", default=os.environ.get("ENV_URL"))
    p.add_argument("--out", default="runs/demo")
    p.add_argument("--quiet", action="store_true", help="do not print the summary")
    add_llm_arguments(p, model=False)
    args = p.parse_args(argv)

    adapter = get_adapter("memex")
    spec = CaseSpec(case=CASE_NAME, difficulty="hard").episode()  # the 1MDB case is a hard one
    try:
        maker = policy_maker(adapter, args.policy, llm=options_from_args(args))
    except EndpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        session = adapter.open(args.env_url)
    except EnvSessionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        episode = play_recorded(adapter, session, maker.build(spec), spec,
                                max_steps=maker.max_steps)
    finally:
        session.close()
    if episode.error:
        print(f"# {ERROR_SOURCES[episode.error_source or 'policy']} error: {episode.error} "
              "(episode ended)", file=sys.stderr)
    if not episode.observations:  # the reset failed: nothing to trace or summarise
        return 1
    episode.policy = args.policy
    out = Path(args.out)
    stem = "1mdb-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in args.policy)
    trace_path = adapter.trace(episode).write(out / f"{stem}.jsonl")
    text = summary_markdown(adapter, episode)
    summary_path = out / f"{stem}.md"
    summary_path.write_text(text)
    if not args.quiet:
        print(text)
    print(f"trace: {trace_path}\nsummary: {summary_path}", file=sys.stderr)
    return 1 if episode.error else 0


if __name__ == "__main__":
    raise SystemExit(main())
