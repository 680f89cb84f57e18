"""The text rubric: a deterministic score in [0, 1] of the SAR narrative or the close reason.

It reads the text for facts a reviewer can check against the case file — who, what, when, where
and why — and pays only for facts that match records the agent saw. It enters the terminal
score of a correct decision at a small weight (`graders.terminal.RUBRIC_WEIGHT`); like the other
terminal components it is reported only in the final observation's breakdown.

SAR narrative — the mean of five parts:

| part | in [0, 1] |
|---|---|
| who | share of the true subjects the text names, by ID or by their record's name (seen ones) |
| what | share of the amounts quoted that match a seen record, to the precision stated |
| when | share of the dates quoted that match a date on a seen record |
| where | share of the record IDs cited (beyond the alert's) that evidence the case |
| why | 1 / (typologies the text names) when the filing's typology is among them, else 0 |

Close reason — `explanation x (0.6 + 0.2 what + 0.2 when)`, where `explanation` is the share of
the record IDs cited (beyond the alert's) that belong to the explanation, when at least one does
(the explanation's records: `GroundTruth.explanation_ids`, or the deciding views of a benign
case when a case lists none). A reason that does not cite the explanation it found scores 0.

Rules that keep it honest:
- Facts of the alert itself (its figures, window and alerted transactions) count half in `what`
  and `when`: a narrative reports what the investigation found, and a copy of the alert text
  does not score full.
- A SAR narrative that names no subject, no matching amount or date and no evidence record
  scores 0, whatever else it says (boilerplate such as "Suspicious activity. Structuring.").
- An amount matches when a seen record holds it to the precision the text states it:
  "$9,950.25" within half a cent, "$9,950" within half a dollar, "$1.2 million" within $50,000.
  Bare counts below 100, percentages and years are not amounts. Dates are read as ISO
  (2024-03-05) or with a month name (5 March 2024, March 5, 2024, Mar 5 2024).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from itertools import chain
from typing import get_args, get_origin

from pydantic import BaseModel

from memex.graders.decision import Decision
from memex.scenarios.ids import ID_PATTERN
from memex.scenarios.model import PublicCase
from memex.scenarios.truth import GroundTruth

SAR_PARTS = ("who", "what", "when", "where", "why")
CLOSE_BASE, CLOSE_FACT_WEIGHT = 0.6, 0.2  # explanation x (base + weight x what + weight x when)
ALERT_FACT_CREDIT = 0.5  # what / when quoting only the alert's own facts
MIN_BARE_AMOUNT = 100.0  # a number without a currency mark below this is a count, not an amount

# How a narrative names each typology (text lower-cased, "_" and "-" read as spaces).
TYPOLOGY_PHRASES: dict[str, tuple[str, ...]] = {
    "structuring": ("structuring", "structured deposits", "structured cash"),
    "layering": ("layering", "layered"),
    "trade_based": ("trade based", "mis invoicing", "misinvoicing", "over invoicing",
                    "under invoicing"),
    "funnel_account": ("funnel account", "funnel"),
    "loan_back": ("loan back",),
    "sanctions_evasion": ("sanctions evasion", "evading sanctions", "evade sanctions"),
    "real_estate": ("real estate",),
    "elder_exploitation": ("elder exploitation", "elder financial exploitation", "elder abuse"),
}
# One pass over the text, one named group per typology (no typology's phrase overlaps another's,
# so the matches cannot hide one another).
_TYPOLOGY_RE = re.compile(r"\b(?:" + "|".join(
    f"(?P<{t}>" + "|".join(map(re.escape, phrases)) + ")"
    for t, phrases in TYPOLOGY_PHRASES.items()) + r")\b")

_MONTHS = {m: i + 1 for i, m in enumerate(
    ("january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"))}
_MONTHS.update({m[:3]: n for m, n in list(_MONTHS.items())})
_MONTHS["sept"] = 9
_MONTH = r"(?P<mon>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATE_RES = (
    re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2})?Z?)?\b"),
    re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+" + _MONTH + r",?\s+(?P<y>\d{4})\b", re.I),
    re.compile(r"\b" + _MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})\b", re.I),
)
_LETTERS = re.compile(r"[a-z]+")
_DIGIT = re.compile(r"\d")
_MONTH_STEMS = tuple(m for m in _MONTHS if len(m) == 3)
_AMOUNT_RE = re.compile(
    r"(?<![\w.,])(?P<cur>\$|US\$|USD\s?)?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<dec>\d+))?"
    r"(?:\s?(?P<mult>k|thousand|m|mn|million|bn|billion)\b)?(?P<after>\s?(?:USD|dollars))?"
    r"(?!\s?%|\s?percent|[\w,]*\d)", re.I)
_MULTIPLIERS = {"k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6, "bn": 1e9,
                "billion": 1e9}


@dataclass(frozen=True)
class RubricScore:
    total: float
    parts: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Facts:
    """What the text states: record IDs, amounts (value, tolerance), ISO dates, lower text."""

    ids: frozenset[str]
    amounts: tuple[tuple[float, float], ...]
    dates: frozenset[str]
    lowered: str


def read_text(text: str) -> Facts:
    """The checkable facts a narrative states (IDs first, then dates, then amounts, each taken
    out of the text before the next is read, so an ID's digits are never an amount)."""
    return _read(text, gated=True)


def _read(text: str, gated: bool) -> Facts:
    """`read_text`; `gated=False` runs every pattern on every text (the reference the gates
    are tested against: each skips only patterns that cannot match)."""
    found_ids: list[str] = []
    rest = ID_PATTERN.sub(lambda m: found_ids.append(m[0]) or " ", text)  # one scan for both
    ids = frozenset(found_ids)
    if gated and not _DIGIT.search(rest):  # every date and amount pattern needs a digit
        return Facts(ids, (), frozenset(), _normal(text))
    dates = set()
    # A date with a month name needs a month's word: without one, those patterns (the costly
    # ones: a case-blind alternation tried at every word) cannot match. Every month's name
    # starts with its three-letter abbreviation, so a substring test of those comes first (a
    # word such as "summary" only sends the text on to the word check).
    lowered = rest.lower()
    named_month = not gated or (any(m in lowered for m in _MONTH_STEMS)
                                and not _MONTHS.keys().isdisjoint(_LETTERS.findall(lowered)))
    for pattern in _DATE_RES if named_month else _DATE_RES[:1]:
        found = False
        for m in pattern.finditer(rest):
            found = True
            month = int(m["m"]) if "m" in m.groupdict() and m["m"] else _MONTHS[m["mon"].lower()]
            if 1 <= month <= 12 and 1 <= int(m["d"]) <= 31:
                dates.add(f"{int(m['y']):04d}-{month:02d}-{int(m['d']):02d}")
        if found:
            rest = pattern.sub(" ", rest)
    amounts = []
    for m in _AMOUNT_RE.finditer(rest):
        marked = bool(m["cur"] or m["after"] or m["mult"])
        value = float(m["int"].replace(",", "") + ("." + m["dec"] if m["dec"] else ""))
        if not marked and (value < MIN_BARE_AMOUNT or (
                not m["dec"] and "," not in m["int"] and 1900 <= value <= 2100)):
            continue  # a count or a year
        scale = _MULTIPLIERS[m["mult"].lower()] if m["mult"] else 1.0
        half_unit = 0.5 * 10 ** -len(m["dec"] or "") * scale
        amounts.append((value * scale, half_unit + 1e-6))
    return Facts(ids, tuple(amounts), frozenset(dates), _normal(text))


def _normal(text: str) -> str:
    """Lower case, "_" and "-" read as spaces, runs of spaces as one."""
    return " ".join(text.lower().replace("_", " ").replace("-", " ").split())


# ---- what the case's records hold ----------------------------------------------------------

@cache
def _nested_record_fields(cls: type[BaseModel]) -> tuple[str, ...]:
    """The fields of a record class that hold records of their own (tuples of models with an
    `id`, such as a source of funds' documents)."""
    out = []
    for name, info in cls.model_fields.items():
        args = get_args(info.annotation) if get_origin(info.annotation) is tuple else ()
        if args and isinstance(args[0], type) and issubclass(args[0], BaseModel) \
                and "id" in args[0].model_fields:
            out.append(name)
    return tuple(out)


def _seen_records(public: PublicCase, seen: frozenset[str]) -> Iterator[BaseModel]:
    """The case's records (models with an `id`: its record lists, the alert, and the records
    nested one level down) whose ID is in `seen`."""
    for value in vars(public).values():
        for item in value if type(value) is tuple else (value,):
            if not isinstance(item, BaseModel):
                continue
            if item.id in seen:
                yield item
            for name in _nested_record_fields(type(item)):
                yield from (n for n in getattr(item, name) if n.id in seen)


def _values(obj: object) -> Iterator[object]:
    """The scalar values of one record, its unnamed sub-models and dicts included (a nested
    record is a record of its own)."""
    for value in vars(obj).values():
        kind = type(value)
        if kind is tuple or kind is list:
            yield from (v for v in value if not isinstance(v, BaseModel))
        elif kind is dict:
            yield from value.values()
        elif isinstance(value, BaseModel):
            if "id" not in vars(value):
                yield from _values(value)
        else:
            yield value


@dataclass(frozen=True)
class RecordFacts:
    """The amounts and dates of the records the agent saw, split into the alert's own facts
    and the rest."""

    numbers: tuple[float, ...]  # sorted
    dates: frozenset[str]
    alert_numbers: tuple[float, ...]  # sorted
    alert_dates: frozenset[str]


def record_facts(public: PublicCase, seen: frozenset[str]) -> RecordFacts:
    alert = public.alert
    alert_records = {alert.id, *alert.transaction_ids}  # the records whose content it shows
    buckets = {True: (set(), set()), False: (set(), set())}  # is-alert -> (numbers, dates)
    for record in _seen_records(public, seen):
        rid = record.id
        numbers, dates = buckets[rid in alert_records]
        for value in _values(record):
            kind = type(value)
            if kind is float or kind is int:
                numbers.add(float(value))
            elif kind is str and len(value) >= 10 and value[4] == "-" and value[7] == "-" \
                    and value[:4].isdigit():
                dates.add(value[:10])
    (an, ad), (on, od) = buckets[True], buckets[False]
    return RecordFacts(tuple(sorted(on)), frozenset(od), tuple(sorted(an)), frozenset(ad))


def _matches(amount: tuple[float, float], numbers: tuple[float, ...]) -> bool:
    """Whether a sorted tuple of numbers holds one within the amount's tolerance."""
    value, tolerance = amount
    i = bisect_left(numbers, value - tolerance)
    return i < len(numbers) and numbers[i] <= value + tolerance


def _share(found: list[tuple[bool, bool]]) -> float:
    """Matched share of the facts quoted, each (matches a record beyond the alert, matches
    only the alert's own facts); half credit when nothing beyond the alert matches."""
    other = sum(o for o, _ in found)
    matched = sum(o or a for o, a in found)
    if not matched:
        return 0.0
    return matched / len(found) * (1.0 if other else ALERT_FACT_CREDIT)


def what_when(facts: Facts, public: PublicCase, seen: frozenset[str]) -> tuple[float, float]:
    """`what` and `when` of a text (the records are read only when it quotes a fact)."""
    if not (facts.amounts or facts.dates):
        return 0.0, 0.0
    known = record_facts(public, seen)
    what = _share([(_matches(a, known.numbers), _matches(a, known.alert_numbers))
                   for a in facts.amounts])
    when = _share([(d in known.dates, d in known.alert_dates) for d in sorted(facts.dates)])
    return what, when


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _contains_words(text: str, phrase: str) -> bool:
    """`phrase` in `text` with no word character on either side (a regex `(?<!\\w)...(?!\\w)`
    without compiling one per name: a name is scored once per decision)."""
    start = text.find(phrase)
    while start != -1:
        end = start + len(phrase)
        if (start == 0 or not _word(text[start - 1])) and (end == len(text)
                                                           or not _word(text[end])):
            return True
        start = text.find(phrase, start + 1)
    return False


def _named(entity_id: str, facts: Facts, names: dict[str, str]) -> bool:
    if entity_id in facts.ids:
        return True
    name = names.get(entity_id)
    return bool(name) and _contains_words(facts.lowered, name)


def _typologies(lowered: str) -> set[str]:
    return {m.lastgroup for m in _TYPOLOGY_RE.finditer(lowered)}


def _cited_share(cited: set[str], relevant: set[str]) -> float:
    hits = len(cited & relevant)
    return hits / len(cited) if hits else 0.0


def explanation_ids(truth: GroundTruth) -> frozenset[str]:
    """The records that explain a benign case's anomalies (`GroundTruth.explanation_ids`); a case
    with no anomaly to explain falls back on its deciding views (what makes closing right)."""
    return frozenset(truth.explanation_ids or chain.from_iterable(truth.decisive_evidence))


def _alert_ids(public: PublicCase) -> set[str]:
    return {*public.alert_shown_ids, public.case_id}


def score_sar_narrative(truth: GroundTruth, decision: Decision, public: PublicCase,
                        seen: frozenset[str]) -> RubricScore:
    facts = read_text(decision.text)
    subjects = set(truth.subject_ids)
    names = {e.id: _normal(e.name) for e in public.entities if e.id in subjects}
    who = (sum(_named(s, facts, names) for s in subjects if s in seen) / len(subjects)
           if subjects else 0.0)
    what, when = what_when(facts, public, seen)
    evidence = set(chain.from_iterable(truth.decisive_evidence))
    for flag in truth.red_flags:
        evidence |= {*flag.evidence_ids, *flag.carrier_ids}
    cited = {i for i in facts.ids - _alert_ids(public) if not i.startswith("ENT-")}
    where = _cited_share(cited, evidence & seen)
    named = _typologies(facts.lowered)
    why = 1 / len(named) if decision.typology in named else 0.0
    parts = {"who": who, "what": what, "when": when, "where": where, "why": why}
    if not (who or what or when or where):  # boilerplate: nothing checkable
        return RubricScore(0.0, {p: 0.0 for p in parts})
    return RubricScore(round(sum(parts.values()) / len(parts), 6), parts)


def score_close_reason(truth: GroundTruth, decision: Decision, public: PublicCase,
                       seen: frozenset[str]) -> RubricScore:
    facts = read_text(decision.text)
    cited = facts.ids - _alert_ids(public)
    explanation = _cited_share(cited, set(explanation_ids(truth) & seen))
    what, when = what_when(facts, public, seen) if explanation else (0.0, 0.0)
    parts = {"explanation": explanation, "what": what, "when": when}
    total = explanation * (CLOSE_BASE + CLOSE_FACT_WEIGHT * (what + when))
    return RubricScore(round(total, 6), parts)


def score_text(truth: GroundTruth, decision: Decision, public: PublicCase,
               seen: frozenset[str]) -> RubricScore:
    """The rubric of a decision's text: the SAR narrative or the close reason."""
    score = score_sar_narrative if decision.action == "file_sar" else score_close_reason
    return score(truth, decision, public, seen)
