//! The session pool: many OpenEnv WebSocket sessions (`/ws`) held open at once, sharded
//! round-robin across replica URLs, driven concurrently on a Tokio runtime.
//!
//! Protocol (OpenEnv's): the client sends `{"type":"reset","data":{...}}`,
//! `{"type":"step","data":{action}}`, `{"type":"state"}` or `{"type":"close"}`; the server
//! answers each request with exactly one text frame, `{"type":"observation","data":{...}}`,
//! `{"type":"state","data":{...}}` or `{"type":"error","data":{"message":..,"code":..}}`.
//!
//! Each session is an actor task that owns its socket. It sends one request at a time and pairs
//! it with the next text frame, so a caller that gives up (timeout, cancellation) never
//! desynchronises the session: the late reply is read and dropped. While idle the actor keeps
//! reading, so keep-alive pings are answered and a server that goes away is noticed at once.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot, Semaphore};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

const READ_BUFFER_BYTES: usize = 16 << 10;
const MAX_MESSAGE_BYTES: usize = 256 << 20;

/// Session identifier, unique within one [`Pool`].
pub type SessionId = u64;

/// What went wrong, for one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorKind {
    /// Could not open the WebSocket (refused, DNS, handshake, connect timeout).
    Connect,
    /// The connection dropped (server killed or restarted, network gone); the episode is lost.
    ConnectionLost,
    /// No reply within the call's timeout. The request may or may not have been applied.
    Timeout,
    /// The server answered with an error frame; `code` is its error code.
    Server { code: String },
    /// The server's reply is not the OpenEnv protocol.
    Protocol,
    /// The session was closed by this client, or never existed.
    Closed,
    /// The caller passed something unusable (unknown session, duplicate session in a batch).
    InvalidArgument,
    /// A bug: a task panicked. Reported, never propagated as a panic.
    Internal,
}

/// One failed call: which session, which server, what kind, and why.
#[derive(Debug, Clone)]
pub struct SessionError {
    pub session: Option<SessionId>,
    pub url: String,
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.session {
            Some(id) => write!(f, "session {id} ({}): {}", self.url, self.message),
            None => write!(f, "{}: {}", self.url, self.message),
        }
    }
}

impl std::error::Error for SessionError {}

/// Settings of a [`Pool`].
#[derive(Debug, Clone)]
pub struct PoolConfig {
    /// Server base URLs (`http://`, `ws://`); sessions are spread over them round-robin.
    pub urls: Vec<String>,
    /// Default limit for one request/reply round trip.
    pub call_timeout: Duration,
    /// Limit for opening one WebSocket (TCP + handshake + first round trip).
    pub connect_timeout: Duration,
    /// At most this many requests are on the wire at once to each server; further requests
    /// wait their turn (backpressure). OpenEnv runs each session's step on its own thread, so
    /// a flood of simultaneous requests makes those threads fight over the server's GIL.
    pub max_in_flight: usize,
    /// Attempts to re-open a lost connection when a `reset` needs it.
    pub reconnect_attempts: u32,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            urls: Vec::new(),
            call_timeout: Duration::from_secs(60),
            connect_timeout: Duration::from_secs(10),
            max_in_flight: 64,
            reconnect_attempts: 3,
        }
    }
}

/// Kind of a successful reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyKind {
    Observation,
    State,
}

/// A successful reply: the parsed frame, its session and its round-trip time.
#[derive(Debug, Clone)]
pub struct Reply {
    pub session: SessionId,
    pub parsed: Parsed,
    pub latency: Duration,
}

/// Counters since the pool was created.
#[derive(Debug, Default)]
pub struct Stats {
    pub requests: AtomicU64,
    pub errors: AtomicU64,
    pub timeouts: AtomicU64,
    pub reconnects: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub bytes_received: AtomicU64,
    pub in_flight: AtomicUsize,
    pub peak_in_flight: AtomicUsize,
}

/// A request as the caller builds it.
#[derive(Debug, Clone)]
pub enum Request {
    /// `reset` with these keyword arguments (a JSON object, serialised).
    Reset(String),
    /// `step` with this action (a JSON object, serialised).
    Step(String),
    State,
}

