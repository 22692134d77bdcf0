//! `matchplane dev --demo` run twice on one database keeps one demo project;
//! its key is `admin`, so README's quickstart (replace a mode, rotate its
//! secret) works with it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const OPERATOR: &str = "dev-demo-test-operator";

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `dev --demo` and waits for its demo line; returns the child and
/// the line.
fn dev_with_demo(db: &str, port: u16) -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args(["dev", "--demo", "--listen", &format!("127.0.0.1:{port}")])
        .args(["--database-url", db, "--operator-token", OPERATOR])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if line.starts_with("demo: project") || line.starts_with("warning") {
                let _ = tx.send(line);
            }
        }
    });
    let line = rx.recv_timeout(Duration::from_secs(60));
    assert!(
        line.as_ref().is_ok_and(|l| l.starts_with("demo: project")),
        "{line:?}"
    );
    (child, line.unwrap())
}

#[tokio::test]
async fn a_second_demo_run_reuses_the_demo_project() {
    let dir = std::env::temp_dir().join(format!("mp-dev-demo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.join("dev.db").display());
    for _ in 0..2 {
        let port = free_port();
        let (mut child, _) = dev_with_demo(&db, port);
        let projects: serde_json::Value = reqwest::Client::new()
            .get(format!("http://127.0.0.1:{port}/v1/projects"))
            .bearer_auth(OPERATOR)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let demos = projects
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["name"] == "demo")
            .count();
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(demos, 1, "{projects}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn the_demo_key_is_admin_and_runs_the_quickstart() {
    let dir = std::env::temp_dir().join(format!("mp-dev-demo-admin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.join("dev.db").display());
    let port = free_port();
    let (mut child, line) = dev_with_demo(&db, port);
    // "demo: project prj_…, API key mp_sk_…"
    let project = line
        .split_whitespace()
        .nth(2)
        .unwrap()
        .trim_end_matches(',');
    let key = line.split_whitespace().nth(5).unwrap();
    let base = format!("http://127.0.0.1:{port}/v1/projects/{project}");
    let client = reqwest::Client::new();
    let put = client
        .put(format!("{base}/game-modes/duel"))
        .bearer_auth(key)
        .json(&serde_json::json!({
            "name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                          "baseTolerance": 5, "expansionMultiplier": 2},
            "ratings": {"enabled": true},
            "webhook": {"url": "http://127.0.0.1:9000/hook"}}))
        .send()
        .await
        .unwrap();
    let put_status = put.status();
    let put_body = put.text().await.unwrap();
    let rotate = client
        .post(format!("{base}/game-modes/duel/webhook/rotate-secret"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .status();
    let keys: serde_json::Value = client
        .get(format!("{base}/keys"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(put_status, 200, "{put_body}");
    assert_eq!(rotate, 200);
    let demo = keys
        .as_array()
        .unwrap()
        .iter()
        .find(|k| key.starts_with(k["prefix"].as_str().unwrap()))
        .unwrap();
    assert_eq!(demo["scopes"], serde_json::json!(["admin"]), "{keys}");
}

/// The project and key of a demo line ("demo: project prj_…, API key …").
fn demo_of(line: &str) -> (String, String) {
    let project = line
        .split_whitespace()
        .nth(2)
        .unwrap()
        .trim_end_matches(',');
    let key = line.split_whitespace().nth(5).unwrap();
    (project.to_owned(), key.to_owned())
}

/// A SQLite database file of this test's own under the temporary
/// directory: (its directory, its URL).
fn own_database(name: &str) -> (std::path::PathBuf, String) {
    let dir = std::env::temp_dir().join(format!("mp-dev-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = format!("sqlite://{}?mode=rwc", dir.join("dev.db").display());
    (dir, db)
}

/// Puts `mode` (its config) and starts a REST search of `ana` and `bo`
/// in it (MMR 1500 each), on the server of `base` (`…/v1`).
async fn two_searching(
    client: &reqwest::Client,
    base: &str,
    (project, key): (&str, &str),
    mode: serde_json::Value,
) {
    let name = mode["name"].as_str().unwrap().to_owned();
    let put = client
        .put(format!("{base}/projects/{project}/game-modes/{name}"))
        .bearer_auth(key)
        .json(&mode)
        .send()
        .await
        .unwrap();
    assert!(put.status().is_success(), "{}", put.text().await.unwrap());
    for player in ["ana", "bo"] {
        let ticket: serde_json::Value = client
            .post(format!("{base}/projects/{project}/tickets"))
            .bearer_auth(key)
            .json(&serde_json::json!({"gameMode": name, "playerId": player,
                "attributes": {"mmr": 1500}}))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let started = client
            .post(format!("{base}/searches"))
            .json(&serde_json::json!({"ticket": ticket["token"]}))
            .send()
            .await
            .unwrap();
        assert_eq!(started.status(), 202);
    }
}

/// The JSON `url` answers `key`.
async fn get_json(client: &reqwest::Client, url: String, key: &str) -> serde_json::Value {
    client
        .get(url)
        .bearer_auth(key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// `dev` restarted on one database (in-process pools): the first run's open
/// proposal, whose pool went with it, is stored as cancelled rather than
/// `proposed` for ever, and the demo keeps one live key (the earlier run's
/// is revoked).
#[tokio::test]
async fn a_restart_cancels_the_lost_proposals_and_keeps_one_demo_key() {
    let (dir, db) = own_database("restart");
    let client = reqwest::Client::new();
    let port = free_port();
    let (mut child, line) = dev_with_demo(&db, port);
    let (project, key) = demo_of(&line);
    let base = format!("http://127.0.0.1:{port}/v1");
    let duel = serde_json::json!({
        "name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                      "baseTolerance": 5, "expansionMultiplier": 2},
        "acceptance": {"timeoutSeconds": 600}});
    two_searching(&client, &base, (&project, &key), duel).await;
    let matches = |port: u16, key: String, project: String| {
        let client = client.clone();
        async move {
            let url = format!("http://127.0.0.1:{port}/v1/projects/{project}/matches");
            get_json(&client, url, &key).await
        }
    };
    let mut proposed = false;
    for _ in 0..100 {
        let page = matches(port, key.clone(), project.clone()).await;
        if page.to_string().contains("\"proposed\"") {
            proposed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(proposed, "a proposal was stored");

    let port = free_port();
    let (mut child, line) = dev_with_demo(&db, port);
    let (_, key) = demo_of(&line);
    let page = matches(port, key.clone(), project.clone()).await;
    let url = format!("http://127.0.0.1:{port}/v1/projects/{project}/keys");
    let keys = get_json(&client, url, &key).await;
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!page.to_string().contains("\"proposed\""), "{page}");
    assert!(page.to_string().contains("\"cancelled\""), "{page}");
    let live_demo_keys = keys
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["name"] == "demo" && k["revokedAt"].is_null())
        .count();
    assert_eq!(live_demo_keys, 1, "{keys}");
}

/// `dev` restarted on one database (in-process pools): a backfill request
/// the first run left open, whose pool went with it, reads `closed` after
/// the restart instead of `open` with no fill ever coming.
#[tokio::test]
async fn a_restart_closes_the_lost_backfill_requests() {
    let (dir, db) = own_database("backfill");
    let client = reqwest::Client::new();
    let port = free_port();
    let (mut child, line) = dev_with_demo(&db, port);
    let (project, key) = demo_of(&line);
    let fill = serde_json::json!({
        "name": "fill", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                      "baseTolerance": 5, "expansionMultiplier": 2},
        "backfill": {"enabled": true, "ttlSeconds": 600}});
    let v1 = format!("http://127.0.0.1:{port}/v1");
    two_searching(&client, &v1, (&project, &key), fill).await;
    let base = format!("{v1}/projects/{project}");
    let mut made = None;
    for _ in 0..100 {
        let page = get_json(&client, format!("{base}/matches"), &key).await;
        if let Some(m) = page["items"].as_array().and_then(|items| items.first()) {
            made = Some(m.clone());
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let made = made.expect("a match was made");
    let match_id = made["matchId"].as_str().unwrap().to_owned();
    // The player of team 0 stays; team 1's seat is open.
    let stays = made["teams"][0]["players"][0]["playerId"].clone();
    let opened = client
        .post(format!("{base}/matches/{match_id}/backfill"))
        .bearer_auth(&key)
        .json(&serde_json::json!({"teams": [
            {"index": 0, "players": [{"playerId": stays}]},
            {"index": 1, "players": []}]}))
        .send()
        .await
        .unwrap();
    assert_eq!(opened.status(), 201, "{}", opened.text().await.unwrap());
    child.kill().unwrap();
    child.wait().unwrap();

    let port = free_port();
    let (mut child, line) = dev_with_demo(&db, port);
    let (_, key) = demo_of(&line);
    let base = format!("http://127.0.0.1:{port}/v1/projects/{project}");
    let list = get_json(&client, format!("{base}/matches/{match_id}/backfill"), &key).await;
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let statuses: Vec<&str> = list
        .as_array()
        .unwrap_or_else(|| panic!("{list}"))
        .iter()
        .map(|b| b["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["closed"], "{list}");
}
