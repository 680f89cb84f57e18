"""AgentOS: production inference on Memex.

- `agent_os_runtime` (Rust, PyO3, Tokio; built from this folder's crate): many OpenEnv sessions
  from one Python process, stepped concurrently with the GIL released. `runtime.EnvBatch` wraps
  it with Memex's typed observations.
- `memory_manager.MemoryManager`: the L1 (recent turns in a token budget) / L2 (structured
  scratchpad) / L3 (`l3_index.L3Index`, a LanceDB archive) memory that outlives the two-page RAM.
- `agent_os.AgentOS`: runs many investigations at once against an OpenAI-compatible endpoint.

Submodules import their heavy dependencies (torch, LanceDB) only when used.
"""
