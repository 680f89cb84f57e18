"""Training-reward signals of the committee for the GRPO trainer, each in [0, 1], from
structured fields (the state's counts, each observation's action, period and result; never
event text):

- `quality`: committee process — the mean of the share of periods the book was compliant after
  the PM's action (`CommitteeState.periods_in_breach`) and the share of trades made informed:
  with turnover of at least `INFORMED_MIN_TURNOVER`, a research note and a risk report both
  from the last `FRESH_PERIODS` periods (0 with no trade);
- `os`: the committee has no OS mechanics, so it is the share of valid actions
  (`CommitteeState.invalid_actions`): what a trainer's format and protocol discipline improve.

These guide a learner through the committee's workflow; the environment's reward (the
objective, `scoring.py`) pays for none of them.
"""

from __future__ import annotations

from memex.envkit.episodes import Episode

TRADING_ACTIONS = ("allocate", "revise_allocation", "move_to_cash")
FRESH_PERIODS = 4
INFORMED_MIN_TURNOVER = 0.10


def informed_share(observations: list) -> float:
    """The share of the PM's trades made with fresh research and a fresh risk report."""
    last: dict[str, int] = {}
    trades = informed = 0
    for o in observations:
        if o.error is not None:
            continue
        if o.action_type in ("query_research", "query_risk"):
            last[o.action_type] = o.period
        elif o.action_type in TRADING_ACTIONS and o.result and o.result.get("traded"):
            trades += 1
            informed += (o.result.get("turnover", 0.0) >= INFORMED_MIN_TURNOVER and all(
                o.period - last.get(q, -FRESH_PERIODS) < FRESH_PERIODS
                for q in ("query_research", "query_risk")))
    return informed / trades if trades else 0.0


def reward_components(episode: Episode) -> dict[str, float]:
    steps = max(1, episode.steps)
    state = episode.state
    compliant = (episode.steps - state.periods_in_breach) / steps
    parts = [compliant, informed_share(episode.observations[1:])]
    valid = (episode.steps - state.invalid_actions) / steps
    return {"quality": round(sum(parts) / len(parts), 6), "os": round(valid, 6)}
