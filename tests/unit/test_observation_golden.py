"""Golden digests of the environment's wire output: observations and state, byte for byte.

Every consumer reads what `MemexEnvironment` emits — the OpenEnv server serialises each
observation with `model_dump`, the typed client parses it back, traces, prompts and the trainer
read its fields — so a speed-up or refactor of the step must not change a byte of
it. For a representative set of episodes (the heuristic investigator on every kind, the oracle,
the probes, the random policy, the fixed 1MDB case, a case plan, other memory sizes, and a
scripted episode that walks every error, page fault, redundant call, async poll, eviction and
a lone surrogate in a note), this test hashes each observation's and each state's JSON, its
python-mode dump (which keeps value types), its `exclude_unset` dump, OpenEnv's
`serialize_observation`, and which fields each model marks set, and compares with digests
recorded from the code.

A change that is meant to change the wire output regenerates the digests with
`.venv/bin/python tests/unit/test_observation_golden.py --write` and says so in its review.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from openenv.core.env_server.serialization import serialize_observation
from pydantic import BaseModel

from memex.adapter import ADAPTER, POLICIES
from memex.audit import surface_probes
from memex.envkit.episodes import EpisodeSpec, LocalSession
from memex.models import MemexAction
from memex.policies.heuristic import Heuristic
from memex.policies.oracle import Oracle
from memex.policies.probes import RandomPolicy
from memex.scenarios import DIFFICULTIES, KINDS
from memex.server.environment import MemexEnvironment

pytestmark = pytest.mark.unit

GOLDEN = Path(__file__).parent / "data" / "observation_golden.json"
# The surface probes learn from train cases; a few keep this test fast (what they learn is
# part of the episodes, so this number is part of the golden file).
SURFACE_TRAIN_CASES = 40
PLAN = {"kind": "layering", "variant": "pep_conduit", "difficulty": "hard",
        "checks": ["trace", "device"], "second_failing": "trace", "layers": 3, "hops": 4}


def _safe(make: Callable[[], Any]) -> str:
    try:
        return repr(make())
    except Exception as exc:  # a serialisation that fails must keep failing the same way
        return f"!{type(exc).__name__}"


def _fields_set(value: Any) -> Any:
    """Which fields every model inside `value` marks set (what `exclude_unset` reads)."""
    if isinstance(value, BaseModel):
        return (type(value).__name__, sorted(value.model_fields_set),
                [_fields_set(getattr(value, name)) for name in type(value).model_fields])
    if isinstance(value, (list, tuple)):
        return [_fields_set(v) for v in value if isinstance(v, BaseModel)]
    return None


def fingerprint(model: BaseModel) -> str:
    """Every serialisation of an observation or a state that a consumer may read."""
    parts = [type(model).__name__, _safe(model.model_dump_json),
             _safe(lambda: json.dumps(model.model_dump(mode="json"))),
             _safe(model.model_dump), _safe(lambda: model.model_dump(exclude_unset=True)),
             repr(_fields_set(model))]
    if type(model).__name__ == "MemexObservation":
        parts.append(_safe(lambda: serialize_observation(model)))
    return hashlib.sha256("\x00".join(parts).encode("utf-8", "surrogatepass")).hexdigest()


class Recording(LocalSession):
    """A local session that fingerprints every observation and the state after it."""

    def __init__(self, env: MemexEnvironment):
        super().__init__(env)
        self.prints: list[str] = []

    def _record(self, obs: Any) -> Any:
        self.prints += [fingerprint(obs), fingerprint(self.env.state)]
        return obs

    def reset(self, **options: Any) -> Any:
        return self._record(self.env.reset(**options))

    def step(self, action: Any, **kwargs: Any) -> Any:
        return self._record(self.env.step(action, **kwargs))


def _digest(prints: list[str]) -> str:
    return hashlib.sha256("\n".join(prints).encode()).hexdigest()


def play(policy: Any, **reset: Any) -> str:
    """The digest of one episode of `policy` (reset with `reset`)."""
    session = Recording(MemexEnvironment())
    spec = EpisodeSpec(reset.get("kind") or "any", reset.get("difficulty", "medium"),
                       reset.get("seed"), reset)
    ADAPTER.play(session, policy, spec)
    return _digest(session.prints)


def scripted_edges() -> str:
    """Episodes through every path of the step that is not a plain tool call."""
    env = MemexEnvironment()
    session = Recording(env)

    def call(tool: str, timeout_s: float | None = None, **arguments: Any) -> Any:
        return session.step(MemexAction(tool=tool, arguments=arguments), timeout_s=timeout_s)

    call("review_alert")  # before any reset
    obs = session.reset(seed=11, difficulty="medium", kind="layering", kernel_capacity=1)
    alert = obs.result
    subject, account = alert["subject"]["entity_id"], alert["account_ids"][0]
    txns = [t["id"] for t in alert["transactions"]]
    wire = next((t["id"] for t in alert["transactions"] if t["channel"] == "wire"), txns[0])
    call("no_such_tool")
    call("get_customer_profile")
    call("get_customer_profile", entity_id=7)
    call("get_customer_profile", entity_id=subject, extra=1)
    call("get_customer_profile", entity_id="ENT-FFFFFF")  # never revealed
    call("get_customer_profile", entity_id=account)  # wrong record type
    call("get_customer_profile", entity_id=subject)
    call("get_customer_profile", entity_id=subject)  # redundant
    call("query_transactions", account_id=account, limit=0)
    call("query_transactions", account_id=account, start_date="2024-13-01")
    lines = call("query_transactions", account_id=account, channel="wire", limit=5).result
    counterparties = [line["counterparty_id"] for line in lines["lines"]
                      if line.get("counterparty_id") not in (None, subject)]
    call("request_wire_trace", transaction_id=txns[0])
    call("request_wire_trace", transaction_id=wire)
    call("retrieve_async_result", job_id="JOB-1")  # early: an async timeout
    call("retrieve_async_result", job_id="JOB-9")
    call("check_watchlist", name="ab")
    call("check_watchlist", name=alert["subject"]["name"])
    call("check_market_price", commodity="unobtainium")
    call("search_compliance_manual", query=" ")
    call("search_compliance_manual", query="the")
    call("search_compliance_manual", query="structuring cash deposits \ud800")
    call("update_system_prompt", section_id="99.9")
    call("update_system_prompt", section_id="§2.1")
    call("update_system_prompt", section_id="3.1")  # evicts 2.1 (capacity 1)
    call("write_to_case_file", note="")
    call("write_to_case_file", note="x" * 2001)
    call("write_to_case_file", note=f"subject {subject} lone surrogate \ud800 here")
    call("write_to_case_file", note="ids", evidence_ids=[account, "ENT-FFFFFF"])
    call("write_to_case_file", note=f"evidence {txns[0]}", evidence_ids=[subject])
    if counterparties:  # seen, evicted from RAM, not on disk: page faults
        call("trace_network", entity_id=counterparties[0])
        call("write_to_case_file", note=" ".join(counterparties[:3]))
    call("retrieve_async_result", job_id="JOB-1")
    call("assess_risk", entity_id=subject)
    call("trace_network", timeout_s=-1.0, entity_id=subject)  # past the deadline: dropped
    call("close_alert", reason="done", cited_sections=["3.1", "9.9"])
    call("review_alert")  # after the end
    obs = session.reset(seed=12, difficulty="easy", ram_pages=1)  # again, on the same env
    while not obs.done:  # into the timeout
        obs = call("review_alert")
    return _digest(session.prints)


def grid() -> Iterator[tuple[str, Callable[[], str]]]:
    """(label, episode digest maker) pairs; labels are stable keys of the golden file."""
    for i, kind in enumerate(KINDS):
        difficulty = DIFFICULTIES[i % 3]
        yield f"heuristic/{kind}/{difficulty}/{i}", (
            lambda k=kind, d=difficulty, s=i: play(Heuristic(), seed=s, difficulty=d, kind=k))
    for i, kind in enumerate(list(KINDS)[::4]):
        yield f"oracle/{kind}/hard/{50 + i}", (
            lambda k=kind, s=50 + i: play(Oracle(), seed=s, difficulty="hard", kind=k))
    for seed in range(3):
        yield f"random/{seed}", (lambda s=seed: play(RandomPolicy(seed=s), seed=100 + s,
                                                     difficulty=DIFFICULTIES[s]))
    for j, name in enumerate(("always_sar", "always_close", "all_codes_sar", "tool_spam",
                              "os_farming", "never_decide", "memorised_sar")):
        yield f"probe/{name}/{200 + j}", (
            lambda n=name, s=200 + j: play(POLICIES[n](), seed=s, difficulty="easy"))
    yield "heuristic/1mdb", lambda: play(Heuristic(), case="1mdb")
    yield "heuristic/plan/3", lambda: play(Heuristic(), plan=json.dumps(PLAN), seed=3)
    yield "heuristic/memory/4x5", lambda: play(Heuristic(), seed=300, difficulty="medium",
                                               ram_pages=4, kernel_capacity=5)
    yield "scripted/edges", scripted_edges


@pytest.fixture(autouse=True, scope="module")
def _few_surface_train_cases():
    saved, surface_probes.TRAIN_CASES = surface_probes.TRAIN_CASES, SURFACE_TRAIN_CASES
    yield
    surface_probes.TRAIN_CASES = saved


def digests() -> dict[str, str]:
    return {label: make() for label, make in grid()}


def test_observations_and_state_match_the_golden_digests():
    golden = json.loads(GOLDEN.read_text())
    now = digests()
    assert now.keys() == golden.keys(), "the grid changed; regenerate the golden digests"
    changed = [label for label in golden if now[label] != golden[label]]
    assert not changed, f"{len(changed)} of {len(golden)} episodes changed, e.g. {changed[:5]}"


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(f"usage: {sys.argv[0]} --write  (only when the wire output is meant to change)")
    surface_probes.TRAIN_CASES = SURFACE_TRAIN_CASES
    GOLDEN.write_text(json.dumps(digests(), indent=1) + "\n")
    print(f"wrote {GOLDEN}")
