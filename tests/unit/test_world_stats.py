"""The generated world's base rates meet their real-world targets (`evaluation.world_stats`,
the table in docs/world.md), measured on a small test-split sample."""

from __future__ import annotations

import pytest

from memex.evaluation import world_stats as ws
from memex.scenarios.generator import SPLITS, generate
from memex.scenarios.rules import ELDER_ACTIVITY, PEP_TRANSFER

CASES = 340  # every population of the table has members at this size


@pytest.fixture(scope="module")
def rows() -> dict[str, ws.Row]:
    return {r.statistic.name: r for r in ws.measure(ws.sample_cases(CASES))}


SURFACE_STATS = [s.name for s in ws.STATISTICS if s.writer == "surfaces"]
CHECK_STATS = [s.name for s in ws.STATISTICS if s.writer == "checks"]


@pytest.mark.parametrize("name", SURFACE_STATS)
def test_every_base_rate_the_surfaces_write_meets_its_target(rows, name):
    row = rows[name]
    assert row.count > 0, f"no {row.statistic.population} in {CASES} cases"
    assert row.met, f"{name}: {row.value:.1%} against {row.statistic.target()}"


@pytest.mark.parametrize("name", CHECK_STATS)
def test_every_base_rate_the_cross_checks_write_meets_its_target(rows, name):
    row = rows[name]
    assert row.count > 0 and row.met, f"{name}: {row.value} against {row.statistic.target()}"


def test_name_hits_are_the_same_name_up_to_a_spelling_variant_or_an_initial():
    assert ws.name_hit("Mohammed Chen", "Mohammed Chen")
    assert ws.name_hit("Muhammad Chen", "Mohammed Chen")
    assert ws.name_hit("Mohammed K. Chen", "Mohammed Chen")
    assert ws.name_hit("Olena Petrof", "Olena Petrov")
    assert not ws.name_hit("Grace Chen", "Mohammed Chen")
    assert not ws.name_hit("Mohammed Chen", "Mohammed Okafor")


def _sample(case) -> ws.Sample:
    entities = {e.id: e for e in case.public.entities}
    return ws.Sample(case, entities, entities[case.public.alert.subject_id])


def _with_alert(case, **update):
    alert = case.public.alert.model_copy(update=update)
    return case.model_copy(update={"public": case.public.model_copy(update={"alert": alert})})


def test_an_alert_that_lists_fewer_transfers_than_it_counts_is_caught():
    case = generate(SPLITS["test"].start, "medium", "pep_wealth")
    assert ws._pep_window_listed(_sample(case)) and ws._count_figures_match(_sample(case))
    figures = {**case.public.alert.figures,
               "transfers_in_window": case.public.alert.figures["transfers_in_window"] + 1}
    broken = _sample(_with_alert(case, figures=figures))
    assert broken.rule == PEP_TRANSFER.code
    assert not ws._pep_window_listed(broken) and not ws._count_figures_match(broken)


def test_an_elder_alert_below_the_rules_multiple_is_caught():
    case = generate(SPLITS["test"].start, "hard", "family_support")
    assert ws._elder_rule_met(_sample(case)) and ws._elder_prior_matches_ledger(_sample(case))
    out = case.public.alert.figures["outgoing_usd_30d"]
    figures = {**case.public.alert.figures, "prior_monthly_outgoing_usd": out}
    broken = _sample(_with_alert(case, figures=figures))
    assert broken.rule == ELDER_ACTIVITY.code
    assert not ws._elder_rule_met(broken) and not ws._elder_prior_matches_ledger(broken)


def test_rerunning_replaces_the_table_between_the_markers(tmp_path):
    doc = tmp_path / "world.md"
    doc.write_text("# World\n\nintro\n")
    ws.write(doc, "first table")
    ws.write(doc, "second table")
    text = doc.read_text()
    assert text.count(ws.BEGIN) == 1 and text.count(ws.END) == 1
    assert "second table" in text and "first table" not in text and text.startswith("# World")
