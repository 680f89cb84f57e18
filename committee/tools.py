"""The Portfolio Manager's six actions, declared once.

Each action is a method of `Desk` with typed parameters and a Google-style docstring. `ACTIONS`
derives from these declarations every other interface: the environment's argument validation,
the OpenEnv action schema (`CommitteeAction` in `models.py`), the adapter's tool schemas for
LLM tool calling, and the prompt's action list. Queries return a note from the Research
Analyst or the Risk Officer; decisions return an `Order` that the environment executes before
the market moves. Every action takes one committee meeting, i.e. one period: while the PM asks
a question the book is held.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from memex.committee.book import Book
from memex.committee.world import risk
from memex.committee.world.market import CASH, SECTORS, TICKERS, World
from memex.committee.world.research import RESEARCH_TARGETS, research_note
from memex.envkit.declarations import ToolSpec, declare, prompt_list
from memex.envkit.errors import CodedError

RISK_TARGETS: tuple[str, ...] = ("PORTFOLIO", "MANDATE", *SECTORS, *TICKERS)
WEIGHT_TOLERANCE = 1e-3
MAX_REASON_CHARS = 300


class ActionError(CodedError):
    """An action the desk cannot carry out (unknown target, invalid weights...)."""


def strict_weights(weights: object) -> dict[str, float]:
    """The wire's weights checked strictly, before any coercion: a JSON object whose keys are
    exact tickers (or "CASH") and whose values are finite numbers in [0, 1] — never booleans or
    strings. Raises `ActionError` with code `invalid_weights` or `unknown_asset`."""
    if not isinstance(weights, dict):
        raise ActionError("invalid_weights", "weights must be an object {ticker: fraction}")
    out: dict[str, float] = {}
    for key, value in weights.items():
        if key != CASH and key not in TICKERS:
            raise ActionError("unknown_asset", f"unknown asset {key!r}; tickers (exact, upper "
                              f"case): {', '.join(TICKERS)}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ActionError("invalid_weights", f"weight of {key} must be a number, got "
                              f"{type(value).__name__} {value!r}")
        if not math.isfinite(value) or value < 0:
            raise ActionError("invalid_weights", f"weight of {key} must be a finite number "
                              f">= 0 (long only), got {value!r}")
        if value > 1 + WEIGHT_TOLERANCE:
            raise ActionError("invalid_weights", f"weight of {key} is {value!r}; weights are "
                              "fractions of NAV (0.25 means 25%)")
        out[key] = float(value)
    return out


@dataclass(frozen=True)
class Order:
    """What a decision hands to the environment: a full target book, or None to hold."""

    target: dict[str, float] | None


class Desk:
    """The PM's desk over one episode: the committee's two actors and the order ticket."""

    def __init__(self, world: World, book: Book):
        self.world = world
        self.book = book

    @property
    def _period(self) -> int:
        return self.book.period + 1

    # ---- queries --------------------------------------------------------------------------
    def query_research(self, query_target: str = "SECTOR", reason: str = "") -> dict:
        """Ask the Research Analyst for buy/sell convictions in [-1, 1] (noisy views of each
        asset's expected return over cash). Costs one query from the budget; the book is
        held this period.

        Args:
            query_target: "SECTOR" (one view per sector), "MARKET" (every asset), a sector
                (TECH, ENERGY, HEALTH, BONDS: its assets, sharper) or a ticker (sharpest).
            reason: Why you ask, for the committee minutes (not scored).

        Returns:
            The analyst's note: one view per asset or sector with conviction and stance.
        """
        target = query_target.strip().upper()
        if target not in RESEARCH_TARGETS:
            raise ActionError("unknown_target", f"unknown research target {query_target!r}; "
                              f"use SECTOR, MARKET, a sector ({', '.join(SECTORS)}) or a "
                              f"ticker ({', '.join(TICKERS)})")
        return research_note(self.world, self._period, target)

    def query_risk(self, query_target: str = "PORTFOLIO", reason: str = "") -> dict:
        """Ask the Risk Officer for a report. Costs one query from the budget; the book is
        held this period.

        Args:
            query_target: "PORTFOLIO" (volatility, every limit's usage, risk contributions,
                asset volatilities, correlations and recommended trims), "MANDATE" (the
                mandate and any announced revision), a sector (its weight, headroom and
                members) or a ticker (the largest weight the mandate allows it now).
            reason: Why you ask, for the committee minutes (not scored).

        Returns:
            The Risk Officer's report on the target.
        """
        target = query_target.strip().upper()
        b, m = self.book, self.world.mandate_at(self._period)
        if target == "PORTFOLIO":
            return risk.portfolio_report(b.weights, m, b.cov, b.discipline, b.drawdown_pct,
                                         b.streaks)
        if target == "MANDATE":
            return risk.mandate_report(self.world, self._period)
        if target in SECTORS:
            return risk.sector_report(target, b.weights, m, b.cov)
        if target in TICKERS:
            return risk.asset_report(target, b.weights, m, b.cov, b.discipline)
        raise ActionError("unknown_target", f"unknown risk target {query_target!r}; use "
                          f"PORTFOLIO, MANDATE, a sector ({', '.join(SECTORS)}) or a ticker "
                          f"({', '.join(TICKERS)})")

    # ---- decisions ------------------------------------------------------------------------
    def allocate(self, weights: dict[str, float], reason: str = "") -> Order:
        """Set the whole book: target weights as fractions of NAV (0.25 = 25%). Assets not
        named go to zero; whatever is not invested is cash. Trades cost each asset's
        transaction cost in bps.

        Args:
            weights: Target weight per ticker, e.g. {"NOVA": 0.2, "GOVT": 0.3}; long only,
                summing to at most 1 (a "CASH" entry is allowed if everything sums to 1).
            reason: The rationale, for the committee minutes (not scored).

        Returns:
            The trade confirmation and the new book.
        """
        return Order(self._target(weights, partial=False))

    def revise_allocation(self, weights: dict[str, float], reason: str = "") -> Order:
        """Change only the named positions to the given weights (fractions of NAV); every
        other position keeps its current weight and cash absorbs the difference.

        Args:
            weights: New weight per ticker to change, e.g. {"NOVA": 0.25}; 0 sells it out.
            reason: The rationale, for the committee minutes (not scored).

        Returns:
            The trade confirmation and the new book.
        """
        return Order(self._target(weights, partial=True))

    def hold(self, reason: str = "") -> Order:
        """Keep the book as it is for this period (no trades, no cost).

        Args:
            reason: The rationale, for the committee minutes (not scored).

        Returns:
            The book after the period.
        """
        return Order(None)

    def move_to_cash(self, reason: str = "") -> Order:
        """Sell every position; the whole book earns the cash rate from this period on.

        Args:
            reason: The rationale, for the committee minutes (not scored).

        Returns:
            The trade confirmation and the new book.
        """
        return Order(dict.fromkeys(TICKERS, 0.0))

    # ---- validation -----------------------------------------------------------------------
    def _target(self, weights: dict[str, float], partial: bool) -> dict[str, float]:
        given = dict(strict_weights(weights))
        if not given:
            raise ActionError("invalid_weights", "give at least one weight" + (
                "" if partial else "; use move_to_cash to sell everything"))
        cash = given.pop(CASH, None)
        given = {t: min(v, 1.0) for t, v in given.items()}
        base = self.book.weights if partial else dict.fromkeys(TICKERS, 0.0)
        target = {t: given.get(t, base[t]) for t in TICKERS}
        invested = sum(target.values())
        if invested > 1 + WEIGHT_TOLERANCE:
            raise ActionError("invalid_weights", f"weights sum to {invested:.4f} > 1; no "
                              "leverage: the risky weights must sum to at most 1")
        if cash is not None and abs(invested + cash - 1) > 5 * WEIGHT_TOLERANCE:
            raise ActionError("invalid_weights", f"with a CASH entry the weights must sum to 1, "
                              f"got {invested + cash:.4f}")
        if invested > 1:
            target = {t: w / invested for t, w in target.items()}
        return target


# ---- derived declarations ----------------------------------------------------------------

ACTION_NAMES: tuple[str, ...] = (
    "query_research", "query_risk", "allocate", "revise_allocation", "hold", "move_to_cash")
ACTIONS: dict[str, ToolSpec] = declare(
    Desk, ACTION_NAMES, lambda name: "query" if name.startswith("query_") else "decision")


def prompt_action_list() -> str:
    """The action list for an LLM prompt, derived from the declarations."""
    return prompt_list(ACTIONS)
