"""The launderer adversary: designs cases (plans) that a defender fails on and the oracle solves.

An instrument, above what it attacks: it imports the AML environment, the evaluation harness
and the curriculum; nothing below imports it. The split it writes is data in
`memex.scenarios.splits`, which the server and the harness read from there.

A plan (`memex.scenarios.plan.CasePlan`) is one point of a bounded, documented knob space:
kind and variant (the cover story and which cross-check fails), which other checks are written,
structure (layers, hops, decoys, history, background), amounts and their spread, timing and the
step budget. `scenarios.plan.build(plan, seed)` makes the case deterministically.

Public API (stable; self-play, `memex.adversary.selfplay`, calls `search`). Importing this
package imports none of it: each name lives in its module.

- `search.search(defender="heuristic", *, trials=40, seeds=(0, 1, 2), sampler_seed=0, kinds=None,
  fixed=None, base_url=None, workers=1, ray_address=None, llm=None, progress=True,
  on_result=None) -> list[ScoredPlan]`: optuna (TPE) over the knob space against `defender`
  (a baseline name such as "heuristic", `llm:MODEL` / `ckpt:PATH` through the evaluation
  harness's policy makers with `llm` = `LLMOptions`, or a harness `PolicyMaker`). Every scored
  plan, valid ones first, then by failure (highest first). `fixed` pins knobs (e.g.
  `{"difficulty": "hard"}`), `kinds` restricts the kinds. `workers > 1` or `ray_address`
  spreads scoring over Ray actors (each with its own environment replica, or a session on
  `base_url`).
- `scoring.ScoredPlan` (dataclass; `.to_dict()` is JSON-ready): `plan` (the plan dict: feed it to
  `scenarios.plan.build(plan, seed)`, `reset(seed=..., plan=plan)` or a PLR level),
  `defender`, `seeds`, `valid` (the oracle solved every seed inside the budget having revealed
  every decisive view), `failure` (the launderer's reward in [0, 1], 0 when invalid),
  `defender_return` (mean episode return), `defender_correct` (share of seeds decided right;
  timeouts are wrong), `oracle_return`, `oracle_correct`, `outcomes` (the defender's per seed).
- `scoring.score_plan(plan, seeds, defender="heuristic", base_url=None) -> ScoredPlan`: one
  plan; `scoring.Scorer(defender, base_url=None)`: reusable scorer on one environment replica.
- `distributed.ScorerPool(defender, workers=2, base_url=None, ray_address=None)`: Ray actors;
  `.score_many([(plan, seeds), ...])`.
- The launderer as an OpenEnv environment, in the shape of every environment here
  (`models.py`, `client.py`, `server/app.py`, `environment.py`, `tools.py`; README.md):
  `LaunderEnvironment` (action = a plan, reward = the defender's failure, an invalid plan a
  typed `invalid_plan` error), served by `python -m memex.adversary.server`, typed client
  `LaunderEnv`, registered as `--env launderer`.
- Self-play (`selfplay`): adversary rounds and defender rounds around one PLR buffer.

CLI: `python -m memex.adversary {search,build-split,evaluate,audit,report}` (see `__main__`),
`python -m memex.adversary.selfplay`.
"""
