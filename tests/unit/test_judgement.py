"""The world of judgement: four dispositions per cross-check, the weighing rule that decides the
label, explanations that are real records an investigator can fetch, anomaly sizes that overlap
across dispositions, and the request for information that brings the explanations not on file."""

from __future__ import annotations

from collections import Counter

import pytest

from memex.models import MemexAction
from memex.scenarios import DIFFICULTIES, KINDS, generate
from memex.scenarios import checks as ck
from memex.scenarios.manual import SAR_MIN_UNEXPLAINED, SECTIONS
from memex.scenarios.story import BENIGN_NOISE_SHARE, POOLS
from memex.server.environment import MemexEnvironment

pytestmark = pytest.mark.unit


def _cases(n: int = 12):
    for kind in sorted(KINDS):
        for i, difficulty in enumerate(DIFFICULTIES * n):
            yield generate(i, difficulty, kind)


def test_the_label_follows_the_weighing_rule():
    noisy = benign = 0
    for case in _cases(8):
        t = case.truth
        unexplained = sum(d == ck.UNEXPLAINED for d in t.dispositions.values())
        assert set(t.dispositions) <= set(POOLS[case.public.alert.rule.code])
        if t.suspicious:
            assert unexplained >= SAR_MIN_UNEXPLAINED
        else:
            assert unexplained <= SAR_MIN_UNEXPLAINED - 1
            benign += 1
            noisy += unexplained
    assert abs(noisy / benign - BENIGN_NOISE_SHARE) < 0.08, noisy / benign


def test_every_check_takes_every_disposition_it_allows_in_both_classes():
    seen: Counter = Counter()
    for case in _cases(24):
        for check, mode in case.truth.dispositions.items():
            seen[(check, mode, case.truth.suspicious)] += 1
    # a true list match on the customer is never a benign story's noise
    assert seen[(ck.WATCHLIST, ck.UNEXPLAINED, False)] == 0
    for check, modes in ck.MODES.items():
        for mode in modes:
            if (check, mode) == (ck.WATCHLIST, ck.UNEXPLAINED):
                continue
            assert seen[(check, mode, False)] > 0, (check, mode)  # benign noise is unexplained
            if mode != ck.UNEXPLAINED:  # cover stories explain some anomalies too
                assert seen[(check, mode, True)] > 0 or check in ("payee_watchlist",), \
                    (check, mode)


def test_explanations_are_records_of_the_case_and_replies_answer_their_topic():
    for case in _cases(6):
        t, pub = case.truth, case.public
        ids = set(pub.all_ids())
        assert set(t.explanation_ids) <= ids
        replies = {r.id: r for r in pub.information_replies}
        for check, mode in t.dispositions.items():
            if mode == ck.EXPLAINED_RFI:
                topics = {replies[i].topic for i in t.explanation_ids if i in replies}
                assert ck.TOPIC[check] in topics, (check, topics)
        if not any(m.startswith("explained") for m in t.dispositions.values()):
            assert t.explanation_ids == ()
        # every case has one reply per topic on its subject, whatever the story
        assert sorted(r.topic for r in pub.information_replies) == sorted(
            {r.topic for r in pub.information_replies})
        assert all(r.entity_id == pub.alert.subject_id for r in pub.information_replies)


def _inflow(pub) -> float:
    """The flow a source-of-funds document explains: the alerted inflow; for a PEP alert the
    transfer itself (manual 5.3), not the smaller ones the alert also counts."""
    by_id = {t.id: t for t in pub.transactions}
    accounts = set(pub.alert.account_ids)
    amounts = [by_id[i].amount_usd for i in pub.alert.transaction_ids
               if by_id[i].to_account in accounts]
    return max(amounts) if pub.alert.rule.code == "TM-PEP-04" else sum(amounts)


