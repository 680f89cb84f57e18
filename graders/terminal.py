"""The terminal score: how good the final decision is, in [-1, 1].

| outcome | score |
|---|---|
| false negative (closed a suspicious alert) | -1.0 (worst) |
| false positive (SAR on an explained alert) | -0.7 |
| timeout (no decision within the step budget) | worst wrong decision for the case (-1.0 or -0.7) |
| true positive (SAR on a suspicious alert) | sum of the SAR components below, max 1.0 |
| true negative (closed an explained alert) | sum of the closure components below, max 1.0 |

SAR components: decision 0.30; subjects 0.15 x F1 of named subjects (only seen entities can
count); findings 0.25 x F1 over red-flag codes, where a finding counts only if its code is truly
present and it cites at least one true evidence ID that the agent saw and kept on disk (wrong
codes cost precision); typology 0.10 if right; citations 0.15 x share of the justifying
sections that are cited and loaded in the kernel; efficiency 0.05 x unused share of the step
budget. Closure components: decision 0.60; citations 0.25; efficiency 0.15.

A decision that is right by luck earns only its decision weight: typology and efficiency
count only when at least one finding is valid (SAR) or one citation is valid (closure).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memex.scenarios.truth import GroundTruth
from memex.server.tools import Decision

SCORE_MIN, SCORE_MAX = -1.0, 1.0
FALSE_NEGATIVE_SCORE = -1.0
FALSE_POSITIVE_SCORE = -0.7
SAR_WEIGHTS = {"decision": 0.30, "subjects": 0.15, "findings": 0.25, "typology": 0.10,
               "citations": 0.15, "efficiency": 0.05}
CLOSE_WEIGHTS = {"decision": 0.60, "citations": 0.25, "efficiency": 0.15}


@dataclass(frozen=True)
class TerminalScore:
    total: float
    outcome: str  # TP, TN, FP, FN, timeout
    components: dict[str, float] = field(default_factory=dict)
    measures: dict[str, float] = field(default_factory=dict)


def _f1(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def timeout_score(truth: GroundTruth) -> TerminalScore:
    worst = FALSE_NEGATIVE_SCORE if truth.suspicious else FALSE_POSITIVE_SCORE
    return TerminalScore(worst, "timeout", {"decision": worst})


def score_decision(truth: GroundTruth, decision: Decision, *, seen: frozenset[str],
                   on_disk: frozenset[str], kernel: tuple[str, ...], steps_used: int,
                   step_budget: int) -> TerminalScore:
    filed = decision.action == "file_sar"
    if filed and not truth.suspicious:
        return TerminalScore(FALSE_POSITIVE_SCORE, "FP", {"decision": FALSE_POSITIVE_SCORE})
    if not filed and truth.suspicious:
        return TerminalScore(FALSE_NEGATIVE_SCORE, "FN", {"decision": FALSE_NEGATIVE_SCORE})

    justifying = set(truth.justifying_sections)
    valid_citations = set(decision.cited_sections) & set(kernel) & justifying
    citation_share = len(valid_citations) / len(justifying)
    efficiency = max(0.0, 1.0 - steps_used / step_budget)
    measures = {"citations_valid": float(len(valid_citations)),
                "citations_needed": float(len(justifying)), "steps_used": float(steps_used)}

    if not filed:
        w = CLOSE_WEIGHTS
        components = {"decision": w["decision"], "citations": w["citations"] * citation_share,
                      "efficiency": w["efficiency"] * efficiency if valid_citations else 0.0}
        return TerminalScore(round(sum(components.values()), 6), "TN", components, measures)

    w = SAR_WEIGHTS
    named = set(decision.subjects) & seen
    true_subjects = set(truth.subject_ids)
    hit = len(named & true_subjects)
    subj_p = hit / len(set(decision.subjects)) if decision.subjects else 0.0
    subj_r = hit / len(true_subjects)
    codes_claimed = {f.code for f in decision.findings}
    valid_codes = set()
    for finding in decision.findings:
        flag = truth.flag(finding.code)
        if flag and any(e in flag.evidence_ids and e in on_disk and e in seen
                        for e in finding.evidence_ids):
            valid_codes.add(finding.code)
    find_p = len(valid_codes) / len(codes_claimed) if codes_claimed else 0.0
    find_r = len(valid_codes) / len(truth.red_flags)
    supported = bool(valid_codes)
    components = {
        "decision": w["decision"],
        "subjects": w["subjects"] * _f1(subj_p, subj_r),
        "findings": w["findings"] * _f1(find_p, find_r),
        "typology": w["typology"] if supported and decision.typology == truth.typology else 0.0,
        "citations": w["citations"] * citation_share,
        "efficiency": w["efficiency"] * efficiency if supported else 0.0,
    }
    measures.update(subjects_precision=subj_p, subjects_recall=subj_r,
                    findings_precision=find_p, findings_recall=find_r,
                    findings_valid=float(len(valid_codes)))
    return TerminalScore(round(sum(components.values()), 6), "TP", components, measures)