impl Request {
    fn frame(&self) -> String {
        match self {
            Request::Reset(data) => format!(r#"{{"type":"reset","data":{data}}}"#),
            Request::Step(data) => format!(r#"{{"type":"step","data":{data}}}"#),
            Request::State => r#"{"type":"state"}"#.to_string(),
        }
    }
}

type ActorReply = Result<String, (ErrorKind, String)>;

struct Command {
    frame: String,
    reply: oneshot::Sender<ActorReply>,
}

/// A live connection: the actor's inbox and the reason it died, once it has.
struct Link {
    tx: mpsc::UnboundedSender<Command>,
    lost: Arc<OnceLock<String>>,
}

struct Session {
    url: String,
    ws_url: String,
    /// Index of the session's server in the pool's URL list.
    shard: usize,
    link: Mutex<Option<Link>>,
}

/// Many OpenEnv sessions, sharded across replica servers.
pub struct Pool {
    cfg: PoolConfig,
    ws_urls: Vec<String>,
    sessions: Mutex<HashMap<SessionId, Arc<Session>>>,
    next_id: AtomicU64,
    next_url: AtomicUsize,
    /// One in-flight budget per server URL.
    permits: Vec<Arc<Semaphore>>,
    pub stats: Stats,
}

/// `http://h:p` → `ws://h:p/ws`; a `ws://` URL without a path gets `/ws`.
pub fn ws_url(base: &str) -> Result<String, String> {
    let base = base.trim().trim_end_matches('/');
    let (scheme, rest) = base
        .split_once("://")
        .ok_or_else(|| format!("{base:?} is not a URL (expected http://host:port)"))?;
    let scheme = match scheme {
        "http" | "ws" => "ws",
        "https" | "wss" => {
            return Err(format!(
                "{base:?}: TLS (https/wss) is not built into this runtime; \
                 reach the server over http/ws (e.g. through a local TLS-terminating proxy)"
            ))
        }
        other => return Err(format!("{base:?}: unsupported scheme {other:?}")),
    };
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("{base:?}: missing host"));
    }
    let has_path = rest.contains('/');
    Ok(if has_path {
        format!("{scheme}://{rest}")
    } else {
        format!("{scheme}://{rest}/ws")
    })
}

/// A reply frame, read in one pass when `type` precedes `data` (as OpenEnv writes it).
#[derive(Deserialize)]
#[serde(tag = "type", content = "data", rename_all = "lowercase")]
enum Frame<'a> {
    Observation(#[serde(borrow)] ObservationData<'a>),
    State(#[serde(borrow)] &'a RawValue),
    Error(ErrorData),
}

#[derive(Deserialize)]
struct ObservationData<'a> {
    #[serde(borrow)]
    observation: &'a RawValue,
    #[serde(default)]
    reward: Option<f64>,
    #[serde(default)]
    done: bool,
    #[serde(default, borrow)]
    metadata: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ErrorData {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    code: Option<serde_json::Value>,
}

/// A parsed reply frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub kind: ReplyKind,
    /// Raw JSON of the observation (observation replies) or of the state (state replies).
    pub data: String,
    /// Raw JSON of the observation reply's `metadata`, when present and not null.
    pub metadata: Option<String>,
    pub reward: Option<f64>,
    pub done: bool,
}

