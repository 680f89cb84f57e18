"""The case plan's judgement knobs (`scenarios.plan`, `story.Judgement`): typed validation,
defaults that leave every case as it was, what each knob writes, the label rule kept, and the
lifted-budget scoring of the adversary that makes a split hard by structure."""

from __future__ import annotations

import itertools
import json
import random
from datetime import date

import pytest

from memex.adversary.__main__ import main as adversary_cli
from memex.adversary.distributed import _from_dict
from memex.adversary.scoring import LIFTED_STEP_BUDGET, Scorer, lifted, paired
from memex.envkit.errors import CodedError
from memex.scenarios import checks as ck
from memex.scenarios.manual import SAR_MIN_UNEXPLAINED
from memex.scenarios.plan import JUDGEMENT_CHOICES, PlanError, build, mirror, parse

CASH_SUS = {"kind": "structuring", "variant": "undocumented_cash", "difficulty": "medium",
            "checks": ["trace", "device"]}
CASH_BEN = {"kind": "cash_business", "variant": "documented_takings", "difficulty": "medium",
            "checks": ["trace", "device"]}
TRADE_SUS = {"kind": "trade_based", "variant": "over_invoicing", "difficulty": "medium",
             "checks": ["trace", "device"]}
TRADE_BEN = {"kind": "fair_trade", "variant": "priced_in_band", "difficulty": "medium",
             "checks": ["trace", "device"]}
EXPLAINED = (ck.EXPLAINED, ck.EXPLAINED_RFI)


def _day(stamp: str) -> date:
    return date.fromisoformat(stamp[:10])


@pytest.mark.parametrize(("change", "field"), [
    ({"innocent_anomalies": 5}, "innocent_anomalies"),
    ({"innocent_anomalies": -1}, "innocent_anomalies"),
    ({"innocent_anomalies": "2"}, "innocent_anomalies"),   # strict: no conversion
    ({"innocent_anomalies": True}, "innocent_anomalies"),
    ({"explanation_reach": "far"}, "explanation_reach"),
    ({"benign_noise": "yes"}, "benign_noise"),
    ({"misleading_reply": 1}, "misleading_reply"),
    ({"near_band": "true"}, "near_band"),
])
def test_invalid_judgement_knobs_raise_a_typed_error_naming_the_field(change, field):
    with pytest.raises(PlanError) as err:
        parse({**CASH_SUS, **change})
    assert isinstance(err.value, CodedError) and err.value.code == "invalid_plan"
    assert field in str(err.value)


def test_unset_judgement_knobs_leave_the_plan_and_the_case_unchanged():
    plan = parse(CASH_SUS)
    assert plan.judgement() is None
    assert not set(JUDGEMENT_CHOICES) & set(plan.to_dict())
    # a plan setting every judgement knob to what is drawn anyway is a different plan
    knobbed = parse({**CASH_SUS, "innocent_anomalies": 0})
    assert knobbed.judgement() is not None and knobbed.key() != plan.key()
    for seed in range(4):
        assert build(CASH_SUS, seed).to_json() == build(plan.to_json(), seed).to_json()


def test_judgement_knobs_round_trip_and_travel_with_the_mirror():
    plan = parse({**CASH_SUS, "innocent_anomalies": 2, "explanation_reach": "deep",
                  "benign_noise": True, "misleading_reply": True, "near_band": False})
    assert parse(plan.to_json()) == plan
    twin = mirror(plan)
    assert not twin.suspicious
    assert {k: getattr(twin, k) for k in JUDGEMENT_CHOICES} == {
        k: getattr(plan, k) for k in JUDGEMENT_CHOICES}
    assert build(plan, 5).to_json() == build(plan, 5).to_json()


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_innocent_anomalies_fix_how_many_checks_show_an_explained_anomaly(n):
    for seed in range(6):
        benign = build({**CASH_BEN, "innocent_anomalies": n, "benign_noise": False}, seed).truth
        modes = list(benign.dispositions.values())
        assert modes.count(ck.UNEXPLAINED) == 0 and not benign.suspicious
        assert sum(m in EXPLAINED for m in modes) == n
        assert modes.count(ck.CLEAR) == 3 - n
        sus = build({**CASH_SUS, "innocent_anomalies": n}, seed).truth
        modes = list(sus.dispositions.values())
        assert modes.count(ck.UNEXPLAINED) == SAR_MIN_UNEXPLAINED and sus.suspicious
        # a suspicious story has one covered check: documented (explained) or clear
        assert sum(m in EXPLAINED for m in modes) == min(n, 1)


