"""The compliance manual: size, the real figures it must state, and the closed red-flag list."""

from __future__ import annotations

from memex.scenarios import generate
from memex.scenarios.generator import KINDS
from memex.scenarios.manual import RED_FLAG_CODES, SECTIONS
from memex.server.tools import manual_index


def test_manual_has_at_least_forty_numbered_sections():
    assert len(SECTIONS) >= 40
    assert all(s.id.replace(".", "").isdigit() and s.title and len(s.text) > 120
               for s in SECTIONS.values())


def test_manual_states_the_regulatory_figures():
    text = {sid: s.text for sid, s in SECTIONS.items()}
    expectations = {
        "1.1": ["$10,000", "15 calendar days", "1010.311", "1010.313"],
        "1.2": ["$5,000", "$25,000", "1020.320"],
        "1.3": ["30 calendar days", "60 days", "90 days", "120 days"],
        "2.1": ["31 USC 5324"],
        "3.2": ["25 percent", "control"],
        "4.2": ["50 percent"],
        "7.4": ["$3,000"],
        "8.1": ["cash-intensive", "CTRs were filed"],
    }
    for sid, needles in expectations.items():
        for needle in needles:
            assert needle in text[sid], (sid, needle)
    assert any("FATF" in t and "jurisdiction" in t for t in text.values())
    assert any("enhanced due diligence" in t.lower() and "pep" in t.lower() for t in text.values())


def test_every_red_flag_code_is_explained_outside_the_catalogue():
    for code in RED_FLAG_CODES:
        assert any(code in s.text for sid, s in SECTIONS.items() if sid != "9.3"), code
    assert all(code in SECTIONS["9.3"].text for code in RED_FLAG_CODES)


def test_some_sections_are_relevant_to_no_case_kind():
    used = set()
    for kind in KINDS:
        for variant in KINDS[kind].variants:
            used |= set(generate(3, "easy", kind, variant=variant).truth.justifying_sections)
    assert len(set(SECTIONS) - used) >= 20


def test_a_one_word_search_finds_sections():
    """Regression: a query with one distinct content word (its token id is 0) found nothing."""
    hits = manual_index().search("structuring", 3)
    assert hits and all(score > 0 for _, score in hits)
    assert manual_index().search("the", 3) == [] and manual_index().search("zzzqqq", 3) == []
