"""The per-period reward: the increments of the objective (`scoring.py`), term by term, in
points of the initial NAV ("pts"), so that the episode return is the objective itself.

After period `t` the running edge over cash is `x_t = (NAV_t - NAV_t^cash) - F_t` (fines so
far) and the period's reward is `U(x_t) - U(x_{t-1})`; summed over the episode it telescopes to
`U(x_T)`, the episode's utility. Reported, signed, in `reward_breakdown` (the reward is their
sum) and accumulated in `reward_totals`:

- `portfolio_return`: what the market added to NAV this period (the book's return x NAV).
- `cash_return`: minus what the cash alternative earned this period (the benchmark).
- `transaction_cost`: minus the NAV traded away: traded notional x each asset's cost in bps,
  for the PM's trades and any the Risk Officer enforces.
- `breach_fines`: minus `BREACH_FINE_PTS` per mandate item in breach after the PM's action,
  and `ENFORCEMENT_FINE_PTS` when the Risk Officer has to enforce.
- `risk_adjustment`: `U(x_t) - U(x_{t-1})` minus the sum of the four terms above: what the
  mandate's risk aversion makes of the period's change of edge (a gain counts less the further
  ahead the fund is, a loss more the further behind).

Every term is a function of what the PM can observe (prices, its book, the mandate, the Risk
Officer's model), never of the hidden regime. Queries and invalid actions cost no points: they
cost the month (the book is held) and the query budget.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from memex.committee.scoring import utility

TERMS: tuple[str, ...] = (
    "portfolio_return", "cash_return", "transaction_cost", "breach_fines", "risk_adjustment",
)


@dataclass
class RewardTerms:
    """One period's terms as signed contributions (costs and fines are <= 0)."""

    portfolio_return: float = 0.0
    cash_return: float = 0.0
    transaction_cost: float = 0.0
    breach_fines: float = 0.0
    risk_adjustment: float = 0.0

    def edge_change(self) -> float:
        """The period's change of the edge over cash, fines deducted (pts)."""
        return (self.portfolio_return + self.cash_return + self.transaction_cost
                + self.breach_fines)

    def settle(self, edge_before: float) -> float:
        """Set `risk_adjustment` so the terms sum to `U(x_t) - U(x_{t-1})`; returns `x_t`."""
        change = self.edge_change()
        edge = edge_before + change
        self.risk_adjustment = utility(edge) - utility(edge_before) - change
        return edge

    def as_dict(self) -> dict[str, float]:
        return {f.name: round(getattr(self, f.name), 6) for f in fields(self)}

    def total(self) -> float:
        return round(sum(self.as_dict().values()), 6)


assert tuple(f.name for f in fields(RewardTerms)) == TERMS