/// Parse one reply frame of the OpenEnv protocol. Server error frames become
/// `ErrorKind::Server` with the server's code.
pub fn parse_reply(text: &str) -> Result<Parsed, (ErrorKind, String)> {
    match serde_json::from_str::<Frame>(text) {
        Ok(frame) => from_frame(frame),
        Err(first) => {
            // Legal but unusual key order (`data` before `type`): reorder once and retry.
            if let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str(text) {
                if let (Some(kind), Some(data)) = (map.remove("type"), map.remove("data")) {
                    let reordered = format!(r#"{{"type":{kind},"data":{data}}}"#);
                    if let Ok(frame) = serde_json::from_str::<Frame>(&reordered) {
                        return from_frame(frame);
                    }
                }
            }
            let head: String = text.chars().take(200).collect();
            Err((
                ErrorKind::Protocol,
                format!("reply is not an OpenEnv message ({first}): {head}"),
            ))
        }
    }
}

fn from_frame(frame: Frame<'_>) -> Result<Parsed, (ErrorKind, String)> {
    Ok(match frame {
        Frame::Observation(d) => Parsed {
            kind: ReplyKind::Observation,
            data: d.observation.get().to_owned(),
            metadata: d
                .metadata
                .map(RawValue::get)
                .filter(|m| *m != "null")
                .map(str::to_owned),
            reward: d.reward,
            done: d.done,
        },
        Frame::State(d) => Parsed {
            kind: ReplyKind::State,
            data: d.get().to_owned(),
            metadata: None,
            reward: None,
            done: false,
        },
        Frame::Error(err) => {
            let code = match err.code {
                Some(serde_json::Value::String(s)) => s,
                Some(other) => other.to_string(),
                None => "UNKNOWN".to_string(),
            };
            let message = err
                .message
                .unwrap_or_else(|| "unspecified server error".into());
            return Err((
                ErrorKind::Server { code: code.clone() },
                format!("server error ({code}): {message}"),
            ));
        }
    })
}

fn describe_close(frame: Option<tokio_tungstenite::tungstenite::protocol::CloseFrame>) -> String {
    match frame {
        Some(f) if !f.reason.is_empty() => {
            format!(
                "server closed the connection (code {}, {})",
                u16::from(f.code),
                f.reason
            )
        }
        Some(f) => format!("server closed the connection (code {})", u16::from(f.code)),
        None => "server closed the connection".to_string(),
    }
}

/// Read frames until the next text frame (the reply), answering pings on the way.
async fn read_reply(ws: &mut Ws) -> ActorReply {
    loop {
        match ws.next().await {
            Some(Ok(Message::Text(t))) => return Ok(t.as_str().to_owned()),
            Some(Ok(Message::Binary(b))) => {
                return String::from_utf8(b.to_vec())
                    .map_err(|_| (ErrorKind::Protocol, "binary reply is not UTF-8".into()))
            }
            Some(Ok(Message::Close(frame))) => {
                return Err((ErrorKind::ConnectionLost, describe_close(frame)))
            }
            Some(Ok(_)) => {
                let _ = ws.flush().await; // pong queued by tungstenite
            }
            Some(Err(e)) => {
                return Err((ErrorKind::ConnectionLost, format!("connection error: {e}")))
            }
            None => {
                return Err((
                    ErrorKind::ConnectionLost,
                    "server closed the connection".into(),
                ))
            }
        }
    }
}

/// The session actor: owns the socket until the connection dies or the session is closed.
async fn actor(mut ws: Ws, mut rx: mpsc::UnboundedReceiver<Command>, lost: Arc<OnceLock<String>>) {
    let reason: String = loop {
        tokio::select! {
            biased;
            cmd = rx.recv() => {
                let Some(cmd) = cmd else {
                    // Every handle dropped: close politely, as OpenEnv's client does.
                    let _ = ws.send(Message::Text(r#"{"type":"close"}"#.into())).await;
                    let _ = ws.close(None).await;
                    break "session closed by the client".to_string();
                };
                if cmd.reply.is_closed() {
                    continue; // the caller gave up before the request was sent: don't apply it
                }
                if let Err(e) = ws.send(Message::Text(cmd.frame.into())).await {
                    let why = format!("send failed: {e}");
                    let _ = cmd.reply.send(Err((ErrorKind::ConnectionLost, why.clone())));
                    break why;
                }
                match read_reply(&mut ws).await {
                    Ok(text) => { let _ = cmd.reply.send(Ok(text)); }
                    Err((kind, why)) => {
                        let _ = cmd.reply.send(Err((kind, why.clone())));
                        break why;
                    }
                }
            }
            msg = ws.next() => match msg {
                Some(Ok(Message::Text(t))) => {
                    // Unsolicited: OpenEnv sends an error frame (e.g. at capacity) and closes.
                    break match parse_reply(t.as_str()) {
                        Err((_, why)) => why,
                        Ok(_) => "unexpected unsolicited message from the server".into(),
                    };
                }
                Some(Ok(Message::Close(frame))) => break describe_close(frame),
                Some(Ok(_)) => { let _ = ws.flush().await; }
                Some(Err(e)) => break format!("connection error: {e}"),
                None => break "server closed the connection".to_string(),
            },
        }
    };
    let _ = lost.set(reason.clone());
    rx.close();
    while let Ok(cmd) = rx.try_recv() {
        let _ = cmd
            .reply
            .send(Err((ErrorKind::ConnectionLost, reason.clone())));
    }
}

struct InFlight<'a>(&'a Stats);

impl<'a> InFlight<'a> {
    fn enter(stats: &'a Stats) -> Self {
        let now = stats.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        stats.peak_in_flight.fetch_max(now, Ordering::Relaxed);
        InFlight(stats)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Pool {
    /// A pool for these servers. Opens nothing yet.
    pub fn new(cfg: PoolConfig) -> Result<Self, String> {
        if cfg.urls.is_empty() {
            return Err("at least one server URL is required".into());
        }
        if cfg.max_in_flight == 0 {
            return Err("max_in_flight must be at least 1".into());
        }
        let ws_urls = cfg
            .urls
            .iter()
            .map(|u| ws_url(u))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self {
            permits: (0..cfg.urls.len())
                .map(|_| Arc::new(Semaphore::new(cfg.max_in_flight)))
                .collect(),
            cfg,
            ws_urls,
            sessions: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            next_url: AtomicUsize::new(0),
            stats: Stats::default(),
        })
    }

    pub fn config(&self) -> &PoolConfig {
        &self.cfg
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Arc<Session>>> {
        // A panic while holding this lock cannot leave the map inconsistent (single inserts
        // and removes), so a poisoned lock is safe to keep using.
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ids of the open sessions, ascending.
    pub fn session_ids(&self) -> Vec<SessionId> {
        let mut ids: Vec<_> = self.sessions().keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Base URL a session is sharded to.
    pub fn url_of(&self, id: SessionId) -> Option<String> {
        self.sessions().get(&id).map(|s| s.url.clone())
    }

    fn session(&self, id: SessionId) -> Result<Arc<Session>, SessionError> {
        self.sessions()
            .get(&id)
            .cloned()
            .ok_or_else(|| SessionError {
                session: Some(id),
                url: String::new(),
                kind: ErrorKind::Closed,
                message: "no such session (never opened, or closed)".into(),
            })
    }

    async fn connect(&self, ws_url: &str) -> Result<Link, (ErrorKind, String)> {
        // tungstenite zero-fills `read_buffer_size` bytes on every read attempt; its 128 KiB
        // default made that memset the largest CPU cost per step. Replies are ~2-20 KiB.
        let config = WebSocketConfig::default()
            .read_buffer_size(READ_BUFFER_BYTES)
            .max_message_size(Some(MAX_MESSAGE_BYTES))
            .max_frame_size(Some(MAX_MESSAGE_BYTES));
        let fut = tokio_tungstenite::connect_async_with_config(ws_url, Some(config), true);
        let (ws, _) = match tokio::time::timeout(self.cfg.connect_timeout, fut).await {
            Err(_) => {
                return Err((
                    ErrorKind::Connect,
                    format!(
                        "connect timed out after {:.1}s",
                        self.cfg.connect_timeout.as_secs_f64()
                    ),
                ))
            }
            Ok(Err(e)) => return Err((ErrorKind::Connect, format!("cannot connect: {e}"))),
            Ok(Ok(pair)) => pair,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let lost = Arc::new(OnceLock::new());
        tokio::spawn(actor(ws, rx, lost.clone()));
        Ok(Link { tx, lost })
    }

    /// Open `n` sessions, sharded round-robin over the URLs, concurrently. Each is checked with
    /// a `state` round trip, so a server at capacity is reported here. All or nothing: on any
    /// failure the sessions opened by this call are closed and the first error is returned.
    pub async fn open(&self, n: usize) -> Result<Vec<SessionId>, SessionError> {
        let plans: Vec<(SessionId, usize)> = (0..n)
            .map(|_| {
                let id = self.next_id.fetch_add(1, Ordering::Relaxed);
                let url = self.next_url.fetch_add(1, Ordering::Relaxed) % self.ws_urls.len();
                (id, url)
            })
            .collect();
        let opened = futures_util::future::join_all(plans.iter().map(|&(id, u)| async move {
            let _permit = self.permits[u].acquire().await;
            let session = Arc::new(Session {
                url: self.cfg.urls[u].clone(),
                ws_url: self.ws_urls[u].clone(),
                shard: u,
                link: Mutex::new(None),
            });
            let link = self
                .connect(&session.ws_url)
                .await
                .map_err(|(kind, message)| SessionError {
                    session: Some(id),
                    url: session.url.clone(),
                    kind,
                    message,
                })?;
            *session.link.lock().unwrap_or_else(|p| p.into_inner()) = Some(link);
            self.sessions().insert(id, session);
            Ok::<_, SessionError>(id)
        }))
        .await;
        let mut ids = Vec::with_capacity(n);
        let mut first_err = None;
        for r in opened {
            match r {
                Ok(id) => ids.push(id),
                Err(e) => first_err = first_err.or(Some(e)),
            }
        }
        if first_err.is_none() {
            let checks = self
                .batch(ids.iter().map(|&id| (id, Request::State)).collect(), None)
                .await;
            first_err = checks.into_iter().find_map(Result::err);
        }
        if let Some(mut e) = first_err {
            let failed = n - ids.len();
            self.close(&ids).await;
            if failed > 1 {
                e.message = format!("{} ({failed} of {n} sessions failed to open)", e.message);
            }
            return Err(e);
        }
        Ok(ids)
    }

    /// Take the live link of a session; for `reset`, re-open a lost connection first.
    async fn live_link(
        &self,
        id: SessionId,
        session: &Session,
        reconnect: bool,
    ) -> Result<(mpsc::UnboundedSender<Command>, Arc<OnceLock<String>>), SessionError> {
        let err = |kind, message| SessionError {
            session: Some(id),
            url: session.url.clone(),
            kind,
            message,
        };
        let lost_reason = {
            let guard = session.link.lock().unwrap_or_else(|p| p.into_inner());
            match guard.as_ref() {
                None => return Err(err(ErrorKind::Closed, "session is closed".into())),
                Some(link) => match link.lost.get() {
                    None if !link.tx.is_closed() => {
                        return Ok((link.tx.clone(), link.lost.clone()))
                    }
                    None => "session task ended".to_string(),
                    Some(why) => why.clone(),
                },
            }
        };
        if !reconnect {
            return Err(err(
                ErrorKind::ConnectionLost,
                format!(
                    "connection lost earlier ({lost_reason}); its episode is gone — \
                 call reset() to reconnect and start a new episode"
                ),
            ));
        }
        let mut last = String::new();
        for attempt in 0..self.cfg.reconnect_attempts.max(1) {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(100 << attempt.min(5))).await;
            }
            match self.connect(&session.ws_url).await {
                Ok(link) => {
                    let out = (link.tx.clone(), link.lost.clone());
                    let mut guard = session.link.lock().unwrap_or_else(|p| p.into_inner());
                    if guard.is_none() {
                        return Err(err(ErrorKind::Closed, "session was closed".into()));
                    }
                    *guard = Some(link);
                    self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
                    return Ok(out);
                }
                Err((_, why)) => last = why,
            }
        }
        Err(err(
            ErrorKind::ConnectionLost,
            format!(
            "connection lost ({lost_reason}) and reconnecting failed after {} attempt(s): {last}",
            self.cfg.reconnect_attempts.max(1)),
        ))
    }

    /// One request/reply round trip on one session.
    pub async fn call(
        &self,
        id: SessionId,
        request: Request,
        timeout: Option<Duration>,
    ) -> Result<Reply, SessionError> {
        let session = self.session(id)?;
        let err = |kind, message| SessionError {
            session: Some(id),
            url: session.url.clone(),
            kind,
            message,
        };
        let _permit = self.permits[session.shard]
            .acquire()
            .await
            .map_err(|_| err(ErrorKind::Closed, "runtime is shutting down".into()))?;
        let (tx, lost) = self
            .live_link(id, &session, matches!(request, Request::Reset(_)))
            .await?;
        let _in_flight = InFlight::enter(&self.stats);
        let frame = request.frame();
        let sent = frame.len() as u64;
        let (reply_tx, reply_rx) = oneshot::channel();
        let started = Instant::now();
        self.stats.requests.fetch_add(1, Ordering::Relaxed);
        let result = if tx
            .send(Command {
                frame,
                reply: reply_tx,
            })
            .is_err()
        {
            Err((
                ErrorKind::ConnectionLost,
                lost.get()
                    .cloned()
                    .unwrap_or_else(|| "session task ended".into()),
            ))
        } else {
            self.stats.bytes_sent.fetch_add(sent, Ordering::Relaxed);
            let limit = timeout.unwrap_or(self.cfg.call_timeout);
            match tokio::time::timeout(limit, reply_rx).await {
                Err(_) => {
                    self.stats.timeouts.fetch_add(1, Ordering::Relaxed);
                    Err((
                        ErrorKind::Timeout,
                        format!(
                        "no reply within {:.3}s (the request may still be applied; the session \
                         stays usable and discards the late reply)", limit.as_secs_f64()),
                    ))
                }
                Ok(Err(_)) => Err((
                    ErrorKind::ConnectionLost,
                    lost.get()
                        .cloned()
                        .unwrap_or_else(|| "session task ended".into()),
                )),
                Ok(Ok(r)) => r,
            }
        };
        let result = result.and_then(|text| {
            self.stats
                .bytes_received
                .fetch_add(text.len() as u64, Ordering::Relaxed);
            parse_reply(&text)
        });
        match result {
            Ok(parsed) => Ok(Reply {
                session: id,
                parsed,
                latency: started.elapsed(),
            }),
            Err((kind, message)) => {
                self.stats.errors.fetch_add(1, Ordering::Relaxed);
                let message = if kind == ErrorKind::ConnectionLost {
                    format!(
                        "connection lost: {message}; the episode on it is gone — \
                             call reset() to reconnect and start a new episode"
                    )
                } else {
                    message
                };
                Err(err(kind, message))
            }
        }
    }

    /// Run one request per listed session concurrently; results in the order given. A session
    /// may appear at most once per batch.
    pub async fn batch(
        &self,
        requests: Vec<(SessionId, Request)>,
        timeout: Option<Duration>,
    ) -> Vec<Result<Reply, SessionError>> {
        let mut seen = std::collections::HashSet::with_capacity(requests.len());
        let dup: Vec<bool> = requests.iter().map(|(id, _)| !seen.insert(*id)).collect();
        futures_util::future::join_all(requests.into_iter().zip(dup).map(
            |((id, req), dup)| async move {
                if dup {
                    return Err(SessionError {
                        session: Some(id),
                        url: self.url_of(id).unwrap_or_default(),
                        kind: ErrorKind::InvalidArgument,
                        message: "session listed twice in one batch (a session runs one request \
                              at a time)"
                            .into(),
                    });
                }
                self.call(id, req, timeout).await
            },
        ))
        .await
    }

    /// Close sessions (all when `ids` is empty): sends OpenEnv's `close` and drops the socket.
    pub async fn close(&self, ids: &[SessionId]) {
        let removed: Vec<Arc<Session>> = {
            let mut map = self.sessions();
            if ids.is_empty() {
                map.drain().map(|(_, s)| s).collect()
            } else {
                ids.iter().filter_map(|id| map.remove(id)).collect()
            }
        };
        for s in removed {
            // Dropping the last sender makes the actor send `close` and shut the socket.
            s.link.lock().unwrap_or_else(|p| p.into_inner()).take();
        }
        tokio::task::yield_now().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_urls_become_ws_endpoints() {
        assert_eq!(
            ws_url("http://127.0.0.1:8000").unwrap(),
            "ws://127.0.0.1:8000/ws"
        );
        assert_eq!(ws_url("http://h:1/").unwrap(), "ws://h:1/ws");
        assert_eq!(ws_url("ws://h:1").unwrap(), "ws://h:1/ws");
        assert_eq!(ws_url("ws://h:1/custom").unwrap(), "ws://h:1/custom");
        assert!(ws_url("https://h").unwrap_err().contains("TLS"));
        assert!(ws_url("h:1").is_err());
        assert!(ws_url("ftp://h").is_err());
    }

    #[test]
    fn observation_reply_reads_reward_and_done_and_keeps_data_raw() {
        let text = r#"{"type":"observation","data":{"observation":{"step":3,"x":[1,2]},"reward":-0.01,"done":true,"metadata":{"terminal":{"score":0.5}}}}"#;
        let p = parse_reply(text).unwrap();
        assert_eq!(p.kind, ReplyKind::Observation);
        assert_eq!(p.reward, Some(-0.01));
        assert!(p.done);
        assert_eq!(p.data, r#"{"step":3,"x":[1,2]}"#);
        assert_eq!(p.metadata.as_deref(), Some(r#"{"terminal":{"score":0.5}}"#));
    }

    #[test]
    fn reset_reply_without_reward_is_none() {
        let p = parse_reply(
            r#"{"type":"observation","data":{"observation":{},"reward":null,"done":false}}"#,
        )
        .unwrap();
        assert_eq!(p.reward, None);
        assert!(!p.done);
        assert_eq!(p.metadata, None);
    }

    #[test]
    fn error_frames_become_server_errors_with_code() {
        let err = parse_reply(
            r#"{"type":"error","data":{"message":"Server at capacity","code":"CAPACITY_REACHED"}}"#,
        )
        .unwrap_err();
        assert_eq!(
            err.0,
            ErrorKind::Server {
                code: "CAPACITY_REACHED".into()
            }
        );
        assert!(err.1.contains("Server at capacity"));
    }

    #[test]
    fn data_before_type_is_still_understood() {
        let p = parse_reply(r#"{"data":{"step_count":4},"type":"state"}"#).unwrap();
        assert_eq!(p.kind, ReplyKind::State);
        assert_eq!(p.data, r#"{"step_count":4}"#);
    }

    #[test]
    fn garbage_is_a_protocol_error() {
        assert_eq!(parse_reply("not json").unwrap_err().0, ErrorKind::Protocol);
        assert_eq!(
            parse_reply(r#"{"type":"mystery","data":{}}"#)
                .unwrap_err()
                .0,
            ErrorKind::Protocol
        );
    }

    #[test]
    fn frames_follow_the_openenv_message_shapes() {
        assert_eq!(
            Request::Reset(r#"{"seed":1}"#.into()).frame(),
            r#"{"type":"reset","data":{"seed":1}}"#
        );
        assert_eq!(Request::State.frame(), r#"{"type":"state"}"#);
    }

    #[tokio::test]
    async fn refused_connection_is_a_connect_error_not_a_hang() {
        // Bind then drop a listener to get a port nobody listens on.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let pool = Pool::new(PoolConfig {
            urls: vec![format!("http://127.0.0.1:{port}")],
            connect_timeout: Duration::from_secs(2),
            ..PoolConfig::default()
        })
        .unwrap();
        let err = pool.open(2).await.unwrap_err();
        assert_eq!(err.kind, ErrorKind::Connect);
        assert!(pool.session_ids().is_empty());
    }

    #[test]
    fn pool_rejects_empty_urls_and_zero_in_flight() {
        assert!(Pool::new(PoolConfig::default()).is_err());
        let cfg = PoolConfig {
            urls: vec!["http://h:1".into()],
            max_in_flight: 0,
            ..Default::default()
        };
        assert!(Pool::new(cfg).is_err());
    }
}
