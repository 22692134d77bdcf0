//! `matchplane worker` stops within ten seconds of SIGTERM, as
//! docs/configuration.md says, also when Redis has stopped answering: each
//! lease release and its leave of the worker set used to wait for the
//! whole Redis response timeout (30 s), the length of Kubernetes' default
//! grace period, so the pod was killed at the deadline.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

#[path = "../api/tests/play/fault_proxy.rs"]
mod fault_proxy;

use fault_proxy::FaultProxy;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{database_url, redis_url, Proc, RedisPrefix, TestDatabase};

/// `host:port` of a `redis://[user:pass@]host:port[/db]` URL.
fn host_port(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_redis_stopped_answering_stops_within_ten_seconds() {
    let database = TestDatabase::create_named(
        &database_url(),
        &format!("mp_stops_{:08x}", rand::random::<u32>()),
    )
    .await;
    let upstream = redis_url();
    let proxy = FaultProxy::start(host_port(&upstream)).await;
    let db_index = upstream.rsplit_once('/').map_or("0", |(_, d)| d);
    let through = format!("redis://127.0.0.1:{}/{db_index}", proxy.port);
    let prefix = format!("mp-stops-{:08x}", rand::random::<u32>());
    let _keys = RedisPrefix {
        url: upstream.clone(),
        prefix: prefix.clone(),
    };
    let env = [
        ("DATABASE_URL", database.url().to_owned()),
        ("REDIS_URL", through),
        ("MATCHPLANE_REDIS_PREFIX", prefix),
        ("RUST_LOG", "info".to_owned()),
    ];
    let migrate = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .arg("migrate")
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .unwrap();
    assert!(migrate.status.success(), "{migrate:?}");
    let mut worker = Proc(
        Command::new(env!("CARGO_BIN_EXE_matchplane"))
            .arg("worker")
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert!(worker.0.try_wait().unwrap().is_none(), "the worker exited");
    // Redis stops answering (bytes held both ways), then SIGTERM.
    proxy.stall();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let asked = Instant::now();
    let kill = Command::new("kill")
        .args(["-TERM", &worker.0.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut status = None;
    while asked.elapsed() < Duration::from_secs(25) {
        if let Some(s) = worker.0.try_wait().unwrap() {
            status = Some(s);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let took = asked.elapsed();
    assert_eq!(status.and_then(|s| s.code()), Some(0), "{status:?}");
    // docs/configuration.md: within 10 seconds (before: 10.02 s here, 11 to
    // 12 s in a fault probe under load).
    assert!(took < Duration::from_secs(10), "stopped after {took:?}");
}
