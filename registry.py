"""The environments of this package by name: what `--env NAME` means to the trainer, the
evaluation harness, the inference agent and the demo.

Each entry is the import path of an environment's adapter (`envkit.adapter.EnvAdapter`),
imported on first use (`envkit.targets`), so naming an environment loads nothing of it:
`get_adapter("memex")` never imports the committee. Any other adapter is reachable as
`--env package.module:ATTRIBUTE`, or registered under a name with `register`.
"""

from __future__ import annotations

import functools

from memex.envkit.adapter import EnvAdapter
from memex.envkit.targets import resolve

ENVIRONMENTS: dict[str, str] = {
    "memex": "memex.adapter:ADAPTER",                     # the AML investigation
    "committee": "memex.committee.adapter:ADAPTER",       # the investment committee
    "launderer": "memex.adversary.adapter:ADAPTER",       # the adversary that designs AML cases
}


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
