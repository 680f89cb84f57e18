"""The environment in-process: OS mechanics, typed errors, rewards and the tool declarations."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from memex.graders.shaping import (
    ACTION_COST,
    ASYNC_TIMEOUT_PENALTY,
    INVALID_ACTION_PENALTY,
    PAGE_FAULT_PENALTY,
    REDUNDANT_CALL_PENALTY,
)
from memex.graders.terminal import (
    FALSE_NEGATIVE_SCORE,
    FALSE_POSITIVE_SCORE,
    RUBRIC_WEIGHT,
    SAR_WEIGHTS,
    SCORE_MAX,
    SCORE_MIN,
)
from memex.models import MemexAction
from memex.scenarios import DEFAULT_BENIGN_SHARE
from memex.server.app import create_memex_app
from memex.server.environment import MemexEnvironment
from memex.server.tools import TOOL_NAMES, TOOLS, Toolkit, prompt_tool_list

ROOT = Path(__file__).resolve().parents[2]


def act(tool, **arguments):
    return MemexAction(tool=tool, arguments=arguments)


@pytest.fixture
def env():
    return MemexEnvironment()


def start(env, kind="layering", difficulty="easy", seed=11, **kw):
    obs = env.reset(seed=seed, difficulty=difficulty, kind=kind, **kw)
    return obs, env.current_case


# ---- declarations -------------------------------------------------------------------------

def test_tools_are_declared_once_and_every_interface_derives_from_them():
    public = {n for n, _ in inspect.getmembers(Toolkit, inspect.isfunction)
              if not n.startswith("_")}
    assert public == set(TOOL_NAMES) == set(TOOLS) and len(TOOLS) == 19
    schema = TestClient(create_memex_app(frontend_dir=None)).get("/schema").json()["action"]
    assert [t["name"] for t in schema["tools"]] == list(TOOL_NAMES)
    assert schema["properties"]["tool"]["enum"] == list(TOOL_NAMES)
    listing = prompt_tool_list()
    assert all(f"- {name}(" in listing for name in TOOL_NAMES)
    for spec in TOOLS.values():  # every parameter is documented
        assert set(spec.params) == set(spec.args_model.model_fields), spec.name
        assert all(spec.params.values()), spec.name
        assert spec.description


def test_tool_modules_cannot_import_ground_truth():
    for rel in ("server/tools.py", "server/case_index.py", "state_manager.py", "models.py"):
        tree = ast.parse((ROOT / rel).read_text())
        mods = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
        mods |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        assert not any(m.endswith(("truth", "scenarios.case", "generator")) for m in mods), rel


# ---- observations and determinism ------------------------------------------------------------

def test_reset_shows_the_alert_as_the_first_ram_page(env):
    obs, case = start(env)
    assert obs.tool is None and obs.reward is None and not obs.done
    assert obs.result["alert_id"] == case.public.alert.id
    assert [p.tool for p in obs.context.ram] == ["review_alert"]
    assert case.public.alert.subject_id in obs.context.ram[0].ids
    assert obs.step == 0 and obs.step_budget == case.public.step_budget


def test_same_seed_and_actions_give_identical_observations():
    def play():
        env = MemexEnvironment()
        obs = env.reset(seed=99, difficulty="hard", kind="trade_based")
        out = [obs.model_dump_json()]
        subject = obs.result["subject"]["entity_id"]
        for a in [act("get_customer_profile", entity_id=subject),
                  act("trace_network", entity_id=subject),
                  act("search_compliance_manual", query="over-invoicing market price"),
                  act("request_wire_trace", transaction_id=obs.result["transactions"][0]["id"]),
                  act("assess_risk", entity_id=subject)]:
            out.append(env.step(a).model_dump_json())
        return out

    assert play() == play()


# ---- typed errors ---------------------------------------------------------------------------

def test_unknown_tool_bad_arguments_and_wrong_id_type_are_typed_errors(env):
    obs, case = start(env)
    subject = case.public.alert.subject_id
    cases = [
        (act("launder_money"), "unknown_tool"),
        (act("get_customer_profile"), "invalid_arguments"),
        (act("get_customer_profile", entity_id=5), "invalid_arguments"),
        (act("get_customer_profile", entity_id=subject, extra=1), "invalid_arguments"),
        (act("query_transactions", account_id=case.public.alert.account_ids[0],
             start_date="yesterday"), "invalid_argument"),
        (act("get_customer_profile", entity_id=case.public.alert.account_ids[0]),
         "wrong_id_type"),
        (act("check_watchlist", name="  "), "invalid_argument"),
        (act("search_compliance_manual", query=""), "invalid_argument"),
        (act("update_system_prompt", section_id="99.9"), "not_found"),
        (act("check_market_price", commodity="unobtainium"), "not_found"),
        (act("retrieve_async_result", job_id="JOB-7"), "unknown_job"),
        (act("file_sar", subjects=[subject], typology="fraud", findings=[], cited_sections=[],
             narrative="x"), "invalid_arguments"),
        (act("file_sar", subjects=[subject], typology="layering",
             findings=[{"code": "MADE_UP", "evidence_ids": [subject]}], cited_sections=[],
             narrative="x"), "invalid_arguments"),
    ]
    for action, code in cases:
        obs = env.step(action)
        assert obs.error is not None and obs.error.code == code, (action, obs.error)
        assert not obs.done and obs.result is None
        assert obs.reward == pytest.approx(ACTION_COST + INVALID_ACTION_PENALTY)
    assert env.state.invalid_actions == len(cases)


def test_unrevealed_existing_id_is_answered_exactly_like_a_nonexistent_one(env):
    obs, case = start(env, kind="structuring")
    unseen = next(e.id for e in case.public.entities if e.id not in obs.context.ram[0].ids)
    fake = "ENT-000000" if "ENT-000000" not in case.public.all_ids() else "ENT-FFFFFF"
    a = env.step(act("get_customer_profile", entity_id=unseen))
    b = env.step(act("get_customer_profile", entity_id=fake))
    assert a.error.code == b.error.code == "unknown_id"
    assert a.error.message.replace(unseen, "X") == b.error.message.replace(fake, "X")
    assert a.reward == b.reward and a.events == b.events == []
    assert unseen not in {i for p in a.context.ram for i in p.ids}


def test_terminal_tool_rejects_no_valid_id_but_unseen_subjects_do_not_count(env):
    obs, case = start(env, kind="structuring")
    obs = env.step(act("file_sar", subjects=["ENT-ABCDEF"], typology="structuring",
                       findings=[], cited_sections=[], narrative="guess"))
    assert obs.done and obs.metadata["terminal"]["components"]["subjects"] == 0.0


def test_step_after_the_end_is_a_typed_error(env):
    start(env)
    obs = env.step(act("close_alert", reason="x", cited_sections=[]))
    assert obs.done
    again = env.step(act("review_alert"))
    assert again.done and again.error.code == "episode_done" and again.reward == 0.0


def test_step_before_reset_is_a_typed_error():
    obs = MemexEnvironment().step(act("review_alert"))
    assert obs.error.code == "no_episode"


# ---- OS mechanics ---------------------------------------------------------------------------

def test_page_fault_is_penalised_and_the_call_still_runs(env):
    obs, case = start(env, kind="trade_based")
    account = case.public.alert.account_ids[0]
    obs = env.step(act("query_transactions", account_id=account, limit=100))  # RAM: alert, lines
    header = obs.context.alert.model_dump_json()
    party = next(line["counterparty_id"] for line in obs.result["lines"]
                 if line.get("counterparty_id") and line["counterparty_id"] not in header)
    env.step(act("search_compliance_manual", query="trade"))
    obs = env.step(act("search_compliance_manual", query="invoice"))  # the lines evicted
    assert any("evicted" in e for e in obs.events)
    obs = env.step(act("get_customer_profile", entity_id=party))
    assert obs.error is None and obs.result
    assert obs.reward_breakdown["page_fault"] == pytest.approx(PAGE_FAULT_PENALTY)
    assert any(e.startswith("page fault") for e in obs.events)
    assert party in obs.context.ram[-1].ids  # the page came back in
    assert env.state.page_faults == 1


def test_ids_written_to_disk_stay_resident(env):
    obs, case = start(env, kind="trade_based")
    invoice = next(t["reference"] for t in obs.result["transactions"] if t.get("reference"))
    obs = env.step(act("write_to_case_file", note=f"Invoice {invoice} to check"))
    assert invoice in obs.context.disk[0].ids
    for q in ("a", "b", "c"):
        env.step(act("search_compliance_manual", query=f"trade {q}"))
    obs = env.step(act("verify_customs_invoice", invoice_id=invoice))
    assert "page_fault" not in obs.reward_breakdown and env.state.page_faults == 0


def test_alert_ids_are_always_resident(env):
    obs, case = start(env, kind="structuring")
    for q in ("a", "b", "c"):
        env.step(act("search_compliance_manual", query=f"cash {q}"))
    obs = env.step(act("get_customer_profile", entity_id=case.public.alert.subject_id))
    assert env.state.page_faults == 0 and obs.error is None


def test_ram_size_is_configurable(env):
    obs, _ = start(env, ram_pages=4)
    for q in ("a", "b", "c", "d", "e"):
        obs = env.step(act("search_compliance_manual", query=f"topic {q}"))
    assert len(obs.context.ram) == 4 and obs.context.ram_capacity == 4


def test_writing_an_unseen_id_to_disk_is_refused(env):
    obs, case = start(env, kind="structuring")
    unseen = next(e.id for e in case.public.entities if e.id not in obs.context.ram[0].ids)
    obs = env.step(act("write_to_case_file", note=f"about {unseen}"))
    assert obs.error.code == "unknown_id" and obs.context.disk == []


def test_async_trace_early_poll_is_a_timeout_and_the_job_stays_pending(env):
    obs, case = start(env, kind="layering", variant="round_trip")
    wire = next(t for t in obs.result["transactions"] if t["channel"] == "wire")
    obs = env.step(act("request_wire_trace", transaction_id=wire["id"]))
    job, ready = obs.result["job_id"], obs.result["ready_at_step"]
    assert 2 <= ready - obs.step <= 4
    assert [j.status for j in obs.context.jobs] == ["pending"]
    obs = env.step(act("retrieve_async_result", job_id=job))
    assert obs.error.code == "not_ready"
    assert obs.reward_breakdown == {"action_cost": ACTION_COST,
                                    "async_timeout": ASYNC_TIMEOUT_PENALTY}
    assert obs.context.jobs[0].status == "pending" and env.state.async_timeouts == 1
    interrupts = []
    while obs.step < ready:
        obs = env.step(act("search_compliance_manual", query=f"wire trace {obs.step}"))
        interrupts += [e for e in obs.events if e.startswith("interrupt")]
    assert interrupts and job in interrupts[0]
    obs = env.step(act("retrieve_async_result", job_id=job))
    hops = obs.result["hops"]
    assert obs.error is None and hops and hops[0]["sequence"] == 1
    assert {h["hop_id"] for h in hops} <= set(obs.context.ram[-1].ids)
    assert obs.context.jobs[0].status == "retrieved"
    # Onward hops at other banks appear nowhere in the bank's own ledger.
    ledger = {t.id for t in case.public.transactions}
    assert not ({h["hop_id"] for h in hops} & ledger)


def test_trace_eta_is_seeded():
    etas = []
    for _ in range(2):
        env = MemexEnvironment()
        obs = env.reset(seed=5, difficulty="medium", kind="layering", variant="round_trip")
        wire = next(t for t in obs.result["transactions"] if t["channel"] == "wire")
        etas.append(env.step(act("request_wire_trace", transaction_id=wire["id"]))
                    .result["ready_at_step"])
    assert etas[0] == etas[1]


def test_tracing_a_cash_deposit_is_refused(env):
    obs, case = start(env, kind="structuring")
    cash = next(t for t in obs.result["transactions"] if t["channel"] == "cash")
    assert env.step(act("request_wire_trace", transaction_id=cash["id"])).error.code == \
        "not_traceable"


def test_kernel_holds_capacity_sections_and_evicts_the_oldest(env):
    start(env)
    for sid in ("2.1", "2.2", "2.3"):
        obs = env.step(act("update_system_prompt", section_id=sid))
    assert [s.section_id for s in obs.context.kernel] == ["2.1", "2.2", "2.3"]
    obs = env.step(act("update_system_prompt", section_id="8.1"))
    assert obs.result["evicted"] == "2.1"
    assert [s.section_id for s in obs.context.kernel] == ["2.2", "2.3", "8.1"]
    assert all(s.text for s in obs.context.kernel)


def test_redundant_call_is_penalised(env):
    obs, case = start(env)
    subject = case.public.alert.subject_id
    first = env.step(act("get_customer_profile", entity_id=subject))
    second = env.step(act("get_customer_profile", entity_id=subject))
    assert "redundant_call" not in first.reward_breakdown
    assert second.reward_breakdown["redundant_call"] == REDUNDANT_CALL_PENALTY


# ---- rewards ---------------------------------------------------------------------------------

def _oracle_sar(env, case, *, load=True, write=True):
    """Reveal and keep every alert-visible piece of evidence, then file the right SAR."""
    truth = case.truth
    ids = set(case.public.alert.transaction_ids) | {case.public.alert.subject_id}
    evidence = {f.code: [e for e in f.evidence_ids if e in ids] for f in truth.red_flags}
    keep = sorted({e for v in evidence.values() for e in v})
    if write:
        env.step(act("write_to_case_file", note="evidence", evidence_ids=keep))
    if load:
        for sid in truth.justifying_sections:
            env.step(act("update_system_prompt", section_id=sid))
    return env.step(act("file_sar", subjects=list(truth.subject_ids), typology=truth.typology,
                        findings=[{"code": c, "evidence_ids": v} for c, v in evidence.items()
                                  if v],
                        cited_sections=list(truth.justifying_sections), narrative="n"))


def test_terminal_reward_is_the_terminal_score_alone_and_return_is_the_sum(env):
    obs, case = start(env, kind="structuring", variant="undocumented_cash")
    rewards = []
    subject = case.public.alert.subject_id
    for a in (act("get_customer_profile", entity_id=subject),
              act("get_customer_profile", entity_id=subject)):
        rewards.append(env.step(a).reward)
    final = _oracle_sar(env, case)
    terminal = final.metadata["terminal"]
    assert final.done and final.reward == terminal["score"]
    assert final.reward_breakdown == {"terminal": terminal["score"]}
    assert final.metadata["episode_return"] == pytest.approx(env.state.total_reward)
    assert env.state.total_reward == pytest.approx(
        terminal["score"] + sum(rewards) + 4 * ACTION_COST)  # + one write, three loads
    assert terminal["outcome"] == "TP" and 0.0 <= terminal["score"] <= 1.0


def test_score_breakdown_appears_only_in_the_final_observation(env):
    obs, case = start(env, kind="structuring")
    for a in (act("review_alert"), act("search_compliance_manual", query="cash")):
        obs = env.step(a)
        assert "terminal" not in obs.metadata and obs.metadata == {}
    final = _oracle_sar(env, case)
    assert set(final.metadata["terminal"]["components"]) == {
        "decision", "subjects", "findings", "typology", "citations", "efficiency", "text"}


def test_citations_count_only_when_loaded(env):
    _, case = start(env, kind="structuring", seed=3)
    loaded = _oracle_sar(env, case).metadata["terminal"]["components"]["citations"]
    env2 = MemexEnvironment()
    _, case2 = start(env2, kind="structuring", seed=3)
    unloaded = _oracle_sar(env2, case2, load=False).metadata["terminal"]["components"]
    assert loaded == pytest.approx(SAR_WEIGHTS["citations"] * (1 - RUBRIC_WEIGHT))
    assert unloaded["citations"] == 0.0


def test_findings_count_only_with_evidence_kept_on_disk(env):
    _, case = start(env, kind="structuring", seed=4)
    on_disk = _oracle_sar(env, case).metadata["terminal"]["components"]
    env2 = MemexEnvironment()
    _, case2 = start(env2, kind="structuring", seed=4)
    not_on_disk = _oracle_sar(env2, case2, write=False).metadata["terminal"]["components"]
    assert on_disk["findings"] > 0.0 and not_on_disk["findings"] == 0.0
    assert not_on_disk["typology"] == 0.0 and not_on_disk["efficiency"] == 0.0


def test_no_verdict_free_policy_can_expect_a_positive_score_on_the_default_mix():
    """A correct decision scores at most SCORE_MAX, so always filing and always closing are
    bounded by the mix and the two costs alone, whatever the world; the costs beat the bound
    with a margin (docs/scoring.md)."""
    b = DEFAULT_BENIGN_SHARE
    assert b > 0.5  # most alerts are false positives
    always_file = (1 - b) * SCORE_MAX + b * FALSE_POSITIVE_SCORE
    always_close = b * SCORE_MAX + (1 - b) * FALSE_NEGATIVE_SCORE
    assert always_file <= -0.1 and always_close <= -0.1, (always_file, always_close)
    assert abs(FALSE_POSITIVE_SCORE) >= 1.25 * (1 - b) / b * SCORE_MAX
    assert abs(FALSE_NEGATIVE_SCORE) >= 1.25 * b / (1 - b) * SCORE_MAX
    assert SCORE_MIN == FALSE_NEGATIVE_SCORE < FALSE_POSITIVE_SCORE < 0


def test_wrong_decisions_and_timeouts(env):
    _, case = start(env, kind="layering")
    closed = env.step(act("close_alert", reason="fine", cited_sections=[]))
    assert closed.metadata["terminal"]["outcome"] == "FN"
    assert closed.reward == FALSE_NEGATIVE_SCORE
    _, case = start(env, kind="cash_business")
    filed = env.step(act("file_sar", subjects=[case.public.alert.subject_id],
                         typology="structuring", findings=[], cited_sections=[],
                         narrative="x"))
    assert filed.metadata["terminal"]["outcome"] == "FP" and filed.reward == FALSE_POSITIVE_SCORE
    assert FALSE_NEGATIVE_SCORE < FALSE_POSITIVE_SCORE < 0
    for kind, worst in (("layering", FALSE_NEGATIVE_SCORE),
                        ("pep_wealth", FALSE_POSITIVE_SCORE)):
        obs, case = start(env, kind=kind)
        shaping = 0.0
        while not obs.done:
            obs = env.step(act("review_alert"))
            shaping += obs.reward if not obs.done else 0.0
        assert obs.metadata["terminal"]["outcome"] == "timeout" and obs.reward == worst
        assert obs.step == case.public.step_budget
        assert env.state.total_reward == pytest.approx(worst + shaping)
        assert env.state.total_reward < worst
        assert env.state.decision == "timeout"


def test_fixed_1mdb_case_is_served(env):
    obs = env.reset(case="1mdb")
    assert obs.result["subject"]["name"] == "Crimson Harbor Pictures LLC"
    with pytest.raises(ValueError):
        env.reset(case="enron")
