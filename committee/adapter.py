"""The investment committee behind the project's environment-adapter protocol
(`memex.envkit.adapter`), registered as `committee` in `memex.registry`:
`--env committee` in the trainer, the evaluation harness, the inference agent and the demo.

Mapping onto the protocol:
- tasks are the four committee tasks; there is one difficulty, `standard` (the tasks
  themselves are the ladder); seeds split as in `tasks.SPLITS`.
- the hidden "case" is the episode's `World` (regimes, returns), regenerated client-side from
  `(task, seed)`; `truth_json` exposes the regime path and the mandate revision.
- `outcome`: `unfinished`, `beat_cash` (the fund ended above sitting in cash, fines deducted:
  the objective's edge is positive) or `below_cash`; `success` (what pass^k counts): beat cash
  and never had the mandate enforced.
- `metrics`: the score, the objective's parts and the episode's book, risk and process
  measures.
- `reward_components`: `committee/training.py` (from the state's counts).
- `timeout_return`: 0.0. A committee episode has no terminal reward; a trainer that cuts it
  short keeps the per-period rewards earned so far (the objective's value so far).
"""

from __future__ import annotations

import json
from typing import Any

from memex.committee.client import CommitteeEnv
from memex.committee.environment import TASK_VARIABLE, WIRE_PARAMS, CommitteeEnvironment
from memex.committee.models import CommitteeAction, CommitteeObservation
from memex.committee.policies import BASELINES, POLICIES
from memex.committee.prompting import render_observation, system_prompt
from memex.committee.scoring import outcome
from memex.committee.tools import ACTIONS
from memex.committee.training import reward_components
from memex.committee.world.market import World
from memex.committee.world.tasks import SPLITS, TASK_NAMES, generate
from memex.envkit.adapter import EnvAdapter
from memex.envkit.episodes import Episode, EpisodeSpec

DIFFICULTY = "standard"


def _trim_history(data: dict[str, Any]) -> None:
    data["notes"] = data["notes"][-3:]
    data["reward_totals"] = {}
    data["reward_breakdown"] = {k: v for k, v in data["reward_breakdown"].items() if v}


def _trim_report(data: dict[str, Any]) -> None:
    result = data.get("result")
    if isinstance(result, dict) and "limits" in result:
        data["result"] = {k: result[k] for k in ("target", "vol_annual_pct",
                                                 "vol_cap_annual_pct", "recommendation")}
    elif isinstance(result, dict) and "weights" in result:
        data["result"] = {k: v for k, v in result.items() if k != "weights"}
    elif isinstance(result, dict) and "views" in result:
        data["result"] = {"target": result["target"],
                          "views": {v["name"]: v["conviction"] for v in result["views"]}}


def _trim_market(data: dict[str, Any]) -> None:
    data["market"] = {"returns_pct": data["market"]["returns_pct"]}
    data["notes"] = data["notes"][-1:]
    mandate = data.get("mandate") or {}
    if mandate.get("pending"):
        mandate["pending"] = {k: mandate["pending"][k] for k in ("effective_period", "mandate")}


def _trim_to_essentials(data: dict[str, Any]) -> None:
    data["notes"] = []
    data["market"] = {}
    data["research"] = [{"name": v["name"], "conviction": v["conviction"]}
                        for v in data["research"]]
    data["risk"]["flags"] = [{"limit": f["limit"], "level": f["level"]}
                             for f in data["risk"]["flags"]]


_TRIMS = (_trim_history, _trim_report, _trim_market, _trim_to_essentials)


