"""Evaluation for both environments: the harness over a seeded grid (`harness`, `python -m
memex.evaluation.harness`), the one report writer (`report`), in-process AML episode rows for
tests and fixtures (`runs`), the 1MDB demo (`demo`, `python -m memex.evaluation.demo`),
the export of traces as a Hugging Face dataset (`export`, `python -m memex.evaluation.export`)
and the world's base rates against their sourced targets (`world_stats`, `python -m
memex.evaluation.world_stats`, the table in docs/world.md).
An instrument: nothing below it (the server, the data, the framework) imports it."""
