"""Every key of a parsed JSON document, at any depth (for the tests' truth-leak checks)."""

from __future__ import annotations

from typing import Any


def json_keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | set().union(*(json_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(json_keys(v) for v in node)) if node else set()
    return set()
