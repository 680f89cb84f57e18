"""Training-reward signals for the GRPO trainer, each in [0, 1]: investigation `quality` and
`os` (operating-system discipline). Not part of the environment's reward: the trainer adds them
to the episode return as separate reward functions (`train_grpo.py`).

- `quality`: coverage of the evidence that matters for the case — share of the deciding
  cross-check views revealed (both classes); for suspicious cases, share of true red flags with
  a carrier record revealed, and with one kept on disk, and share of true subjects revealed;
  share of the justifying manual sections ever loaded.
  Repeating tools adds nothing, so it cannot be farmed by tool count.
- `os`: for episodes that reached a decision, the mean of fault-free use of IDs (1 - page
  faults per ID-using call), wire traces collected (retrieved / (requested + early polls)) and
  citations loaded in the kernel (cited and loaded / cited); undefined parts are skipped.

Pure functions of the ground truth and structured counts the environment keeps (`MemexState`'s
`page_faults` and `async_timeouts`, the IDs pages and notes carry): nothing is re-read from the
human-readable event text.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from memex.scenarios.truth import GroundTruth


@dataclass(frozen=True)
class OsCounts:
    """What the OS signal counts over one decided episode."""

    page_faults: int          # seen IDs used after they left RAM and disk
    id_calls: int             # calls whose arguments name at least one record ID
    traces_requested: int     # successful request_wire_trace calls
    traces_collected: int     # successful retrieve_async_result calls
    async_timeouts: int       # polls before a trace was ready
    cited: frozenset[str]     # sections the decision cites
    loaded: frozenset[str]    # sections in the kernel when it decided


def quality(truth: GroundTruth, *, seen: Collection[str], on_disk: Collection[str],
            loaded: Collection[str]) -> float:
    """Evidence coverage in [0, 1] (module table). `seen` includes what is on disk; `loaded` is
    every section ever loaded in the kernel."""
    parts = []
    if truth.decisive_evidence:
        views = truth.decisive_evidence
        parts.append(sum(any(e in seen for e in view) for view in views) / len(views))
    if truth.suspicious:
        flags = truth.red_flags
        parts.append(sum(any(e in seen for e in f.carrier_ids) for f in flags) / len(flags))
        parts.append(sum(any(e in on_disk for e in f.carrier_ids) for f in flags) / len(flags))
        parts.append(sum(s in seen for s in truth.subject_ids) / len(truth.subject_ids))
    parts.append(sum(s in loaded for s in truth.justifying_sections)
                 / len(truth.justifying_sections))
    return round(sum(parts) / len(parts), 6)


def os_discipline(counts: OsCounts | None) -> float:
    """OS discipline in [0, 1] (module table); 0 for an episode without a decision (None)."""
    if counts is None:
        return 0.0
    parts = []
    if counts.id_calls:
        parts.append(max(0.0, 1.0 - counts.page_faults / counts.id_calls))
    if counts.traces_requested:
        parts.append(min(1.0, counts.traces_collected
                         / (counts.traces_requested + counts.async_timeouts)))
    if counts.cited:
        parts.append(len(counts.cited & counts.loaded) / len(counts.cited))
    return round(sum(parts) / len(parts), 6) if parts else 0.0
