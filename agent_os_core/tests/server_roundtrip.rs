//! The pool against the real Memex server (a `python -m memex.openenv_server` subprocess):
//! round trips on many sessions, typed errors, and a killed server.
//!
//! The interpreter is `$MEMEX_PYTHON`, else the repository's `.venv/bin/python`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use agent_os_runtime::client::{ErrorKind, Pool, PoolConfig, ReplyKind, Request};

struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn python() -> PathBuf {
    std::env::var_os("MEMEX_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python"))
}

fn healthy(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    if s.write_all(b"GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut head = [0u8; 16];
    matches!(s.read(&mut head), Ok(n) if n >= 12 && head[9..12] == *b"200")
}

fn start_server() -> Server {
    let python = python();
    assert!(
        python.exists(),
        "no Python at {python:?}: set MEMEX_PYTHON or run the project's set-up"
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let child = Command::new(&python)
        .args([
            "-m",
            "memex.openenv_server",
            "--host",
            "127.0.0.1",
            "--log-level",
            "warning",
        ])
        .args(["--port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the Memex server");
    let mut server = Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
    };
    let deadline = Instant::now() + Duration::from_secs(90);
    while !healthy(port) {
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("Memex server exited early: {status}");
        }
        assert!(
            Instant::now() < deadline,
            "Memex server not healthy within 90 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    server
}

fn pool(url: &str) -> Pool {
    Pool::new(PoolConfig {
        urls: vec![url.to_string()],
        call_timeout: Duration::from_secs(30),
        connect_timeout: Duration::from_secs(5),
        max_in_flight: 8,
        reconnect_attempts: 2,
    })
    .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn many_sessions_round_trip_then_a_killed_server_fails_cleanly() {
    let mut server = start_server();
    let pool = pool(&server.url);
    let ids = pool.open(12).await.expect("open 12 sessions");
    assert_eq!(ids.len(), 12);

    let resets = pool
        .batch(
            ids.iter()
                .map(|&id| {
                    (
                        id,
                        Request::Reset(format!(r#"{{"seed":{id},"difficulty":"easy"}}"#)),
                    )
                })
                .collect(),
            None,
        )
        .await;
    for (r, &id) in resets.iter().zip(&ids) {
        let r = r.as_ref().expect("reset");
        assert_eq!(r.session, id);
        assert_eq!(r.parsed.kind, ReplyKind::Observation);
        assert_eq!(r.parsed.reward, None);
        assert!(
            r.parsed.data.contains(r#""step":0"#),
            "reset observation is step 0"
        );
    }
    // Different seeds, different cases: the alerts differ.
    assert_ne!(
        resets[0].as_ref().unwrap().parsed.data,
        resets[1].as_ref().unwrap().parsed.data
    );

    let steps = pool
        .batch(
            ids.iter()
                .map(|&id| {
                    (
                        id,
                        Request::Step(r#"{"tool":"review_alert","arguments":{}}"#.into()),
                    )
                })
                .collect(),
            None,
        )
        .await;
    for r in &steps {
        let r = r.as_ref().expect("step");
        assert!(r.parsed.reward.is_some(), "a step carries its reward");
        assert!(!r.parsed.done);
        assert!(r.parsed.data.contains(r#""step":1"#));
    }

    // A bad action is the environment's typed error observation, not a transport error.
    let bad = pool
        .call(
            ids[0],
            Request::Step(r#"{"tool":"no_such_tool"}"#.into()),
            None,
        )
        .await;
    assert!(bad
        .expect("typed error observation")
        .parsed
        .data
        .contains("unknown_tool"));

    // state reflects the step taken.
    let state = pool
        .call(ids[1], Request::State, None)
        .await
        .expect("state");
    assert_eq!(state.parsed.kind, ReplyKind::State);
    assert!(state.parsed.data.contains(r#""step_count":1"#));

    // Kill the server: calls fail with ConnectionLost promptly, naming the session.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let started = Instant::now();
    let lost = pool
        .batch(ids.iter().map(|&id| (id, Request::State)).collect(), None)
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "no hang after the server died"
    );
    for (r, &id) in lost.iter().zip(&ids) {
        let e = r.as_ref().expect_err("server is gone");
        assert_eq!(e.kind, ErrorKind::ConnectionLost, "{e}");
        assert_eq!(e.session, Some(id));
        assert!(e.to_string().contains(&server.url));
    }
    // reset tries to reconnect and says why it could not.
    let e = pool
        .call(ids[0], Request::Reset("{}".into()), None)
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::ConnectionLost);
    assert!(e.message.contains("reconnecting failed"), "{e}");
    pool.close(&[]).await;
    assert!(pool.session_ids().is_empty());
}
