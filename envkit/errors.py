"""The typed error every environment raises for a call it cannot carry out, and the one way a
pydantic validation failure is said to an agent."""

from __future__ import annotations

from pydantic import ValidationError


class CodedError(ValueError):
    """An error with a machine-readable `code` (e.g. "unknown_id"); the environment turns it into
    a typed error observation."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


def validation_message(exc: ValidationError, limit: int = 6, root: str = "arguments") -> str:
    """`field: problem; ...` for the first `limit` errors (no input values, no URLs); an error
    of the whole input is `root: problem`."""
    parts = []
    for err in exc.errors(include_input=False, include_url=False)[:limit]:
        loc = ".".join(str(x) for x in err["loc"]) or root
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


class PolicyFailure(RuntimeError):
    """A policy that cannot choose an action (e.g. its model endpoint failed after retries)
    raises this; `envkit.episodes.play` ends the episode there with outcome "error" and the
    one-line message on the record, instead of crashing the run."""
