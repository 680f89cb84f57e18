//! AgentOS runtime: a multi-session client for the OpenEnv WebSocket protocol.
//!
//! [`client::Pool`] opens and holds many sessions to one or more servers (replicas), runs
//! `reset` / `step` / `state` for a whole batch concurrently on Tokio with per-call timeouts and
//! a bound on requests in flight, and reports every failure as a [`client::SessionError`] that
//! names the session, the server and the cause. With the `python` feature the same pool is the
//! `agent_os_runtime` extension module (built by maturin; see `agent_os_runtime.pyi`).

pub mod client;

#[cfg(feature = "python")]
mod python;
