"""The record-ID format, defined once: `<PREFIX>-<6 upper-case hex digits>`.

The prefix names only the record type (never the role a record plays in the story); the digits
are random per case (`scenarios.builder`), unique within it.
"""

from __future__ import annotations

import re

# Prefix -> the kind of record it names.
RECORD_TYPES: dict[str, str] = {
    "ENT": "entity", "ACC": "account", "TXN": "transaction", "OWN": "ownership link",
    "WL": "watchlist entry", "LOG": "device login", "INV": "invoice",
    "CUS": "customs declaration", "BOL": "bill of lading", "MKT": "market price",
    "SOF": "source-of-funds record", "DOC": "supporting document", "HOP": "trace hop",
    "ALR": "alert", "CASE": "case",
}
PREFIXES: tuple[str, ...] = tuple(RECORD_TYPES)
ID_DIGITS = 6
ID_PATTERN = re.compile(rf"\b(?:{'|'.join(PREFIXES)})-[0-9A-F]{{{ID_DIGITS}}}\b")


def make_id(prefix: str, n: int) -> str:
    """The ID of record number `n` (0 <= n < 16**6) of type `prefix`."""
    if prefix not in RECORD_TYPES:
        raise ValueError(f"unknown record prefix {prefix!r}")
    return f"{prefix}-{n:0{ID_DIGITS}X}"


def record_type(identifier: str) -> str | None:
    """The kind of record `identifier` names, or None if its prefix is unknown."""
    return RECORD_TYPES.get(identifier.partition("-")[0])
