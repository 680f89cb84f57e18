"""Training-reward signals of the committee for the GRPO trainer, each in [0, 1], from the
structured counts the environment keeps (never from its event text):

- `quality`: committee process — the mean of the share of periods the book was compliant after
  the PM's action (`CommitteeState.periods_in_breach`) and the share of trades made with fresh
  research and risk (trades that earned the information-usage term; 0 with no trade);
- `os`: the committee has no OS mechanics, so it is the share of valid actions
  (`CommitteeState.invalid_actions`): what a trainer's format and protocol discipline improve.
"""

from __future__ import annotations

from memex.envkit.episodes import Episode

TRADING_ACTIONS = ("allocate", "revise_allocation", "move_to_cash")


def reward_components(episode: Episode) -> dict[str, float]:
    steps = max(1, episode.steps)
    state = episode.state
    observations = episode.observations[1:]
    compliant = (episode.steps - state.periods_in_breach) / steps
    trades = sum(o.action_type in TRADING_ACTIONS and o.error is None
                 and bool(o.result and o.result.get("traded")) for o in observations)
    informed = sum(o.reward_breakdown.get("information_usage", 0.0) > 0 for o in observations)
    parts = [compliant, min(1.0, informed / trades) if trades else 0.0]
    valid = (episode.steps - state.invalid_actions) / steps
    return {"quality": round(sum(parts) / len(parts), 6), "os": round(valid, 6)}
