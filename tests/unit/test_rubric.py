"""The text rubric (`graders.rubric`) on real generated cases: a narrative that names the
subjects, quotes the evidence records' amounts and dates, cites them and names the filing's
typology scores full; empty text, boilerplate and a copy of the alert do not; invented facts,
unseen records and conflicting typologies cost; a close reason scores only when it cites the
explanation. It enters only a correct decision's score, and only the final observation."""

from __future__ import annotations

import json
import random
from itertools import chain

import pytest

from memex.adapter import ADAPTER
from memex.envkit.episodes import LocalSession
from memex.graders.decision import Decision
from memex.graders.rubric import (
    TYPOLOGY_PHRASES,
    _read,
    _typologies,
    explanation_ids,
    read_text,
    score_text,
)
from memex.graders.terminal import RUBRIC_WEIGHT, Evidence, score_decision
from memex.models import MemexAction
from memex.policies.oracle import Oracle
from memex.scenarios import KINDS, SPLITS, CaseSpec, build
from memex.server.case_index import CaseIndex
from memex.server.environment import MemexEnvironment
from memex.server.tools import Toolkit
from memex.state_manager import OSState


def _case(kind: str, seed: int = 7, difficulty: str = "medium"):
    return build(CaseSpec(seed=seed, difficulty=difficulty, kind=kind))


def _everything(case) -> frozenset[str]:
    return frozenset(case.public.all_ids())


def _dated_amount(case, rid: str) -> tuple[float, str] | None:
    """The amount and date a transaction, trace hop or trade document holds, if it holds both."""
    pub = case.public
    for t in pub.transactions:
        if t.id == rid:
            return t.amount_usd, t.timestamp[:10]
    for h in pub.correspondent_hops:
        if h.id == rid:
            return h.amount_usd, h.value_date
    for d in pub.trade_documents:
        if d.id == rid and d.total_usd is not None:
            return d.total_usd, d.date
    return None


def _names(case) -> dict[str, str]:
    return {e.id: e.name for e in case.public.entities}


def _full_narrative(case) -> str:
    truth, names = case.truth, _names(case)
    carriers = [c for f in truth.red_flags for c in f.carrier_ids
                if c not in case.public.alert.transaction_ids]
    quoted = [(c, _dated_amount(case, c)) for c in carriers]
    quoted = [(c, f) for c, f in quoted if f is not None]
    assert quoted, "the case needs a dated, priced carrier for this test"
    who = ", ".join(f"{names[s]} ({s})" for s in truth.subject_ids)
    facts = "; ".join(f"{c}: USD {a:,.2f} on {d}" for c, (a, d) in quoted)
    return f"Subjects: {who}. Suspected {truth.typology.replace('_', ' ')}. Evidence: {facts}."


def _sar(case, text: str, typology: str | None = None) -> Decision:
    return Decision("file_sar", case.truth.subject_ids, typology or case.truth.typology,
                    text=text)


def _alert_copy(case) -> str:
    ix = CaseIndex(case.public)
    toolkit = Toolkit(ix, OSState(ix.alert_ids()), lambda _: 1)
    return json.dumps(toolkit.review_alert())


SAR_KIND = "trade_based"


def test_a_narrative_of_who_what_when_where_and_why_scores_full():
    case = _case(SAR_KIND)
    score = score_text(case.truth, _sar(case, _full_narrative(case)), case.public,
                       _everything(case))
    assert score.parts == {"who": 1.0, "what": 1.0, "when": 1.0, "where": 1.0, "why": 1.0}
    assert score.total == 1.0


@pytest.mark.parametrize("text", ["", "   ", "Suspicious activity. Structuring suspected.",
                                  "Per ground truth.", "Activity inconsistent with profile; "
                                  "trade based money laundering typology; SAR filed."])
def test_empty_or_boilerplate_text_scores_zero(text):
    case = _case(SAR_KIND)
    seen = _everything(case)
    assert score_text(case.truth, _sar(case, text), case.public, seen).total == 0.0
    benign = _case("fair_trade")
    close = Decision("close_alert", text=text)
    assert score_text(benign.truth, close, benign.public, _everything(benign)).total == 0.0


@pytest.mark.parametrize("kind", [SAR_KIND, "layering", "structuring", "fair_trade"])
def test_a_copy_of_the_alert_does_not_score_full(kind):
    case = _case(kind)
    text, seen = _alert_copy(case), _everything(case)
    sar = score_text(case.truth, _sar(case, text), case.public, seen)
    assert sar.total <= 0.6 and sar.parts["why"] == 0.0  # the alert names a rule, no typology
    # Only the alert's own facts: the alert and its transactions (the header also lists the IDs
    # of records they reference, an invoice say, whose content no tool has shown yet).
    at_step_one = frozenset({case.public.alert.id, *case.public.alert.transaction_ids})
    sar = score_text(case.truth, _sar(case, text), case.public, at_step_one)
    assert sar.parts["what"] <= 0.5 and sar.parts["when"] <= 0.5 and sar.total <= 0.5
    close = score_text(case.truth, Decision("close_alert", text=text), case.public, seen)
    assert close.total == 0.0


