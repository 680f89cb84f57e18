"""A Gymnasium face for any environment adapter: a masked discrete menu of tool calls and a
numeric observation, for classic RL libraries (Stable-Baselines3, sb3-contrib's MaskablePPO,
vector environments).

`GymEnv(adapter, ...)` wraps an `envkit.adapter.EnvAdapter` (an instance, a registered name is
resolved by the caller, or an import path "package.module:ATTRIBUTE"). This module names no
environment: what is particular to one lives in its `GymSpec` (`adapter.gym_spec`, an import
path resolved on first use).

**Actions: a fixed menu of (tool, target) slots, built from the tool declarations.** For each
declared tool (in declaration order, less `GymSpec.excluded`):
- its *target* parameter is the first parameter declared as a record reference
  (`declarations.Ref`), or the one `GymSpec.targets` names; the tool gets `GymSpec.widths[kind]`
  slots, slot k aiming at the k-th record of that kind the agent has seen (in the reader's
  canonical order: stable within an episode), offered only while that record is visible;
- its *variants* are the fixed values of its other parameters: `GymSpec.variants(tool)` where the
  spec gives them, else every combination of the values of its required parameters that the
  schema closes with an `enum` (a `Literal`), else one variant with none fixed;
- what neither fixes is completed from what the agent has read (`Reader.complete`: a note's
  evidence, a filing's findings), or the slot is not offered.
The menu size is fixed (`max_menu`, at least the number of slots; spare indices are never
offered), so a policy network keeps its shape when a new tool is declared.

**Masks.** `action_masks()` (sb3-contrib's convention) and `info["action_mask"]`: a slot is
offered when its call is complete and is not a repeat of an earlier call in the episode (a
repeat returns what the agent already had). An index that is not offered is sent as the
environment's malformed action: it costs a step and the environment's invalid-action penalty,
so no index the mask rules out can reach a tool.

**Observations.** A `Box` in [0, 1]^n (float32): for each slot whether it was sent and whether it
is offered now, then the reader's features (`Reader.features`: what the agent has read, encoded
by the environment's spec, never the hidden truth).

**Takeover.** With `prefix_policy` (a policy name of the adapter) and `takeover_last=K`, each
episode starts where that policy has K actions left: it plays the episode on a scratch
environment, its actions but the last K are replayed, and the agent decides the rest (rewards
and steps count from there).

**Episodes.** `reset(seed=...)` draws a task, a difficulty and a seed of `split` from the slice
with the env's `np_random` (same seed, same case); `episodes=[EpisodeSpec, ...]` plays those in
order instead (held-out evaluation). Rewards are the environment's own; `terminated` when it
says done, `truncated` after `max_steps`. `info["call"]` is the (tool, arguments) sent (None
for an index not offered). The episode's spec (`env.episode`) stays out of `info` and the
observation: its task names the kind.
"""

from __future__ import annotations

import itertools
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from memex.envkit.adapter import EnvAdapter
from memex.envkit.declarations import ToolSpec
from memex.envkit.episodes import EpisodeSpec, LocalSession, play
from memex.envkit.targets import resolve

Call = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class Slot:
    """One menu entry: a tool, its fixed arguments, and which visible record it aims at."""

    tool: str
    variant: Mapping[str, Any]
    param: str | None = None  # the target parameter, if the tool takes one
    kind: str | None = None   # the record kind it aims at
    index: int = 0            # the k-th record of that kind

    @property
    def label(self) -> str:
        fixed = ",".join(f"{k}={v}" for k, v in self.variant.items())
        aim = f"{self.param}=<{self.kind}#{self.index}>" if self.param else ""
        return f"{self.tool}({', '.join(p for p in (aim, fixed) if p)})"


class Reader(ABC):
    """One episode as the agent has read it: what it can aim at, how calls are completed, and
    its numeric features. Built by `GymSpec.reader` from the first observation."""

    @abstractmethod
    def observe(self, obs: Any, call: Call | None) -> None:
        """Take in the observation that `call` produced (None: the reset observation)."""

    @abstractmethod
    def visible(self, kind: str) -> Sequence[str | None]:
        """Records of `kind` in canonical order (stable within the episode); None where a
        record was seen but cannot be aimed at now."""

    def value(self, kind: str, ident: str) -> Any:
        """The argument value that aims at record `ident` (default: the ID itself); None if
        it cannot be aimed at now."""
        return ident

    def complete(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any] | None:
        """`arguments` with the parameters no slot fixes filled in, or None if the call cannot
        be made now (default: as given)."""
        return arguments

    @abstractmethod
    def features(self) -> np.ndarray:
        """The reader's features, `GymSpec.feature_size` floats in [0, 1]."""


