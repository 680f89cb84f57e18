"""envkit: the framework both environments stand on, and no environment's code.

- `adapter`: the environment-adapter protocol (`EnvAdapter`);
- `targets`: objects named by import path, resolved on first use (the registries' entries);
- `policy`: the one `Policy` base of every scripted agent;
- `episodes`: sessions (in process or WebSocket), episode specs and records, the one episode
  loop (`play`);
- `replies`: reading one tool call out of an LLM reply (the one JSON scanner);
- `declarations`: a toolkit declared once as typed methods -> `ToolSpec`s;
- `http_episodes`: OpenEnv's `create_app` with stateful HTTP episodes (`create_env_app`);
- `guards`: the body limit, WebSocket frame guard and idle close, separate WS/MCP session
  pools, the optional bearer token;
- `client`: the typed WebSocket client base; `traces`: the `memex-trace/1` JSONL format;
- `errors`: the typed error carrying a `code`, and the one validation message;
- `servers`: real servers in subprocesses, for tests and benchmarks;
- `gym`: a Gymnasium face over any adapter (a masked menu of tool calls built from the
  declarations, a numeric observation; imports gymnasium, the `train` extra);
- `llm_options`, `tokens`, `trusted`, `sealed`: LLM endpoint options, token counting, fast
  frozen-model constructors, sealed evaluation.

Nothing here imports an environment (`memex.server`, `memex.committee`, ...): each environment
imports envkit, and the registry at the top of the package (`memex.registry`) names every
environment's adapter by import path.
"""
