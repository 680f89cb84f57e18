"""The AML world generator: determinism, integrity, the public/truth split, and the sampler."""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from memex.scenarios import (
    BENIGN_KINDS,
    DEFAULT_BENIGN_SHARE,
    DIFFICULTIES,
    KINDS,
    SUSPICIOUS_KINDS,
    generate,
)
from memex.scenarios.case import Case
from memex.scenarios.difficulty import KNOBS
from memex.scenarios.generator import SPLITS, UnknownKindError
from memex.scenarios.manual import CTR_THRESHOLD_USD, RED_FLAG_CODES, SECTIONS, TYPOLOGIES
from memex.scenarios.model import PublicCase
from memex.scenarios.onemdb import build_case
from memex.scenarios.rules import ALERT_RULES
from memex.scenarios.truth import GroundTruth

ROOT = Path(__file__).resolve().parents[1]
ALL_KINDS = list(KINDS)


def _integrity_errors(case: Case) -> list[str]:
    """Referential integrity of one case; returns human-readable problems (empty when sound)."""
    pub, truth = case.public, case.truth
    ids = pub.all_ids()
    errors = []
    dupes = [i for i, n in Counter(ids).items() if n > 1]
    if dupes:
        errors.append(f"duplicate ids {dupes}")
    entities = {e.id for e in pub.entities}
    accounts = {a.id: a for a in pub.accounts}
    txns = {t.id for t in pub.transactions}
    errors += [f"account {a.id} owner" for a in pub.accounts if a.owner_id not in entities]
    for t in pub.transactions:
        for acct in (t.from_account, t.to_account):
            if acct is not None and acct not in accounts:
                errors.append(f"txn {t.id} account {acct}")
        if t.from_account is None and t.to_account is None:
            errors.append(f"txn {t.id} has neither side")
    errors += [f"link {o.id}" for o in pub.ownership
               if o.owner_id not in entities or o.company_id not in entities]
    errors += [f"hop {h.id}" for h in pub.correspondent_hops if h.transaction_id not in txns]
    errors += [f"login {d.id}" for d in pub.devices
               if d.entity_id not in entities or d.account_id not in accounts]
    a = pub.alert
    if a.subject_id not in entities or any(x not in txns for x in a.transaction_ids):
        errors.append("alert references")
    id_set = set(ids)
    errors += [f"subject {s}" for s in truth.subject_ids if s not in entities]
    for flag in truth.red_flags:
        if flag.code not in RED_FLAG_CODES:
            errors.append(f"code {flag.code}")
        errors += [f"evidence {e} of {flag.code}" for e in flag.evidence_ids if e not in id_set]
        if not flag.evidence_ids:
            errors.append(f"no evidence for {flag.code}")
    errors += [f"section {s}" for s in truth.justifying_sections if s not in SECTIONS]
    if truth.ubo_id is not None and truth.ubo_id not in entities:
        errors.append("ubo")
    if truth.typology is not None and truth.typology not in TYPOLOGIES:
        errors.append("typology")
    if truth.suspicious != (truth.decision == "file_sar"):
        errors.append("decision")
    return errors


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
@pytest.mark.parametrize("kind", ALL_KINDS)
def test_same_seed_gives_identical_case(kind, difficulty):
    first = generate(1234, difficulty, kind).to_json()
    assert first == generate(1234, difficulty, kind).to_json()


def test_fixed_1mdb_case_is_deterministic_and_sound():
    case = build_case()
    assert case.to_json() == build_case().to_json()
    assert _integrity_errors(case) == []
    assert case.truth.decision == "file_sar" and case.truth.ubo_id in case.truth.subject_ids


def test_sampled_case_equals_case_generated_with_its_kind():
    for seed in range(40):
        sampled = generate(seed, "medium")
        explicit = generate(seed, "medium", sampled.truth.kind)
        assert sampled.to_json() == explicit.to_json()


def test_different_seeds_give_different_cases():
    for kind in ALL_KINDS:
        blobs = {generate(seed, "medium", kind).public_json() for seed in range(25)}
        assert len(blobs) == 25, kind


