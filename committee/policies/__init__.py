"""Baseline policies and exploit probes for the committee, by name; reused by the tests, the
baseline report and the evaluation harness.

- `heuristic` (`heuristic.py`): a committee-aware PM that uses only observations — it filters
  the hidden regime from the month's returns (`belief.py`), takes Research's within-sector stock
  views, sizes the book inside the mandate with the Risk Officer's model (`optimizer.py`),
  answers warnings at once and prepares for announced mandate revisions.
- the probes (`probes.py`): cheap rules — `random`, `research_chaser`, `always_cash`,
  `query_spammer`, `hold_only`, `equal_weight`, `fixed_concentrated`, `research_then_hold`,
  `regime_table_reader`, `bonds_only`, `max_risk`, `balanced`, `momentum`, `inverse_vol`.
- the challengers: `em_filter` (`outsider.py`), what a competent outsider builds from public
  material (EM-fitted regime profiles, a forward filter, mean-variance sizing).
- `regime_oracle` (`oracle.py`): told the hidden regime of each coming month (never a return);
  its mean utility is the score's scale (`scoring.py`).

Every policy derives from the project's one `Policy` base (`common.py`): `reset(obs,
case=None)` and `act(obs) -> CommitteeAction`; only the oracle uses `case` (the episode's
`World`). `committee/reports/` runs them over a seed split.
"""

from __future__ import annotations

from collections.abc import Callable

from memex.committee.policies.common import Policy
from memex.committee.policies.heuristic import Heuristic
from memex.committee.policies.oracle import RegimeOracle
from memex.committee.policies.outsider import EmRegimeFilter
from memex.committee.policies.probes import (
    AlwaysCash,
    Balanced,
    BondsOnly,
    EqualWeight,
    FixedConcentrated,
    HoldOnly,
    InverseVolatility,
    MaxRisk,
    Momentum,
    QuerySpammer,
    RandomPolicy,
    RegimeTableReader,
    ResearchChaser,
    ResearchThenHold,
)

__all__ = ["BASELINES", "CHALLENGERS", "POLICIES", "PROBES", "Heuristic", "Policy", "RegimeOracle",
           "make_policy"]

POLICIES: dict[str, Callable[[], Policy]] = {
    "heuristic": Heuristic, "random": RandomPolicy, "research_chaser": ResearchChaser,
    "always_cash": AlwaysCash, "query_spammer": QuerySpammer, "regime_oracle": RegimeOracle,
    "hold_only": HoldOnly, "equal_weight": EqualWeight,
    "fixed_concentrated": FixedConcentrated, "research_then_hold": ResearchThenHold,
    "regime_table_reader": RegimeTableReader, "bonds_only": BondsOnly, "max_risk": MaxRisk,
    "balanced": Balanced, "momentum": Momentum, "inverse_vol": InverseVolatility,
    "em_filter": EmRegimeFilter,
}
# Cheap rules the heuristic must beat clearly (by 0.15 on every task).
PROBES: tuple[str, ...] = ("random", "research_chaser", "always_cash", "query_spammer",
                           "hold_only", "equal_weight", "fixed_concentrated",
                           "research_then_hold", "regime_table_reader", "bonds_only",
                           "max_risk", "balanced", "momentum", "inverse_vol")
# Competent outsiders the heuristic must match: the strongest simple policies known.
CHALLENGERS: tuple[str, ...] = ("em_filter",)
BASELINES: tuple[str, ...] = ("heuristic", "regime_oracle", *CHALLENGERS, *PROBES)


def make_policy(name: str, seed: int = 0) -> Policy:
    """A policy by name; the random policy draws from `seed` (give each episode its own)."""
    factory = POLICIES[name]
    return factory(seed=seed) if factory is RandomPolicy else factory()
