"""Prioritized level replay (`memex.curriculum`): it finds the kind a defender fails, stays
bounded, is deterministic given its seed, and its staleness and replay knobs do what they say."""

from __future__ import annotations

import csv
import json
from collections import Counter

import pytest

from memex.curriculum import (
    Level,
    LevelSpace,
    PLRBuffer,
    RegretOracle,
    UniformSampler,
    play_level,
    positive_value_loss,
    regret,
)
from memex.curriculum.defenders import BlindSpot
from memex.curriculum.training import GroupCurriculum
from memex.envkit.episodes import EpisodeSpec
from memex.evaluation.harness import main as harness_main
from memex.registry import get_adapter

ADAPTER = get_adapter("memex")
BLIND_KIND = "layering"
UPDATES = 200  # the stated number of updates for the 3x claim


@pytest.fixture(scope="module")
def space() -> LevelSpace:
    """Every kind x easy x 3 train seeds, each level played once by the defender and the
    oracle (both deterministic, so a level's regret is a fixed number)."""
    return LevelSpace.of(ADAPTER, "train", difficulties=["easy"], seeds=3)


@pytest.fixture(scope="module")
def regrets(space: LevelSpace) -> dict[str, float]:
    oracle = RegretOracle(ADAPTER)
    out = {}
    for kind in space.kinds:
        for seed in space.seeds:
            level = Level(seed, "easy", kind)
            episode = play_level(ADAPTER, BlindSpot(BLIND_KIND), level)
            out[level.key] = oracle.regret(level, episode.episode_return)
    return out


def _run(sampler, regrets: dict[str, float], n: int) -> Counter:
    for _ in range(n):
        level = sampler.sample()
        sampler.update(level, regrets[level.key])
    return sampler.counts("kind")


def test_blind_spot_defender_fails_only_its_kind(regrets):
    by_kind: dict[str, list[float]] = {}
    for key, r in regrets.items():
        by_kind.setdefault(json.loads(key)["kind"], []).append(r)
    assert min(by_kind[BLIND_KIND]) > 1.0  # a missed SAR: far below the oracle
    assert max(max(v) for k, v in by_kind.items() if k != BLIND_KIND) < 0.05


def test_plr_samples_the_failed_kind_3x_more_often_than_uniform(space, regrets):
    plr = _run(PLRBuffer(capacity=64, temperature=0.3, staleness=0.3, replay_prob=0.5, seed=1,
                         space=space), regrets, UPDATES)
    uniform = _run(UniformSampler(space, seed=1), regrets, UPDATES)
    assert sum(plr.values()) == sum(uniform.values()) == UPDATES
    assert plr[BLIND_KIND] >= 3 * uniform[BLIND_KIND], (plr, uniform)
    assert uniform[BLIND_KIND] > 0


def test_buffer_never_exceeds_capacity_and_evicts_the_lowest_score():
    buf = PLRBuffer(capacity=3, seed=0)
    for seed, score in enumerate([0.5, 0.1, 0.9]):
        assert buf.add(Level(seed, "easy", "layering"), score)
    assert buf.add(Level(3, "easy", "layering"), 0.4)  # evicts seed 1 (0.1)
    assert len(buf) == 3 and Level(1, "easy", "layering") not in buf and buf.evicted == 1
    assert not buf.add(Level(4, "easy", "layering"), 0.2)  # below every score: refused
    assert len(buf) == 3 and buf.rejected == 1
    # Equal lowest scores: the least recently touched goes.
    buf.update(Level(0, "easy", "layering"), 0.4)  # now seeds 0 and 3 tie at 0.4; 3 is older
    assert buf.add(Level(5, "easy", "layering"), 0.6)
    assert Level(3, "easy", "layering") not in buf and Level(0, "easy", "layering") in buf


def test_buffer_stays_bounded_under_fresh_levels(space, regrets):
    buf = PLRBuffer(capacity=5, replay_prob=0.2, seed=3, space=space)
    _run(buf, regrets, 100)
    assert len(buf) == 5
    # What stays is the top of what was seen: the blind kind's levels rank first.
    assert {e.level.kind for e in buf.top(3)} == {BLIND_KIND}


def test_same_seed_same_draws_and_a_saved_state_continues_identically(space, regrets, tmp_path):
    def make():
        return PLRBuffer(capacity=16, temperature=0.5, staleness=0.2, replay_prob=0.6, seed=7,
                         space=space)

    a, b = make(), make()
    _run(a, regrets, 60)
    _run(b, regrets, 60)
    assert [d.level.key for d in a.history] == [d.level.key for d in b.history]
    a.save(tmp_path / "plr.json")
    c = PLRBuffer.load(tmp_path / "plr.json")
    _run(a, regrets, 40)
    _run(c, regrets, 40)
    assert [d.level.key for d in a.history] == [d.level.key for d in c.history]
    assert json.dumps(a.state_json()) == json.dumps(c.state_json())
    other = PLRBuffer(capacity=16, temperature=0.5, staleness=0.2, replay_prob=0.6, seed=8,
                      space=space)
    _run(other, regrets, 60)
    assert [d.level.key for d in other.history] != [d.level.key for d in a.history[:60]]


