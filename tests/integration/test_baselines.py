"""Every exploit probe loses clearly to the heuristic investigator; the oracle reaches near the
maximum; the heuristic solves the cases by cross-checking, not by reading the answer.

Run over test-split seeds (`EPISODES_PER_DIFFICULTY` per difficulty, kinds sampled with the
default benign share), so the surface probes, which learn from the train split, meet cases
they have not seen. The margin is 0.3 of mean episode return (15% of the positive scores' range
[-1, 1] before the outcome costs grew), on average and on every difficulty. The surface probes
learn from `PROBE_TRAIN_CASES` train cases here (fewer than `make baselines` uses) to keep the
test short.

The verdict-free policies (always SAR, always close, each at step 1 or after the heuristic's whole
investigation) must not have a positive mean return on the default class mix, over
`VERDICT_FREE_SEEDS` x 3 difficulties test-split episodes, while the heuristic stays clearly
positive: the costs of a false positive and a false negative are chosen for this
(`graders.terminal`, docs/scoring.md), and this test re-checks the choice as the world changes.
"""

from __future__ import annotations

import statistics

import pytest

from memex.adapter import POLICIES, PROBES, VERDICT_FREE
from memex.audit import surface_probes
from memex.evaluation.runs import run_episode
from memex.policies.heuristic import Heuristic
from memex.scenarios import KINDS, SPLITS
from memex.server.environment import MemexEnvironment

EPISODES_PER_DIFFICULTY = 70
DIFFICULTIES = ("easy", "medium", "hard")
PROBE_MARGIN = 0.3
VERDICT_FREE_SEEDS = 120  # x 3 difficulties: 360 episodes per policy
HEURISTIC_MIN_DEFAULT_MIX_RETURN = 0.5
ORACLE_MIN_RETURN = 0.9
# The world needs judgement: the heuristic, which seeks each anomaly's explanation, and the
# oracle decide nearly every case; a checklist that files at the first anomaly does not.
HEURISTIC_MIN_ACCURACY = 0.95
ORACLE_MIN_ACCURACY = 0.95
CHECKLIST_MAX_ACCURACY = 0.80
PROBE_TRAIN_CASES = 150
SEEDS = range(SPLITS["test"].start, SPLITS["test"].start + EPISODES_PER_DIFFICULTY)


def _returns(name: str) -> dict[str, list]:
    env = MemexEnvironment()
    return {d: [run_episode(POLICIES[name](), seed, d, env=env) for seed in SEEDS]
            for d in DIFFICULTIES}


def _mean(results) -> float:
    return statistics.mean(r.episode_return for rs in results.values() for r in rs)


@pytest.fixture(scope="module", autouse=True)
def _quick_surface_probes():
    saved, surface_probes.TRAIN_CASES = surface_probes.TRAIN_CASES, PROBE_TRAIN_CASES
    yield
    surface_probes.TRAIN_CASES = saved


@pytest.fixture(scope="module")
def heuristic():
    return _returns("heuristic")


@pytest.mark.parametrize("probe", PROBES)
def test_exploit_probe_scores_clearly_below_the_heuristic(probe, heuristic):
    probe_results = _returns(probe)
    gap = _mean(heuristic) - _mean(probe_results)
    assert gap >= PROBE_MARGIN, (probe, _mean(heuristic), _mean(probe_results))
    for difficulty in DIFFICULTIES:  # and on every difficulty, not just on average
        h = statistics.mean(r.episode_return for r in heuristic[difficulty])
        p = statistics.mean(r.episode_return for r in probe_results[difficulty])
        assert h - p >= PROBE_MARGIN, (probe, difficulty, h, p)


def _accuracy(results) -> float:
    episodes = [r for rs in results.values() for r in rs]
    return sum(r.correct for r in episodes) / len(episodes)


def test_oracle_reaches_near_the_maximum_return():
    oracle = _returns("oracle")
    assert _mean(oracle) >= ORACLE_MIN_RETURN, _mean(oracle)
    assert _accuracy(oracle) >= ORACLE_MIN_ACCURACY
    assert all(r.correct for rs in oracle.values() for r in rs)
    assert sum(r.page_faults for rs in oracle.values() for r in rs) == 0


def test_heuristic_investigator_meets_accuracy_targets(heuristic):
    accuracy = {d: sum(r.correct for r in rs) / len(rs) for d, rs in heuristic.items()}
    assert _accuracy(heuristic) >= HEURISTIC_MIN_ACCURACY, accuracy
    assert min(accuracy.values()) >= HEURISTIC_MIN_ACCURACY - 0.05, accuracy
    episodes = [r for rs in heuristic.values() for r in rs]
    assert sum(r.page_faults for r in episodes) / len(episodes) < 0.1  # it manages its memory
    assert not any(r.outcome == "timeout" for r in episodes)  # and its step budget


