"""Adaptive difficulty: prioritized level replay over full case specifications.

Public API (import from `memex.curriculum`):

- `Level(seed, difficulty, kind, variant=None, plan=None)`: one case exactly. `plan` is the
  adversary's JSON-able dict of story knobs (`env.reset(..., plan=plan)`); `level.key` is its
  canonical identity, `level.case` its `scenarios.CaseSpec`, `level.to_spec(repeat=0)` the
  `EpisodeSpec` the play loops take (`EnvAdapter.play`, `train_grpo.RolloutEngine`,
  `evaluation.harness.run_grid`), `Level.from_spec(spec)` the way back, `to_json()` /
  `from_json()` for files.
- `LevelSpace.of(adapter, split="train", kinds=None, difficulties=None, seeds=None)`: where
  fresh levels come from (uniform over kind x difficulty x seed).
- `PLRBuffer(capacity, temperature, staleness, replay_prob, seed, space=None, min_fill=1)`:
  prioritized level replay (Jiang et al., 2021): `.sample() -> Level`, `.update(level, score)`
  after playing a sampled level, `.add(level, score)` to insert a level from outside (the
  adversary's hardest valid plans; returns False if a full buffer keeps its levels), rank
  prioritisation with temperature, staleness mixing, replay probability, bounded by capacity
  (evicts the lowest score, the least recently touched among equals). Without a `space` it only
  replays. `.save(path)` / `PLRBuffer.load(path)` (format `memex-plr/1`, RNG state included),
  `.history` (every draw), `.counts(by="kind"|"difficulty", last=None)`, `.top(n)`.
- `UniformSampler(space, seed)`: the baseline, same `sample` / `update` / `add` interface.
- Scores (higher = more to learn): `regret(oracle_return, policy_return)`,
  `positive_value_loss(returns)` (from a GRPO group's returns), and `RegretOracle(adapter)`
  (cached oracle return per level; `.regret(level, policy_return)`).

Where it is used: `train_grpo.py --curriculum plr` (training groups sampled from the buffer,
each group's returns update its level's score), `evaluation.harness --curriculum plr` (levels
sampled by regret against the oracle; sampled-level statistics in the report),
`python -m memex.curriculum.curve` (the PLR curve, docs/curriculum.md) and self-play
(`python -m memex.adversary.selfplay`: adversary rounds and defender rounds around a buffer).

    from memex.curriculum import Level, PLRBuffer, LevelSpace, RegretOracle
    from memex.registry import get_adapter
    adapter = get_adapter("memex")
    buffer = PLRBuffer(capacity=64, temperature=0.3, staleness=0.3, replay_prob=0.5, seed=0,
                       space=LevelSpace.of(adapter, "train"))
    level = buffer.sample()
    spec = level.to_spec()  # play it, then:
    buffer.update(level, score)
    buffer.add(Level(7, "hard", "layering", plan={...}), score=1.2)  # an adversary's plan
"""

from memex.curriculum.levels import Level, LevelSpace
from memex.curriculum.oracle import RegretOracle, play_level
from memex.curriculum.plr import Draw, Entry, PLRBuffer, UniformSampler, positive_value_loss, regret

__all__ = [
    "Draw",
    "Entry",
    "Level",
    "LevelSpace",
    "PLRBuffer",
    "RegretOracle",
    "UniformSampler",
    "play_level",
    "positive_value_loss",
    "regret",
]
