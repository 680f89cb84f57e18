"""The per-period reward, term by term. All terms are in percentage points of NAV ("pts"), so
the return term of a month in which the book gains 1.2% is +1.2.

    reward = portfolio_return + signal_alignment + information_usage + risk_response
             - transaction_cost - query_cost - variance_penalty - drawdown_penalty
             - compliance_penalty - invalid_action_penalty

Every term is reported, signed, in `reward_breakdown` (so the reward is their sum) and
accumulated in `reward_totals`. Each is a function of what the PM can observe — prices, the
research it asked for, the Risk Officer's model and the mandate — never of the hidden regime,
so the breakdown leaks nothing the market does not.

- `portfolio_return`: 100 x the book's return over the period, gross of costs (cash earns
  the cash rate).
- `signal_alignment`: `ALIGNMENT_WEIGHT` x the sum of weight x *de-biased* conviction over
  holdings with research no older than `RESEARCH_FRESH_PERIODS` (an asset's own view, else its
  sector's; the analyst's documented pet-sector bias is taken out first, so holding the
  favourite sector pays nothing extra); negative when holding what research rates a sell.
- `information_usage`: `INFO_BONUS_PTS` for a trade with turnover >= `INFO_MIN_TURNOVER` made
  with a research note *and* a risk report from the last `RESEARCH_FRESH_PERIODS` periods, both
  newer than the last rewarded trade; at most `MAX_INFO_BONUSES` an episode.
- `risk_response`: `RISK_RESPONSE_BONUS_PTS` per breach the market or an announced mandate
  revision caused (not the PM's own trade) that a PM *trade* fixes by its deadline: within
  `RESPONSE_WINDOW_PERIODS` of the warning, or by the revision's effective period. A hold, a
  query or prices drifting back pay nothing; at most `MAX_RISK_RESPONSES` an episode.
- The bonus cap: the positive parts of the three bonus terms above sum to at most
  `MAX_BONUS_PTS` an episode (pinned by `tests/unit/test_committee_shaping.py`); the growth term
  separates policies by 5-15 pts, so shaping guides but cannot rank.
- `transaction_cost`: traded notional x the asset's cost in bps, for the PM's trades and any
  the Risk Officer enforces; also deducted from NAV.
- `query_cost`: `QUERY_COST_PTS` per research or risk query.
- `variance_penalty`: `VARIANCE_AVERSION` x the book's monthly variance (%^2) under the Risk
  Officer's model, after the PM's action.
- `drawdown_penalty`: `DRAWDOWN_WEIGHT` x the deepening of the maximum drawdown this period
  (pts); over an episode it sums to `DRAWDOWN_WEIGHT` x the maximum drawdown.
- `compliance_penalty`: `COMPLIANCE_PENALTY_PTS` per mandate item in breach after the PM's
  action, plus `ENFORCEMENT_PENALTY_PTS` when the Risk Officer has to enforce.
- `invalid_action_penalty`: `INVALID_ACTION_PENALTY_PTS` for an action that returned an error
  (the period still passes, with the book held).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

RETURN_SCALE_PTS = 100.0
ALIGNMENT_WEIGHT = 0.05
RESEARCH_FRESH_PERIODS = 4
INFO_BONUS_PTS = 0.15
INFO_MIN_TURNOVER = 0.10
MAX_INFO_BONUSES = 3
RISK_RESPONSE_BONUS_PTS = 0.15
MAX_RISK_RESPONSES = 3
RESPONSE_WINDOW_PERIODS = 2
QUERY_COST_PTS = 0.05
VARIANCE_AVERSION = 0.02
DRAWDOWN_WEIGHT = 0.5
COMPLIANCE_PENALTY_PTS = 0.5
ENFORCEMENT_PENALTY_PTS = 1.0
INVALID_ACTION_PENALTY_PTS = 0.5
# The three bonus terms together pay at most this much an episode (pts): far below the growth
# term, whose spread between a good and a careless PM is 5-15 pts, so no bonus is worth farming.
MAX_BONUS_PTS = 1.0
BONUS_TERMS: tuple[str, ...] = ("signal_alignment", "information_usage", "risk_response")

TERMS: tuple[str, ...] = (
    "portfolio_return", "signal_alignment", "information_usage", "risk_response",
    "transaction_cost", "query_cost", "variance_penalty", "drawdown_penalty",
    "compliance_penalty", "invalid_action_penalty",
)


@dataclass
class RewardTerms:
    """One period's terms as signed contributions (costs and penalties are <= 0)."""

    portfolio_return: float = 0.0
    signal_alignment: float = 0.0
    information_usage: float = 0.0
    risk_response: float = 0.0
    transaction_cost: float = 0.0
    query_cost: float = 0.0
    variance_penalty: float = 0.0
    drawdown_penalty: float = 0.0
    compliance_penalty: float = 0.0
    invalid_action_penalty: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {f.name: round(getattr(self, f.name), 6) for f in fields(self)}

    def total(self) -> float:
        return round(sum(self.as_dict().values()), 6)


assert tuple(f.name for f in fields(RewardTerms)) == TERMS
