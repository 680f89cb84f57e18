"""The curriculum inside `train_grpo.py --curriculum plr`: one level per GRPO group.

The trainer's dataset rows stay the seeded grid (they only pace TRL's batches); the
`RolloutEngine` asks `next_spec()` for each group's episode spec instead, and after the group is
played calls `record(spec, returns)` with the group's G episode returns (reference and forks,
each scored as the environment scores it; a capped episode as a timeout). The score is
`--plr-score`:

    regret      the oracle's return on the level minus the group's mean return
    value_loss  PLR's positive value loss with the group mean as the baseline

The buffer lives in `--curriculum-state` (default OUTPUT_DIR/curriculum.json), saved after every
group: a resumed run, or the next self-play round, continues from it, and levels an adversary
`add`s to that file between runs are sampled like any other. Each group is one row of
OUTPUT_DIR/curriculum.csv (batch, level, replayed or fresh, the returns' mean, the score).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from memex.curriculum.levels import Level, LevelSpace
from memex.curriculum.oracle import RegretOracle
from memex.curriculum.plr import PLRBuffer, positive_value_loss, regret
from memex.envkit.episodes import EpisodeSpec

SCORES = ("regret", "value_loss")
CSV_COLUMNS = ("group", "level", "kind", "difficulty", "seed", "plan", "replay", "mean_return",
               "score", "buffer_size")


class GroupCurriculum:
    """A `PLRBuffer` fed by GRPO groups (module docstring)."""

    def __init__(self, buffer: PLRBuffer, adapter: Any, *, score: str = "regret",
                 state_path: Path | None = None, log_path: Path | None = None):
        if score not in SCORES:
            raise ValueError(f"unknown PLR score {score!r}; choose one of {', '.join(SCORES)}")
        self.buffer = buffer
        self.adapter = adapter
        self.score = score
        self.oracle = RegretOracle(adapter) if score == "regret" else None
        self.state_path = state_path
        self.log_path = log_path
        self.groups = 0  # groups scored by this run; the CSV numbers groups across runs
        self._logged = sum(1 for _ in log_path.open()) - 1 if log_path and log_path.exists() \
            else 0
        self._replayed: dict[str, bool] = {}

    @classmethod
    def from_args(cls, adapter: Any, args: Any, out: Path, kinds: list[str],
                  difficulties: list[str]) -> GroupCurriculum:
        """The trainer's curriculum: the saved buffer at `--curriculum-state` when there is one,
        else a new one over the train split's kinds x difficulties (seeds from `--seed`)."""
        state = Path(args.curriculum_state) if args.curriculum_state else out / "curriculum.json"
        if state.exists():
            buffer = PLRBuffer.load(state)
        else:
            space = LevelSpace.of(adapter, "train", kinds, difficulties,
                                  seed_offset=args.seed * 10_000)
            buffer = PLRBuffer(args.plr_capacity, args.plr_temperature, args.plr_staleness,
                               args.plr_replay_prob, seed=args.seed, space=space)
        return cls(buffer, adapter, score=args.plr_score, state_path=state,
                   log_path=out / "curriculum.csv")

    def next_spec(self) -> EpisodeSpec:
        """The episode spec of the next group: a level sampled from the buffer."""
        level = self.buffer.sample()
        self._replayed[level.key] = self.buffer.history[-1].replay
        return level.to_spec()

    def record(self, spec: EpisodeSpec, returns: list[float]) -> float:
        """Score the level a group played from its returns; update the buffer; log; save."""
        level = Level.from_spec(spec)
        mean = sum(returns) / len(returns)
        if self.oracle is not None:
            score = regret(self.oracle.oracle_return(level), mean)
        else:
            score = positive_value_loss(returns)
        self.buffer.update(level, score)
        self.groups += 1
        if self.log_path is not None:
            new = not self.log_path.exists()
            with self.log_path.open("a", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
                if new:
                    writer.writeheader()
                self._logged += 1
                writer.writerow({
                    "group": self._logged, "level": level.label, "kind": level.kind,
                    "difficulty": level.difficulty, "seed": level.seed,
                    "plan": "" if level.plan is None else json.dumps(level.plan, sort_keys=True),
                    "replay": int(self._replayed.pop(level.key, False)),
                    "mean_return": round(mean, 6), "score": score,
                    "buffer_size": len(self.buffer)})
        if self.state_path is not None:
            self.buffer.save(self.state_path)
        return score

    def summary(self) -> dict[str, Any]:
        """For run_summary.json: sizes, what was sampled, the top levels."""
        return {"score": self.score, "groups": self.groups, "buffer_size": len(self.buffer),
                "sampled": self.buffer.sampled,
                "replayed": sum(d.replay for d in self.buffer.history),
                "by_kind": dict(self.buffer.counts("kind")),
                "by_difficulty": dict(self.buffer.counts("difficulty")),
                "top": [{"level": e.level.label, "score": e.score} for e in self.buffer.top(5)],
                "state": str(self.state_path) if self.state_path else None}
