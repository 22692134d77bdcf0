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

/// Every log line of a mode's loop names the mode's project as well as
/// the mode: two studios' modes of one name (`duel`) would otherwise be
/// told apart by nothing in a worker's warnings (docs/configuration.md,
/// on `RUST_LOG`).
#[tokio::test]
async fn a_mode_loops_lines_name_its_project() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let dir = std::env::temp_dir().join(format!("mp-logging-mode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("dev.db");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args(["dev", "--demo", "--listen", &format!("127.0.0.1:{port}")])
        .arg("--database-url")
        .arg(format!("sqlite://{}?mode=rwc", db.display()))
        .env("RUST_LOG", "info,matchplane_worker=debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // "demo: project prj_…, API key mp_sk_…"
    let demo = BufReader::new(child.stdout.take().unwrap())
        .lines()
        .map_while(Result::ok)
        .find(|l| l.starts_with("demo: project"))
        .expect("the demo line");
    let words: Vec<&str> = demo.split_whitespace().collect();
    let (project, key) = (words[2].trim_end_matches(','), words[5]);
    // One search, so that the demo's `duel` mode runs a cycle over it.
    let base = format!("http://127.0.0.1:{port}/v1");
    let client = reqwest::Client::new();
    let ticket: serde_json::Value = client
        .post(format!("{base}/projects/{project}/tickets"))
        .bearer_auth(key)
        .json(&serde_json::json!({"gameMode": "duel", "playerId": "ana", "attributes": {"mmr": 1500}}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = ticket["token"].as_str().expect("a ticket");
    let started = client
        .post(format!("{base}/searches"))
        .json(&serde_json::json!({"ticket": token}))
        .send()
        .await
        .unwrap();
    assert_eq!(started.status().as_u16(), 202);
    let stderr = child.stderr.take().unwrap();
    let cycle = tokio::task::spawn_blocking(move || {
        BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
            .find(|l| l.contains("matchplane_worker::mode_loop") && l.contains(" cycle "))
    });
    let cycle = tokio::time::timeout(std::time::Duration::from_secs(60), cycle).await;
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let cycle = cycle.expect("a cycle's log line within a minute").unwrap();
    let cycle = cycle.expect("a cycle's log line");
    assert!(cycle.contains(&format!("project_id={project}")), "{cycle}");
}

/// With `--log-format json`, the line that says why a command stopped is
/// a JSON log line too, as every line before it.
#[test]
fn a_fatal_error_is_a_json_line_with_json_logs() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://postgres@127.0.0.1:{port}/nothing");
    for command in [&["migrate", "--check"][..], &["migrate"]] {
        let output = Command::new(env!("CARGO_BIN_EXE_matchplane"))
            .args(["--log-format", "json"])
            .args(command)
            .args(["--database-url", &url])
            .env_remove("RUST_LOG")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let lines: Vec<serde_json::Value> = stderr
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: not JSON: {l}")))
            .collect();
        assert!(
            lines.iter().any(|l| l["level"] == "ERROR"
                && l["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("cannot connect to the database"))),
            "{stderr}"
        );
    }
}
