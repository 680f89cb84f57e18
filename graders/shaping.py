"""Per-step shaping. Small, negative-only, and tied to waste, so it cannot be farmed: there is
no bonus for writing notes or loading sections — their value arrives through the terminal
evidence and citation components.

| event | reward |
|---|---|
| any non-terminal action | -0.005 |
| invalid action (bad tool, arguments, unknown ID, unanswerable call) | -0.015 extra |
| redundant call (same tool and arguments as an earlier call) | -0.02 |
| page fault (a seen ID used after it left RAM and disk) | -0.03 per ID, at most 5 per step |
| async timeout (polling a trace before it is ready) | -0.05 |

So a non-terminal step's reward lies in [-0.24, -0.005]. The terminal step's reward is the
terminal score alone, in [-4.5, 1] (see `graders.terminal`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

ACTION_COST = -0.005
INVALID_ACTION_PENALTY = -0.015
REDUNDANT_CALL_PENALTY = -0.02
PAGE_FAULT_PENALTY = -0.03
MAX_PAGE_FAULTS_CHARGED = 5
ASYNC_TIMEOUT_PENALTY = -0.05


@dataclass
class StepEvents:
    invalid: bool = False
    redundant: bool = False
    page_faults: int = 0
    async_timeout: bool = False

    def reward(self) -> tuple[float, dict[str, float]]:
        """The step's reward and its parts (a new dict, the caller's own)."""
        reward, parts = _reward(self.invalid, self.redundant, self.page_faults, self.async_timeout)
        return reward, dict(parts)


# Memoised: a step's reward is a pure function of a few flags and a count (at most the IDs one
# call can name), and computing it (rounding the sum) cost more than the rest of the step's
# bookkeeping.
@functools.cache
def _reward(invalid: bool, redundant: bool, page_faults: int,
            async_timeout: bool) -> tuple[float, tuple[tuple[str, float], ...]]:
    parts = {"action_cost": ACTION_COST}
    if invalid:
        parts["invalid_action"] = INVALID_ACTION_PENALTY
    if redundant:
        parts["redundant_call"] = REDUNDANT_CALL_PENALTY
    if page_faults:
        parts["page_fault"] = PAGE_FAULT_PENALTY * min(page_faults, MAX_PAGE_FAULTS_CHARGED)
    if async_timeout:
        parts["async_timeout"] = ASYNC_TIMEOUT_PENALTY
    return round(sum(parts.values()), 6), tuple(parts.items())
