"""Evaluation for both environments: the harness over a seeded grid (`harness`, `python -m
memex.evaluation.harness`), the one report writer (`report`), in-process AML episode rows for
tests and fixtures (`runs`), the 1MDB demo (`demo`, `python -m memex.evaluation.demo`) and
the export of traces as a Hugging Face dataset (`export`, `python -m memex.evaluation.export`).
An instrument: nothing below it (the server, the data, the framework) imports it."""
