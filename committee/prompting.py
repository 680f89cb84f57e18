"""Text for LLM agents: the system prompt (rules, mandate, actions derived from the
declarations), a compact renderer of observations and of single steps, and a parser that reads
an action written as JSON.
"""

from __future__ import annotations

import json

from memex.committee.models import CommitteeAction, CommitteeObservation
from memex.committee.scoring import BREACH_FINE_PTS, ENFORCEMENT_FINE_PTS, RISK_AVERSION
from memex.committee.tools import ACTIONS, prompt_action_list
from memex.committee.world.market import UNIVERSE
from memex.committee.world.risk import ENFORCE_AFTER_PERIODS
from memex.committee.world.tasks import TASKS
from memex.envkit.replies import json_objects

_RULES = f"""\
You are the Portfolio Manager (PM) of a multi-asset fund, sitting on an investment committee \
with a Research Analyst (keen, noisy, sometimes biased or late) and a Risk Officer (strict: \
enforces the mandate). Each turn is one monthly committee meeting: you take exactly one action \
and then the market moves one month. While you ask a question, the book is held as it is.

Assets (ticker, sector, one-way cost): {", ".join(
    f"{a.ticker} ({a.sector}, {a.cost_bps:g}bp)" for a in UNIVERSE)}; the rest is cash.
Weights are fractions of NAV (0.25 = 25%), long only, summing to at most 1.

The mandate (see `mandate` in each observation; it can be revised with notice): a maximum \
weight per asset and per sector, a volatility budget on the Risk Officer's model, drawdown \
discipline (past the drawdown limit volatility is capped lower for a few months) and excluded \
assets. Each item in breach after your action is fined {BREACH_FINE_PTS:g} pts; a breach \
that lasts {ENFORCE_AFTER_PERIODS} periods is enforced by the Risk Officer, who trades your \
book himself for a further {ENFORCEMENT_FINE_PTS:g} pts.

Your objective: the fund's final NAV over what cash would have made, minus the fines, valued \
with the mandate's risk aversion ({RISK_AVERSION:g}): a loss weighs more than a gain of the \
same size. Each month's reward is the change of that value, in points of NAV (the fund starts \
at 100). Queries are limited by the episode's query budget and cost the month: the book is \
held while you ask. The market's regime is hidden: infer it from prices, research and the Risk \
Officer's notes. The episode score is that value in units of what a PM told the regime earns \
on the task (1); cash scores 0, losing to cash below 0.
"""

_REPLY = ('Reply with exactly one action as JSON, after any brief reasoning: '
          '{"tool": "<action>", "arguments": {...}}, e.g. {"tool": "query_research", '
          '"arguments": {"query_target": "MARKET"}} or {"tool": "allocate", "arguments": '
          '{"weights": {"NOVA": 0.2, "GOVT": 0.3}, "reason": "..."}}.')


def system_prompt(task: str | None = None, *, action_list: bool = True,
                  compact: bool = False) -> str:
    """Rules, the task's brief and (optionally) the action list."""
    text = _RULES
    if task in TASKS:
        spec = TASKS[task]
        text += (f"\nTask: {spec.title}. {spec.conflict} Horizon {spec.horizon} months, "
                 f"{spec.query_budget} queries.\n")
    if action_list:
        if compact:
            text += "\nActions:\n" + "\n".join(
                f"- {s.name}({', '.join(s.params)})" for s in ACTIONS.values()) + "\n"
        else:
            text += "\nActions:\n" + prompt_action_list() + "\n"
    return text + "\n" + _REPLY + "\n"


SYSTEM_PROMPT = system_prompt()


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _result_text(obs: CommitteeObservation) -> str | None:
    if obs.error is not None:
        return f"ERROR {obs.error.code}: {obs.error.message}"
    if obs.result is None:
        return None
    result = dict(obs.result)
    if "views" in result:
        views = ", ".join(f"{v['name']} {v['conviction']:+.2f} ({v['stance']})"
                          for v in result["views"])
        return f"Research ({result['target']}): {views}"
    if "traded" in result:
        if not result["traded"]:
            return "Held the book."
        return (f"Traded: turnover {_pct(result['turnover'])}, cost {result['cost_pts']:.3f} "
                "pts.")
    if "correlation" in result:
        corr = result.pop("correlation")
        if isinstance(corr, dict) and corr:
            names = list(corr)
            result["correlation"] = {"order": names,
                                     "rows": [[corr[a][b] for b in names] for a in names]}
    return "Risk Officer: " + json.dumps(result, separators=(",", ":"))


