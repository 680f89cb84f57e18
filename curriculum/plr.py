"""Prioritized level replay (Jiang, Grefenstette & Rocktäschel, 2021) and its uniform baseline.

`PLRBuffer.sample()` either replays a level from the buffer (probability `replay_prob`, once the
buffer holds `min_fill` levels; always when there is no `space` to draw new ones from) or draws a
fresh level from `space`. A replayed level is drawn from

    P_replay(l_i) = (1 - rho) * P_S(l_i) + rho * P_C(l_i)

    P_S(l_i) = h(S_i)^(1/beta) / sum_j h(S_j)^(1/beta),  h(S_i) = 1 / rank(S_i)
    P_C(l_i) = (c - C_i) / sum_j (c - C_j)

where S_i is the level's score (rank 1 = highest; equal scores share their best rank, so they
are equally likely), beta the
`temperature` (small: greedy on the top rank; large: near uniform), rho the `staleness` mix, c
the number of levels sampled so far and C_i the count when l_i was last sampled (or added), so a
level not replayed for a while regains probability and its score does not go stale forever.

`update(level, score)` records the latest score of a sampled level (adding it if it is new);
`add(level, score)` inserts one from outside (the adversary's hardest plans). The buffer holds
at most `capacity` levels: a new level enters a full buffer only by evicting the lowest-scored
level (the least recently touched of equal scores), and only if it scores strictly higher.

Scores: `regret(oracle_return, policy_return)` — the regret estimate against the oracle — or
`positive_value_loss(returns)` — PLR's score with the GRPO group's mean return as the value
baseline: mean over the group of max(R_g - mean R, 0). Higher means more to learn.

Everything random comes from one `random.Random(seed)`; `state_json()` / `from_state()` carry
the buffer, the counters and the RNG state, so a run continued from a saved state samples exactly
what an uninterrupted run would.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memex.curriculum.levels import Level, LevelSpace


def regret(oracle_return: float, policy_return: float) -> float:
    """Regret estimate of a level: the oracle's return minus the policy's (may be negative)."""
    return round(float(oracle_return) - float(policy_return), 6)


def positive_value_loss(returns: Sequence[float], values: Sequence[float] | None = None) -> float:
    """PLR's positive value loss, mean of max(R_g - V_g, 0); V defaults to the group's mean
    return (GRPO has no value head: the group mean is its baseline)."""
    if not returns:
        raise ValueError("positive_value_loss needs at least one return")
    if values is None:
        mean = sum(returns) / len(returns)
        values = [mean] * len(returns)
    if len(values) != len(returns):
        raise ValueError("returns and values differ in length")
    return round(sum(max(r - v, 0.0) for r, v in zip(returns, values, strict=True))
                 / len(returns), 6)


@dataclass
class Entry:
    """A buffered level: its latest score, when it was last sampled or added (the sample count
    then), when it was last touched (for eviction ties) and how often it was scored."""

    level: Level
    score: float
    last_sampled: int
    touched: int
    updates: int = 1


@dataclass(frozen=True)
class Draw:
    """One `sample()` call: the level, whether it was replayed, and the sample count."""

    level: Level
    replay: bool
    index: int


class PLRBuffer:
    """Prioritized level replay over a bounded buffer (module docstring)."""

    def __init__(self, capacity: int = 256, temperature: float = 0.3, staleness: float = 0.3,
                 replay_prob: float = 0.5, seed: int = 0, space: LevelSpace | None = None,
                 min_fill: int = 1):
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        if temperature <= 0:
            raise ValueError("temperature must be > 0")
        if not 0.0 <= staleness <= 1.0 or not 0.0 <= replay_prob <= 1.0:
            raise ValueError("staleness and replay_prob are probabilities in [0, 1]")
        if not 1 <= min_fill <= capacity:
            raise ValueError("min_fill must be in [1, capacity]")
        self.capacity = capacity
        self.temperature = temperature
        self.staleness = staleness
        self.replay_prob = replay_prob
        self.seed = seed
        self.space = space
        self.min_fill = min_fill
        self.rng = random.Random(seed)
        self.entries: dict[str, Entry] = {}  # level key -> entry, in insertion order
        self.sampled = 0  # c: levels sampled so far
        self.clock = 0  # every sample, update and add: orders eviction ties
        self.history: list[Draw] = []
        self.evicted = 0
        self.rejected = 0

    # -- the interface every sampler shares --
    def sample(self) -> Level:
        """The next level to play: replayed by priority, or fresh from the space."""
        self.sampled += 1
        self.clock += 1
        replay = self.space is None or (len(self.entries) >= self.min_fill
                                        and self.rng.random() < self.replay_prob)
        if replay and not self.entries:
            raise RuntimeError("an empty PLR buffer without a level space has nothing to sample")
        if replay:
            keys = list(self.entries)
            key = self.rng.choices(keys, weights=self.replay_weights())[0]
            level = self.entries[key].level
            self.entries[key].last_sampled = self.sampled
        else:
            level = self._fresh()
        self.history.append(Draw(level, replay, self.sampled))
        return level

    def update(self, level: Level, score: float) -> bool:
        """Record `level`'s latest score (adding it if new). False if a full buffer refused it."""
        self.clock += 1
        entry = self.entries.get(level.key)
        if entry is None:
            return self._insert(level, score, self.sampled)
        entry.score = float(score)
        entry.touched = self.clock
        entry.updates += 1
        return True

    def add(self, level: Level, score: float) -> bool:
        """Insert a level from outside (e.g. an adversary's plan) with its score. Same as
        `update`; a level added is as fresh for staleness as one just sampled."""
        self.clock += 1
        entry = self.entries.get(level.key)
        if entry is not None:
            entry.score, entry.touched, entry.last_sampled = float(score), self.clock, self.sampled
            entry.updates += 1
            return True
        return self._insert(level, score, self.sampled)

    # -- priorities --
    def score_weights(self) -> list[float]:
        """P_S over the buffer (insertion order): rank prioritisation with temperature."""
        entries = list(self.entries.values())
        order = sorted(range(len(entries)), key=lambda i: -entries[i].score)
        h = [0.0] * len(entries)
        rank = 0
        for position, i in enumerate(order, start=1):
            if position == 1 or entries[i].score != entries[order[position - 2]].score:
                rank = position  # equal scores share their best rank ("1224" ranking)
            h[i] = (1.0 / rank) ** (1.0 / self.temperature)
        total = sum(h)
        return [x / total for x in h]

    def staleness_weights(self) -> list[float]:
        """P_C over the buffer (insertion order): proportional to samples since last sampled."""
        ages = [self.sampled - e.last_sampled for e in self.entries.values()]
        total = sum(ages)
        if total == 0:
            return [1.0 / len(ages)] * len(ages)
        return [a / total for a in ages]

    def replay_weights(self) -> list[float]:
        """P_replay = (1 - rho) P_S + rho P_C."""
        rho = self.staleness
        return [(1 - rho) * s + rho * c
                for s, c in zip(self.score_weights(), self.staleness_weights(), strict=True)]

    def probabilities(self) -> dict[str, float]:
        """level key -> replay probability (for reports)."""
        return dict(zip(self.entries, self.replay_weights(), strict=True)) if self.entries \
            else {}

    # -- inspection --
    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, level: object) -> bool:
        return isinstance(level, Level) and level.key in self.entries

    def score(self, level: Level) -> float | None:
        entry = self.entries.get(level.key)
        return None if entry is None else entry.score

    def levels(self) -> list[Level]:
        return [e.level for e in self.entries.values()]

    def top(self, n: int = 10) -> list[Entry]:
        """The n highest-scored entries (ties in insertion order)."""
        return sorted(self.entries.values(), key=lambda e: -e.score)[:n]

    def counts(self, by: str = "kind", last: int | None = None) -> Counter:
        """How often each kind (or difficulty, ...) was sampled, over the last `last` draws."""
        draws = self.history if last is None else self.history[-last:]
        return Counter(getattr(d.level, by) for d in draws)

    # -- persistence --
    def state_json(self) -> dict[str, Any]:
        version, internal, gauss = self.rng.getstate()
        return {
            "format": "memex-plr/1",
            "config": {"capacity": self.capacity, "temperature": self.temperature,
                       "staleness": self.staleness, "replay_prob": self.replay_prob,
                       "seed": self.seed, "min_fill": self.min_fill},
            "space": None if self.space is None else {
                "kinds": list(self.space.kinds), "difficulties": list(self.space.difficulties),
                "seeds": [self.space.seeds.start, self.space.seeds.stop]},
            "rng": [version, list(internal), gauss],
            "sampled": self.sampled, "clock": self.clock, "evicted": self.evicted,
            "rejected": self.rejected,
            "entries": [{"level": e.level.to_json(), "score": e.score,
                         "last_sampled": e.last_sampled, "touched": e.touched,
                         "updates": e.updates} for e in self.entries.values()],
            "history": [[d.level.to_json(), d.replay, d.index] for d in self.history],
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> PLRBuffer:
        if state.get("format") != "memex-plr/1":
            raise ValueError("not a memex-plr/1 buffer state")
        space = state.get("space")
        buf = cls(**state["config"], space=None if space is None else LevelSpace(
            tuple(space["kinds"]), tuple(space["difficulties"]), range(*space["seeds"])))
        version, internal, gauss = state["rng"]
        buf.rng.setstate((version, tuple(internal), gauss))
        buf.sampled, buf.clock = state["sampled"], state["clock"]
        buf.evicted, buf.rejected = state["evicted"], state["rejected"]
        for e in state["entries"]:
            level = Level.from_json(e["level"])
            buf.entries[level.key] = Entry(level, e["score"], e["last_sampled"], e["touched"],
                                           e["updates"])
        buf.history = [Draw(Level.from_json(lv), replay, index)
                       for lv, replay, index in state["history"]]
        return buf

    def save(self, path: Path) -> None:
        """Write the state atomically (a reader never sees half a file)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        tmp.write_text(json.dumps(self.state_json()))
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> PLRBuffer:
        return cls.from_state(json.loads(Path(path).read_text()))

    # -- internals --
    def _fresh(self) -> Level:
        """A level from the space, preferring one not in the buffer (a few tries)."""
        assert self.space is not None
        level = self.space.sample(self.rng)
        for _ in range(8):
            if level.key not in self.entries:
                break
            level = self.space.sample(self.rng)
        return level

    def _insert(self, level: Level, score: float, last_sampled: int) -> bool:
        if len(self.entries) >= self.capacity:
            victim = min(self.entries.values(), key=lambda e: (e.score, e.touched))
            if not float(score) > victim.score:
                self.rejected += 1
                return False
            del self.entries[victim.level.key]
            self.evicted += 1
        self.entries[level.key] = Entry(level, float(score), last_sampled, self.clock)
        return True


class UniformSampler:
    """The baseline with the same interface: every level fresh from the space, uniformly;
    `update` and `add` only record scores (nothing is replayed)."""

    def __init__(self, space: LevelSpace, seed: int = 0):
        self.space = space
        self.seed = seed
        self.rng = random.Random(seed)
        self.sampled = 0
        self.history: list[Draw] = []
        self.scores: dict[str, float] = {}

    def sample(self) -> Level:
        self.sampled += 1
        level = self.space.sample(self.rng)
        self.history.append(Draw(level, False, self.sampled))
        return level

    def update(self, level: Level, score: float) -> bool:
        self.scores[level.key] = float(score)
        return True

    add = update

    def counts(self, by: str = "kind", last: int | None = None) -> Counter:
        draws = self.history if last is None else self.history[-last:]
        return Counter(getattr(d.level, by) for d in draws)
