"""Baseline policies and exploit probes for the committee, by name; reused by the tests, the
baseline report and the evaluation harness.

- `heuristic` (`heuristic.py`): a committee-aware PM that uses only observations — it filters
  the hidden regime from the month's returns (`belief.py`), takes Research's within-sector stock
  views, sizes the book inside the mandate with the Risk Officer's model (`optimizer.py`),
  answers warnings at once and prepares for announced mandate revisions.
- the probes (`probes.py`): `random`, `research_chaser`, `always_cash`, `query_spammer`,
  `hold_only`, `equal_weight`, `fixed_concentrated`, `research_then_hold`,
  `regime_table_reader`.
- `regime_oracle` (`oracle.py`): told the hidden regime of each coming month (never a return);
  the score's reference (`scoring.py`).

Every policy derives from the project's one `Policy` base (`common.py`): `reset(obs,
case=None)` and `act(obs) -> CommitteeAction`; only the oracle uses `case` (the episode's
`World`). `committee/reports/` runs them over a seed split.
"""

from __future__ import annotations

from collections.abc import Callable

from memex.committee.policies.common import Policy
from memex.committee.policies.heuristic import Heuristic
from memex.committee.policies.oracle import RegimeOracle
from memex.committee.policies.probes import (
    AlwaysCash,
    EqualWeight,
    FixedConcentrated,
    HoldOnly,
    QuerySpammer,
    RandomPolicy,
    RegimeTableReader,
    ResearchChaser,
    ResearchThenHold,
)

__all__ = ["BASELINES", "POLICIES", "PROBES", "Heuristic", "Policy", "RegimeOracle",
           "make_policy"]

POLICIES: dict[str, Callable[[], Policy]] = {
    "heuristic": Heuristic, "random": RandomPolicy, "research_chaser": ResearchChaser,
    "always_cash": AlwaysCash, "query_spammer": QuerySpammer, "regime_oracle": RegimeOracle,
    "hold_only": HoldOnly, "equal_weight": EqualWeight,
    "fixed_concentrated": FixedConcentrated, "research_then_hold": ResearchThenHold,
    "regime_table_reader": RegimeTableReader,
}
PROBES: tuple[str, ...] = ("random", "research_chaser", "always_cash", "query_spammer",
                           "hold_only", "equal_weight", "fixed_concentrated",
                           "research_then_hold", "regime_table_reader")
BASELINES: tuple[str, ...] = ("heuristic", "regime_oracle", *PROBES)


def make_policy(name: str, seed: int = 0) -> Policy:
    """A policy by name; the random policy draws from `seed` (give each episode its own)."""
    factory = POLICIES[name]
    return factory(seed=seed) if factory is RandomPolicy else factory()
