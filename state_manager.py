"""The operating-system state of one episode: RAM pages, the disk case file, async jobs and
the kernel. Pure bookkeeping: it knows IDs, pages and steps, never ground truth.

- RAM holds the last `ram_pages` tool results (pages). Each page carries the case IDs it
  revealed. Older pages are evicted.
- Disk holds the agent's case-file notes; every ID written there stays resident.
- Resident IDs = alert IDs (those the pinned alert header shows) ∪ IDs in RAM pages ∪ IDs
  on disk. Using a seen but non-resident ID
  is a page fault (the caller charges the penalty; the call still runs and its page comes in).
  Using an ID never seen is an unknown-ID error, identical whether or not it exists.
- Async jobs (wire traces) are ready `eta` steps after the request; polling early is an async
  timeout and the job stays pending. The job table is kernel state, always visible.
- The kernel holds up to `kernel_capacity` manual sections, oldest evicted first.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

DEFAULT_RAM_PAGES = 2
DEFAULT_KERNEL_CAPACITY = 3
# Bounds of both memory sizes, checked here and published by the reset schema (server/app.py).
MIN_MEMORY_SLOTS, MAX_MEMORY_SLOTS = 1, 16
ASYNC_ETA_STEPS = (2, 4)
MAX_NOTES = 64
MAX_NOTE_CHARS = 2_000


# Pages and notes never change once made: immutable records (a named tuple is built several
# times faster than a frozen dataclass, and one is built every step).
class Page(NamedTuple):
    page_id: int
    step: int
    tool: str
    arguments: dict[str, Any]
    content: Any
    ids: frozenset[str]


class Note(NamedTuple):
    note_id: int
    step: int
    text: str
    ids: frozenset[str]


@dataclass
class Job:
    """A wire trace (`transaction_id`) or a request for information (`entity_id`, `topic`)."""

    job_id: str
    transaction_id: str | None
    requested_step: int
    ready_at_step: int
    retrieved: bool = False
    entity_id: str | None = None
    topic: str | None = None

    def status(self, step: int) -> str:
        if self.retrieved:
            return "retrieved"
        return "ready" if step >= self.ready_at_step else "pending"


@dataclass
class OSState:
    alert_ids: frozenset[str]
    ram_pages: int = DEFAULT_RAM_PAGES
    kernel_capacity: int = DEFAULT_KERNEL_CAPACITY
    step: int = 0
    ram: deque[Page] = field(init=False)
    disk: list[Note] = field(default_factory=list)
    kernel: list[str] = field(default_factory=list)
    jobs: dict[str, Job] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    # IDs returned by a tool result (a page), as opposed to only named by the alert: the
    # grader pays for evidence the agent actually pulled up.
    revealed: set[str] = field(default_factory=set)
    _next_page: int = 1
    _disk_ids: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        lo, hi = MIN_MEMORY_SLOTS, MAX_MEMORY_SLOTS
        if not (lo <= self.ram_pages <= hi and lo <= self.kernel_capacity <= hi):
            raise ValueError(f"ram_pages and kernel_capacity must be between {lo} and {hi}")
        self.ram = deque(maxlen=self.ram_pages)
        self.seen |= self.alert_ids

    # ---- residency ----------------------------------------------------------------------
    # Resident: named by the alert, written to disk, or on a page in RAM. `is_resident` asks
    # it of one ID (a step's references) without building the set `resident` returns.
    def is_resident(self, identifier: str) -> bool:
        return identifier in self.alert_ids or identifier in self._disk_ids or any(
            identifier in page.ids for page in self.ram)

    def resident(self) -> set[str]:
        ids = set(self.alert_ids) | self._disk_ids
        for page in self.ram:
            ids |= page.ids
        return ids

    def faults(self, ids: Iterable[str]) -> list[str]:
        """The referenced IDs that were seen but are no longer resident: page faults."""
        return [i for i in ids if i in self.seen and not self.is_resident(i)]

    # ---- RAM ----------------------------------------------------------------------------
    def add_page(self, tool: str, arguments: dict[str, Any], content: Any,
                 ids: frozenset[str]) -> tuple[Page, Page | None]:
        """Put a tool result in RAM; returns (page, evicted page or None)."""
        evicted = self.ram[0] if len(self.ram) == self.ram.maxlen else None
        page = Page(self._next_page, self.step, tool, arguments, content, ids)
        self._next_page += 1
        self.ram.append(page)
        self.seen |= ids
        self.revealed |= ids
        return page, evicted

    # ---- disk ---------------------------------------------------------------------------
    def write_note(self, text: str, ids: frozenset[str]) -> Note:
        note = Note(len(self.disk) + 1, self.step, text, ids)
        self.disk.append(note)
        self._disk_ids |= ids
        return note

    def on_disk(self) -> frozenset[str]:
        return frozenset(self._disk_ids)

    # ---- async --------------------------------------------------------------------------
    def open_job(self, transaction_id: str | None, eta_steps: int, entity_id: str | None = None,
                 topic: str | None = None) -> Job:
        job = Job(f"JOB-{len(self.jobs) + 1}", transaction_id, self.step, self.step + eta_steps,
                  entity_id=entity_id, topic=topic)
        self.jobs[job.job_id] = job
        return job

    def pending_job_for(self, transaction_id: str | None, entity_id: str | None = None,
                        topic: str | None = None) -> Job | None:
        return next((j for j in self.jobs.values() if not j.retrieved
                     and (j.transaction_id, j.entity_id, j.topic)
                     == (transaction_id, entity_id, topic)), None)

    def newly_ready(self) -> list[Job]:
        """Jobs that became ready at exactly this step (the interrupt)."""
        return [j for j in self.jobs.values() if not j.retrieved and j.ready_at_step == self.step]

    # ---- kernel -------------------------------------------------------------------------
    def load_section(self, section_id: str) -> str | None:
        """Load a section; returns the evicted section id (oldest) if capacity was full."""
        evicted = None
        if len(self.kernel) >= self.kernel_capacity:
            evicted = self.kernel.pop(0)
        self.kernel.append(section_id)
        return evicted
