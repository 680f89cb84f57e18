"""Hidden ground truth of a case. Only graders, baselines marked as oracles, and tests read it.

Nothing in `server/` tools may import this module; `tests/test_world.py` checks that.
"""

from __future__ import annotations

from typing import Literal

from memex.scenarios.model import Frozen

Decision = Literal["file_sar", "close_alert"]


class RedFlag(Frozen):
    """A red-flag code that is truly present, with the evidence IDs that each prove it."""

    code: str
    evidence_ids: tuple[str, ...]


class GroundTruth(Frozen):
    kind: str
    variant: str
    suspicious: bool
    decision: Decision
    typology: str | None
    subject_ids: tuple[str, ...]
    red_flags: tuple[RedFlag, ...]
    justifying_sections: tuple[str, ...]
    ubo_id: str | None = None

    def flag(self, code: str) -> RedFlag | None:
        return next((f for f in self.red_flags if f.code == code), None)
