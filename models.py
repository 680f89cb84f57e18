"""The wire contract: typed Action, Observation and State for the Memex environment.

An action names one of the 19 tools and gives its arguments. `TOOL_NAMES` is the wire's tool
vocabulary; the tools themselves are declared once in `server/tools.py` (which checks it
declares exactly these names), and the server publishes each tool's argument schema under the
`tools` key of the action entry of `GET /schema`. This module imports nothing of the server, so
importing the models is cheap.

An observation carries the tool's result or a typed error, the step's reward and its breakdown,
OS events, and the `context` view — the pinned alert header, kernel sections, RAM pages and
disk notes — that a harness can build its prompt from. Nothing here carries ground truth. The
environment builds observations with `Model.trusted(**fields)` (`envkit.trusted`): it passes
exactly the values validation would produce, so validating them every step would only cost
time.
"""

from __future__ import annotations

from typing import Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, Field

from memex.envkit.trusted import Trusted

TOOL_NAMES: tuple[str, ...] = (
    "review_alert", "get_customer_profile", "query_transactions", "check_watchlist",
    "trace_network", "check_source_of_funds", "check_market_price", "assess_risk",
    "check_device_overlap", "verify_customs_invoice", "query_beneficial_ownership",
    "write_to_case_file", "request_wire_trace", "request_information", "retrieve_async_result",
    "search_compliance_manual", "update_system_prompt", "file_sar", "close_alert",
)
ErrorCode = Literal[
    "unknown_tool", "invalid_arguments", "unknown_id", "wrong_id_type", "invalid_argument",
    "not_found", "not_traceable", "unknown_job", "not_ready", "disk_full", "episode_done",
    "no_episode", "deadline_exceeded",
]


class MemexAction(Action):
    """Call one tool. `tool` is one of the 18 tool names; `arguments` follow that tool's
    parameter schema (the `tools` list of the action schema served at `GET /schema`)."""

    tool: str = Field(description="Tool name.", json_schema_extra={"enum": list(TOOL_NAMES)})
    arguments: dict[str, Any] = Field(default_factory=dict, description="Tool arguments.")


class ToolError(BaseModel):
    code: ErrorCode
    message: str


class PageView(Trusted, BaseModel):
    page_id: int
    step: int
    tool: str
    arguments: dict[str, Any]
    content: Any
    ids: list[str] = Field(description="Case IDs this page revealed (resident while in RAM).")


class NoteView(Trusted, BaseModel):
    note_id: int
    step: int
    text: str
    ids: list[str]


class SectionView(Trusted, BaseModel):
    section_id: str
    title: str
    text: str


class JobView(Trusted, BaseModel):
    """An async job: a wire trace (`transaction_id`) or a request for information (`entity_id`,
    `topic`)."""

    job_id: str
    transaction_id: str | None = None
    entity_id: str | None = None
    topic: str | None = None
    requested_step: int
    ready_at_step: int
    status: Literal["pending", "ready", "retrieved"]


class PartyView(Trusted, BaseModel):
    entity_id: str
    name: str
    account_ids: list[str] = Field(description="The party's accounts the alert shows.")


class AlertHeader(Trusted, BaseModel):
    """The alert under investigation, pinned in every observation's `context` like a process
    control block: who and what the alert names, taken from what `review_alert` shows and
    nothing more. It takes no RAM page and is never evicted; its IDs are always resident."""

    alert_id: str
    rule: str = Field(description="Code of the monitoring rule that fired.")
    rule_name: str
    subject: PartyView = Field(description="The alerted customer and the alert's accounts.")
    counterparties: list[PartyView] = Field(
        description="The other parties of the triggering transactions, in order of appearance.")
    transaction_ids: list[str] = Field(description="The transactions that triggered the alert.")
    related_ids: list[str] = Field(
        description="Other records those transactions name: who conducted them, the invoices "
                    "they reference.")


class ContextView(Trusted, BaseModel):
    """The agent's bounded memory: what a prompt built from `context` alone contains. `alert`,
    the pinned header, is there from reset to the end of the episode."""

    alert: AlertHeader | None = None
    kernel: list[SectionView] = Field(default_factory=list)
    ram: list[PageView] = Field(default_factory=list)
    disk: list[NoteView] = Field(default_factory=list)
    jobs: list[JobView] = Field(default_factory=list)
    ram_capacity: int = 2
    kernel_capacity: int = 3


class MemexObservation(Trusted, Observation):
    """What the agent sees after each action (and after reset, where `tool` is None and the
    alert is the first RAM page)."""

    tool: str | None = Field(default=None, description="The tool that ran, if any.")
    result: Any = Field(default=None, description="The tool's result (also the newest page).")
    error: ToolError | None = Field(default=None, description="Typed error, if the call failed.")
    events: list[str] = Field(default_factory=list,
                              description="OS events: evictions, page faults, interrupts.")
    context: ContextView = Field(default_factory=ContextView)
    step: int = Field(default=0, ge=0)
    step_budget: int = Field(default=0, ge=0)
    reward_breakdown: dict[str, float] = Field(default_factory=dict)


class MemexState(State):
    """Episode bookkeeping, free of ground truth."""

    case_id: str | None = None
    difficulty: str | None = None
    step_budget: int = 0
    done: bool = False
    decision: Literal["file_sar", "close_alert", "timeout"] | None = None
    total_reward: float = 0.0
    page_faults: int = 0
    async_timeouts: int = 0
    redundant_calls: int = 0
    invalid_actions: int = 0
    kernel: list[str] = Field(default_factory=list)
    ram_pages: list[int] = Field(default_factory=list)
    disk_notes: int = 0
    jobs_pending: list[str] = Field(default_factory=list)
    ids_seen: int = 0
    ids_resident: int = 0
