"""Probes that decide from the surface: what a policy can learn without investigating.

Each probe memorises or learns from train-split cases (their ground truth is the answer key a
memoriser would have), then plays test-split episodes through the environment like any agent:

- `memorised_closer`: loads the manual sections that most often justify closing an alert of the
  rule that fired, and closes citing them — no investigation.
- `memorised_sar`: writes the alert's IDs to disk, loads the sections that most often justify a
  SAR under that rule, and files a SAR naming the alert subject with the rule's most frequent
  typology and red-flag codes, evidenced by the alert's own records.
- `alert_only`: a gradient-boosted classifier over the alert alone (the leak audit's generic
  features, trained on train seeds) picks between the memorised SAR and the memorised closure.
- `one_lookup`: the same over the alert plus the single investigation view that predicted best
  on held-out train cases; it makes that one call, then decides.

They are the environment's proof that the label lives in cross-checks: each must score well
below the heuristic investigator (tests/integration/test_baselines.py). What they learn is
cached per process; `TRAIN_CASES` (read when a probe plays, so a quick test may lower it) sets
how many train cases they learn from (spread over the difficulties).
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import date
from typing import Any, ClassVar

import numpy as np
from threadpoolctl import threadpool_limits

from memex.audit.leak_audit import build_views, featurise
from memex.models import MemexObservation
from memex.policies.scripted import ScriptedPolicy, act
from memex.scenarios import DIFFICULTIES, SPLITS, Case, CaseSpec, build
from memex.state_manager import DEFAULT_KERNEL_CAPACITY

TRAIN_CASES = 600
# Sections loaded: the default kernel capacity, since more loads would evict the first ones.
KERNEL_LOADS = DEFAULT_KERNEL_CAPACITY
# Views one tool call returns (trade documents and wire traces take more than one call).
ONE_CALL_VIEWS = ("profile", "transactions", "watchlist", "network", "source_of_funds", "risk",
                  "devices", "ownership")


def _top(counter: Counter, k: int) -> tuple[str, ...]:
    return tuple(item for item, _ in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))[:k])


@dataclass(frozen=True)
class Memory:
    """Per monitoring rule, what the train split's answer key says most often."""

    sar_sections: dict[str, tuple[str, ...]]
    close_sections: dict[str, tuple[str, ...]]
    typology: dict[str, str]
    codes: dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class TrainCase:
    rule: str
    as_of: date
    suspicious: bool
    views: dict[str, Any]


def _train_case(i: int) -> Case:
    """The `i`-th train case the probes learn from (the difficulties in turn)."""
    return build(CaseSpec(seed=SPLITS["train"].start + i,
                          difficulty=DIFFICULTIES[i % len(DIFFICULTIES)]))


@functools.cache
def train_cases(n: int = TRAIN_CASES) -> tuple[TrainCase, ...]:
    """`n` train-split cases over the difficulties, with every single-tool view."""
    out = []
    for i in range(n):
        case = _train_case(i)
        out.append(TrainCase(case.public.alert.rule.code, date.fromisoformat(case.public.as_of),
                             case.truth.suspicious, build_views(case)))
    return tuple(out)


@functools.cache
def memory(n: int = TRAIN_CASES) -> Memory:
    sar_sections: dict[str, Counter] = defaultdict(Counter)
    close_sections: dict[str, Counter] = defaultdict(Counter)
    typology: dict[str, Counter] = defaultdict(Counter)
    codes: dict[str, Counter] = defaultdict(Counter)
    for i in range(n):
        case = _train_case(i)
        rule, truth = case.public.alert.rule.code, case.truth
        if truth.suspicious:
            sar_sections[rule].update(truth.justifying_sections)
            typology[rule][truth.typology] += 1
            codes[rule].update(f.code for f in truth.red_flags)
        else:
            close_sections[rule].update(truth.justifying_sections)
    rules = set(sar_sections) | set(close_sections)
    return Memory(
        sar_sections={r: _top(sar_sections[r], KERNEL_LOADS) for r in rules},
        close_sections={r: _top(close_sections[r], KERNEL_LOADS) for r in rules},
        typology={r: _top(typology[r], 1)[0] if typology[r] else "structuring" for r in rules},
        codes={r: _top(codes[r], 3) for r in rules})