def test_heuristic_decides_from_tool_results_alone():
    """It never reads the case: reset without one, it investigates and decides."""
    assert not Heuristic.needs_case
    env = MemexEnvironment()
    outcomes = []
    for seed in SEEDS[:10]:
        policy = Heuristic()
        obs = env.reset(seed=seed, difficulty="hard")
        policy.reset(obs, case=None)
        while not obs.done:
            obs = env.step(policy.act(obs))
        outcomes.append(obs.metadata["terminal"]["outcome"])
    assert "timeout" not in outcomes and sum(o in ("TP", "TN") for o in outcomes) >= 8, outcomes


@pytest.fixture(scope="module")
def default_mix():
    """Episode returns on the default class mix, per policy: the heuristic and the verdict-free
    policies, each on the same test-split cases."""
    env = MemexEnvironment()
    seeds = range(SPLITS["test"].start + 1_000, SPLITS["test"].start + 1_000 + VERDICT_FREE_SEEDS)
    return {name: [run_episode(POLICIES[name](), seed, d, env=env)
                   for d in DIFFICULTIES for seed in seeds]
            for name in ("heuristic", *VERDICT_FREE)}


@pytest.mark.parametrize("policy", VERDICT_FREE)
def test_no_verdict_free_policy_has_a_positive_mean_return_on_the_default_mix(policy, default_mix):
    results = default_mix[policy]
    assert len(results) >= 300
    mean = statistics.mean(r.episode_return for r in results)
    assert mean <= 0.0, (policy, mean)
    heuristic = statistics.mean(r.episode_return for r in default_mix["heuristic"])
    assert heuristic >= HEURISTIC_MIN_DEFAULT_MIX_RETURN, heuristic
    assert heuristic - mean >= PROBE_MARGIN, (policy, heuristic, mean)


def test_verdict_free_policies_investigate_as_much_as_the_heuristic(default_mix):
    """The investigating ones are not blind: they take the heuristic's steps and decide right
    whenever their verdict is the case's, with the heuristic's evidence."""
    h = default_mix["heuristic"]
    for name in ("investigate_then_sar", "investigate_then_close"):
        probe = default_mix[name]
        assert [r.steps for r in probe] == [r.steps for r in h]
        verdict = "file_sar" if name.endswith("sar") else "close_alert"
        assert all(r.decision == verdict for r in probe)


def test_blind_sar_does_not_score_the_maximum():
    results = [r for rs in _returns("always_sar").values() for r in rs]
    assert max(r.terminal_score for r in results) < 0.5


# ---- per kind: every typology and look-alike, on a small sample ---------------------

KIND_HEURISTIC_MIN_ACCURACY = 0.75
KIND_ORACLE_MIN_RETURN = 0.9
# One test case per difficulty and kind (the hold-out variants included where the seed draws
# them); the margin is the same 0.3 of return as above, per kind.
KIND_CASES = tuple((SPLITS["test"].start + 500 + i, d) for i, d in enumerate(DIFFICULTIES))
# Probes without judgement file a SAR on every anomaly, and every suspicious case shows one: on
# a suspicious kind they are right, with evidence, by construction. They lose on the benign
# kinds, where the anomalies are explained (and overall, above).
JUDGEMENT_PROBES = ("first_failure_checklist", "anomaly_counter")


@pytest.fixture(scope="module")
def per_kind():
    env = MemexEnvironment()
    return {(name, kind): [run_episode(POLICIES[name](), seed, d, kind, env=env)
                           for seed, d in KIND_CASES]
            for name in ("heuristic", "oracle", *PROBES) for kind in KINDS}


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_is_solved_by_the_heuristic_and_the_oracle_and_lost_by_every_probe(
        kind, per_kind):
    h = per_kind[("heuristic", kind)]
    assert sum(r.correct for r in h) / len(h) >= KIND_HEURISTIC_MIN_ACCURACY, kind
    oracle = per_kind[("oracle", kind)]
    assert all(r.correct for r in oracle), kind
    assert statistics.mean(r.episode_return for r in oracle) >= KIND_ORACLE_MIN_RETURN, kind
    h_return = statistics.mean(r.episode_return for r in h)
    for probe in PROBES:
        if probe in JUDGEMENT_PROBES and KINDS[kind].suspicious:
            continue
        p_return = statistics.mean(r.episode_return for r in per_kind[(probe, kind)])
        assert h_return - p_return >= PROBE_MARGIN, (kind, probe, h_return, p_return)


def test_a_first_failure_checklist_does_not_decide_the_world():
    """Filing at the first cross-check whose views disagree, without seeking the explanation,
    misreads the benign cases whose anomalies are explained (manual 1.7)."""
    checklist = _returns("first_failure_checklist")
    assert _accuracy(checklist) <= CHECKLIST_MAX_ACCURACY, _accuracy(checklist)
    counter = _returns("anomaly_counter")
    assert _accuracy(counter) <= CHECKLIST_MAX_ACCURACY, _accuracy(counter)