def test_document_gaps_of_explained_and_unexplained_sources_of_funds_overlap():
    ratios: dict[str, list[float]] = {ck.EXPLAINED: [], ck.UNEXPLAINED: []}
    for case in _cases(25):
        mode = case.truth.dispositions.get(ck.SOURCE_OF_FUNDS)
        if mode not in ratios:
            continue
        pub = case.public
        fx = [t for t in pub.transactions if t.memo == ck.FX_MEMO]
        assert len(fx) == 1 and fx[0].id not in pub.alert.transaction_ids
        docs = [d for s in pub.source_of_funds for d in s.documents if d.amount_usd]
        flow = _inflow(pub)
        ratios[mode].append(max(d.amount_usd for d in docs) / flow)
    above = [r for r in ratios[ck.UNEXPLAINED] if r > 1]
    assert min(ratios[ck.EXPLAINED]) >= 1 + 0.049 and max(ratios[ck.EXPLAINED]) <= 1.151
    # unexplained documents as close to the flow as explained ones: the gap alone cannot tell
    assert any(r < max(ratios[ck.EXPLAINED]) for r in above)


def test_an_fx_line_explains_exactly_the_explained_documents():
    for case in _cases(20):
        mode = case.truth.dispositions.get(ck.SOURCE_OF_FUNDS)
        if mode is None:
            continue
        pub = case.public
        fx = next(t for t in pub.transactions if t.memo == ck.FX_MEMO)
        docs = [d for s in pub.source_of_funds for d in s.documents if d.amount_usd]
        flow = _inflow(pub)
        explains = any(abs(d.amount_usd - flow - fx.amount_usd) <= 0.005 * flow for d in docs)
        assert explains == (mode == ck.EXPLAINED), (mode, case.truth.kind)


def test_price_anomalies_overlap_in_size_across_dispositions():
    ratios: dict[str, list[float]] = {ck.EXPLAINED: [], ck.UNEXPLAINED: []}
    for seed in range(150):
        for kind in ("fair_trade", "trade_based"):
            case = generate(seed, DIFFICULTIES[seed % 3], kind)
            mode = case.truth.dispositions.get(ck.PRICE)
            if mode not in ratios:
                continue
            pub = case.public
            mkt = {m.commodity: m for m in pub.market_prices}
            refs = {t.reference for t in pub.transactions if t.id in pub.alert.transaction_ids}
            for d in pub.trade_documents:
                if d.id in refs and d.unit_price_usd > mkt[d.commodity].high_usd:
                    ratios[mode].append(d.unit_price_usd / mkt[d.commodity].high_usd)
    lo = max(min(ratios[ck.EXPLAINED]), min(ratios[ck.UNEXPLAINED]))
    hi = min(max(ratios[ck.EXPLAINED]), max(ratios[ck.UNEXPLAINED]))
    assert lo < hi  # no single threshold on the invoiced price separates them
    inside = [r for r in ratios[ck.UNEXPLAINED] if lo <= r <= hi]
    assert inside and [r for r in ratios[ck.EXPLAINED] if lo <= r <= hi]


def test_the_manual_states_the_weighing_rule():
    assert "1.7" in SECTIONS
    text = SECTIONS["1.7"].text + SECTIONS["9.1"].text
    assert "explanation" in text and f"at least {SAR_MIN_UNEXPLAINED} independent" in text


def test_request_information_is_asynchronous_and_answers_from_the_case():
    env = MemexEnvironment()
    obs = env.reset(seed=7, difficulty="medium", kind="pep_wealth")
    subject = obs.result["subject"]["entity_id"]
    obs = env.step(MemexAction(tool="request_information",
                               arguments={"entity_id": subject, "topic": "identity"}))
    job = obs.result
    assert obs.error is None and job["ready_in_steps"] >= 2
    obs = env.step(MemexAction(tool="retrieve_async_result", arguments={"job_id": job["job_id"]}))
    assert obs.error is not None and obs.error.code == "not_ready"
    while env.state.step_count < job["ready_at_step"]:
        obs = env.step(MemexAction(tool="search_compliance_manual", arguments={"query": "cash"}))
    obs = env.step(MemexAction(tool="retrieve_async_result", arguments={"job_id": job["job_id"]}))
    reply = next(r for r in env.current_case.public.information_replies
                 if r.topic == "identity")
    assert obs.result["reply_id"] == reply.id and obs.result["statement"] == reply.statement
    assert reply.id in obs.context.ram[-1].ids
    bad = env.step(MemexAction(tool="request_information",
                               arguments={"entity_id": subject, "topic": "weather"}))
    assert bad.error is not None and bad.error.code == "invalid_arguments"