class CommitteeAdapter(EnvAdapter):
    """Adapter of the investment-committee environment."""

    name = "committee"
    tasks = TASK_NAMES
    difficulties = (DIFFICULTY,)
    splits = SPLITS
    env_cls = CommitteeEnvironment
    client_cls = CommitteeEnv
    server_module = "memex.committee.server"
    tool_specs = ACTIONS
    policies = POLICIES
    eval_policies = BASELINES
    demonstrator = "heuristic"
    task_variable = TASK_VARIABLE
    summary_metrics = (
        ("score", "score"), ("beat_cash", "beat cash"), ("edge_pts", "edge over cash (pts)"),
        ("episode_return", "utility (pts)"),
        ("total_return_pct", "fund return %"), ("max_drawdown_pct", "max drawdown %"),
        ("turnover", "turnover"), ("breaches", "breaches"), ("enforcements", "enforcements"),
        ("queries_used", "queries"), ("invalid_actions", "invalid actions"))

    def reset_options(self, task: str, difficulty: str, seed: int | None) -> dict[str, Any]:
        return {"task": task, "seed": seed}

    # -- prompting --
    def system_prompt(self, obs: Any, *, tool_list: bool, compact: bool = False) -> str:
        return system_prompt(getattr(obs, "task", None), action_list=tool_list,
                             compact=compact)

    def observation_payload(self, obs: Any) -> dict[str, Any]:
        """The observation without what the system prompt already states (the universe) and
        without the bulky correlation matrix of a risk report (its asset volatilities stay)."""
        data = obs.model_dump(mode="json", exclude={"metadata", "universe"})
        if isinstance(data.get("result"), dict) and "correlation" in data["result"]:
            data["result"]["correlation"] = "(omitted)"
        return data

    def user_prompt(self, obs: Any, key: str, *, max_chars: int | None = None) -> str:
        data = self.observation_payload(obs)
        payload = json.dumps(data, separators=(",", ":"), default=str)
        # Over budget: shed what matters least first (older notes, running totals, the
        # detail of a risk report, the market table), down to the book, risk and research.
        for trim in _TRIMS:
            if max_chars is None or len(payload) <= max_chars:
                break
            trim(data)
            payload = json.dumps(data, separators=(",", ":"), default=str)
        head = f"Period {obs.period} of {obs.horizon} done; queries left {obs.queries_left}."
        return (f"{head}\n<observation episode=\"{key}\">{payload}</observation>\n"
                "Reply with your next action.")

    def render_text(self, obs: CommitteeObservation) -> str:
        """A compact plain-text view of the observation (for humans and small models)."""
        return render_observation(obs)

    # -- replies --
    def make_action(self, name: str, arguments: dict[str, Any]) -> Any:
        return CommitteeAction(action_type=name, **arguments)

    def action_call(self, action: Any) -> tuple[str, dict[str, Any]]:
        return action.action_type, {n: getattr(action, n) for n in WIRE_PARAMS
                                    if getattr(action, n) is not None}

    def trace_action(self, data: Any) -> Any:
        return CommitteeAction.model_validate(data)

    # -- truth and measurement --
    def case_for(self, spec: EpisodeSpec) -> World:
        return generate(spec.reset.get("task", spec.task), spec.reset.get("seed"))

    def truth_json(self, case: World) -> Any:
        change = case.mandate_change
        return {"task": case.task, "seed": case.seed, "regimes": list(case.regimes),
                "mandate_change": None if change is None else {
                    "announce_period": change.announce_period,
                    "effective_period": change.effective_period,
                    "mandate": change.mandate.as_dict()}}

    def outcome(self, episode: Episode) -> str:
        if not episode.done:
            return "unfinished"
        parts = (episode.final.metadata or {}).get("score_components") or {}
        if "edge_pts" not in parts:
            return "finished"
        return outcome(parts["edge_pts"])

    def success(self, episode: Episode) -> bool:
        metrics = (episode.final.metadata or {}).get("metrics") or {}
        return self.outcome(episode) == "beat_cash" and metrics.get("enforcements") == 0

    def metrics(self, episode: Episode) -> dict[str, float | None]:
        final = episode.final
        meta = (final.metadata or {}) if episode.done else {}
        book = meta.get("metrics") or {}
        state = episode.state
        m: dict[str, float | None] = {
            "score": meta.get("score"),
            "episode_return": episode.episode_return,
            "beat_cash": None if not meta.get("score_components") else float(
                self.outcome(episode) == "beat_cash"),
            "steps": float(episode.steps),
            "invalid_actions": float(getattr(state, "invalid_actions", 0) or 0),
            "breaches": float(getattr(state, "breaches", 0) or 0),
            "enforcements": float(getattr(state, "enforcements", 0) or 0),
            "queries_used": float(getattr(state, "queries_used", 0) or 0),
        }
        for key in ("utility_pts", "edge_pts", "fines_pts", "total_return_pct",
                    "max_drawdown_pct", "turnover"):
            m[key] = float(book[key]) if key in book else None
        for term, total in (final.reward_totals or {}).items():
            m[f"term_{term}"] = float(total)
        return m

    # -- training signals --
    def reward_components(self, episode: Episode) -> dict[str, float]:
        return reward_components(episode)

    def timeout_return(self, case: Any) -> float:
        return 0.0


ADAPTER = CommitteeAdapter()
