//! `matchplane api` and `worker` whose standard error and output are a pipe
//! nobody reads any more (`… 2>&1 | head -2`): their log lines are lost, but
//! they keep serving and stop on SIGTERM with exit code 0, as
//! docs/configuration.md says. Each log write failing used to make
//! tracing's fmt layer `eprintln!` about it, and that `eprintln!` panicked
//! on the same closed pipe: the API exited 101 at its first line, and a
//! worker whose shutdown task panicked never stopped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};
use support::{database_url, free_port, redis_url, Proc, RedisPrefix, TestDatabase};

/// A migrated database of the test's own and a Redis prefix, as the
/// environment of `matchplane`.
struct Stores {
    env: Vec<(String, String)>,
    _keys: RedisPrefix,
    _database: TestDatabase,
}

async fn stores(name: &str) -> Stores {
    let database = TestDatabase::create_named(
        &database_url(),
        &format!("mp_{name}_{:08x}", rand::random::<u32>()),
    )
    .await;
    let prefix = format!("mp-{name}-{:08x}", rand::random::<u32>());
    let env = vec![
        ("DATABASE_URL".to_owned(), database.url().to_owned()),
        ("REDIS_URL".to_owned(), redis_url()),
        ("MATCHPLANE_REDIS_PREFIX".to_owned(), prefix.clone()),
        ("RUST_LOG".to_owned(), "info".to_owned()),
    ];
    let migrate = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .arg("migrate")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .unwrap();
    assert!(migrate.status.success(), "{migrate:?}");
    Stores {
        env,
        _keys: RedisPrefix {
            url: redis_url(),
            prefix,
        },
        _database: database,
    }
}

/// `matchplane <args>` with standard output and error pipes whose reading
/// ends are closed at once: every write gets `EPIPE`.
fn spawn_unread(args: &[&str], env: &[(String, String)]) -> Proc {
    let mut child = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .env_remove("MATCHPLANE_OPERATOR_TOKEN")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    drop(child.stderr.take());
    Proc(child)
}

/// Sends SIGTERM to `child` and waits at most `within` for it to exit.
fn terminate(child: &mut Child, within: Duration) -> Option<ExitStatus> {
    let kill = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let deadline = Instant::now() + within;
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[tokio::test]
async fn a_worker_whose_logs_go_nowhere_stops_on_sigterm() {
    let stores = stores("pipe_worker").await;
    let mut worker = spawn_unread(&["worker"], &stores.env);
    // Its start-up lines (persistence warning, start, lease epoch,
    // retention pass) are all written, and lost, within this.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(
        worker.0.try_wait().unwrap().is_none(),
        "the worker exited: {:?}",
        worker.0.try_wait()
    );
    let status = terminate(&mut worker.0, Duration::from_secs(15));
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "SIGTERM: {status:?}"
    );
}

#[tokio::test]
async fn an_api_whose_logs_go_nowhere_serves_and_stops_on_sigterm() {
    let stores = stores("pipe_api").await;
    let port = free_port();
    let mut env = stores.env.clone();
    env.push(("MATCHPLANE_LISTEN".into(), format!("127.0.0.1:{port}")));
    // Without an operator token its first line is a warning, at once.
    let mut api = spawn_unread(&["api"], &env);
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = api.0.try_wait().unwrap() {
            panic!("the API exited before serving: {status:?}");
        }
        let ready = http
            .get(format!("http://127.0.0.1:{port}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success());
        if ready {
            break;
        }
        assert!(Instant::now() < deadline, "the API never got ready");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let status = terminate(&mut api.0, Duration::from_secs(15));
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "SIGTERM: {status:?}"
    );
}