def test_benign_noise_leaves_exactly_one_check_unexplained_or_none():
    for seed in range(6):
        noisy = build({**CASH_BEN, "benign_noise": True}, seed).truth
        clean = build({**CASH_BEN, "benign_noise": False}, seed).truth
        assert list(noisy.dispositions.values()).count(ck.UNEXPLAINED) == 1
        assert ck.UNEXPLAINED not in clean.dispositions.values()
        assert not noisy.suspicious and not clean.suspicious


def test_reach_request_and_file_move_the_explanation_between_reply_and_file():
    for seed in range(4):
        plan = {**CASH_BEN, "innocent_anomalies": 3, "benign_noise": False}
        asked = build({**plan, "explanation_reach": "request"}, seed).truth
        filed = build({**plan, "explanation_reach": "file"}, seed).truth
        assert set(asked.dispositions.values()) == {ck.EXPLAINED_RFI}
        assert set(filed.dispositions.values()) == {ck.EXPLAINED}
        # a request-explained case names the reply among its explanations
        assert any(i.startswith("RFI-") for i in asked.explanation_ids)
        assert not any(i.startswith("RFI-") for i in filed.explanation_ids)


def test_deep_reach_books_the_fx_charges_after_the_inflow_day():
    for seed in range(4):
        case = build({**CASH_BEN, "checks": ["trace"], "innocent_anomalies": 2,
                      "benign_noise": False, "explanation_reach": "deep"}, seed)
        pub = case.public
        assert case.truth.dispositions[ck.SOURCE_OF_FUNDS] == ck.EXPLAINED
        first = min(_day(t.timestamp) for t in pub.transactions
                    if t.id in pub.alert.transaction_ids)
        fx = [t for t in pub.transactions if t.id in case.truth.explanation_ids]
        assert len(fx) == 1 and fx[0].memo == ck.FX_MEMO
        assert _day(fx[0].timestamp) > first
        # no FX line on the inflow's first day: the day's ledger does not show the explanation
        assert not [t for t in pub.transactions if t.memo == ck.FX_MEMO
                    and _day(t.timestamp) == first]


def test_deep_reach_files_the_freight_with_the_declarations_not_on_the_bill_of_lading():
    case = build({**TRADE_BEN, "checks": ["trace"], "innocent_anomalies": 2,
                  "benign_noise": False, "explanation_reach": "deep"}, 2)
    pub, truth = case.public, case.truth
    assert truth.dispositions[ck.PRICE] == ck.EXPLAINED
    alerted = {t.reference for t in pub.transactions if t.id in pub.alert.transaction_ids}
    invoices = [d for d in pub.trade_documents if d.id in alerted]
    assert invoices and all(d.price_basis == "CIF" for d in invoices)
    shipments = {d.shipment_ref for d in invoices}
    assert all(d.freight_usd is None for d in pub.trade_documents
               if d.kind == "bill_of_lading" and d.shipment_ref in shipments)
    filed = {d.id: d for s in pub.source_of_funds for d in s.documents}
    freight = [filed[i] for i in truth.explanation_ids
               if i in filed and filed[i].kind == "freight invoice"]
    assert freight and all(d.amount_usd and d.reference in shipments for d in freight)