class SurfaceClassifier:
    """A classifier over the leak audit's generic features of some views."""

    def __init__(self, views: tuple[str, ...], cases: tuple[TrainCase, ...]):
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.feature_extraction import DictVectorizer

        self.views = views
        rows = [featurise(c.views, views, c.rule, c.as_of) for c in cases]
        y = np.asarray([int(c.suspicious) for c in cases])
        self.vec = DictVectorizer(sparse=False)
        x = self.vec.fit_transform(rows)
        # One thread: a few hundred rows gain nothing from OpenMP, and on a shared machine its
        # spinning threads make a fit tens of times slower (as in `leak_audit`).
        with threadpool_limits(1):
            self.clf = HistGradientBoostingClassifier(
                max_iter=80, learning_rate=0.15, max_leaf_nodes=15, random_state=0).fit(x, y)

    def suspicious(self, views: dict[str, Any], rule: str, as_of: date) -> bool:
        x = self.vec.transform([featurise(views, self.views, rule, as_of)])
        with threadpool_limits(1):
            return bool(self.clf.predict(x)[0])

    def accuracy(self, cases: tuple[TrainCase, ...]) -> float:
        hits = [self.suspicious(c.views, c.rule, c.as_of) == c.suspicious for c in cases]
        return sum(hits) / len(hits)


@functools.cache
def alert_classifier(n: int = TRAIN_CASES) -> SurfaceClassifier:
    return SurfaceClassifier(("alert",), train_cases(n))


@functools.cache
def one_lookup_classifier(n: int = TRAIN_CASES) -> SurfaceClassifier:
    """Alert plus the one-call view that decides best on a held-out fifth of the train cases."""
    cases = train_cases(n)
    cut = len(cases) * 4 // 5
    fit, held = cases[:cut], cases[cut:]
    best = max(ONE_CALL_VIEWS,
               key=lambda v: SurfaceClassifier(("alert", v), fit).accuracy(held))
    return SurfaceClassifier(("alert", best), cases)


class _SurfacePolicy(ScriptedPolicy):
    """Decides SAR vs closure from the surface, then acts on memorised answers."""

    lookup: ClassVar[bool] = False

    @abstractmethod
    def decide(self, views: dict[str, Any], rule: str, as_of: date) -> bool:
        """True to file a SAR, False to close."""

    def _lookup(self, view: str, subject: str, accounts: list[str]):
        """The one call that returns `view` (as `leak_audit.build_views` calls it)."""
        calls = {"profile": ("get_customer_profile", {"entity_id": subject}),
                 "transactions": ("query_transactions", {"account_id": accounts[0],
                                                         "limit": 100}),
                 "watchlist": ("check_watchlist", {"name": self.alert["subject"]["name"]}),
                 "network": ("trace_network", {"entity_id": subject}),
                 "source_of_funds": ("check_source_of_funds", {"entity_id": subject}),
                 "risk": ("assess_risk", {"entity_id": subject}),
                 "devices": ("check_device_overlap", {"entity_id": subject}),
                 "ownership": ("query_beneficial_ownership", {"entity_id": subject})}
        tool, args = calls[view]
        return act(tool, **args)

    def script(self, obs: MemexObservation):
        mem = memory(TRAIN_CASES)
        rule = self.alert["rule"]["code"]
        subject = self.alert["subject"]["entity_id"]
        as_of = date.fromisoformat(self.alert["raised_on"])
        alert_ids = sorted(obs.context.ram[-1].ids)  # the alert page the reset put in RAM
        views: dict[str, Any] = {"alert": self.alert}
        if self.lookup:
            view = one_lookup_classifier(TRAIN_CASES).views[1]
            obs = yield self._lookup(view, subject, list(self.alert["account_ids"]))
            views[view] = [obs.result] if view == "transactions" else obs.result
        file = self.decide(views, rule, as_of)
        obs = yield act("write_to_case_file", note="Alert records.", evidence_ids=alert_ids)
        sections = (mem.sar_sections if file else mem.close_sections).get(rule, ())
        for section in sections:
            obs = yield act("update_system_prompt", section_id=section)
        if not file:
            yield act("close_alert", reason="Consistent with the customer's profile.",
                      cited_sections=list(sections))
            return
        evidence = [i for i in alert_ids if i.startswith("TXN-")] or alert_ids
        yield act("file_sar", subjects=[subject], typology=mem.typology.get(rule, "structuring"),
                  findings=[{"code": c, "evidence_ids": evidence}
                            for c in mem.codes.get(rule, ())],
                  cited_sections=list(sections), narrative="Pattern matches the alert rule.")


class MemorisedCloser(_SurfacePolicy):
    name = "memorised_closer"

    def decide(self, views, rule, as_of):
        return False


class MemorisedSar(_SurfacePolicy):
    name = "memorised_sar"

    def decide(self, views, rule, as_of):
        return True


class AlertOnly(_SurfacePolicy):
    name = "alert_only"

    def decide(self, views, rule, as_of):
        return alert_classifier(TRAIN_CASES).suspicious(views, rule, as_of)


class OneLookup(_SurfacePolicy):
    name = "one_lookup"
    lookup = True

    def decide(self, views, rule, as_of):
        return one_lookup_classifier(TRAIN_CASES).suspicious(views, rule, as_of)
