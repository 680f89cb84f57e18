"""The committee's wire contract: typed Action, Observation and State.

`CommitteeAction` is derived from the declarations in `tools.py`: `action_type` names one of
the six actions and the other fields are the union of their parameters (`query_target`,
`weights`, `reason`), each with the declared schema. The wire accepts any value for them so that
a wrong type becomes a typed `invalid_arguments` error observation (the book held for the
month) rather than a transport error; the per-action schemas are published under the action
schema's `actions` key. Nothing here carries the hidden regime.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from openenv.core.env_server.types import Action, Observation, State
from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, create_model, model_validator

from memex.committee.tools import ACTION_NAMES, ACTIONS
from memex.committee.world.tasks import TASK_GRIDS, TASK_NAMES, named_task
from memex.envkit.http_episodes import ResetFields
from memex.envkit.tasks import unalias

TaskName = Literal[TASK_NAMES]  # type: ignore[valid-type]
ErrorCode = Literal[
    "unknown_action", "invalid_arguments", "unknown_target", "unknown_asset", "invalid_weights",
    "query_budget_exhausted", "malformed_action", "episode_done", "no_episode",
]


def _wire_fields() -> dict[str, Any]:
    """One optional field per parameter name across the actions, with its declared schema."""
    fields: dict[str, Any] = {}
    for spec in ACTIONS.values():
        props = spec.json_schema()["properties"]
        for name in spec.params:
            if name in fields:
                continue
            schema = {k: v for k, v in props[name].items() if k != "default"}
            users = [s.name for s in ACTIONS.values() if name in s.params]
            schema["description"] = (f"{schema.get('description', '')} (Used by: "
                                     f"{', '.join(users)}; omit for the action's default.)")
            fields[name] = (Annotated[Any, WithJsonSchema(schema)], Field(default=None))
    return fields


class _CommitteeActionBase(Action):
    model_config = ConfigDict(json_schema_extra={"actions": [
        s.catalog_entry() for s in ACTIONS.values()]})


CommitteeAction = create_model(
    "CommitteeAction", __base__=_CommitteeActionBase, __module__=__name__,
    __doc__="One committee decision or question. `action_type` is one of the six actions; the "
            "other fields are that action's parameters (see the `actions` list in this "
            "schema); fields an action does not take must be omitted.",
    action_type=(str, Field(description="The action.",
                            json_schema_extra={"enum": list(ACTION_NAMES)})),
    **_wire_fields(),
)


class CommitteeError(BaseModel):
    code: ErrorCode
    message: str


class AssetView(BaseModel):
    ticker: str
    name: str
    sector: str
    asset_class: Literal["equity", "bond"]
    cost_bps: float


class MarketView(BaseModel):
    prices: dict[str, float] = Field(default_factory=dict)
    returns_pct: dict[str, float] = Field(default_factory=dict,
                                         description="Last period's return of each asset, %.")
    cash_rate_pct: float = Field(default=0.0, description="Monthly cash rate, %.")


class PortfolioView(BaseModel):
    nav: float = Field(description="Net asset value (starts at 100).")
    weights: dict[str, float] = Field(description="Weights incl. CASH, fractions of NAV.")
    period_return_pct: float = 0.0
    cumulative_return_pct: float = 0.0
    high_water_mark: float = 0.0
    drawdown_pct: float = 0.0
    max_drawdown_pct: float = 0.0
    turnover: float = Field(default=0.0, description="Traded notional this period / NAV.")


class LimitView(BaseModel):
    limit: str = Field(description="asset:T, sector:S, volatility, excluded:T or "
                                   "drawdown_discipline.")
    value: float
    cap: float
    usage: float | None = Field(default=None, description="value / cap (None when cap is 0).")
    level: Literal["ok", "watch", "breach", "escalated"]


class RiskView(BaseModel):
    """The Risk Officer's headline figures for the current book (always visible)."""

    vol_annual_pct: float = 0.0
    vol_cap_annual_pct: float = 0.0
    largest_asset: str | None = None
    largest_asset_weight: float = 0.0
    largest_sector: str | None = None
    largest_sector_weight: float = 0.0
    drawdown_pct: float = 0.0
    drawdown_discipline: bool = Field(default=False,
                                      description="Vol capped at the de-risking level.")
    flags: list[LimitView] = Field(default_factory=list,
                                   description="Mandate items at watch level or worse.")
    market_stress: Literal["normal", "elevated", "severe"] = "normal"
    stress_ratio: float = Field(default=1.0, description="Fast equity-market volatility over "
                                                         "its norm (the officer's gauge).")
    position_alerts: dict[str, float] = Field(
        default_factory=dict, description="Holdings far below their recent high: ticker -> % "
                                          "below the high of the last few months.")