def test_deep_reach_names_the_household_on_the_co_users_own_file():
    case = build({**CASH_BEN, "checks": ["device"], "innocent_anomalies": 2,
                  "benign_noise": False, "explanation_reach": "deep"}, 1)
    truth, pub = case.truth, case.public
    assert truth.dispositions[ck.DEVICE] == ck.EXPLAINED
    entities = {e.id: e for e in pub.entities}
    co_user = next(entities[i] for i in truth.explanation_ids if i in entities)
    subject = entities[pub.alert.subject_id]
    actor = subject if subject.kind == "person" else entities[subject.directors[0]]
    assert actor.id in co_user.household and co_user.id not in actor.household


def test_misleading_reply_names_the_ledger_line_with_another_amount():
    for seed in range(4):
        case = build({**CASH_SUS, "misleading_reply": True, "near_band": True}, seed)
        pub, truth = case.public, case.truth
        assert truth.suspicious and truth.dispositions[ck.SOURCE_OF_FUNDS] == ck.UNEXPLAINED
        reply = next(r for r in pub.information_replies if r.topic == "source_of_funds")
        [advice] = reply.documents
        line = next(t for t in pub.transactions if t.id == advice.reference)
        assert line.memo == ck.FX_MEMO and abs(line.amount_usd - advice.amount_usd) > 1.0
        # and the advice equals what the document exceeds the flow by: it looks explanatory
        docs = [d for s in pub.source_of_funds for d in s.documents if d.amount_usd]
        flow = sum(t.amount_usd for t in pub.transactions if t.id in pub.alert.transaction_ids
                   and t.to_account in pub.alert.account_ids)
        assert any(abs(d.amount_usd - flow - advice.amount_usd) < 0.02 for d in docs)


def test_misleading_reply_on_pricing_contradicts_the_bill_of_lading():
    case = build({**TRADE_SUS, "misleading_reply": True}, 3)
    pub, truth = case.public, case.truth
    assert truth.suspicious and truth.dispositions[ck.PRICE] == ck.UNEXPLAINED
    reply = next(r for r in pub.information_replies if r.topic == "trade_terms")
    bols = {d.shipment_ref: d for d in pub.trade_documents if d.kind == "bill_of_lading"}
    assert reply.documents
    for doc in reply.documents:
        bol = bols[doc.reference]
        assert bol.freight_usd is not None and doc.amount_usd > 2 * bol.freight_usd


def test_near_band_puts_the_unexplained_document_inside_the_fx_band():
    for seed in range(6):
        pub = build({**CASH_SUS, "near_band": True}, seed).public
        flow = sum(t.amount_usd for t in pub.transactions if t.id in pub.alert.transaction_ids
                   and t.to_account in pub.alert.account_ids)
        docs = [d.amount_usd for s in pub.source_of_funds for d in s.documents if d.amount_usd]
        assert any(0.049 <= a / flow - 1 <= 0.151 for a in docs)


def test_the_label_stays_the_count_of_unexplained_checks_under_any_knobs():
    rng = random.Random(0)
    plans = [CASH_SUS, CASH_BEN, TRADE_SUS, TRADE_BEN]
    for base, seed in itertools.product(plans, range(8)):
        knobs = {k: rng.choice(v) for k, v in JUDGEMENT_CHOICES.items()}
        truth = build({**base, **knobs}, seed).truth
        unexplained = list(truth.dispositions.values()).count(ck.UNEXPLAINED)
        assert truth.suspicious == (unexplained >= SAR_MIN_UNEXPLAINED), (base, knobs, seed)


def test_a_structural_pair_fools_the_heuristic_with_time_and_not_the_oracle():
    """Suspicious: the source of funds is covered by a misleading reply; benign twin: both
    innocent anomalies explained only deep in the file. With the budget lifted the weighing
    heuristic still decides both wrong; the oracle solves both."""
    plan = parse({"kind": "structuring", "variant": "controlled_account",
                  "difficulty": "medium", "checks": ["source_of_funds"],
                  "innocent_anomalies": 4, "explanation_reach": "deep", "benign_noise": False,
                  "misleading_reply": True, "near_band": True, "step_budget": 30})
    scorer = Scorer("heuristic", lifted=True)
    try:
        sus, ben = scorer.score(plan, (0, 1)), scorer.score(mirror(plan), (0, 1))
    finally:
        scorer.close()
    for scored in (sus, ben):
        assert scored.valid and scored.oracle_correct == 1.0
        assert scored.lifted_correct == 0.0 and scored.structural_correct == 0.0
    assert set(sus.lifted_outcomes) == {"FN"} and set(ben.lifted_outcomes) == {"FP"}
    both = paired(sus, ben)
    assert both.valid and both.failure == pytest.approx((sus.failure + ben.failure) / 2)
    assert both.lifted_outcomes == sus.lifted_outcomes + ben.lifted_outcomes
    assert _from_dict(both.to_dict()) == both
    assert paired(sus, None).failure == 0.0
    assert lifted(plan).step_budget == LIFTED_STEP_BUDGET