class GymSpec(ABC):
    """What one environment tells the Gymnasium face."""

    widths: ClassVar[Mapping[str, int]]             # record kind -> slots per targeted tool
    targets: ClassVar[Mapping[str, tuple[str, str]]] = {}  # tool -> (parameter, kind), no Ref
    excluded: tuple[str, ...] = ()                  # tools left out of the menu
    feature_size: int

    def variants(self, tool: str) -> list[dict[str, Any]] | None:
        """Fixed argument sets for `tool`, or None to derive them from the schema's enums."""
        return None

    @abstractmethod
    def reader(self, obs: Any) -> Reader:
        """A reader for the episode that starts with `obs`."""


def _enum_variants(spec: ToolSpec, skip: str | None) -> list[dict[str, Any]]:
    schema = spec.json_schema()
    required = set(schema.get("required", ()))
    closed = [(name, prop["enum"]) for name, prop in schema.get("properties", {}).items()
              if name in required and name != skip and "enum" in prop]
    return [dict(zip([n for n, _ in closed], values, strict=True))
            for values in itertools.product(*(v for _, v in closed))]


def build_menu(tool_specs: Mapping[str, ToolSpec], gym_spec: GymSpec) -> list[Slot]:
    """The slots of the menu, in canonical order: tools in declaration order, then variants,
    then targets."""
    slots = []
    for name, spec in tool_specs.items():
        if name in gym_spec.excluded:
            continue
        param, kind = gym_spec.targets.get(name, (None, None))
        if param is None and spec.refs:
            param, kinds = next(iter(spec.refs.items()))
            kind = kinds[0]
        variants = gym_spec.variants(name)
        if variants is None:
            variants = _enum_variants(spec, param)
        width = gym_spec.widths[kind] if param else 1
        slots += [Slot(name, dict(v), param, kind, k) for v in variants for k in range(width)]
    return slots


def _call_key(tool: str, arguments: Mapping[str, Any]) -> str:
    """What makes two calls the same call (arguments are built in one order per slot)."""
    return tool + repr(arguments)