def render_step(obs: CommitteeObservation) -> str:
    """One step as a short text (a tool message): result or error, events, reward, book."""
    parts = [x for x in (_result_text(obs),) if x]
    parts += [f"[event] {e}" for e in obs.events]
    if obs.portfolio is not None:
        book = ", ".join(f"{t} {_pct(w)}" for t, w in obs.portfolio.weights.items() if w > 5e-4)
        parts.append(f"[period {obs.period}/{obs.horizon}] NAV {obs.portfolio.nav:.2f}, "
                     f"return {obs.portfolio.period_return_pct:+.2f}%, drawdown "
                     f"{obs.portfolio.drawdown_pct:.1f}%, vol {obs.risk.vol_annual_pct:.1f}% "
                     f"(cap {obs.risk.vol_cap_annual_pct:.1f}%), reward {obs.reward}; "
                     f"book: {book}; queries left {obs.queries_left}")
    if obs.risk.flags:
        parts.append("[risk] " + "; ".join(f"{f.limit} {f.level}" for f in obs.risk.flags))
    if obs.done and obs.metadata:
        parts.append("[episode over] score " + json.dumps(obs.metadata.get("score")) + ", "
                     + json.dumps(obs.metadata.get("metrics", {}), separators=(",", ":")))
    return "\n".join(parts)


def render_observation(obs: CommitteeObservation) -> str:
    """The whole observation as compact text for a prompt (everything the PM may see)."""
    lines = [f"Task {obs.task}: period {obs.period} of {obs.horizon} done; "
             f"queries left {obs.queries_left} of {obs.query_budget}."]
    step = _result_text(obs)
    if step:
        lines.append(f"Last action {obs.action_type}: {step}")
    lines += [f"Event: {e}" for e in obs.events]
    if obs.market.prices:
        lines.append("Prices (last month %): " + ", ".join(
            f"{t} {p:.2f} ({obs.market.returns_pct.get(t, 0.0):+.1f})"
            for t, p in obs.market.prices.items()) + f"; cash rate {obs.market.cash_rate_pct}%/m")
    if obs.portfolio is not None:
        p = obs.portfolio
        lines.append("Book: " + ", ".join(f"{t} {_pct(w)}" for t, w in p.weights.items()
                                          if w > 5e-4)
                     + f". NAV {p.nav:.2f} (cumulative {p.cumulative_return_pct:+.2f}%, "
                       f"drawdown {p.drawdown_pct:.1f}%, max {p.max_drawdown_pct:.1f}%).")
    r = obs.risk
    lines.append(f"Risk: vol {r.vol_annual_pct:.1f}% vs cap {r.vol_cap_annual_pct:.1f}%, "
                 f"largest asset {r.largest_asset} {_pct(r.largest_asset_weight)}, largest "
                 f"sector {r.largest_sector} {_pct(r.largest_sector_weight)}, market stress "
                 f"{r.market_stress} ({r.stress_ratio:.2f}x)"
                 + (", DRAWDOWN DISCIPLINE" if r.drawdown_discipline else "") + ".")
    if r.flags:
        lines.append("Risk flags: " + "; ".join(
            f"{f.limit} {f.value:.3g} vs {f.cap:.3g} ({f.level})" for f in r.flags))
    if obs.mandate is not None:
        m = obs.mandate
        lines.append(f"Mandate: max {_pct(m.max_asset_weight)}/asset, "
                     f"{_pct(m.max_sector_weight)}/sector, vol budget "
                     f"{m.vol_budget_annual_pct:g}%, drawdown limit {m.drawdown_limit_pct:g}%"
                     + (f", excluded {', '.join(m.excluded)}" if m.excluded else "") + ".")
        if m.pending:
            lines.append(f"Announced revision (from period {m.pending['effective_period']}): "
                         f"{m.pending['summary']}")
    if obs.research:
        lines.append("Research held: " + ", ".join(
            f"{v.name} {v.conviction:+.2f} (p{v.period})" for v in obs.research))
    if obs.notes:
        lines.append("Committee notes:")
        lines += [f"  p{n.period} {n.author}: {n.text}" for n in obs.notes[-5:]]
    if obs.reward is not None:
        lines.append(f"Reward {obs.reward:+.3f}: " + ", ".join(
            f"{k} {v:+.3f}" for k, v in obs.reward_breakdown.items() if v))
    return "\n".join(lines)


def parse_action(text: str) -> CommitteeAction:
    """The last JSON action in `text`: `{"tool": name, "arguments": {...}}` or the flat wire
    form `{"action_type": name, "weights": ...}`. Raises ValueError if there is none."""
    for obj in reversed(list(json_objects(text))):
        if isinstance(obj.get("action_type"), str):
            return CommitteeAction.model_validate(obj)
        name = obj.get("tool", obj.get("name"))
        args = obj.get("arguments", {})
        if isinstance(name, str) and isinstance(args, dict):
            return CommitteeAction(action_type=name, **args)
    raise ValueError("no action found: reply with one JSON object "
                     '{"tool": "<action>", "arguments": {...}}')
