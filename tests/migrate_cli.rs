//! `matchplane migrate` as a pre-flight check: a database out of reach is
//! an error within seconds, not after sqlx's 30-second default; a database
//! a newer version migrated is refused by name, and `api` and `worker`
//! warn of it at start.
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

/// `migrate --check` changes nothing: on an SQLite file that is not there
/// it fails (exit 1) and leaves no file behind; `migrate` creates it.
#[test]
fn migrate_check_creates_no_sqlite_file() {
    let dir = std::env::temp_dir().join(format!("mp-migrate-check-{:08x}", rand::random::<u32>()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("absent.db");
    let url = format!("sqlite://{}", file.display());
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_matchplane"))
            .args(args)
            .args(["--database-url", &url])
            .output()
            .unwrap()
    };
    let checked = run(&["migrate", "--check"]);
    assert_eq!(checked.status.code(), Some(1), "{checked:?}");
    assert!(!file.exists(), "--check created {}", file.display());
    let migrated = run(&["migrate"]);
    assert!(migrated.status.success(), "{migrated:?}");
    let checked = run(&["migrate", "--check"]);
    assert!(checked.status.success(), "{checked:?}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A version no build of matchplane has: the mark a newer version's
/// migration leaves.
const FUTURE: &str = "m29990101_000001_future";

/// A migrated database of the test's own, with [`FUTURE`] recorded as
/// applied: the schema of a newer version, under an older binary.
async fn newer_schema() -> matchplane_store::test_support::TestDatabase {
    use sea_orm::ConnectionTrait;
    let database = matchplane_store::test_support::TestDatabase::create("mp_newer_").await;
    let migrate = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args(["migrate", "--database-url", database.url()])
        .output()
        .unwrap();
    assert!(migrate.status.success(), "{migrate:?}");
    let db = database.connect().await;
    db.execute_unprepared(&format!(
        "INSERT INTO seaql_migrations (version, applied_at) VALUES ('{FUTURE}', 0)"
    ))
    .await
    .unwrap();
    db.close().await.unwrap();
    database
}

/// `migrate --check` on a database a newer version migrated fails, naming
/// the migration it does not know, as `migrate` itself does: a rolled-back
/// binary is told the schema is newer, not "0 migration(s) pending".
#[tokio::test]
async fn migrate_check_refuses_a_database_with_migrations_it_does_not_know() {
    let database = newer_schema().await;
    for args in [vec!["migrate", "--check"], vec!["migrate"]] {
        let output = Command::new(env!("CARGO_BIN_EXE_matchplane"))
            .args(&args)
            .args(["--database-url", database.url()])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{args:?}: {output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(FUTURE), "{args:?}: {stderr}");
        assert!(stderr.contains("does not know"), "{args:?}: {stderr}");
    }
}

/// The lines `matchplane <command>` writes to standard error until one
/// contains `until` (or 60 s pass); the process is killed then.
fn stderr_until(command: &str, env: &[(&str, String)], until: &str) -> Vec<String> {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .arg(command)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (send, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if send.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while let Ok(line) = lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        let done = line.contains(until);
        seen.push(line);
        if done {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    seen
}

/// `api` and `worker` on a database a newer version migrated start (the
/// older replicas of a rolling upgrade keep running), but say at start
/// which migrations they do not know.
#[tokio::test]
async fn api_and_worker_warn_of_migrations_they_do_not_know() {
    let database = newer_schema().await;
    let redis = matchplane_store::test_support::redis_url();
    let prefix = format!("mp-newer-{:08x}", rand::random::<u32>());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let env = [
        ("DATABASE_URL", database.url().to_owned()),
        ("REDIS_URL", redis.clone()),
        ("MATCHPLANE_REDIS_PREFIX", prefix.clone()),
        ("MATCHPLANE_OPERATOR_TOKEN", "t".to_owned()),
        ("MATCHPLANE_LISTEN", format!("127.0.0.1:{port}")),
    ];
    for (command, started) in [("api", "api listening"), ("worker", "worker starting")] {
        let lines = stderr_until(command, &env, started);
        assert!(
            lines.last().is_some_and(|l| l.contains(started)),
            "{command} did not start: {lines:#?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.contains("WARN") && l.contains(FUTURE) && l.contains("does not know")),
            "{command}: {lines:#?}"
        );
    }
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis, &prefix);
}

/// A connection URL the driver cannot parse is quoted in the error with
/// its password masked, by every command that connects.
#[test]
fn a_malformed_database_url_never_shows_its_password() {
    // A port typo, and a scheme typo on a port nothing listens on: neither
    // connects anywhere.
    let unparsable = "postgres://probeuser:S3cr3tPW@127.0.0.1:notaport/db".to_owned();
    let no_driver =
        refusing_url().replace("postgres://postgres@", "postgress://probeuser:S3cr3tPW@");
    for url in [unparsable.as_str(), no_driver.as_str()] {
        for command in [
            &["migrate", "--check"][..],
            &["migrate"],
            &["worker"],
            &["api"],
        ] {
            let output = Command::new(env!("CARGO_BIN_EXE_matchplane"))
                .args(command)
                .args(["--database-url", url])
                .env("REDIS_URL", "redis://127.0.0.1:1")
                .env("MATCHPLANE_OPERATOR_TOKEN", "operator-token-for-this-test")
                .output()
                .unwrap();
            let all = format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            );
            assert_ne!(output.status.code(), Some(0), "{command:?} {url}: {all}");
            assert!(!all.contains("S3cr3tPW"), "{command:?} {url}: {all}");
            assert!(all.contains("probeuser:***@"), "{command:?} {url}: {all}");
        }
    }
}
