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
    (`actions.py`): `query_research`, `query_risk` (cost a query from the budget), `allocate`,
    `revise_allocation`, `hold`, `move_to_cash`. Every action takes one period; while the PM
    asks a question the book is held. An invalid action (unknown action, bad or missing
    arguments, unknown target or asset, invalid weights, no queries left) returns a typed error,
    holds the book and costs the invalid-action penalty.

Dynamics
    Hidden regimes (expansion, inflation, crisis, recovery, tech boom/correction) switch by a
    regime process per task (public in distribution, seeded per episode) and drive a factor
    model of monthly returns (`world.py`). The Risk Officer checks the mandate — max weight per
    asset and per sector, a volatility budget on its EWMA risk model, drawdown discipline,
    exclusions — warns as limits near, escalates persistent breaches and on the third
    consecutive one trades the book back inside the limits itself (`risk.py`). The analyst's
    convictions are noisy, sometimes biased or late
    (`research.py`).

Reward
    Per period, the sum of ten signed terms in pts of NAV (`rewards.py`): portfolio return,
    signal alignment, information usage, risk response, minus transaction cost, query cost,
    variance, drawdown, compliance and invalid-action penalties. The episode return is the sum
    of the per-step rewards.

Episode end
    After `horizon` periods (20). The final observation's `metadata` holds the episode's
    `metrics` and, when the environment was given the reference returns (`references.py`:
    `ScoredCommitteeEnvironment`), `score` in [-1, 1] (`scoring.py`: the episode's edge over
    cash in units of the task's typical reference edge; losses count). Steps after the end
    return a typed `episode_done` error.

Reset arguments
    `task` (one of `tasks.TASK_NAMES`, default `guided_allocation`) and `seed` (`None` plays
    the task's canonical instance, the first train seed — never a test seed; seeds select
    variants, split into train/validation/test ranges by `tasks.SPLITS`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
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
    REFERENCE_EDGE_PTS,
    SCORE_RANGE,
    References,
    normalised_score,
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
    SECTOR_OF,
    SECTORS,
    TICKERS,
    UNIVERSE,
    Mandate,
    World,
)
from memex.committee.world.research import stance
from memex.committee.world.tasks import TASK_NAMES, TASKS, generate, split_of
from memex.envkit.errors import validation_message

NOTES_SHOWN = 8
WIRE_PARAMS: tuple[str, ...] = tuple(
    n for n in CommitteeAction.model_fields if n not in ("action_type", "metadata"))
UNIVERSE_VIEW = [AssetView(ticker=a.ticker, name=a.name, sector=a.sector,
                           asset_class=a.asset_class, cost_bps=a.cost_bps) for a in UNIVERSE]


ReferenceFn = Callable[[str, int], References]


@dataclass
class _Meeting:
    """What one step accumulates, part by part, before it is observed."""

    period: int
    action_type: str
    terms: R.RewardTerms = field(default_factory=R.RewardTerms)
    events: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    error: CommitteeError | None = None
    turnover: float = 0.0


class CommitteeEnvironment(Environment[CommitteeAction, CommitteeObservation, CommitteeState]):
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, references: ReferenceFn | None = None) -> None:
        """`references(task, seed)` gives the episode's reference returns (cash and the regime
        oracle, `committee/references.py`); without it the final observation carries no score
        (the reference oracle itself plays unscored episodes)."""
        super().__init__()
        self._references = references
        self._world: World | None = None
        self._state = CommitteeState()

    # ---- lifecycle ------------------------------------------------------------------------
    def reset(self, seed: int | None = None, episode_id: str | None = None,
              task: str = "guided_allocation", **_: Any) -> CommitteeObservation:
        if task not in TASKS:
            raise ValueError(f"unknown task {task!r}; tasks: {', '.join(TASK_NAMES)}")
        world = generate(task, seed)
        self._world = world
        self._prices = world.price_path()
        self._spec = TASKS[task]
        self._book = Book.open(world)
        self._desk = Desk(world, self._book)
        self._views: dict[str, tuple[float, int, str]] = {}   # name -> (conviction, period, level)
        self._last_research: int | None = None
        self._last_risk: int | None = None
        self._last_rewarded_trade = 0
        self._info_bonuses = 0
        self._bonus_paid = 0.0
        self._risk_responses = 0
        # warnings the PM can earn the risk-response bonus for: limit -> (deadline, mandate)
        self._eligible: dict[str, tuple[int, Mandate]] = {}
        self._notes: list[NoteView] = []
        self._last_review: tuple[tuple[str, str], ...] = ()
        self._alerts: dict[str, float] = {}
        self._totals = dict.fromkeys(R.TERMS, 0.0)
        self._return = 0.0
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
        self._review(set())
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
        self._state.step_count += 1
        meeting = _Meeting(period=self._book.period + 1, action_type=action.action_type)
        self._take_action(action, meeting)
        breached = self._review_risk(meeting)
        self._price_the_book(meeting)
        self._move_market(meeting)
        return self._close_period(meeting, breached)

    def _take_action(self, action: CommitteeAction, m: _Meeting) -> None:
        """Run the PM's action: a query's note, a decision's trade, or a typed error (the book
        is held and the invalid-action penalty paid)."""
        try:
            out, reason = self._dispatch(action)
        except ActionError as exc:
            m.error = CommitteeError(code=exc.code, message=str(exc))
            m.terms.invalid_action_penalty = -R.INVALID_ACTION_PENALTY_PTS
            self._state.invalid_actions += 1
            m.events.append(f"invalid action ({exc.code}): the book is held this period")
            return
        if not isinstance(out, Order):
            m.result = out
            self._queries += 1
            m.terms.query_cost = -R.QUERY_COST_PTS
            self._record_query(m.action_type, m.period, out)
            return
        book = self._book
        if out.target is not None:
            m.turnover, cost = book.trade_to(out.target)
            m.terms.transaction_cost = -R.RETURN_SCALE_PTS * cost
            m.terms.information_usage = self._information_bonus(m.period, m.turnover)
        m.result = {"traded": m.turnover > 0, "turnover": round(m.turnover, 4),
                    "cost_pts": round(-m.terms.transaction_cost, 4),
                    "weights": book.all_weights()}
        self._note(m.period, "pm", "decision", f"{m.action_type}"
                   + (f" (turnover {100 * m.turnover:.1f}%)" if m.turnover else "")
                   + (f": {reason}" if reason else ""))

    def _review_risk(self, m: _Meeting) -> set[str]:
        """The Risk Officer checks the book the PM chose, before the market moves: breaches
        and their streaks, the compliance penalty, the risk-response bonus, and enforcement on
        the third consecutive breach. Returns the limits in breach."""
        book = self._book
        mandate = self._world.mandate_at(m.period)
        checks = risk.check_book(book.weights, mandate, book.cov, book.discipline)
        breached = {c.limit for c in risk.breaches(checks)}
        pm_traded = m.turnover > 0 and m.error is None
        m.terms.risk_response = self._risk_response(m.period, pm_traded)
        for c in checks:
            book.streaks[c.limit] = book.streaks.get(c.limit, 0) + 1 if c.limit in breached else 0
        m.terms.compliance_penalty = -R.COMPLIANCE_PENALTY_PTS * len(breached)
        self._state.breaches += len(breached)
        self._state.periods_in_breach += bool(breached)
        if breached:
            m.events.append("mandate breach: " + ", ".join(sorted(breached)))
        if any(book.streaks.get(k, 0) >= risk.ENFORCE_AFTER_PERIODS for k in breached):
            self._enforce(m, mandate, breached)
        return breached

    def _enforce(self, m: _Meeting, mandate: Mandate, breached: set[str]) -> None:
        """The Risk Officer trades the book back inside the limits, at a penalty."""
        book = self._book
        target = risk.make_compliant(book.weights, mandate, book.cov, book.discipline)
        forced, cost = book.trade_to(target)
        m.turnover += forced
        m.terms.transaction_cost -= R.RETURN_SCALE_PTS * cost
        m.terms.compliance_penalty -= R.ENFORCEMENT_PENALTY_PTS
        self._state.enforcements += 1
        book.streaks.clear()
        text = (f"Mandate enforced after {risk.ENFORCE_AFTER_PERIODS} periods in breach "
                f"({', '.join(sorted(breached))}): the Risk Officer traded the book back "
                f"inside the limits (turnover {100 * forced:.1f}%).")
        m.events.append(text)
        self._note(m.period, "risk", "enforcement", text)

    def _price_the_book(self, m: _Meeting) -> None:
        """The terms of the book held into the month: its variance under the officer's model,
        its alignment with fresh research, and the episode's cap on the bonuses."""
        book = self._book
        m.terms.variance_penalty = -R.VARIANCE_AVERSION * risk.variance_pct2(book.weights,
                                                                             book.cov)
        m.terms.signal_alignment = self._alignment(m.period)
        self._cap_bonuses(m.terms)

    def _move_market(self, m: _Meeting) -> None:
        """The month passes: the book earns its return, the drawdown deepens or not, and the
        officer posts changes of drawdown discipline and market stress."""
        world, book = self._world, self._book
        mandate = world.mandate_at(m.period)
        mdd_before = book.max_drawdown_pct
        stress_before = risk.stress_level(book.stress_ratio)
        self._last_returns = dict(world.returns_pct[m.period - 1])
        self._period_return = book.mark(self._last_returns)
        m.terms.portfolio_return = R.RETURN_SCALE_PTS * self._period_return
        m.terms.drawdown_penalty = -R.DRAWDOWN_WEIGHT * (book.max_drawdown_pct - mdd_before)
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

    def _close_period(self, m: _Meeting, breached: set[str]) -> CommitteeObservation:
        """The period's reward into the running totals; the officer's review for the coming
        period, or the episode's end with its metrics and score."""
        reward = m.terms.total()
        self._return += reward
        for k, v in m.terms.as_dict().items():
            self._totals[k] += v
        self._state.total_reward = round(self._return, 6)
        if m.period < self._world.horizon:
            self._review(breached)
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
            self._last_research = period
            for v in note["views"]:
                self._views[v["name"]] = (v["conviction"], period, v["level"])
            self._note(period, "research", "research", note["text"])
        else:
            self._last_risk = period
            self._note(period, "risk", "report", self._risk_summary(note))

    def _information_bonus(self, period: int, turnover: float) -> float:
        """A sizeable trade made with a fresh research note and a fresh risk report, both
        newer than the last rewarded trade."""
        if turnover < R.INFO_MIN_TURNOVER or self._info_bonuses >= R.MAX_INFO_BONUSES:
            return 0.0
        r, k = self._last_research, self._last_risk
        if r is None or k is None:
            return 0.0
        fresh = period - r < R.RESEARCH_FRESH_PERIODS and period - k < R.RESEARCH_FRESH_PERIODS
        if not (fresh and r > self._last_rewarded_trade and k > self._last_rewarded_trade):
            return 0.0
        self._info_bonuses += 1
        self._last_rewarded_trade = period
        return R.INFO_BONUS_PTS

    def _risk_response(self, period: int, pm_traded: bool) -> float:
        """Breaches the market or a mandate revision caused, fixed by a PM trade by their
        deadline: the end of the response window, or the revision's effective period (fixing
        early counts). A breach that goes away without a PM trade (a hold, prices drifting
        back) is dropped unpaid."""
        bonus = 0.0
        book = self._book
        for limit, (deadline, mandate) in list(self._eligible.items()):
            checks = risk.check_book(book.weights, mandate, book.cov, book.discipline)
            if limit not in {c.limit for c in risk.breaches(checks)}:
                del self._eligible[limit]
                if pm_traded and self._risk_responses < R.MAX_RISK_RESPONSES:
                    self._risk_responses += 1
                    bonus += R.RISK_RESPONSE_BONUS_PTS
            elif period >= deadline:
                del self._eligible[limit]
        return bonus

    def _alignment(self, period: int) -> float:
        total = 0.0
        for t in TICKERS:
            w = self._book.weights[t]
            if w <= 0:
                continue
            view = self._views.get(t)
            if view is None or period - view[1] >= R.RESEARCH_FRESH_PERIODS:
                view = self._views.get(SECTOR_OF[t])
            if view is not None and period - view[1] < R.RESEARCH_FRESH_PERIODS:
                total += w * self._debiased(view[0], SECTOR_OF[t])
        return R.ALIGNMENT_WEIGHT * total

    def _debiased(self, conviction: float, sector: str) -> float:
        """The conviction with the analyst's documented pet-sector bias taken out."""
        bias = self._spec.research_bias.get(sector, 0.0)
        if not bias:
            return conviction
        clipped = max(-0.999, min(0.999, conviction))
        return math.tanh(math.atanh(clipped) - bias)

    def _cap_bonuses(self, terms: R.RewardTerms) -> None:
        """Scale this period's positive bonuses down to what is left of `MAX_BONUS_PTS`."""
        paid = sum(max(0.0, getattr(terms, k)) for k in R.BONUS_TERMS)
        if paid <= 0:
            return
        room = max(0.0, R.MAX_BONUS_PTS - self._bonus_paid)
        if paid > room:
            for k in R.BONUS_TERMS:
                v = getattr(terms, k)
                if v > 0:
                    setattr(terms, k, v * room / paid)
            paid = room
        self._bonus_paid += paid

    # ---- the Risk Officer's end-of-period review and the committee's notes ------------------
    def _review(self, breached_at_check: set[str]) -> None:
        """Flags for the coming period. A breach the PM did not trade into (it was compliant
        at this period's check) is a warning the PM may earn the risk-response bonus for."""
        world, book = self._world, self._book
        nxt = book.period + 1
        change = world.mandate_change
        if change is not None and nxt == change.announce_period:
            self._note(book.period, "committee", "mandate",
                       f"{change.summary} Effective from period {change.effective_period}.")
            future = risk.check_book(book.weights, change.mandate, book.cov, book.discipline)
            for c in risk.breaches(future):
                self._eligible.setdefault(c.limit, (change.effective_period, change.mandate))
        if change is not None and nxt == change.effective_period:
            self._note(book.period, "committee", "mandate",
                       f"The revised mandate is binding from period {nxt} (next decision).")
        checks = risk.check_book(book.weights, world.mandate_at(nxt), book.cov, book.discipline)
        flagged = [c for c in checks if c.level != "ok"]
        for c in risk.breaches(checks):
            if c.limit not in breached_at_check and c.limit not in self._eligible:
                self._eligible[c.limit] = (book.period + R.RESPONSE_WINDOW_PERIODS,
                                           world.mandate_at(nxt))
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
        metrics = {
            "episode_return": round(self._return, 6),
            "final_nav": round(book.nav, 4),
            "total_return_pct": round(100 * (book.nav / INITIAL_NAV - 1), 4),
            "cash_return_pct": round(100 * ((1 + CASH_RATE_PCT / 100) ** world.horizon - 1), 4),
            "max_drawdown_pct": round(book.max_drawdown_pct, 4),
            "turnover": round(book.turnover_total, 4),
            "queries_used": self._queries,
            "invalid_actions": self._state.invalid_actions,
            "breaches": self._state.breaches,
            "enforcements": self._state.enforcements,
            "info_bonuses": self._info_bonuses,
            "risk_responses": self._risk_responses,
        }
        meta: dict[str, Any] = {"metrics": metrics}
        if self._references is not None:
            refs = self._references(world.task, world.seed)
            self._score = normalised_score(self._return, refs, world.task)
            meta["score"] = self._score
            meta["score_components"] = {"episode_return": round(self._return, 6),
                                        "cash_reference": refs.cash,
                                        "oracle_reference": refs.oracle,
                                        "reference_edge_pts": REFERENCE_EDGE_PTS[world.task],
                                        "range": list(SCORE_RANGE)}
        return meta

    def _error_only(self, code: str, message: str) -> CommitteeObservation:
        return CommitteeObservation(error=CommitteeError(code=code, message=message), reward=0.0,
                                    done=True, task=self._state.task or "",
                                    period=self._state.period, horizon=self._state.horizon)

    # ---- in-process access for the oracle, the scorer and tests (never sent to clients) -----
    @property
    def current_world(self) -> World | None:
        """The episode's world, hidden regimes included; not reachable over the wire."""
        return self._world
