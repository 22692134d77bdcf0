//! Log lines written to a file or a pipe carry no terminal colour codes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

#[test]
fn logs_to_a_pipe_have_no_colour_codes() {
    let dir = std::env::temp_dir().join(format!("mp-logging-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("control.db");
    let output = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args(["migrate", "--database-url"])
        .arg(format!("sqlite://{}?mode=rwc", db.display()))
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("INFO"), "some log lines expected: {stderr}");
    assert!(!stderr.contains('\u{1b}'), "escape codes in: {stderr:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A first `dev` on a new database logs its migrations in one line, not
/// two per migration above the banner a newcomer reads.
#[test]
fn a_first_dev_run_logs_its_migrations_in_one_line() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = std::env::temp_dir().join(format!("mp-logging-dev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("dev.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args(["dev", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--database-url")
        .arg(format!("sqlite://{}?mode=rwc", db.display()))
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    for line in BufReader::new(child.stderr.take().unwrap())
        .lines()
        .map_while(Result::ok)
    {
        let done = line.contains("api listening");
        lines.push(line);
        if done {
            break;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let migrated: Vec<_> = lines.iter().filter(|l| l.contains("migrat")).collect();
    assert_eq!(migrated.len(), 1, "{lines:#?}");
    assert!(migrated[0].contains("database migrated"), "{lines:#?}");
}

/// `migrate` on an up-to-date PostgreSQL database says so in one line,
/// without PostgreSQL's notices that its migrations table exists already
/// (four `INFO sqlx::postgres::notice` lines before).
#[tokio::test]
async fn migrating_an_up_to_date_postgres_database_logs_no_notices() {
    let database = matchplane_store::test_support::TestDatabase::create("mp_log_").await;
    let migrate = || {
        Command::new(env!("CARGO_BIN_EXE_matchplane"))
            .args(["migrate", "--database-url", database.url()])
            .env_remove("RUST_LOG")
            .output()
            .unwrap()
    };
    assert!(migrate().status.success());
    let again = migrate();
    assert!(again.status.success(), "{again:?}");
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(!stderr.contains("notice"), "{stderr}");
    let stdout = String::from_utf8_lossy(&again.stdout);
    assert!(stdout.contains("up to date"), "{stdout}");
}
