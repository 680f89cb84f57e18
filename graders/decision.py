"""What a terminal tool hands to the grader: the agent's decision and its SAR findings.

Defined here, below both the tools that produce a `Decision` (`server/tools.py`) and the grader
that scores it (`graders/terminal.py`), so imports point one way: server -> graders -> scenarios.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from memex.scenarios.manual import RED_FLAG_CODES

RedFlagCode = Literal[tuple(RED_FLAG_CODES)]  # type: ignore[valid-type]


class Finding(BaseModel):
    """One SAR finding: a red-flag code from the manual's closed list and its evidence."""

    model_config = ConfigDict(extra="forbid")
    code: RedFlagCode = Field(description="Red-flag code from manual section 9.3.")
    evidence_ids: list[str] = Field(min_length=1, max_length=40,
                                    description="IDs of the records that evidence the flag.")


@dataclass(frozen=True)
class Decision:
    """What a terminal tool hands back to the environment to be graded."""

    action: Literal["file_sar", "close_alert"]
    subjects: tuple[str, ...] = ()
    typology: str | None = None
    findings: tuple[Finding, ...] = ()
    cited_sections: tuple[str, ...] = ()
    text: str = ""
