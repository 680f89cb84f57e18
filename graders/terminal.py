"""The terminal score: how good the final decision is, in [-4.5, 1], paid only for evidence.

| outcome | score |
|---|---|
| false negative (closed a suspicious alert) | -4.5 (worst) |
| false positive (SAR on an explained alert) | -0.5 |
| timeout (no decision within the step budget) | worst wrong decision for the case (-4.5 or -0.5) |
| true positive (SAR on a suspicious alert) | 0.95 x SAR components + 0.05 x text, in [0, 1] |
| true negative (closed an explained alert) | 0.95 x closure components + 0.05 x text, in [0, 1] |

**Costs.** On the default class mix (`scenarios.generator.DEFAULT_BENIGN_SHARE`, 3 benign alerts
in 4) no verdict-free policy can have a positive expected score, whatever it investigates and
however well it writes: always filing earns at most 1 on a quarter of the cases and pays 0.5 on
three quarters (at most -0.125 a case); always closing earns at most 1 on three quarters and
pays 4.5 on a quarter (at most -0.375). The bounds the costs must beat are 1/3 and 3; both are
beaten by a factor of 1.5, a margin for what the world's changes do to the mix. A missed
laundering case costs 9 times a needless SAR (docs/scoring.md gives the reasoning).

| component | SAR weight | closure weight | how it is earned |
|---|---|---|---|
| decision | 0.30 | 0.60 | x evidence share `e` (below) |
| subjects | 0.15 | - | x F1 of named vs true subjects (only IDs the agent saw can count) |
| findings | 0.25 | - | x F1 over red-flag codes (valid ones below; wrong codes cost precision) |
| typology | 0.10 | - | if right and at least one finding is valid |
| citations | 0.15 | 0.25 | x F1 of cited vs justifying sections (valid only while loaded) |
| efficiency | 0.05 | 0.15 | x unused share of the step budget, x `e` |

**Text** (`graders.rubric`, weight `RUBRIC_WEIGHT` of a correct decision's score): the SAR
narrative's who, what, when, where and why, or the close reason's explanation, checked against
the records the agent saw. A wrong decision's text is not scored: its cost is the whole score.

**Evidence share `e`.** Every case's truth names the cross-check views that decide it
(`GroundTruth.decisive_evidence`: for a benign case the explanation — the history with the same
rhythm, the document matching the wire, the declaration matching the invoice; for a suspicious
case the records where the cover story fails). None of them is revealed by the alert. `e` is the
share of those views of which the agent has had at least one record returned by a tool call.
A blind or memorised decision therefore earns no decision credit: right by luck scores what its
citations and findings earn, and wrong by luck costs the full penalty.

**Valid finding.** Its code is truly present **and** its evidence includes a record that carries
that red flag (`RedFlag.carrier_ids`), returned by a tool the agent called and kept on disk.
Citing the subject's own ID, or an ID never returned by a tool, validates nothing.

**Citations.** Precision is valid citations over everything cited (citing the whole manual costs
precision); recall is valid citations over the justifying sections.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memex.graders.decision import Decision
from memex.graders.rubric import score_text
from memex.scenarios.model import PublicCase
from memex.scenarios.truth import GroundTruth

FALSE_NEGATIVE_SCORE = -4.5
FALSE_POSITIVE_SCORE = -0.5
SCORE_MIN, SCORE_MAX = FALSE_NEGATIVE_SCORE, 1.0
SAR_WEIGHTS = {"decision": 0.30, "subjects": 0.15, "findings": 0.25, "typology": 0.10,
               "citations": 0.15, "efficiency": 0.05}
CLOSE_WEIGHTS = {"decision": 0.60, "citations": 0.25, "efficiency": 0.15}
# The text rubric's share of a correct decision's score (`graders.rubric`); the components
# above share the rest in their proportions.
RUBRIC_WEIGHT = 0.05


@dataclass(frozen=True)
class TerminalScore:
    total: float
    outcome: str  # TP, TN, FP, FN, timeout
    components: dict[str, float] = field(default_factory=dict)
    measures: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Evidence:
    """What the agent has gathered by the time it decides (all IDs)."""

    seen: frozenset[str]  # revealed to the agent at all (alert included)
    revealed: frozenset[str]  # returned by a tool the agent called
    on_disk: frozenset[str]  # kept in the case file
    kernel: tuple[str, ...]  # manual sections loaded at decision time
    steps_used: int
    step_budget: int


def _f1(hits: int, claimed: int, needed: int) -> float:
    if hits == 0 or claimed == 0 or needed == 0:
        return 0.0
    precision, recall = hits / claimed, hits / needed
    return 2 * precision * recall / (precision + recall)


def timeout_score(truth: GroundTruth) -> TerminalScore:
    worst = FALSE_NEGATIVE_SCORE if truth.suspicious else FALSE_POSITIVE_SCORE
    return TerminalScore(worst, "timeout", {"decision": worst})


def evidence_share(truth: GroundTruth, revealed: frozenset[str]) -> float:
    """Share of the deciding cross-check views with at least one record returned by a tool."""
    views = truth.decisive_evidence
    if not views:
        return 1.0
    return sum(1 for view in views if revealed.intersection(view)) / len(views)


def valid_citations(truth: GroundTruth, cited: tuple[str, ...],
                    kernel: tuple[str, ...]) -> set[str]:
    return set(cited) & set(kernel) & set(truth.justifying_sections)


def valid_finding_codes(truth: GroundTruth, decision: Decision, ev: Evidence) -> set[str]:
    kept = ev.revealed & ev.on_disk
    valid = set()
    for finding in decision.findings:
        flag = truth.flag(finding.code)
        if flag and kept.intersection(flag.carrier_ids).intersection(finding.evidence_ids):
            valid.add(finding.code)
    return valid


def _with_text(truth: GroundTruth, decision: Decision, ev: Evidence, public: PublicCase,
               components: dict[str, float], measures: dict[str, float],
               outcome: str) -> TerminalScore:
    """The correct decision's score: its components at `1 - RUBRIC_WEIGHT`, the text rubric at
    `RUBRIC_WEIGHT`."""
    rubric = score_text(truth, decision, public, ev.seen)
    components = {k: v * (1.0 - RUBRIC_WEIGHT) for k, v in components.items()}
    components["text"] = RUBRIC_WEIGHT * rubric.total
    measures.update({f"text_{part}": value for part, value in rubric.parts.items()},
                    text_rubric=rubric.total)
    return TerminalScore(round(sum(components.values()), 6), outcome, components, measures)


def score_decision(truth: GroundTruth, decision: Decision, ev: Evidence,
                   public: PublicCase) -> TerminalScore:
    """Score a decision; `public` is the case's public side, whose records the text rubric
    checks the narrative or reason against (only those in `ev.seen`)."""
    filed = decision.action == "file_sar"
    if filed and not truth.suspicious:
        return TerminalScore(FALSE_POSITIVE_SCORE, "FP", {"decision": FALSE_POSITIVE_SCORE})
    if not filed and truth.suspicious:
        return TerminalScore(FALSE_NEGATIVE_SCORE, "FN", {"decision": FALSE_NEGATIVE_SCORE})

    share = evidence_share(truth, ev.revealed)
    cited = valid_citations(truth, decision.cited_sections, ev.kernel)
    needed = len(set(truth.justifying_sections))
    cite = _f1(len(cited), len(set(decision.cited_sections)), needed)
    efficiency = max(0.0, 1.0 - ev.steps_used / ev.step_budget) * share
    measures = {"evidence_share": share, "citation_f1": cite,
                "citations_valid": float(len(cited)), "citations_needed": float(needed),
                "steps_used": float(ev.steps_used)}

    if not filed:
        w = CLOSE_WEIGHTS
        components = {"decision": w["decision"] * share, "citations": w["citations"] * cite,
                      "efficiency": w["efficiency"] * efficiency}
        return _with_text(truth, decision, ev, public, components, measures, "TN")

    w = SAR_WEIGHTS
    named = set(decision.subjects)
    subject_hits = len(named & ev.seen & set(truth.subject_ids))
    claimed = {f.code for f in decision.findings}
    valid = valid_finding_codes(truth, decision, ev)
    components = {
        "decision": w["decision"] * share,
        "subjects": w["subjects"] * _f1(subject_hits, len(named), len(set(truth.subject_ids))),
        "findings": w["findings"] * _f1(len(valid), len(claimed), len(truth.red_flags)),
        "typology": w["typology"] if valid and decision.typology == truth.typology else 0.0,
        "citations": w["citations"] * cite,
        "efficiency": w["efficiency"] * efficiency if valid else 0.0,
    }
    measures.update(
        findings_valid=float(len(valid)),
        findings_precision=len(valid) / len(claimed) if claimed else 0.0,
        findings_recall=len(valid) / len(truth.red_flags) if truth.red_flags else 0.0,
        subjects_precision=subject_hits / len(named) if named else 0.0,
        subjects_recall=subject_hits / len(set(truth.subject_ids)) if truth.subject_ids else 0.0)
    return _with_text(truth, decision, ev, public, components, measures, "TP")