def test_ids_are_random_and_name_only_the_record_type():
    record_types = {"CASE", "ALR", "ENT", "ACC", "TXN", "OWN", "WL", "LOG", "INV", "CUS", "BOL",
                    "MKT", "SOF", "DOC", "HOP"}
    for kind in ALL_KINDS:
        for ident in generate(5, "hard", kind).public.all_ids():
            prefix, _, suffix = ident.partition("-")
            assert prefix in record_types and re.fullmatch(r"[0-9A-F]{6}", suffix), ident


@pytest.mark.slow
@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_ten_thousand_cases_per_difficulty_without_error_or_collision(difficulty):
    kinds = Counter()
    for seed in range(10_000):
        case = generate(seed, difficulty)
        ids = case.public.all_ids()
        assert len(ids) == len(set(ids)), (seed, difficulty)
        kinds[case.truth.kind] += 1
        if seed % 50 == 0:  # full integrity on a systematic sample (all checks are cheap-ish)
            assert _integrity_errors(case) == [], (seed, difficulty)
    assert set(kinds) == set(KINDS)


@pytest.mark.parametrize("difficulty", DIFFICULTIES)
def test_ground_truth_refers_only_to_existing_ids_sections_and_codes(difficulty):
    for seed in range(150):
        case = generate(seed, difficulty)
        assert _integrity_errors(case) == [], (seed, case.truth.kind, case.truth.variant)
    for kind in ALL_KINDS:
        for variant in KINDS[kind].variants:
            case = generate(77, difficulty, kind, variant=variant)
            assert _integrity_errors(case) == [], (kind, variant)


def test_public_model_round_trips_through_validation():
    for seed in range(60):
        pub = generate(seed, "hard").public
        assert PublicCase.model_validate_json(pub.model_dump_json()) == pub


def test_benign_share_within_five_points_of_configured_share():
    for share in (DEFAULT_BENIGN_SHARE, 0.5):
        cases = [generate(seed, "easy", benign_share=share) for seed in range(2_000)]
        benign = sum(not c.truth.suspicious for c in cases) / len(cases)
        assert abs(benign - share) <= 0.05, (share, benign)
    assert DEFAULT_BENIGN_SHARE >= 0.35


def test_every_alert_rule_fires_for_benign_and_suspicious_cases():
    fired: dict[str, set[bool]] = {code: set() for code in ALERT_RULES}
    for seed in range(2_000):
        case = generate(seed, "easy")
        fired[case.public.alert.rule.code].add(case.truth.suspicious)
    assert all(v == {True, False} for v in fired.values()), fired
    for kind, spec in KINDS.items():
        assert set(spec.rules) <= set(ALERT_RULES), kind


TRUTH_ONLY_KEYS = set(GroundTruth.model_fields) - {"kind"}