def test_misleading_reply_points_the_wrong_way_on_an_explained_anomaly_too():
    """Both classes alike: an anomaly the file explains gets a reply that does not explain it,
    so a reply with documents does not tell the label; the records on file still explain."""
    for seed in range(4):
        case = build({**CASH_BEN, "checks": ["trace"], "innocent_anomalies": 2,
                      "benign_noise": False, "explanation_reach": "deep",
                      "misleading_reply": True}, seed)
        pub, truth = case.public, case.truth
        assert not truth.suspicious and truth.dispositions[ck.SOURCE_OF_FUNDS] == ck.EXPLAINED
        reply = next(r for r in pub.information_replies if r.topic == "source_of_funds")
        [advice] = reply.documents
        line = next(t for t in pub.transactions if t.id == advice.reference)
        assert line.id in truth.explanation_ids and advice.id not in truth.explanation_ids
        assert abs(line.amount_usd - advice.amount_usd) > 1.0
    case = build({**TRADE_BEN, "checks": ["trace"], "innocent_anomalies": 2,
                  "benign_noise": False, "explanation_reach": "file",
                  "misleading_reply": True}, 2)
    bols = {d.shipment_ref: d for d in case.public.trade_documents
            if d.kind == "bill_of_lading"}
    reply = next(r for r in case.public.information_replies if r.topic == "trade_terms")
    assert reply.documents
    for doc in reply.documents:
        assert doc.kind == "freight invoice" and doc.amount_usd < bols[doc.reference].freight_usd


def test_misleading_reply_answers_every_anomalous_topic_with_a_document():
    for base, seed in itertools.product((CASH_SUS, CASH_BEN), range(4)):
        case = build({**base, "innocent_anomalies": 2, "explanation_reach": "file",
                      "misleading_reply": True}, seed)
        replies = {r.topic: r for r in case.public.information_replies}
        for check, mode in case.truth.dispositions.items():
            topic = ck.TOPIC.get(check)
            if mode in (ck.EXPLAINED, ck.UNEXPLAINED) and topic not in (None, "identity"):
                assert replies[topic].documents, (base["kind"], seed, check, mode)
                assert replies[topic].statement not in ck.EVASIVE


def test_build_split_scores_pairs_with_the_budget_lifted(tmp_path):
    out = tmp_path / "adversarial_tiny.json"
    rc = adversary_cli(["build-split", "--trials", "24", "--plans", "2", "--seeds", "0",
                        "--seeds-per-plan", "1", "--lifted", "--pairs", "--per-kind", "1",
                        "--no-progress", "--out", str(out)])
    split = json.loads(out.read_text())
    assert rc == 0 and split["pairs"] >= 1
    assert split["lifted_step_budget"] == LIFTED_STEP_BUDGET and split["scored_with_mirror"]
    assert split["per_kind"] == 1
    assert set(split["failing_valid_by_judgement"]) == set(JUDGEMENT_CHOICES)
    kinds = [e["plan"]["kind"] for e in split["entries"] if e["role"] == "adversary"]
    assert len(kinds) == len(set(kinds)) == split["pairs"]
    roles = {(e["pair"], e["role"]) for e in split["entries"]}
    assert roles == {(p, r) for p in range(split["pairs"]) for r in ("adversary", "mirror")}
