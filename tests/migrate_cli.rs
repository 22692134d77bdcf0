//! `matchplane migrate` as a pre-flight check: a database out of reach is
//! an error within seconds, not after sqlx's 30-second default.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::{Duration, Instant};

/// A PostgreSQL URL on a port nothing listens on.
fn refusing_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("postgres://postgres@127.0.0.1:{port}/nothing")
}

#[test]
fn migrate_check_against_a_database_out_of_reach_fails_fast() {
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args(["migrate", "--check", "--database-url", &refusing_url()])
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot connect to the database"),
        "{stderr}"
    );
    // Its connection timeouts (3 s each), with room for a loaded machine;
    // sqlx's default took 30 s.
    assert!(took < Duration::from_secs(15), "failed after {took:?}");
}