def test_only_records_the_agent_saw_count():
    case = _case(SAR_KIND)
    text = _full_narrative(case)
    alert_only = frozenset(CaseIndex(case.public).alert_ids())
    score = score_text(case.truth, _sar(case, text), case.public, alert_only)
    assert score.parts["where"] == 0.0 and score.parts["what"] < 1.0
    assert score.total < 0.5


def test_invented_amounts_and_dates_and_unknown_ids_cost_precision():
    case = _case(SAR_KIND)
    seen = _everything(case)
    text = _full_narrative(case)
    invented = text + " Also USD 123,456.78 on 2031-02-29 via TXN-FFFFFF."
    full = score_text(case.truth, _sar(case, text), case.public, seen)
    worse = score_text(case.truth, _sar(case, invented), case.public, seen)
    assert worse.parts["what"] < full.parts["what"] and worse.parts["where"] < 1.0
    assert worse.total < full.total


def test_the_typology_must_be_the_filings_and_the_only_one_named():
    case = _case(SAR_KIND)
    seen, text = _everything(case), _full_narrative(case)
    assert score_text(case.truth, _sar(case, text, "layering"), case.public,
                      seen).parts["why"] == 0.0
    hedged = text + " Possibly layering."
    assert score_text(case.truth, _sar(case, hedged), case.public, seen).parts["why"] == 0.5


def test_subjects_are_named_by_id_or_by_their_records_name():
    case = _case(SAR_KIND)
    seen, names = _everything(case), _names(case)
    subjects = case.truth.subject_ids
    by_name = "Parties: " + "; ".join(names[s] for s in subjects) + "."
    by_id = "Parties: " + "; ".join(subjects) + "."
    for text in (by_name, by_id):
        assert score_text(case.truth, _sar(case, text), case.public, seen).parts["who"] == 1.0
    one = f"Party: {names[subjects[0]]}."
    assert score_text(case.truth, _sar(case, one), case.public, seen).parts["who"] == \
        pytest.approx(1 / len(set(subjects)))


def test_a_close_reason_scores_only_when_it_cites_the_explanation():
    case = _case("fair_trade")
    truth, seen = case.truth, _everything(case)
    explained = sorted(explanation_ids(truth) - CaseIndex(case.public).alert_ids())
    assert explained
    good = Decision("close_alert", text=f"Explained by {explained[0]}.")
    assert score_text(truth, good, case.public, seen).parts["explanation"] == 1.0
    alert = CaseIndex(case.public).alert_ids()
    other = next(i for i in sorted(seen) if i not in explanation_ids(truth) | alert
                 and i.startswith(("OWN-", "LOG-", "WL-", "TXN-", "DOC-")))
    bad = Decision("close_alert", text=f"Explained by {other}.")
    assert score_text(truth, bad, case.public, seen).total == 0.0
    diluted = Decision("close_alert", text=f"Explained by {explained[0]} and {other}.")
    assert score_text(truth, diluted, case.public, seen).parts["explanation"] == 0.5
    unseen = frozenset(seen - {explained[0]})
    assert score_text(truth, good, case.public, unseen).total == 0.0


def test_the_explanation_falls_back_to_a_benign_cases_deciding_views():
    case = _case("fair_trade")
    expected = set(case.truth.explanation_ids or chain.from_iterable(case.truth.decisive_evidence))
    assert explanation_ids(case.truth) == expected and expected


def test_reading_amounts_and_dates():
    facts = read_text("On 5 March 2024 and March 6, 2024 (and 2024-03-07T10:00:00) the customer "
                      "sent $9,950.25, USD 12,000, 1.2 million dollars and $45k; 3 wires, 15%, "
                      "in 2024, via TXN-00A123 and 250 USD.")
    assert facts.dates == {"2024-03-05", "2024-03-06", "2024-03-07"}
    assert facts.ids == {"TXN-00A123"}
    values = sorted(v for v, _ in facts.amounts)
    assert values == [250.0, 9950.25, 12000.0, 45000.0, 1.2e6]
    tolerance = dict(facts.amounts)
    assert tolerance[9950.25] == pytest.approx(0.005, abs=1e-5)
    assert tolerance[1.2e6] == pytest.approx(50_000, abs=1)


