"""The AML environment's tasks for OpenEnv's Task API (`envkit.tasks`): the generated cases of
each seed split (`spec.CASE_GRIDS`: train, validation, test, each seed crossed with every
difficulty x kind, seed-major) and the adversarial split's entries (`splits`: adversary-made
plans and their mirrors, a task's reset being its reference "adversarial/INDEX").
`server.environment.MemexEnvironment` serves them; a task id is also a reset `task_id`."""

from __future__ import annotations

from typing import Any

from memex.envkit.tasks import Listed, TaskCatalog
from memex.scenarios.spec import CASE_GRIDS
from memex.scenarios.splits import ALIASES, load_split

ADVERSARIAL = next(iter(ALIASES))  # "adversarial": the newest version of the split


def _adversarial_resets() -> list[dict[str, Any]]:
    return [{"plan": f"{ADVERSARIAL}/{i}"} for i in range(len(load_split(ADVERSARIAL)))]


TASKS = TaskCatalog((*CASE_GRIDS.splits, Listed(
    ADVERSARIAL, "test", _adversarial_resets,
    description="adversary-made case plans and their mirrors, on test-range seeds "
                "(scenarios/splits)")))
