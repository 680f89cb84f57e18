"""A defender with a known weakness, for showing and testing what a curriculum does.

`BlindSpot(kind)` investigates like the oracle on every kind but one; on `kind` it closes the
alert at its first step. On a suspicious kind that is a missed SAR (a false negative, the
worst decision), so its regret there is large and elsewhere near zero: a curriculum that works
must find that kind. It reads the hidden case (`needs_case`), only to know the kind — it is a
probe of the curriculum, not an investigator.
"""

from __future__ import annotations

from typing import Any

from memex.policies.oracle import Oracle
from memex.policies.probes import AlwaysClose


class BlindSpot:
    """The oracle everywhere except `kind`, where it closes the alert at once."""

    needs_case = True

    def __init__(self, kind: str = "layering"):
        self.kind = kind
        self.name = f"blind_spot:{kind}"
        self._delegate: Any = None

    def reset(self, obs: Any, case: Any = None) -> None:
        if case is None:
            raise ValueError("BlindSpot needs the case (it reads the kind)")
        if case.truth.kind == self.kind:
            self._delegate = AlwaysClose()
            self._delegate.reset(obs)
        else:
            self._delegate = Oracle()
            self._delegate.reset(obs, case=case)

    def act(self, obs: Any) -> Any:
        return self._delegate.act(obs)
