"""Evaluation for both environments: the harness over a seeded grid (`harness`, `python -m
memex.evaluation.harness`), the one report writer (`report`), in-process AML episode rows for
tests and fixtures (`runs`), and the 1MDB demo (`demo`, `python -m memex.evaluation.demo`).
An instrument: nothing below it (the server, the data, the framework) imports it."""
