//! The Python face of the runtime (`agent_os_runtime`): a `Runtime` class whose batch calls run
//! on a Tokio runtime with the GIL released, `Reply` objects, and exceptions that name the
//! session, the server and the cause. No Rust panic reaches Python: a panicking task becomes an
//! `AgentOSError`.

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyException, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::client::{
    ErrorKind, Pool, PoolConfig, Reply as RustReply, ReplyKind, Request,
    SessionError as RustSessionError,
};

pyo3::create_exception!(
    agent_os_runtime,
    AgentOSError,
    PyException,
    "Base class of every error raised by the runtime."
);
pyo3::create_exception!(
    agent_os_runtime,
    SessionError,
    AgentOSError,
    "A call on one session failed. Attributes: `session` (int or None), `url` (str), `kind` \
     (str) and `cause` (str)."
);
pyo3::create_exception!(
    agent_os_runtime,
    ConnectError,
    SessionError,
    "The WebSocket to the server could not be opened."
);
pyo3::create_exception!(
    agent_os_runtime,
    ConnectionLost,
    SessionError,
    "The connection dropped (server killed, restarted or unreachable); the episode is lost. \
     `reset` on the session reconnects."
);
pyo3::create_exception!(
    agent_os_runtime,
    CallTimeout,
    SessionError,
    "No reply within the call's timeout. The request may still be applied server-side; the \
     session stays usable."
);
pyo3::create_exception!(
    agent_os_runtime,
    ServerError,
    SessionError,
    "The server answered with an error frame; `code` holds its error code."
);
pyo3::create_exception!(
    agent_os_runtime,
    ProtocolError,
    SessionError,
    "The server's reply does not follow the OpenEnv WebSocket protocol."
);
pyo3::create_exception!(
    agent_os_runtime,
    SessionClosed,
    SessionError,
    "The session was closed (or never opened) by this runtime."
);

fn session_err(py: Python<'_>, e: &RustSessionError) -> PyErr {
    let kind_name = match &e.kind {
        ErrorKind::Connect => "connect",
        ErrorKind::ConnectionLost => "connection_lost",
        ErrorKind::Timeout => "timeout",
        ErrorKind::Server { .. } => "server",
        ErrorKind::Protocol => "protocol",
        ErrorKind::Closed => "closed",
        ErrorKind::InvalidArgument => "invalid_argument",
        ErrorKind::Internal => "internal",
    };
    let text = e.to_string();
    let err = match &e.kind {
        ErrorKind::Connect => ConnectError::new_err(text),
        ErrorKind::ConnectionLost => ConnectionLost::new_err(text),
        ErrorKind::Timeout => CallTimeout::new_err(text),
        ErrorKind::Server { .. } => ServerError::new_err(text),
        ErrorKind::Protocol => ProtocolError::new_err(text),
        ErrorKind::Closed => SessionClosed::new_err(text),
        ErrorKind::InvalidArgument => PyValueError::new_err(text),
        ErrorKind::Internal => AgentOSError::new_err(text),
    };
    let value = err.value(py);
    // Attribute setting on a fresh exception instance cannot fail short of memory exhaustion;
    // if it does, the exception still carries the full message.
    let _ = value.setattr("session", e.session);
    let _ = value.setattr("url", &e.url);
    let _ = value.setattr("kind", kind_name);
    let _ = value.setattr("cause", &e.message);
    if let ErrorKind::Server { code } = &e.kind {
        let _ = value.setattr("code", code);
    }
    err
}

