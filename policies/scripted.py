"""Scripted AML policies: a policy written as a generator (`obs = yield action`), and the two
helpers every AML script uses (`act`, `seen_ids`)."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Generator
from typing import Any

from memex.envkit.policy import Policy
from memex.models import MemexAction, MemexObservation
from memex.scenarios.case import Case

Script = Generator[MemexAction, MemexObservation, None]


def act(tool: str, **arguments: Any) -> MemexAction:
    return MemexAction(tool=tool, arguments=arguments)


def seen_ids(obs: MemexObservation) -> list[str]:
    ids = {i for p in obs.context.ram for i in p.ids} | {i for n in obs.context.disk for i in n.ids}
    return sorted(ids)


class ScriptedPolicy(Policy[MemexObservation, MemexAction]):
    """A policy written as a generator: `obs = yield action`. When the script ends without a
    decision it closes the alert (a scripted policy never idles into a timeout by accident)."""

    def reset(self, obs: MemexObservation, case: Case | None = None) -> None:
        self.case = case
        self.alert = obs.result
        self._gen = self.script(obs)
        self._first = True

    @abstractmethod
    def script(self, obs: MemexObservation) -> Script:
        ...
        yield

    def act(self, obs: MemexObservation) -> MemexAction:
        try:
            if self._first:
                self._first = False
                return next(self._gen)
            return self._gen.send(obs)
        except StopIteration:
            return act("close_alert", reason="no decision reached", cited_sections=[])