def test_rank_prioritisation_and_staleness_mix():
    buf = PLRBuffer(capacity=8, temperature=1.0, staleness=0.0, seed=0)
    for seed, score in enumerate([0.2, 0.8, 0.5]):
        buf.add(Level(seed, "easy", "structuring"), score)
    # beta = 1: P_S proportional to 1/rank -> ranks (3, 1, 2) -> weights (1/3, 1, 1/2) / (11/6)
    assert buf.score_weights() == pytest.approx([2 / 11, 6 / 11, 3 / 11])
    # Equal scores share their best rank: ranks (1, 2, 2, 4) -> weights (1, 1/2, 1/2, 1/4).
    tied = PLRBuffer(capacity=8, temperature=1.0, seed=0)
    for seed, score in enumerate([0.9, 0.0, 0.0, -0.5]):
        tied.add(Level(seed, "easy", "structuring"), score)
    assert tied.score_weights() == pytest.approx([4 / 9, 2 / 9, 2 / 9, 1 / 9])
    # Low temperature: (nearly) greedy on the top rank.
    buf.temperature = 0.05
    assert buf.score_weights()[1] > 0.999
    # Staleness: P_C proportional to draws since a level was last sampled.
    buf.temperature, buf.staleness = 1.0, 1.0
    for _ in range(10):
        buf.sample()
    last = {e.level.seed: e.last_sampled for e in buf.entries.values()}
    ages = [buf.sampled - last[s] for s in (0, 1, 2)]
    assert buf.replay_weights() == pytest.approx([a / sum(ages) for a in ages])
    # rho = 1 ignores scores: over many draws every level is replayed about equally often.
    for _ in range(600):
        buf.sample()
    share = Counter(d.level.seed for d in buf.history)
    assert min(share.values()) > 0.25 * len(buf.history)


def test_a_long_unsampled_level_regains_probability_through_staleness():
    def run(staleness: float) -> tuple[PLRBuffer, list[tuple[int, float]]]:
        buf = PLRBuffer(capacity=4, temperature=0.1, staleness=staleness, seed=0)
        buf.add(Level(0, "easy", "structuring"), 1.0)
        buf.add(Level(1, "easy", "structuring"), 0.0)  # P_S(level 1) = 2^-10: ~never by score
        trace = []
        for _ in range(200):
            before = buf.replay_weights()[1]
            level = buf.sample()
            buf.update(level, buf.score(level))
            trace.append((level.seed, before, buf.replay_weights()[1]))
        return buf, trace

    greedy, _ = run(0.0)
    assert greedy.counts("seed")[1] <= 2
    mixed, trace = run(0.3)
    assert mixed.counts("seed")[1] >= 20
    # Between its draws level 1 ages and its probability grows; a draw resets it.
    for seed, before, after in trace[1:]:
        assert (after >= before) if seed == 0 else (after <= before)
    assert any(after > before for seed, before, after in trace if seed == 0)


def test_replay_probability_splits_fresh_and_replayed_draws(space, regrets):
    for p in (0.0, 0.7, 1.0):
        buf = PLRBuffer(capacity=64, replay_prob=p, seed=2, space=space)
        _run(buf, regrets, 300)
        replayed = sum(d.replay for d in buf.history[1:])  # the first draw has nothing to replay
        assert replayed / 299 == pytest.approx(p, abs=0.07)


def test_scores_regret_and_positive_value_loss():
    assert regret(0.95, -1.0) == pytest.approx(1.95)
    assert regret(0.9, 0.95) == pytest.approx(-0.05)
    assert positive_value_loss([1.0, 0.0, 0.0, 1.0]) == pytest.approx(0.25)
    assert positive_value_loss([0.3, 0.3]) == 0.0  # no spread: nothing to learn here
    assert positive_value_loss([1.0, 0.0], values=[0.0, 0.0]) == pytest.approx(0.5)
    with pytest.raises(ValueError):
        positive_value_loss([])


def test_level_round_trips_through_an_episode_spec_with_its_plan():
    plan = {"kind": "layering", "variant": "mirror", "difficulty": "hard", "layers": 4}
    level = Level.from_plan(plan, 12)
    assert (level.kind, level.difficulty, level.variant) == ("layering", "hard", "mirror")
    spec = level.to_spec(repeat=2)
    assert isinstance(spec, EpisodeSpec) and spec.task == "layering" and spec.repeat == 2
    assert spec.reset == {"seed": 12, "difficulty": "hard", "kind": "layering",
                          "variant": "mirror", "plan": plan}
    assert Level.from_spec(spec) == level
    assert Level.from_json(json.loads(json.dumps(level.to_json()))) == level
    assert Level(12, "hard", "layering") != level  # the plan is part of the identity
    plan["layers"] = 9  # the level keeps its own copy
    assert level.plan["layers"] == 4
    assert Level(3, "easy", "pep_wealth").to_spec().reset == {
        "seed": 3, "difficulty": "easy", "kind": "pep_wealth"}