/// Serialise a Python value (dict / list / tuple / str / int / float / bool / None) to JSON.
fn to_json(obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<serde_json::Value> {
    use serde_json::Value;
    if depth > 64 {
        return Err(PyValueError::new_err("value nested deeper than 64 levels"));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.cast::<PyInt>().is_ok() {
        if let Ok(i) = obj.extract::<i64>() {
            return Ok(Value::from(i));
        }
        if let Ok(u) = obj.extract::<u64>() {
            return Ok(Value::from(u));
        }
        return Err(PyValueError::new_err("integer out of the 64-bit range"));
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return serde_json::Number::from_f64(f.value())
            .map(Value::Number)
            .ok_or_else(|| PyValueError::new_err("NaN and infinity are not valid JSON"));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = serde_json::Map::with_capacity(d.len());
        for (k, v) in d.iter() {
            let key = k
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("JSON object keys must be str"))?
                .to_str()?
                .to_owned();
            map.insert(key, to_json(&v, depth + 1)?);
        }
        return Ok(Value::Object(map));
    }
    if let Ok(l) = obj.cast::<PyList>() {
        return l
            .iter()
            .map(|v| to_json(&v, depth + 1))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        return t
            .iter()
            .map(|v| to_json(&v, depth + 1))
            .collect::<PyResult<_>>()
            .map(Value::Array);
    }
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    Err(PyTypeError::new_err(format!(
        "{type_name} is not JSON-serialisable (use dict/list/str/int/float/bool/None)"
    )))
}

/// A request body: a dict (serialised here) or a str that already holds a JSON object.
fn body(obj: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    match obj {
        None => Ok("{}".to_string()),
        Some(o) if o.is_none() => Ok("{}".to_string()),
        Some(o) => {
            if let Ok(s) = o.cast::<PyString>() {
                let text = s.to_str()?;
                let v: serde_json::Value = serde_json::from_str(text)
                    .map_err(|e| PyValueError::new_err(format!("not a JSON object: {e}")))?;
                if !v.is_object() {
                    return Err(PyValueError::new_err("request JSON must be an object"));
                }
                return Ok(text.to_owned());
            }
            let v = to_json(o, 0)?;
            if !v.is_object() {
                return Err(PyTypeError::new_err(
                    "request body must be a dict (or a JSON object string)",
                ));
            }
            Ok(v.to_string())
        }
    }
}

/// The server's reply to one request.
#[pyclass(frozen, module = "agent_os_runtime")]
pub struct Reply {
    /// Session the reply belongs to.
    #[pyo3(get)]
    session: u64,
    /// `"observation"` (reset, step) or `"state"`.
    #[pyo3(get)]
    kind: &'static str,
    /// The step's reward (None after reset and for state replies).
    #[pyo3(get)]
    reward: Option<f64>,
    /// Whether the episode has ended.
    #[pyo3(get)]
    done: bool,
    /// Raw JSON of the observation (reset, step) or of the state (state).
    #[pyo3(get)]
    data: String,
    /// Raw JSON of the observation reply's `metadata` (e.g. the terminal score), or None.
    #[pyo3(get)]
    metadata: Option<String>,
    /// Round-trip time of this request in seconds (excludes waiting for an in-flight slot).
    #[pyo3(get)]
    latency_s: f64,
}

#[pymethods]
impl Reply {
    /// Parse `data` into Python objects: the observation (or state) as a dict.
    fn json<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.import("json")?.call_method1("loads", (&self.data,))
    }

    /// The reply as OpenEnv's client payload: `{"observation", "reward", "done", "metadata"}`
    /// with the observation parsed (what `EnvClient._parse_result` receives).
    fn payload<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let json = py.import("json")?;
        let d = PyDict::new(py);
        d.set_item("observation", json.call_method1("loads", (&self.data,))?)?;
        d.set_item("reward", self.reward)?;
        d.set_item("done", self.done)?;
        match &self.metadata {
            Some(m) => d.set_item("metadata", json.call_method1("loads", (m,))?)?,
            None => d.set_item("metadata", PyDict::new(py))?,
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Reply(session={}, kind={:?}, reward={:?}, done={}, {} bytes)",
            self.session,
            self.kind,
            self.reward,
            self.done,
            self.data.len()
        )
    }
}

impl From<RustReply> for Reply {
    fn from(r: RustReply) -> Self {
        let p = r.parsed;
        Reply {
            session: r.session,
            kind: match p.kind {
                ReplyKind::Observation => "observation",
                ReplyKind::State => "state",
            },
            reward: p.reward,
            done: p.done,
            data: p.data,
            metadata: p.metadata,
            latency_s: r.latency.as_secs_f64(),
        }
    }
}

fn secs(name: &str, value: f64) -> PyResult<Duration> {
    if !(value.is_finite() && value > 0.0) {
        return Err(PyValueError::new_err(format!(
            "{name} must be a positive number of seconds"
        )));
    }
    Ok(Duration::from_secs_f64(value))
}