class MandateView(BaseModel):
    max_asset_weight: float
    max_sector_weight: float
    vol_budget_annual_pct: float
    drawdown_limit_pct: float
    derisk_vol_annual_pct: float
    excluded: list[str] = Field(default_factory=list)
    pending: dict[str, Any] | None = Field(
        default=None, description="An announced revision: effective_period, mandate, summary.")


class ResearchView(BaseModel):
    name: str = Field(description="Ticker or sector.")
    level: Literal["asset", "sector"]
    conviction: float = Field(ge=-1, le=1)
    stance: str
    period: int = Field(description="Period in which the analyst gave this view.")


class NoteView(BaseModel):
    period: int
    author: Literal["research", "risk", "committee", "pm"]
    kind: str
    text: str


class CommitteeObservation(Observation):
    """What the PM sees after each action (after reset: the opening book, no action)."""

    task: str = ""
    period: int = Field(default=0, ge=0, description="Periods completed.")
    horizon: int = Field(default=0, ge=0)
    action_type: str | None = Field(default=None, description="The action that ran, if any.")
    result: dict[str, Any] | None = Field(default=None,
                                          description="The research note, risk report or "
                                                      "trade confirmation.")
    error: CommitteeError | None = None
    events: list[str] = Field(default_factory=list)
    universe: list[AssetView] = Field(default_factory=list)
    market: MarketView = Field(default_factory=MarketView)
    portfolio: PortfolioView | None = None
    risk: RiskView = Field(default_factory=RiskView)
    mandate: MandateView | None = None
    research: list[ResearchView] = Field(default_factory=list,
                                         description="Latest view held per asset and sector.")
    notes: list[NoteView] = Field(default_factory=list, description="Recent committee notes.")
    query_budget: int = 0
    queries_used: int = 0
    queries_left: int = 0
    reward_breakdown: dict[str, float] = Field(default_factory=dict)
    reward_totals: dict[str, float] = Field(default_factory=dict)


class CommitteeState(State):
    """Episode bookkeeping, free of the hidden regime."""

    task: str | None = None
    seed: int | None = None
    split: str | None = None
    period: int = 0
    horizon: int = 0
    done: bool = False
    nav: float = 0.0
    total_reward: float = 0.0
    queries_used: int = 0
    query_budget: int = 0
    invalid_actions: int = 0
    breaches: int = 0
    periods_in_breach: int = Field(default=0, description="Periods with at least one breach.")
    enforcements: int = 0
    turnover: float = 0.0
    max_drawdown_pct: float = 0.0
    score: float | None = Field(default=None, description="The episode's score once done: "
                                                         "the objective in units of the "
                                                         "task's scale (scoring.py).")


class CommitteeResetRequest(ResetFields):
    """The body of `POST /reset`: its fields are `CommitteeEnvironment.reset`'s keywords. The
    reset aliases (`envkit.tasks`) are read too: `task_id` (a task, or a task id of OpenEnv's
    Task API, "test/5"), `split` + `index`, `parameters`."""

    @model_validator(mode="before")
    @classmethod
    def _aliases(cls, data: Any) -> Any:
        return unalias(data, TASK_GRIDS, named_task) if isinstance(data, Mapping) else data

    task: TaskName | None = Field(default=None, description="One of the four tasks; omitted: "
                                                          "the task AMC_TASK_ID names on the "
                                                          "server, else guided_allocation.")
    seed: int | None = Field(default=None, ge=0, description="Variant seed; omit for the "
                                                             "task's canonical instance (the "
                                                             "first train seed, never a test "
                                                             "seed).")