def _keys(node) -> set[str]:
    if isinstance(node, dict):
        return set(node) | set().union(*(_keys(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_keys(v) for v in node)) if node else set()
    return set()


def test_public_view_contains_no_ground_truth_field_or_value():
    words = set(KINDS) | set(TYPOLOGIES) | {v for s in KINDS.values() for v in s.variants}
    for seed in range(300):
        case = generate(seed, ("easy", "medium", "hard")[seed % 3])
        blob = case.public_json()
        assert not (_keys(json.loads(blob)) & TRUTH_ONLY_KEYS)
        lowered = blob.lower()
        leaked = [w for w in words if w.lower() in lowered]
        assert leaked == [], (seed, leaked)
        assert not [code for code in RED_FLAG_CODES if code in blob], seed
    assert not (set(PublicCase.model_fields) & set(GroundTruth.model_fields))


def test_public_model_module_does_not_import_ground_truth():
    tree = ast.parse((ROOT / "scenarios" / "model.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m and ("truth" in m or m.endswith(".case")) for m in imported)


def test_alert_rule_is_not_a_typology_and_covers_both_classes():
    for rule in ALERT_RULES.values():
        text = f"{rule.name} {rule.description}".lower()
        assert not any(t.replace("_", " ") in text or t in text for t in TYPOLOGIES), rule.code


def test_train_and_validation_never_draw_holdout_variants_and_test_does():
    held = {(k, v) for k, s in KINDS.items() for v in s.holdout_variants}
    assert held
    seen_train = {(c.truth.kind, c.truth.variant) for c in (
        generate(seed, "easy", kind) for seed in range(0, 300) for kind in SUSPICIOUS_KINDS)}
    seen_test = {(c.truth.kind, c.truth.variant) for c in (
        generate(SPLITS["test"].start + seed, "easy", kind) for seed in range(300)
        for kind in SUSPICIOUS_KINDS)}
    assert not (seen_train & held)
    assert held <= seen_test


def test_unknown_kind_and_difficulty_are_rejected_with_clear_errors():
    with pytest.raises(UnknownKindError, match="unknown kind"):
        generate(1, "easy", "smuggling")
    with pytest.raises(ValueError, match="unknown difficulty"):
        generate(1, "extreme")
    with pytest.raises(ValueError, match="variants"):
        generate(1, "easy", "layering", variant="phantom_shipment")


def test_kind_groups_sample_inside_the_group():
    assert {generate(s, "easy", "benign").truth.kind for s in range(60)} == set(BENIGN_KINDS)
    assert {generate(s, "easy", "suspicious").truth.kind for s in range(60)} == set(
        SUSPICIOUS_KINDS)


# ---- difficulty knobs change the world in the documented direction -------------------------

def _mean(xs):
    xs = list(xs)
    return sum(xs) / len(xs)


def test_harder_structuring_sits_closer_to_the_threshold_over_more_branches():
    def stats(difficulty):
        gaps, branches, lines = [], [], []
        for seed in range(60):
            case = generate(seed, difficulty, "structuring")
            flag = case.truth.flag("CASH_BELOW_CTR_THRESHOLD")
            by_id = {t.id: t for t in case.public.transactions}
            deposits = [by_id[i] for i in flag.evidence_ids]
            gaps.append(_mean(CTR_THRESHOLD_USD - t.amount_usd for t in deposits))
            branches.append(len({t.branch for t in deposits}))
            lines.append(len(case.public.transactions))
            assert all(t.amount_usd < CTR_THRESHOLD_USD for t in deposits)
        return _mean(gaps), _mean(branches), _mean(lines)

    easy, hard = stats("easy"), stats("hard")
    assert hard[0] < easy[0] and hard[1] > easy[1] and hard[2] > easy[2]


def test_harder_layering_has_more_hops_and_ownership_layers():
    def stats(difficulty):
        hops, links = [], []
        for seed in range(40):
            case = generate(seed, difficulty, "layering", variant="offshore_fanout")
            hops.append(len(case.public.correspondent_hops))
            links.append(len(case.public.ownership))
        return _mean(hops), _mean(links)

    easy, hard = stats("easy"), stats("hard")
    assert hard[0] > easy[0] and hard[1] > easy[1]


def test_mispricing_shrinks_towards_tolerance_but_stays_detectable():
    for difficulty in DIFFICULTIES:
        for seed in range(30):
            case = generate(seed, difficulty, "trade_based", variant="over_invoicing")
            price = case.public.market_prices[0]
            inv = next(d for d in case.public.trade_documents
                       if d.id in case.truth.flag("OVER_INVOICING").evidence_ids)
            ratio = inv.unit_price_usd / price.high_usd
            lo, hi = KNOBS[difficulty].price_multiple
            assert lo - 1e-6 <= ratio <= hi + 1e-6 and ratio > 1.25


def test_benign_trade_prices_stay_within_tolerance():
    for seed in range(60):
        case = generate(seed, "hard", "fair_trade")
        price = case.public.market_prices[0]
        for d in case.public.trade_documents:
            if d.kind == "invoice":
                assert price.low_usd <= d.unit_price_usd <= price.high_usd * 1.25


def test_cash_business_history_shows_the_same_rhythm_as_the_window():
    for seed in range(30):
        for variant in KINDS["cash_business"].variants:
            case = generate(seed, "medium", "cash_business", variant=variant)
            window = set(case.public.alert.transaction_ids)
            cash = [t for t in case.public.transactions if t.channel == "cash" and t.to_account]
            history = [t for t in cash if t.id not in window]
            assert len(history) >= len(window)
            in_window = [t for t in cash if t.id in window]
            just_below = [t for t in in_window if 9_000 <= t.amount_usd < CTR_THRESHOLD_USD]
            assert len(just_below) < len(in_window) / 2
            if variant == "weekly_banking":  # a week's takings cross $10,000 with a CTR filed
                assert any(t.ctr_filed for t in in_window)
