"""envkit: the framework both environments stand on, and no environment's code.

- `adapter`: the environment-adapter protocol (`EnvAdapter`) and the `--env NAME` registry;
- `episodes`: sessions (in process or WebSocket), episode specs and records, the one episode
  loop (`play`);
- `replies`: reading one tool call out of an LLM reply (the one JSON scanner);
- `declarations`: a toolkit declared once as typed methods -> `ToolSpec`s;
- `http_episodes`: OpenEnv's `create_app` with stateful HTTP episodes (`create_env_app`);
- `guards`: the body limit, WebSocket frame guard and idle close, separate WS/MCP session
  pools, the optional bearer token (issue #12);
- `client`: the typed WebSocket client base; `traces`: the `memex-trace/1` JSONL format;
- `errors`: the typed error carrying a `code`, and the one validation message;
- `servers`: real servers in subprocesses, for tests and benchmarks.

Nothing here imports an environment (`memex.server`, `memex.committee`, ...): each environment
imports envkit and registers its adapter by import path.
"""