/// One I/O thread driving a current-thread Tokio runtime: every socket of every session is
/// serviced there, so a batch costs no cross-thread hand-offs, and idle sessions keep answering
/// keep-alive pings between calls.
struct Engine {
    handle: tokio::runtime::Handle,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Engine {
    fn start() -> std::io::Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let handle = rt.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("agent-os-runtime".into())
            .spawn(move || {
                rt.block_on(async {
                    let _ = stopped.await;
                });
                rt.shutdown_timeout(Duration::from_secs(2));
            })?;
        Ok(Engine {
            handle,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Many OpenEnv sessions driven concurrently from one Python process.
#[pyclass(module = "agent_os_runtime")]
pub struct Runtime {
    pool: Arc<Pool>,
    engine: Option<Engine>,
}

impl Runtime {
    /// Run a future on the I/O thread and wait for it with the GIL released. Ctrl-C is honoured
    /// within 100 ms (in-flight requests are abandoned; their sessions stay consistent). A panic
    /// inside becomes an `AgentOSError`.
    fn run<T, F>(&self, py: Python<'_>, fut: F) -> PyResult<T>
    where
        T: Send + 'static,
        F: std::future::Future<Output = T> + Send + 'static,
    {
        let engine = self
            .engine
            .as_ref()
            .ok_or_else(|| AgentOSError::new_err("runtime is shut down"))?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let task = engine.handle.spawn(async move {
            let _ = tx.send(fut.await);
        });
        let mut rx = rx;
        loop {
            let (waited, back) = py.detach(move || {
                let waited = rx.recv_timeout(Duration::from_millis(100));
                (waited, rx)
            });
            rx = back;
            match waited {
                Ok(value) => return Ok(value),
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(AgentOSError::new_err(
                        "internal error: the batch task ended without a result (it panicked \
                         or the runtime stopped)",
                    ));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    if let Err(e) = py.check_signals() {
                        task.abort();
                        return Err(e);
                    }
                }
            }
        }
    }

    fn batch(
        &self,
        py: Python<'_>,
        requests: Vec<(u64, Request)>,
        timeout_s: Option<f64>,
        return_exceptions: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let timeout = timeout_s.map(|t| secs("timeout_s", t)).transpose()?;
        let pool = self.pool.clone();
        let results = self.run(py, async move { pool.batch(requests, timeout).await })?;
        let mut out = Vec::with_capacity(results.len());
        for r in results {
            match r {
                Ok(reply) => out.push(Py::new(py, Reply::from(reply))?.into_any()),
                Err(e) => {
                    let err = session_err(py, &e);
                    if !return_exceptions {
                        return Err(err);
                    }
                    out.push(err.into_value(py).into_any());
                }
            }
        }
        Ok(out)
    }
}

fn seq_len(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<usize> {
    obj.len()
        .map_err(|_| PyTypeError::new_err(format!("{what} must be a sequence")))
}

#[pymethods]
impl Runtime {
    /// Create a runtime for one or more server URLs (replicas). Opens no session yet.
    #[new]
    #[pyo3(signature = (urls, *, timeout_s=60.0, connect_timeout_s=10.0, max_in_flight=64,
                        reconnect_attempts=3))]
    fn new(
        urls: &Bound<'_, PyAny>,
        timeout_s: f64,
        connect_timeout_s: f64,
        max_in_flight: usize,
        reconnect_attempts: u32,
    ) -> PyResult<Self> {
        let urls: Vec<String> = if let Ok(s) = urls.cast::<PyString>() {
            vec![s.to_str()?.to_owned()]
        } else {
            urls.extract()
                .map_err(|_| PyTypeError::new_err("urls must be a str or a sequence of str"))?
        };
        let cfg = PoolConfig {
            urls,
            call_timeout: secs("timeout_s", timeout_s)?,
            connect_timeout: secs("connect_timeout_s", connect_timeout_s)?,
            max_in_flight,
            reconnect_attempts,
        };
        let pool = Pool::new(cfg).map_err(PyValueError::new_err)?;
        let engine = Engine::start()
            .map_err(|e| AgentOSError::new_err(format!("cannot start the I/O thread: {e}")))?;
        Ok(Runtime {
            pool: Arc::new(pool),
            engine: Some(engine),
        })
    }

    /// Open `n` sessions, sharded round-robin across the URLs; returns their ids.
    fn open(&self, py: Python<'_>, n: usize) -> PyResult<Vec<u64>> {
        let pool = self.pool.clone();
        self.run(py, async move { pool.open(n).await })?
            .map_err(|e| session_err(py, &e))
    }

    /// Reset each listed session (concurrently); results in order.
    #[pyo3(signature = (sessions, options=None, *, timeout_s=None, return_exceptions=false))]
    fn reset(
        &self,
        py: Python<'_>,
        sessions: Vec<u64>,
        options: Option<&Bound<'_, PyAny>>,
        timeout_s: Option<f64>,
        return_exceptions: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let bodies: Vec<String> = match options {
            Some(o)
                if o.cast::<PyDict>().is_ok() || o.is_none() || o.cast::<PyString>().is_ok() =>
            {
                let b = body(Some(o))?;
                vec![b; sessions.len()]
            }
            None => vec!["{}".to_string(); sessions.len()],
            Some(seq) => {
                if seq_len(seq, "options")? != sessions.len() {
                    return Err(PyValueError::new_err(
                        "options must be one dict, or one per session",
                    ));
                }
                seq.try_iter()?
                    .map(|o| body(Some(&o?)))
                    .collect::<PyResult<_>>()?
            }
        };
        let requests = sessions
            .into_iter()
            .zip(bodies)
            .map(|(id, b)| (id, Request::Reset(b)))
            .collect();
        self.batch(py, requests, timeout_s, return_exceptions)
    }

    /// Step each listed session with its action (concurrently); results in order.
    #[pyo3(signature = (sessions, actions, *, timeout_s=None, return_exceptions=false))]
    fn step(
        &self,
        py: Python<'_>,
        sessions: Vec<u64>,
        actions: &Bound<'_, PyAny>,
        timeout_s: Option<f64>,
        return_exceptions: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        if actions.cast::<PyDict>().is_ok() || actions.cast::<PyString>().is_ok() {
            return Err(PyTypeError::new_err(
                "actions must be a sequence with one action per session",
            ));
        }
        if seq_len(actions, "actions")? != sessions.len() {
            return Err(PyValueError::new_err(format!(
                "{} sessions but {} actions",
                sessions.len(),
                seq_len(actions, "actions")?
            )));
        }
        let bodies: Vec<String> = actions
            .try_iter()?
            .map(|a| body(Some(&a?)))
            .collect::<PyResult<_>>()?;
        let requests = sessions
            .into_iter()
            .zip(bodies)
            .map(|(id, b)| (id, Request::Step(b)))
            .collect();
        self.batch(py, requests, timeout_s, return_exceptions)
    }

    /// Read each listed session's state (concurrently); `Reply.kind == "state"`.
    #[pyo3(signature = (sessions, *, timeout_s=None, return_exceptions=false))]
    fn state(
        &self,
        py: Python<'_>,
        sessions: Vec<u64>,
        timeout_s: Option<f64>,
        return_exceptions: bool,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let requests = sessions
            .into_iter()
            .map(|id| (id, Request::State))
            .collect();
        self.batch(py, requests, timeout_s, return_exceptions)
    }

    /// Close the listed sessions (all when None).
    #[pyo3(signature = (sessions=None))]
    fn close(&self, py: Python<'_>, sessions: Option<Vec<u64>>) -> PyResult<()> {
        if self.engine.is_none() {
            return Ok(());
        }
        let pool = self.pool.clone();
        let ids = sessions.unwrap_or_default();
        if ids.is_empty() && !pool.session_ids().is_empty() || !ids.is_empty() {
            self.run(py, async move { pool.close(&ids).await })?;
        }
        Ok(())
    }

    /// Close every session and stop the runtime's threads. Idempotent.
    fn shutdown(&mut self, py: Python<'_>) -> PyResult<()> {
        self.close(py, None)?;
        if let Some(mut engine) = self.engine.take() {
            py.detach(move || engine.stop());
        }
        Ok(())
    }

    /// Base URL a session is sharded to.
    fn url_of(&self, session: u64) -> PyResult<String> {
        self.pool
            .url_of(session)
            .ok_or_else(|| PyValueError::new_err(format!("no open session {session}")))
    }

    /// Ids of the open sessions, ascending.
    #[getter]
    fn sessions(&self) -> Vec<u64> {
        self.pool.session_ids()
    }

    /// The server URLs, as given.
    #[getter]
    fn urls(&self) -> Vec<String> {
        self.pool.config().urls.clone()
    }

    /// Counters: requests, errors, timeouts, reconnects, bytes sent/received, in-flight now/peak.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        use std::sync::atomic::Ordering::Relaxed;
        let s = &self.pool.stats;
        let d = PyDict::new(py);
        d.set_item("requests", s.requests.load(Relaxed))?;
        d.set_item("errors", s.errors.load(Relaxed))?;
        d.set_item("timeouts", s.timeouts.load(Relaxed))?;
        d.set_item("reconnects", s.reconnects.load(Relaxed))?;
        d.set_item("bytes_sent", s.bytes_sent.load(Relaxed))?;
        d.set_item("bytes_received", s.bytes_received.load(Relaxed))?;
        d.set_item("in_flight", s.in_flight.load(Relaxed))?;
        d.set_item("peak_in_flight", s.peak_in_flight.load(Relaxed))?;
        d.set_item("max_in_flight", self.pool.config().max_in_flight)?;
        Ok(d)
    }

    fn __len__(&self) -> usize {
        self.pool.session_ids().len()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&mut self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.shutdown(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!(
            "Runtime(urls={:?}, sessions={})",
            self.pool.config().urls,
            self.pool.session_ids().len()
        )
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(mut engine) = self.engine.take() {
            engine.stop();
        }
    }
}

#[pymodule]
pub mod agent_os_runtime {
    #[pymodule_export]
    use super::{
        AgentOSError, CallTimeout, ConnectError, ConnectionLost, ProtocolError, Reply, Runtime,
        ServerError, SessionClosed, SessionError,
    };

    #[pymodule_init]
    fn init(m: &pyo3::Bound<'_, pyo3::types::PyModule>) -> pyo3::PyResult<()> {
        use pyo3::types::PyModuleMethods;
        m.add("__version__", env!("CARGO_PKG_VERSION"))
    }
}
