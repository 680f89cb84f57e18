"""Hidden ground truth of a case. Only graders, baselines marked as oracles, and tests read it.

Nothing in `server/` tools may import this module; `tests/unit/test_world.py` checks that.

The grader's contract:

- `RedFlag.carrier_ids`: the records in which the red flag itself lives (a document whose
  amount does not match, the trace hop that closes a loop, the login that shares a device, the
  watchlist entry that confirms a match...). A SAR finding counts only if its evidence
  includes at least one carrier the agent saw through a tool and kept on disk. Carriers are
  never the subject's own entity ID alone. `evidence_ids` keeps every supporting record.
- `GroundTruth.decisive_evidence`: the cross-check views that decide the case, one inner
  tuple per view (revealing any one of its IDs means the view was seen). Benign cases list the
  explanation (the source-of-funds document that matches the flow, the trace that ends with
  an unrelated party, the registry link that explains a shared device, the watchlist entry
  whose date of birth differs, the market band that brackets the invoice); suspicious cases
  list the records where the cover story fails. At least two groups per case, and no ID in
  them is revealed by the alert itself: they take investigation to see.
- `justifying_sections`: manual sections whose loading and citing justifies the decision
  (benign kinds include the section that makes closing right).
- `dispositions`: each present cross-check's disposition (clear, explained, explained_rfi,
  unexplained; `scenarios.checks`). Suspicious cases have at least `SAR_MIN_UNEXPLAINED`
  unexplained checks, benign cases fewer.
- `explanation_ids`: the records that explain the innocent anomalies (an FX-charges ledger
  line, a household member, a disclosure, a bill of lading with freight, a successor
  appointment, an information reply and the documents it carries). Empty when nothing needed
  explaining.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from memex.scenarios.model import Frozen

Decision = Literal["file_sar", "close_alert"]


class RedFlag(Frozen):
    """A red-flag code that is truly present, with the records that prove it."""

    code: str
    evidence_ids: tuple[str, ...]
    carrier_ids: tuple[str, ...] = ()


class GroundTruth(Frozen):
    kind: str
    variant: str
    suspicious: bool
    decision: Decision
    typology: str | None
    subject_ids: tuple[str, ...]
    red_flags: tuple[RedFlag, ...]
    justifying_sections: tuple[str, ...]
    decisive_evidence: tuple[tuple[str, ...], ...] = ()
    ubo_id: str | None = None
    # check name -> clear | explained | explained_rfi | unexplained (`scenarios.checks`)
    dispositions: dict[str, str] = Field(default_factory=dict)
    # The records that explain the innocent anomalies: the FX-charges ledger line, the household
    # member, the disclosure, the bill of lading with freight, the reply and its documents...
    explanation_ids: tuple[str, ...] = ()

    def flag(self, code: str) -> RedFlag | None:
        return next((f for f in self.red_flags if f.code == code), None)
