"""How a scripted AML policy writes up its decision: a SAR narrative (who, what, when, where,
why) or a close reason, from the records its tool results showed it — never from the case.

`CaseNotes` keeps what the observations showed (every record with an `id`, every entity's
name); `sar_narrative` and `close_reason` quote those records' IDs, amounts and dates, the form
`graders.rubric` checks a text in.
"""

from __future__ import annotations

from typing import Any

from memex.envkit.declarations import MAX_ARG_CHARS
from memex.models import MemexObservation
from memex.scenarios.ids import ID_PATTERN

_AMOUNT_KEYS = ("amount_usd", "total_usd", "amount", "declared_annual_income_usd",
                "declared_annual_turnover_usd")
_DATE_KEYS = ("timestamp", "date", "value_date", "declared_on", "listed_on", "since")
# Record types that document an explanation or a break: documents, registry links, logins,
# list entries, prices, trade papers and trace hops (not ledger lines, accounts or entities).
EVIDENCE_PREFIXES = ("SOF-", "DOC-", "OWN-", "LOG-", "WL-", "MKT-", "INV-", "CUS-", "BOL-",
                     "HOP-")
MAX_QUOTED = 6


class CaseNotes:
    """The records and names a policy's observations showed, in the order first shown."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.names: dict[str, str] = {}

    def read(self, obs: MemexObservation) -> None:
        if obs.error is None:
            self._walk(obs.result)

    def _walk(self, value: Any) -> None:
        if isinstance(value, dict):
            rid = value.get("id") or value.get("entity_id")
            if isinstance(rid, str) and ID_PATTERN.fullmatch(rid):
                self.records.setdefault(rid, value)
                if isinstance(value.get("name"), str) and rid.startswith("ENT-"):
                    self.names.setdefault(rid, value["name"])
            for item in value.values():
                self._walk(item)
        elif isinstance(value, list):
            for item in value:
                self._walk(item)

    def fact(self, rid: str) -> str | None:
        """"ID: USD amount on date" for a record shown with an amount or a date, else None."""
        record = self.records.get(rid) or {}
        amount = next((record[k] for k in _AMOUNT_KEYS
                       if isinstance(record.get(k), int | float)
                       and not isinstance(record.get(k), bool)), None)
        date = next((record[k][:10] for k in _DATE_KEYS if isinstance(record.get(k), str)
                     and len(record[k]) >= 10), None)
        if amount is None and date is None:
            return None
        text = rid + ":"
        if amount is not None:
            text += f" USD {amount:,.2f}"
        if date is not None:
            text += f" on {date}"
        return text

    def who(self, entity_ids: list[str]) -> str:
        return ", ".join(f"{self.names[e]} ({e})" if e in self.names else e
                         for e in dict.fromkeys(entity_ids))

    def evidence(self, exclude: set[str] = frozenset()) -> list[str]:
        """The documentary records shown so far (not ledger lines, accounts or entities)."""
        return [r for r in self.records if r.startswith(EVIDENCE_PREFIXES) and r not in exclude]


def _facts(notes: CaseNotes, ids: list[str]) -> str:
    quoted = [f for f in map(notes.fact, dict.fromkeys(ids)) if f][:MAX_QUOTED]
    return "; ".join(quoted)


def sar_narrative(notes: CaseNotes, subjects: list[str], typology: str,
                  evidence_ids: list[str], alerted: list[str], why: str = "") -> str:
    """Who (the subjects by name and ID), what and when (the alerted transactions and the
    evidence records with their amounts and dates), where (the evidence IDs) and why (the
    typology, and `why` when the policy has its own account of what broke)."""
    text = (f"Subjects: {notes.who(subjects)}. Suspected {typology.replace('_', ' ')}. "
            f"Alerted activity: {_facts(notes, alerted) or ', '.join(alerted)}.")
    if evidence_ids:
        facts = _facts(notes, evidence_ids)
        text += f" Evidence: {facts or ', '.join(evidence_ids[:MAX_QUOTED])}."
    if why:
        text += f" {why}"
    return text[:MAX_ARG_CHARS]


def close_reason(notes: CaseNotes, explanation_ids: list[str], alerted: list[str],
                 why: str = "") -> str:
    """The explanation found (its records with amounts and dates) for the alerted activity."""
    text = f"Alerted activity: {_facts(notes, alerted) or ', '.join(alerted)}."
    if explanation_ids:
        facts = _facts(notes, explanation_ids)
        text += f" Explained by {facts or ', '.join(explanation_ids[:MAX_QUOTED])}."
    if why:
        text += f" {why}"
    return text[:MAX_ARG_CHARS]
