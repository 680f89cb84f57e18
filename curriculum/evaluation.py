"""`evaluation.harness --curriculum plr`: levels chosen by regret against the oracle.

Prioritized level replay runs over the harness's grid space (the split's seeds
`seed_offset..seed_offset+episodes-1` x tasks x difficulties). Each batch of draws is played by
the target policy — the first of `--policies`; the harness passes its own `run_grid` as `play`,
so `llm:` and `ckpt:` policies and remote sessions work — scored by regret against the oracle
(in process, cached per level) and fed back. The evaluation grid is then the distinct levels PLR
sampled, in first-drawn order — where the target does worst, by construction — and every policy
is evaluated there as usual. `markdown_section` is appended to the report: draws by kind and
difficulty against the uniform share, mean regret, how many draws were replays, and the top
levels by score.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from memex.curriculum.levels import Level, LevelSpace
from memex.curriculum.oracle import RegretOracle
from memex.curriculum.plr import PLRBuffer
from memex.envkit.episodes import EpisodeSpec


def plr_grid(adapter: Any, policy: str, play: Callable[[list[EpisodeSpec]], list[float]], *,
             split: str, tasks: list[str], difficulties: list[str], episodes: int,
             seed_offset: int, repeats: int, updates: int, batch: int = 8,
             seed: int = 0) -> tuple[list[EpisodeSpec], str, str]:
    """(specs, grid note, report section) of a PLR run of `updates` draws against `policy`;
    `play(specs)` plays the policy on a batch of specs and returns the episodes' returns."""
    space = LevelSpace.of(adapter, split, tasks, difficulties, seeds=episodes,
                          seed_offset=seed_offset)
    buffer = PLRBuffer(capacity=max(1, min(space.size, 256)), seed=seed, space=space)
    oracle = RegretOracle(adapter)
    scores: list[float] = []
    while buffer.sampled < updates:
        levels = [buffer.sample() for _ in range(min(batch, updates - buffer.sampled))]
        specs = [lv.to_spec(repeat=i) for i, lv in enumerate(levels)]
        for level, episode_return in zip(levels, play(specs), strict=True):
            score = oracle.regret(level, episode_return)
            buffer.update(level, score)
            scores.append(score)
    distinct: dict[str, Level] = {}
    for draw in buffer.history:
        distinct.setdefault(draw.level.key, draw.level)
    grid = [lv.to_spec(r) for lv in distinct.values() for r in range(repeats)]
    note = (f"Grid: PLR over split `{split}` ({len(space.kinds)} tasks x "
            f"{len(space.difficulties)} difficulties x {episodes} seeds), {updates} draws "
            f"scored by `{policy}`'s regret against the oracle: the {len(distinct)} distinct "
            f"levels drawn x {repeats} repeats = {len(grid)} episodes per policy.")
    return grid, note, markdown_section(buffer, scores, space, policy)


def markdown_section(buffer: PLRBuffer, scores: list[float], space: LevelSpace,
                     policy: str) -> str:
    """The sampled-level statistics of a PLR run."""
    n = len(buffer.history)
    regrets: dict[str, list[float]] = {}
    for draw, score in zip(buffer.history, scores, strict=True):
        regrets.setdefault(draw.level.kind, []).append(score)
    lines = ["", "## Curriculum: levels sampled by PLR", "",
             f"{n} draws, scored by `{policy}`'s regret against the oracle (rank temperature "
             f"{buffer.temperature}, staleness {buffer.staleness}, replay probability "
             f"{buffer.replay_prob}); {sum(d.replay for d in buffer.history)} were replays of "
             f"buffered levels. Uniform sampling would give each kind "
             f"{1 / len(space.kinds):.2f} and each difficulty "
             f"{1 / len(space.difficulties):.2f} of the draws.", "",
             "| kind | draws | share | mean regret |", "|---|---:|---:|---:|"]
    kinds = buffer.counts("kind")
    for kind in space.kinds:
        r = regrets.get(kind, [])
        mean = f"{sum(r) / len(r):.3f}" if r else "-"
        lines.append(f"| {kind} | {kinds[kind]} | {kinds[kind] / n:.2f} | {mean} |")
    diffs: Counter = buffer.counts("difficulty")
    lines += ["", "| difficulty | draws | share |", "|---|---:|---:|"]
    lines += [f"| {d} | {diffs[d]} | {diffs[d] / n:.2f} |" for d in space.difficulties]
    lines += ["", "Top levels by regret: " + ", ".join(
        f"`{e.level.label}` ({e.score:.3f})" for e in buffer.top(10)) + ".", ""]
    return "\n".join(lines)
