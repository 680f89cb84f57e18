"""The environments of this package by name: what `--env NAME` means to the trainer, the
evaluation harness, the inference agent and the demo.

Each entry is the import path of an environment's adapter (`envkit.adapter.EnvAdapter`),
imported on first use (`envkit.targets`), so naming an environment loads nothing of it:
`get_adapter("memex")` never imports the committee. Any other adapter is reachable as
`--env package.module:ATTRIBUTE`, or registered under a name with `register`.
"""

from __future__ import annotations

import functools
import sys

from memex.envkit.adapter import EnvAdapter
from memex.envkit.targets import resolve

ENVIRONMENTS: dict[str, str] = {
    "memex": "memex.adapter:ADAPTER",                     # the AML investigation
    "committee": "memex.committee.adapter:ADAPTER",       # the investment committee
    "launderer": "memex.adversary.adapter:ADAPTER",       # the adversary that designs AML cases
}


# Gymnasium ids (`envkit.gym.GymEnv` over a registered adapter): id -> the env's keyword
# arguments, registered by `register_gym()` (gymnasium is in the `train` extra) or by importing
# this module once gymnasium is loaded: `gymnasium.make("memex.registry:memex/AML-v0")` works
# alone.
GYM_ENVS: dict[str, dict[str, object]] = {
    # every kind and difficulty
    "memex/AML-v0": {"adapter": ENVIRONMENTS["memex"]},
    # every kind at easy
    "memex/AML-Easy-v0": {"adapter": ENVIRONMENTS["memex"], "difficulties": ("easy",)},
    # the cash rule at easy: structuring and its benign look-alike (the PPO signal check)
    "memex/AML-CashEasy-v0": {"adapter": ENVIRONMENTS["memex"], "difficulties": ("easy",),
                              "tasks": ("structuring", "cash_business")},
    # the same, from where the heuristic investigator has 5 actions left (the deciding view,
    # the notes, the citations, the decision)
    "memex/AML-CashEasy-Takeover-v0": {
        "adapter": ENVIRONMENTS["memex"], "difficulties": ("easy",),
        "tasks": ("structuring", "cash_business"), "prefix_policy": "heuristic",
        "takeover_last": 5},
}


def register_gym() -> None:
    """Register `GYM_ENVS` with gymnasium (idempotent); imports gymnasium."""
    import gymnasium

    for gym_id, kwargs in GYM_ENVS.items():
        if gym_id not in gymnasium.registry:
            gymnasium.register(gym_id, entry_point="memex.envkit.gym:GymEnv", kwargs=kwargs)


def register(name: str, target: str) -> None:
    """Make `--env name` resolve to `target` ("package.module:ATTRIBUTE"), imported on first use."""
    ENVIRONMENTS[name] = target
    get_adapter.cache_clear()


def registered() -> tuple[str, ...]:
    return tuple(ENVIRONMENTS)


@functools.cache
def get_adapter(name: str = "memex") -> EnvAdapter:
    """The adapter registered as `name`, or the one at import path `module:attr`."""
    target = ENVIRONMENTS.get(name, name)
    if ":" not in target:
        raise KeyError(f"unknown environment {name!r}; registered: {', '.join(ENVIRONMENTS)} "
                       "(or give an import path 'package.module:ATTRIBUTE')")
    obj = resolve(target)
    return obj() if isinstance(obj, type) else obj


# Registered when gymnasium is already loaded (a classic-RL user's process); importing the
# registry never loads it.
if "gymnasium" in sys.modules:
    register_gym()