class GymEnv(gym.Env):
    """A `gymnasium.Env` over one environment adapter; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}

    def __init__(self, adapter: EnvAdapter | str, *, tasks: Sequence[str] | None = None,
                 difficulties: Sequence[str] | None = None, split: str = "train",
                 episodes: Sequence[EpisodeSpec] | None = None, max_steps: int | None = None,
                 max_menu: int | None = None, prefix_policy: str | None = None,
                 takeover_last: int = 0, render_mode: str | None = None):
        self.adapter: EnvAdapter = resolve(adapter) if isinstance(adapter, str) else adapter
        spec = self.adapter.gym_spec
        self.face: GymSpec = resolve(spec) if isinstance(spec, str) else spec
        self.tasks = tuple(tasks or self.adapter.tasks)
        self.difficulties = tuple(difficulties or self.adapter.difficulties)
        self.split = split
        self.seeds = self.adapter.splits[split]
        self.episodes = list(episodes) if episodes is not None else None
        self._next_episode = 0
        self.max_steps = max_steps
        if takeover_last and not prefix_policy:
            raise ValueError("takeover_last needs a prefix_policy to play up to it")
        self.prefix_policy, self.takeover_last = prefix_policy, takeover_last
        self.render_mode = render_mode
        self.slots = build_menu(self.adapter.tool_specs, self.face)
        self.menu_size = max_menu or len(self.slots)
        if self.menu_size < len(self.slots):
            raise ValueError(f"max_menu={max_menu} is below the {len(self.slots)} slots the "
                             "declarations make")
        self.action_space = gym.spaces.Discrete(self.menu_size)
        size = 2 * self.menu_size + self.face.feature_size
        self.observation_space = gym.spaces.Box(0.0, 1.0, (size,), np.float32)
        self.session = LocalSession(self.adapter.environment_class()())
        self.episode: EpisodeSpec | None = None
        self.obs: Any = None
        self.reader: Reader | None = None
        self._sent: set[str] = set()
        self._sent_tools: set[str] = set()
        self._sent_slots = np.zeros(self.menu_size, np.float32)
        self._calls: list[Call | None] = []
        self._steps = 0

    # -- episodes --
    def _draw(self) -> EpisodeSpec:
        if self.episodes is not None:
            spec = self.episodes[self._next_episode % len(self.episodes)]
            self._next_episode += 1
            return spec
        rng = self.np_random
        task = self.tasks[int(rng.integers(len(self.tasks)))]
        difficulty = self.difficulties[int(rng.integers(len(self.difficulties)))]
        seed = self.seeds.start + int(rng.integers(len(self.seeds)))
        return EpisodeSpec(task, difficulty, seed,
                           self.adapter.reset_options(task, difficulty, seed))

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode: `options={"episode": EpisodeSpec}` plays that one, else one is
        drawn (see the module docstring)."""
        super().reset(seed=seed)
        self.episode = (options or {}).get("episode") or self._draw()
        self.obs = self.session.reset(**self.episode.reset)
        self.reader = self.face.reader(self.obs)
        self.reader.observe(self.obs, None)
        self._sent, self._sent_tools, self._steps = set(), set(), 0
        if self.takeover_last:
            self._play_prefix()
        self._sent_slots = np.zeros(self.menu_size, np.float32)
        self._refresh()
        return self._encode(), self._info(None)

    def _play_prefix(self) -> None:
        """Takeover: `prefix_policy` plays the episode on a scratch environment; its actions but
        the last `takeover_last` are replayed here (the environment is deterministic), read by
        the reader, and the agent takes over from there."""
        scratch = LocalSession(self.adapter.environment_class()())
        reference = play(scratch, self.adapter.make_policy(self.prefix_policy), self.episode)
        scratch.close()
        for action in reference.actions[:max(0, reference.steps - self.takeover_last)]:
            call = self.adapter.action_call(action)
            self.obs = self.session.step(action)
            self.reader.observe(self.obs, call)
            self._sent.add(_call_key(*call))
            self._sent_tools.add(call[0])

    def step(self, action: Any):
        if self.obs is None or self.obs.done:
            raise RuntimeError("step() before reset() or after the episode ended")
        index = int(action)
        call = self._calls[index] if 0 <= index < len(self._calls) else None
        if call is None:  # not offered: the environment's malformed action (typed error)
            env_action = self.adapter.malformed_action()
        else:
            env_action = self.adapter.make_action(*call)
            self._sent.add(_call_key(*call))
            self._sent_tools.add(call[0])
            self._sent_slots[index] = 1.0
        self.obs = self.session.step(env_action)
        self._steps += 1
        self.reader.observe(self.obs, call)
        self._refresh()
        terminated = bool(self.obs.done)
        truncated = not terminated and self.max_steps is not None and \
            self._steps >= self.max_steps
        return (self._encode(), float(self.obs.reward or 0.0), terminated, truncated,
                self._info(call))

    # -- the menu --
    def call_for(self, slot: Slot) -> Call | None:
        """The call `slot` makes now, or None if it is not offered."""
        arguments = dict(slot.variant)
        if slot.param is not None:
            visible = self.reader.visible(slot.kind)
            ident = visible[slot.index] if slot.index < len(visible) else None
            if ident is None:
                return None
            value = self.reader.value(slot.kind, ident)
            if value is None:
                return None
            arguments[slot.param] = value
        arguments = self.reader.complete(slot.tool, arguments)
        if arguments is None or (slot.tool in self._sent_tools
                                 and _call_key(slot.tool, arguments) in self._sent):
            return None
        return slot.tool, arguments

    def _refresh(self) -> None:
        done = bool(self.obs.done)
        self._calls = [None if done else self.call_for(s) for s in self.slots]
        self._calls += [None] * (self.menu_size - len(self.slots))

    def action_masks(self) -> np.ndarray:
        """Which menu indices are offered now (sb3-contrib's `MaskablePPO` reads this)."""
        return np.array([c is not None for c in self._calls], dtype=bool)

    def offered(self) -> list[tuple[int, Call]]:
        """The offered (index, call) pairs, in menu order."""
        return [(i, c) for i, c in enumerate(self._calls) if c is not None]

    def _encode(self) -> np.ndarray:
        mask = self.action_masks().astype(np.float32)
        features = np.clip(np.asarray(self.reader.features(), np.float32), 0.0, 1.0)
        return np.concatenate([self._sent_slots, mask, features]).astype(np.float32)

    def _info(self, call: Call | None) -> dict[str, Any]:
        # Not the episode's spec: its task names the kind, i.e. the label.
        return {"action_mask": self.action_masks(), "call": call}

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.obs is None:
            return None
        lines = [f"step {self._steps}: {self.obs.tool} reward {self.obs.reward}"]
        lines += [f"  [{i}] {c[0]} {json.dumps(c[1], default=str)[:100]}"
                  for i, c in self.offered()]
        return "\n".join(lines)

    def close(self) -> None:
        self.session.close()