def test_a_sampled_level_plays_through_the_episode_loop(space):
    level = PLRBuffer(seed=0, space=space).sample()
    episode = play_level(ADAPTER, ADAPTER.make_policy("always_close"), level)
    assert episode.done and episode.spec.seed == level.seed
    assert episode.case.truth.kind == level.kind


def test_bad_configuration_and_bad_levels_are_refused():
    with pytest.raises(ValueError):
        PLRBuffer(capacity=0)
    with pytest.raises(ValueError):
        PLRBuffer(temperature=0)
    with pytest.raises(ValueError):
        PLRBuffer(staleness=1.5)
    with pytest.raises(RuntimeError):
        PLRBuffer().sample()  # no space and nothing buffered
    with pytest.raises(ValueError):
        Level(-1, "easy", "layering")
    with pytest.raises(TypeError):
        Level(1, "easy", "layering", plan={"x": object()})
    with pytest.raises(ValueError):
        LevelSpace.of(ADAPTER, "validation", seeds=200_000)
    with pytest.raises(ValueError):  # a plan fixes the kind
        Level(1, "easy", "structuring", plan={"kind": "layering", "variant": "mirror"})


def test_an_adversary_plan_level_plays_the_planned_case():
    plan = {"kind": "fair_trade", "variant": "namesake_hit", "difficulty": "easy", "decoys": 4}
    level = Level.from_plan(plan, 5)
    episode = play_level(ADAPTER, ADAPTER.make_policy("oracle"), level)
    assert episode.done and episode.case.truth.kind == "fair_trade"
    assert ADAPTER.outcome(episode) == "TN"
    # The spec carries the plan to the environment; without it the seed gives another case.
    plain = play_level(ADAPTER, ADAPTER.make_policy("always_close"), Level(5, "easy", "fair_trade"))
    assert plain.observations[0].model_dump() != episode.observations[0].model_dump()


def test_training_curriculum_scores_each_group_and_persists_the_buffer(tmp_path):
    space = LevelSpace.of(ADAPTER, "train", ["layering"], ["easy"], seeds=2)
    state, log = tmp_path / "curriculum.json", tmp_path / "curriculum.csv"
    cur = GroupCurriculum(PLRBuffer(capacity=8, seed=0, space=space), ADAPTER, score="regret",
                          state_path=state, log_path=log)
    spec = cur.next_spec()
    level = Level.from_spec(spec)
    assert spec.task == "layering" and level.seed in space.seeds
    oracle = RegretOracle(ADAPTER).oracle_return(level)
    score = cur.record(spec, [-1.0, 0.0])  # the group's G = 2 returns
    assert score == pytest.approx(oracle + 0.5)
    assert PLRBuffer.load(state).score(level) == score  # saved after the group
    row = next(csv.DictReader(log.open()))
    assert (row["kind"], row["replay"], float(row["score"])) == ("layering", "0", score)
    assert cur.summary()["groups"] == 1 and cur.summary()["buffer_size"] == 1
    resumed = GroupCurriculum(PLRBuffer.load(state), ADAPTER, state_path=state, log_path=log)
    resumed.record(resumed.next_spec(), [0.5, 0.5])  # a later run continues the numbering
    assert [r["group"] for r in csv.DictReader(log.open())] == ["1", "2"]
    value = GroupCurriculum(PLRBuffer(seed=0, space=space), ADAPTER, score="value_loss")
    assert value.record(value.next_spec(), [1.0, 0.0]) == pytest.approx(0.25)
    with pytest.raises(ValueError):
        GroupCurriculum(PLRBuffer(seed=0, space=space), ADAPTER, score="loss")


@pytest.mark.integration  # the full harness CLI with its report and plots: not the fast tier
def test_harness_curriculum_mode_evaluates_on_plr_levels_and_reports_them(tmp_path):
    out = tmp_path / "eval"
    code = harness_main(["--policies", "always_close,oracle", "--curriculum", "plr",
                 "--curriculum-updates", "16", "--tasks", "structuring,fair_trade",
                 "--difficulties", "easy", "--episodes", "2", "--out", str(out),
                 "--traces", "none", "--no-progress", "--workers", "1"])
    assert code == 0
    rows = [json.loads(line) for line in (out / "episodes.jsonl").read_text().splitlines()]
    levels = {(r["task"], r["seed"]) for r in rows}
    assert levels <= {(k, s) for k in ("structuring", "fair_trade") for s in (1_100_000,
                                                                             1_100_001)}
    assert len(rows) == 2 * len(levels)  # both policies on every distinct level drawn
    report = (out / "report.md").read_text()
    section = report.split("## Curriculum: levels sampled by PLR", 1)[1]
    draws = {line.split("|")[1].strip(): int(line.split("|")[2])
             for line in section.splitlines() if line.startswith(("| structuring",
                                                                  "| fair_trade"))}
    assert sum(draws.values()) == 16
    # always_close misses every SAR: structuring's regret is the larger, so it is drawn more.
    assert draws["structuring"] > draws["fair_trade"]