FRAGMENTS = ("On 5 March 2024", "Mar 6, 2024", "2024-03-07T10:00:00", "sept 9th 2023",
             "$9,950.25", "USD 12,000", "1.2 million dollars", "$45k", "3 wires", "15%",
             "in 2024", "TXN-00A123", "DOC-3C28CC", "250 USD", "a summary", "the Mayor",
             "decline", "no figures at all", "٣٠٠ dollars", "12 Dec", "Explained:", "4,500",
             "MARCH 1 2024", "31 February 2024")


def test_the_fast_reading_finds_what_reading_everything_finds():
    """`read_text` skips a pattern only when it cannot match (no digit left after the IDs, no
    month's name): on texts built from dates, amounts, IDs, month-like words and digit-free
    prose it reads exactly what running every pattern reads."""
    rng = random.Random(0)
    texts = ["", "Explained: the customer's FX fees.", *FRAGMENTS]
    texts += [" ".join(rng.sample(FRAGMENTS, rng.randint(1, 6))) for _ in range(400)]
    texts.append(_full_narrative(_case(SAR_KIND)))
    for text in texts:
        assert read_text(text) == _read(text, gated=False), text
    assert sum(bool(read_text(t).dates) for t in texts) > 100  # the corpus exercises both
    assert sum(not read_text(t).amounts and not read_text(t).dates for t in texts) > 10


def test_the_rubric_weighs_only_a_correct_decision_and_only_the_final_observation():
    case = _case(SAR_KIND)
    seen = _everything(case)
    ev = Evidence(seen=seen, revealed=seen, on_disk=seen, kernel=(), steps_used=5,
                  step_budget=40)
    text = _full_narrative(case)
    tp = score_decision(case.truth, _sar(case, text), ev, case.public)
    assert tp.components["text"] == pytest.approx(RUBRIC_WEIGHT)
    assert tp.measures["text_rubric"] == 1.0
    bare = score_decision(case.truth, _sar(case, ""), ev, case.public)
    assert tp.total - bare.total == pytest.approx(RUBRIC_WEIGHT)
    fn = score_decision(case.truth, Decision("close_alert", text=text), ev, case.public)
    assert fn.outcome == "FN" and "text" not in fn.components
    # Over the wire: no observation before the last carries the rubric or any of its parts.
    env = MemexEnvironment()
    obs = env.reset(seed=7, difficulty="medium", kind=SAR_KIND)
    subject = env.current_case.public.alert.subject_id
    obs = env.step(MemexAction(tool="get_customer_profile", arguments={"entity_id": subject}))
    assert obs.metadata == {} and "text" not in obs.reward_breakdown
    final = env.step(MemexAction(tool="file_sar", arguments={
        "subjects": [subject], "typology": SAR_KIND, "findings": [], "cited_sections": [],
        "narrative": f"Subject {subject}. Suspected trade based."}))
    assert final.done and "text" in final.metadata["terminal"]["components"]


def test_a_narrative_written_from_the_records_seen_scores_on_every_kind():
    """The oracle writes its narrative and reason from its observations alone
    (`policies.narrative`): on every kind the rubric finds the facts it quoted."""
    env = MemexEnvironment()
    scores = []
    for i, kind in enumerate(KINDS):
        for difficulty in ("easy", "hard"):
            episode = ADAPTER.play(LocalSession(env), Oracle(), CaseSpec(
                seed=SPLITS["test"].start + i, difficulty=difficulty, kind=kind).episode())
            terminal = episode.final.metadata["terminal"]
            assert terminal["outcome"] in ("TP", "TN"), (kind, difficulty)
            scores.append(terminal["measures"]["text_rubric"])
    assert min(scores) >= 0.5 and sum(scores) / len(scores) >= 0.8, scores


def test_every_typology_named_is_found_whatever_sits_beside_it():
    """The typologies are read in one regex pass (`rubric._typologies`); no phrase may hide
    another typology's phrase, whether the two stand apart, touch or share words."""
    phrases = [(t, p) for t, ps in TYPOLOGY_PHRASES.items() for p in ps]
    for t1, p1 in phrases:
        assert _typologies(f"filed for {p1}.") == {t1}
        for t2, p2 in phrases:
            if t1 == t2:
                continue
            w1, w2 = p1.split(), p2.split()
            texts = [f"{p1} {p2}", f"{p1}, then {p2}"]
            texts += [" ".join(w1 + w2[k:]) for k in range(1, len(w2))
                      if w1[-k:] == w2[:k]]  # the two overlap: one's last words open the other
            for text in texts:
                assert _typologies(text) == {t1, t2}, text
