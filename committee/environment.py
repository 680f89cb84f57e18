"""CommitteeEnvironment: a Portfolio Manager runs a multi-asset fund for a horizon of monthly
periods, between a Research Analyst who is keen and a Risk Officer who is strict.

Observation
    `CommitteeObservation`: prices and last returns of eight assets in four sectors (TECH,
    ENERGY, HEALTH, BONDS) plus cash; the book (weights, NAV, return, drawdown); the Risk
    Officer's headline figures and flags; the mandate and any announced revision; the latest
    research views the PM holds; recent committee notes; the query budget; this step's reward
    `reward_breakdown` and the running `reward_totals`. The action's `result` (a research note,
    a risk report or a trade confirmation) or a typed `error`. Never the hidden regime.

Actions
    `CommitteeAction(action_type, query_target=, weights=, reason=)` for one of six actions
    (`tools.py`): `query_research`, `query_risk` (cost a query from the budget), `allocate`,
    `revise_allocation`, `hold`, `move_to_cash`. Every action takes one period; while the PM
    asks a question the book is held. An invalid action (unknown action, bad or missing
    arguments, unknown target or asset, invalid weights, no queries left) returns a typed error
    and holds the book for the month. The same actions are MCP tools (`envkit.mcp`): a
    `tools/call` is one month of the session's episode.

Dynamics
    Hidden regimes (expansion, inflation, crisis, recovery, tech boom/correction) switch by a
    regime process per task (public in distribution, seeded per episode) and drive a factor
    model of monthly returns (`world/market.py`). The Risk Officer checks the mandate — max
    weight per asset and per sector, a volatility budget on its EWMA risk model, drawdown
    discipline, exclusions — warns as limits near, escalates persistent breaches and on the
    third consecutive one trades the book back inside the limits itself (`world/risk.py`). The
    analyst's convictions are noisy, sometimes biased or late (`world/research.py`).

Reward
    The increments of the objective (`scoring.py`): the expected utility, under the mandate's
    risk aversion, of the fund's terminal edge over cash net of breach fines. Per period, five
    signed terms in pts of the initial NAV (`rewards.py`): the book's gain, minus cash's, minus
    transaction costs and breach fines, plus the risk adjustment; the episode return is the
    utility of the episode's edge.

Episode end
    After `horizon` periods (20). The final observation's `metadata` holds the episode's
    `metrics`, its `score` (the utility in units of the task's scale: 0 is cash, 1 the regime
    oracle's mean; unbounded, losses count) and the score's components. Steps after the end
    return a typed `episode_done` error.

Reset arguments
    `task` (one of `tasks.TASK_NAMES`; default: the task `AMC_TASK_ID` names, as the
    prototype's servers read it, else `guided_allocation`), or the reset aliases of
    `envkit.tasks` (`task_id`, `split` + `index` of OpenEnv's Task API, which this class
    serves from `tasks.TASK_GRIDS`, and `parameters`), and `seed` (`None` plays
    the task's canonical instance, the first train seed — never a test seed; seeds select
    variants, split into train/validation/test ranges by `tasks.SPLITS`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata
from pydantic import ValidationError

from memex.committee import rewards as R
from memex.committee.book import Book
from memex.committee.models import (
    AssetView,
    CommitteeAction,
    CommitteeError,
    CommitteeObservation,
    CommitteeState,
    LimitView,
    MandateView,
    MarketView,
    NoteView,
    PortfolioView,
    ResearchView,
    RiskView,
)
from memex.committee.scoring import (
    BREACH_FINE_PTS,
    ENFORCEMENT_FINE_PTS,
    RISK_AVERSION,
    SCORE_SCALE_PTS,
    episode_score,
    outcome,
    utility,
)
from memex.committee.tools import (
    ACTIONS,
    MAX_REASON_CHARS,
    ActionError,
    Desk,
    Order,
    strict_weights,
)
from memex.committee.world import risk
from memex.committee.world.market import (
    CASH_RATE_PCT,
    INITIAL_NAV,
    SECTORS,
    TICKERS,
    UNIVERSE,
    Mandate,
    World,
)
from memex.committee.world.research import stance
from memex.committee.world.tasks import (
    TASK_GRIDS,
    TASK_NAMES,
    TASKS,
    generate,
    named_task,
    split_of,
)
from memex.envkit.errors import validation_message
from memex.envkit.mcp import DeclaredToolsMcp
from memex.envkit.tasks import RESET_ALIASES, TaskSplits, unalias

NOTES_SHOWN = 8
TASK_VARIABLE = "AMC_TASK_ID"  # names the task of a reset that names none
DEFAULT_TASK = "guided_allocation"
WIRE_PARAMS: tuple[str, ...] = tuple(
    n for n in CommitteeAction.model_fields if n not in ("action_type", "metadata"))
UNIVERSE_VIEW = [AssetView(ticker=a.ticker, name=a.name, sector=a.sector,
                           asset_class=a.asset_class, cost_bps=a.cost_bps) for a in UNIVERSE]


def default_task() -> str:
    """The task of a reset that names none: `AMC_TASK_ID` when set, else `DEFAULT_TASK`."""
    task = os.environ.get(TASK_VARIABLE) or DEFAULT_TASK
    if task not in TASKS:
        raise ValueError(f"{TASK_VARIABLE}={task!r} is not a task; tasks: "
                         f"{', '.join(TASK_NAMES)}")
    return task


@dataclass
class _Meeting:
    """What one step accumulates, part by part, before it is observed."""

    period: int
    action_type: str | None
    terms: R.RewardTerms = field(default_factory=R.RewardTerms)
    events: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    error: CommitteeError | None = None
    turnover: float = 0.0


class CommitteeEnvironment(DeclaredToolsMcp, TaskSplits,
                           Environment[CommitteeAction, CommitteeObservation, CommitteeState]):
    SUPPORTS_CONCURRENT_SESSIONS = True
    mcp_tools = ACTIONS
    task_catalog = TASK_GRIDS

    def mcp_action(self, name: str, arguments: dict[str, Any]) -> CommitteeAction:
        return CommitteeAction(action_type=name, **arguments)

    def __init__(self) -> None:
        super().__init__()
        self._world: World | None = None
        self._state = CommitteeState()

    # ---- lifecycle ------------------------------------------------------------------------
    def reset(self, seed: int | None = None, episode_id: str | None = None,
              task: str | None = None, **aliases: Any) -> CommitteeObservation:
        if any(k in aliases for k in RESET_ALIASES):  # task_id, split + index, parameters
            named = unalias({"task": task, "seed": seed, **aliases}, TASK_GRIDS, named_task)
            task, seed = named.get("task"), named.get("seed")
        task = default_task() if task is None else task
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}; tasks: {', '.join(TASK_NAMES)}")
        world = generate(task, seed)
        self._world = world
        self._prices = world.price_path()
        self._spec = TASKS[task]
        self._book = Book.open(world)
        self._desk = Desk(world, self._book)
        self._views: dict[str, tuple[float, int, str]] = {}   # name -> (conviction, period, level)
        self._notes: list[NoteView] = []
        self._last_review: tuple[tuple[str, str], ...] = ()
        self._alerts: dict[str, float] = {}
        self._totals = dict.fromkeys(R.TERMS, 0.0)
        self._return = 0.0
        self._edge = 0.0          # NAV over the cash alternative's, fines deducted (pts)
        self._cash_nav = INITIAL_NAV
        self._fines = 0.0
        self._queries = 0
        self._done = False
        self._last_returns: dict[str, float] = {}
        self._period_return = 0.0
        self._score: float | None = None
        self._state = CommitteeState(
            episode_id=episode_id, step_count=0, task=task, seed=world.seed,
            split=split_of(world.seed), horizon=world.horizon, nav=INITIAL_NAV,
            query_budget=self._spec.query_budget)
        self._note(0, "committee", "brief", f"{self._spec.title}: you run the fund for "
                   f"{world.horizon} monthly periods with {self._spec.query_budget} queries.")
        self._review()
        return self._observe(None, None, None, [], R.RewardTerms(), turnover=0.0)

    @property
    def state(self) -> CommitteeState:
        if self._world is not None:
            b = self._book
            self._state.period = b.period
            self._state.nav = round(b.nav, 4)
            self._state.turnover = round(b.turnover_total, 4)
            self._state.max_drawdown_pct = round(b.max_drawdown_pct, 4)
            self._state.queries_used = self._queries
            self._state.score = self._score
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="memex-committee", version="0.1.0",
            description="Investment committee: a Portfolio Manager between a noisy Research "
                        "Analyst and a strict Risk Officer, over hidden market regimes.")

    # ---- stepping -------------------------------------------------------------------------
    def step(self, action: CommitteeAction, timeout_s: float | None = None,
             **_: Any) -> CommitteeObservation:
        """One committee meeting: the PM's action, the Risk Officer's review of the book it
        leaves, the month's market move, then the period's reward and observation."""
        if self._world is None:
            return self._error_only("no_episode", "call reset before step")
        if self._done:
            return self._error_only("episode_done", "the episode has ended; call reset")
        return self._meet(action)

    def step_malformed(self, message: str) -> CommitteeObservation:
        """A step whose action could not be read at all (not an object, no readable
        `action_type`, a body that is not JSON): answered like any invalid action — a typed
        `malformed_action` error, and the book held for the month."""
        if self._world is None:
            return self._error_only("no_episode", "call reset before step")
        if self._done:
            return self._error_only("episode_done", "the episode has ended; call reset")
        return self._meet(None, message)

    def _meet(self, action: CommitteeAction | None, malformed: str = "") -> CommitteeObservation:
        self._state.step_count += 1
        meeting = _Meeting(period=self._book.period + 1,
                           action_type=action.action_type if action is not None else None)
        self._take_action(action, meeting, malformed)
        self._review_risk(meeting)
        self._move_market(meeting)
        return self._close_period(meeting)

    def _take_action(self, action: CommitteeAction | None, m: _Meeting, malformed: str) -> None:
        """Run the PM's action: a query's note, a decision's trade, or a typed error (the book
        is held)."""
        try:
            if action is None:
                raise ActionError("malformed_action", malformed)
            out, reason = self._dispatch(action)
        except ActionError as exc:
            m.error = CommitteeError(code=exc.code, message=str(exc))
            self._state.invalid_actions += 1
            m.events.append(f"invalid action ({exc.code}): the book is held this period")
            return
        if not isinstance(out, Order):
            m.result = out
            self._queries += 1
            self._record_query(m.action_type, m.period, out)
            return
        book = self._book
        if out.target is not None:
            nav = book.nav
            m.turnover, _ = book.trade_to(out.target)
            m.terms.transaction_cost = book.nav - nav
        m.result = {"traded": m.turnover > 0, "turnover": round(m.turnover, 4),
                    "cost_pts": round(-m.terms.transaction_cost, 4),
                    "weights": book.all_weights()}
        self._note(m.period, "pm", "decision", f"{m.action_type}"
                   + (f" (turnover {100 * m.turnover:.1f}%)" if m.turnover else "")
                   + (f": {reason}" if reason else ""))

    def _review_risk(self, m: _Meeting) -> None:
        """The Risk Officer checks the book the PM chose, before the market moves: breaches,
        their streaks and fines, and enforcement on the third consecutive breach."""
        book = self._book
        mandate = self._world.mandate_at(m.period)
        checks = risk.check_book(book.weights, mandate, book.cov, book.discipline)
        breached = {c.limit for c in risk.breaches(checks)}
        for c in checks:
            book.streaks[c.limit] = book.streaks.get(c.limit, 0) + 1 if c.limit in breached else 0
        m.terms.breach_fines = -BREACH_FINE_PTS * len(breached)
        self._state.breaches += len(breached)
        self._state.periods_in_breach += bool(breached)
        if breached:
            m.events.append("mandate breach: " + ", ".join(sorted(breached)))
        if any(book.streaks.get(k, 0) >= risk.ENFORCE_AFTER_PERIODS for k in breached):
            self._enforce(m, mandate, breached)

    def _enforce(self, m: _Meeting, mandate: Mandate, breached: set[str]) -> None:
        """The Risk Officer trades the book back inside the limits, for a further fine."""
        book = self._book
        target = risk.make_compliant(book.weights, mandate, book.cov, book.discipline)
        nav = book.nav
        forced, _ = book.trade_to(target)
        m.turnover += forced
        m.terms.transaction_cost += book.nav - nav
        m.terms.breach_fines -= ENFORCEMENT_FINE_PTS
        self._state.enforcements += 1
        book.streaks.clear()
        text = (f"Mandate enforced after {risk.ENFORCE_AFTER_PERIODS} periods in breach "
                f"({', '.join(sorted(breached))}): the Risk Officer traded the book back "
                f"inside the limits (turnover {100 * forced:.1f}%).")
        m.events.append(text)
        self._note(m.period, "risk", "enforcement", text)

    def _move_market(self, m: _Meeting) -> None:
        """The month passes: the book and the cash alternative earn their returns, and the
        officer posts changes of drawdown discipline and market stress."""
        world, book = self._world, self._book
        mandate = world.mandate_at(m.period)
        stress_before = risk.stress_level(book.stress_ratio)
        self._last_returns = dict(world.returns_pct[m.period - 1])
        nav = book.nav
        self._period_return = book.mark(self._last_returns)
        m.terms.portfolio_return = book.nav - nav
        cash_gain = self._cash_nav * CASH_RATE_PCT / 100
        self._cash_nav += cash_gain
        m.terms.cash_return = -cash_gain
        was_disciplined = book.discipline
        mark_before = book.discipline_mark
        book.update_discipline(world.mandate_at(m.period + 1).drawdown_limit_pct)
        retriggered = book.discipline and book.discipline_mark != mark_before
        if book.discipline != was_disciplined or retriggered:
            text = (f"Drawdown {book.drawdown_pct:.1f}% is past the "
                    f"{mandate.drawdown_limit_pct:.0f}% limit: drawdown discipline caps "
                    f"volatility at {mandate.derisk_vol_annual_pct:.0f}% a year for "
                    f"{book.discipline_left} periods."
                    if book.discipline else
                    f"Drawdown discipline lifted (drawdown {book.drawdown_pct:.1f}%).")
            m.events.append(text)
            self._note(m.period, "risk", "drawdown", text)
        stress = risk.stress_level(book.stress_ratio)
        if stress != stress_before:
            text = (f"Market stress {stress}: equity-market volatility is "
                    f"{book.stress_ratio:.1f}x its norm." + (
                        " Consider reducing equity risk." if stress != "normal" else ""))
            m.events.append(text)
            self._note(m.period, "risk", "stress", text)

    def _close_period(self, m: _Meeting) -> CommitteeObservation:
        """The period's reward (the change of the objective) into the running totals; the
        officer's review for the coming period, or the episode's end with its metrics and
        score."""
        self._fines -= m.terms.breach_fines
        self._edge = m.terms.settle(self._edge)
        reward = m.terms.total()
        self._return += reward
        for k, v in m.terms.as_dict().items():
            self._totals[k] += v
        self._state.total_reward = round(self._return, 6)
        if m.period < self._world.horizon:
            self._review()
            return self._observe(m.action_type, m.result, reward, m.events, m.terms,
                                 m.turnover, m.error)
        self._done = True
        self._state.done = True
        return self._observe(m.action_type, m.result, reward, m.events, m.terms, m.turnover,
                             m.error, done=True, metadata=self._final_metadata())

    def _dispatch(self, action: CommitteeAction) -> tuple[Any, str]:
        spec = ACTIONS.get(action.action_type)
        if spec is None:
            raise ActionError("unknown_action", f"unknown action {action.action_type!r}; "
                              f"actions: {', '.join(ACTIONS)}")
        given = {n: getattr(action, n) for n in WIRE_PARAMS if getattr(action, n) is not None}
        if "weights" in given and spec.name in ("allocate", "revise_allocation"):
            given["weights"] = strict_weights(given["weights"])  # before pydantic coerces
        try:
            args = spec.args_model.model_validate(given)
        except ValidationError as exc:
            raise ActionError("invalid_arguments", validation_message(exc)) from None
        kwargs = {n: getattr(args, n) for n in spec.args_model.model_fields}
        if spec.category == "query" and self._queries >= self._spec.query_budget:
            raise ActionError("query_budget_exhausted", f"all {self._spec.query_budget} "
                              "queries of this episode are used")
        reason = " ".join(str(kwargs.get("reason", "")).split())[:MAX_REASON_CHARS]
        return getattr(self._desk, spec.name)(**kwargs), reason

    # ---- reward terms that need the episode's memory ----------------------------------------
    def _record_query(self, name: str, period: int, note: dict[str, Any]) -> None:
        if name == "query_research":
            for v in note["views"]:
                self._views[v["name"]] = (v["conviction"], period, v["level"])
            self._note(period, "research", "research", note["text"])
        else:
            self._note(period, "risk", "report", self._risk_summary(note))

    # ---- the Risk Officer's end-of-period review and the committee's notes ------------------
    def _review(self) -> None:
        """The committee's and the Risk Officer's notes for the coming period: an announced or
        binding mandate revision, position alerts, and the flags when the picture changes."""
        world, book = self._world, self._book
        nxt = book.period + 1
        change = world.mandate_change
        if change is not None and nxt == change.announce_period:
            self._note(book.period, "committee", "mandate",
                       f"{change.summary} Effective from period {change.effective_period}.")
        if change is not None and nxt == change.effective_period:
            self._note(book.period, "committee", "mandate",
                       f"The revised mandate is binding from period {nxt} (next decision).")
        checks = risk.check_book(book.weights, world.mandate_at(nxt), book.cov, book.discipline)
        flagged = [c for c in checks if c.level != "ok"]
        alerts = risk.position_alerts(book.weights, self._prices[:book.period + 1])
        if set(alerts) - set(self._alerts):
            self._note(book.period, "risk", "position", "Risk Officer: position alert — "
                       + "; ".join(f"{t} {off:.1f}% below its "
                                   f"{risk.POSITION_LOOKBACK_PERIODS}-month high"
                                   for t, off in alerts.items()) + ". Review the thesis.")
        self._alerts = alerts
        levels = [risk.escalated_level(c, book.streaks) for c in flagged]
        signature = tuple(zip((c.limit for c in flagged), levels, strict=True))
        if signature != self._last_review:  # the officer writes when the picture changes
            if flagged:
                worst = "breach" if any(x in ("breach", "escalated") for x in levels) else "watch"
                self._note(book.period, "risk", worst, "Risk Officer: " + "; ".join(
                    risk.describe(c, lvl) for c, lvl in zip(flagged, levels, strict=True)) + ".")
            else:
                self._note(book.period, "risk", "clear",
                           "Risk Officer: every mandate item is back within bounds.")
            self._last_review = signature

    @staticmethod
    def _risk_summary(report: dict[str, Any]) -> str:
        target = report["target"]
        if target == "PORTFOLIO":
            issues = [x for x in report["limits"] if x["level"] != "ok"]
            return (f"Risk report: vol {report['vol_annual_pct']:.1f}% vs cap "
                    f"{report['vol_cap_annual_pct']:.1f}%, {len(issues)} item(s) flagged. "
                    f"{report['recommendation']['text']}")
        if target == "MANDATE":
            pending = report.get("pending")
            return "Risk report on the mandate" + (
                f": revision effective period {pending['effective_period']}." if pending
                else ": no revision pending.")
        if target in SECTORS:
            return (f"Risk report on {target}: weight {100 * report['weight']:.1f}% vs cap "
                    f"{100 * report['cap']:.0f}%.")
        return (f"Risk report on {target}: max weight now {100 * report['max_weight']:.1f}% "
                f"({report['max_weight_binding']}).")

    def _note(self, period: int, author: str, kind: str, text: str) -> None:
        self._notes.append(NoteView(period=period, author=author, kind=kind, text=text))

    # ---- views ----------------------------------------------------------------------------
    def _risk_view(self) -> RiskView:
        world, book = self._world, self._book
        nxt = min(book.period + 1, world.horizon)
        mandate = world.mandate_at(nxt)
        checks = risk.check_book(book.weights, mandate, book.cov, book.discipline)
        sectors = risk.sector_weights(book.weights)
        top_asset = max(TICKERS, key=lambda t: book.weights[t])
        top_sector = max(SECTORS, key=lambda s: sectors[s])
        return RiskView(
            vol_annual_pct=round(risk.vol_annual_pct(book.weights, book.cov), 2),
            vol_cap_annual_pct=risk.vol_cap(mandate, book.discipline),
            largest_asset=top_asset, largest_asset_weight=round(book.weights[top_asset], 4),
            largest_sector=top_sector, largest_sector_weight=round(sectors[top_sector], 4),
            drawdown_pct=round(book.drawdown_pct, 2), drawdown_discipline=book.discipline,
            market_stress=risk.stress_level(book.stress_ratio),
            position_alerts=dict(self._alerts),
            stress_ratio=round(book.stress_ratio, 2),
            flags=[LimitView(limit=c.limit, value=round(c.value, 4), cap=c.cap,
                             usage=round(c.usage, 3) if c.cap > 0 else None,
                             level=risk.escalated_level(c, book.streaks))
                   for c in checks if c.level != "ok"])

    def _mandate_view(self) -> MandateView:
        world, book = self._world, self._book
        nxt = min(book.period + 1, world.horizon)
        m = world.mandate_at(nxt)
        change = world.mandate_change
        pending = None
        if change is not None and change.announce_period <= nxt < change.effective_period:
            pending = {"effective_period": change.effective_period,
                       "mandate": change.mandate.as_dict(), "summary": change.summary}
        return MandateView(**m.as_dict(), pending=pending)

    def _observe(self, action_type: str | None, result: dict[str, Any] | None,
                 reward: float | None, events: list[str], terms: R.RewardTerms,
                 turnover: float, error: CommitteeError | None = None, done: bool = False,
                 metadata: dict[str, Any] | None = None) -> CommitteeObservation:
        world, book = self._world, self._book
        prices = self._prices[book.period]
        return CommitteeObservation(
            task=world.task, period=book.period, horizon=world.horizon, action_type=action_type,
            result=result, error=error, events=events, universe=UNIVERSE_VIEW,
            market=MarketView(prices={t: round(p, 2) for t, p in prices.items()},
                              returns_pct={t: round(r, 2) for t, r in self._last_returns.items()},
                              cash_rate_pct=CASH_RATE_PCT),
            portfolio=PortfolioView(
                nav=round(book.nav, 4), weights=book.all_weights(),
                period_return_pct=round(100 * self._period_return, 4),
                cumulative_return_pct=round(100 * (book.nav / INITIAL_NAV - 1), 4),
                high_water_mark=round(book.high_water_mark, 4),
                drawdown_pct=round(book.drawdown_pct, 4),
                max_drawdown_pct=round(book.max_drawdown_pct, 4), turnover=round(turnover, 4)),
            risk=self._risk_view(), mandate=self._mandate_view(),
            research=[ResearchView(name=n, level=lvl, conviction=c, stance=stance(c), period=p)
                      for n, (c, p, lvl) in sorted(self._views.items())],
            notes=self._notes[-NOTES_SHOWN:],
            query_budget=self._spec.query_budget, queries_used=self._queries,
            queries_left=self._spec.query_budget - self._queries,
            reward=reward, done=done, reward_breakdown=terms.as_dict() if reward is not None
            else {}, reward_totals={k: round(v, 6) for k, v in self._totals.items()},
            metadata=metadata or {})

    def _final_metadata(self) -> dict[str, Any]:
        world, book = self._world, self._book
        excess = book.nav - self._cash_nav
        self._score = episode_score(self._edge, world.task)
        metrics = {
            "episode_return": round(self._return, 6),
            "utility_pts": round(utility(self._edge), 6),
            "edge_pts": round(self._edge, 6),
            "excess_nav_pts": round(excess, 6),
            "fines_pts": round(self._fines, 6),
            "final_nav": round(book.nav, 4),
            "cash_nav": round(self._cash_nav, 4),
            "total_return_pct": round(100 * (book.nav / INITIAL_NAV - 1), 4),
            "cash_return_pct": round(100 * (self._cash_nav / INITIAL_NAV - 1), 4),
            "max_drawdown_pct": round(book.max_drawdown_pct, 4),
            "turnover": round(book.turnover_total, 4),
            "queries_used": self._queries,
            "invalid_actions": self._state.invalid_actions,
            "breaches": self._state.breaches,
            "enforcements": self._state.enforcements,
        }
        components = {"utility_pts": metrics["utility_pts"], "edge_pts": metrics["edge_pts"],
                      "excess_nav_pts": metrics["excess_nav_pts"],
                      "fines_pts": metrics["fines_pts"],
                      "scale_pts": SCORE_SCALE_PTS[world.task],
                      "risk_aversion": RISK_AVERSION}
        return {"metrics": metrics, "score": self._score, "score_components": components}

    def _error_only(self, code: str, message: str) -> CommitteeObservation:
        return CommitteeObservation(error=CommitteeError(code=code, message=message), reward=0.0,
                                    done=True, task=self._state.task or "",
                                    period=self._state.period, horizon=self._state.horizon)

    # ---- an episode the PM leaves unfinished (sealed evaluation ends it here) ----------------
    def abandon(self) -> CommitteeObservation:
        """End the episode now, scored as an unfinished book: the book the PM left is held,
        untouched, through the remaining periods — the Risk Officer still reviews it (fines and
        enforcement included) and the market still moves — and scored at the horizon like any
        other. Leaving early neither locks in a gain nor escapes a loss, and the steps not taken
        are not counted. Returns the final observation (its metadata marks the period the PM
        left). An episode that has ended, or none, gets its typed error instead."""
        if self._world is None:
            return self._error_only("no_episode", "call reset before abandon")
        if self._done:
            return self._error_only("episode_done", "the episode has ended; call reset")
        left_at = self._book.period
        events = [f"the PM left after period {left_at}: the book is held to the horizon"]
        while True:
            meeting = _Meeting(period=self._book.period + 1, action_type=None, events=events)
            self._review_risk(meeting)
            self._move_market(meeting)
            obs = self._close_period(meeting)
            events = []
            if obs.done:
                obs.metadata["left_at_period"] = left_at
                return obs

    def episode_result(self) -> dict[str, Any] | None:
        """The ended episode's `outcome` (`beat_cash` or `below_cash`), its `score` (the
        objective in units of the task's scale) and its `return`; None while it runs."""
        if not self._done or self._score is None:
            return None
        return {"outcome": outcome(self._edge), "score": self._score,
                "return": round(self._return, 6)}

    # ---- in-process access for the oracle, the scorer and tests (never sent to clients) -----
    @property
    def current_world(self) -> World | None:
        """The episode's world, hidden regimes included; not reachable over the wire."""
        return self._world
