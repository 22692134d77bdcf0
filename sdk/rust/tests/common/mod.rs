//! A real `matchplane dev --demo` on a free port, from the built binary
//! (`MATCHPLANE_BIN`, else `<target>/debug/matchplane`), stopped on drop.
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Dev {
    child: Child,
    dir: PathBuf,
    pub base: String,
    pub project: String,
    pub key: String,
}

fn binary() -> PathBuf {
    if let Ok(bin) = std::env::var("MATCHPLANE_BIN") {
        return bin.into();
    }
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
    let bin = target.join("debug/matchplane");
    assert!(
        bin.exists(),
        "{} is missing: `cargo build -p matchplane` first, or set MATCHPLANE_BIN",
        bin.display()
    );
    bin
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Dev {
    pub fn start() -> Dev {
        let port = free_port();
        let dir = std::env::temp_dir().join(format!("mp-sdk-rust-{}-{port}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let db = format!("sqlite://{}?mode=rwc", dir.join("dev.db").display());
        let mut child = Command::new(binary())
            .args(["dev", "--demo", "--listen", &format!("127.0.0.1:{port}")])
            .args([
                "--database-url",
                &db,
                "--operator-token",
                "sdk-test-operator",
            ])
            .env_remove("REDIS_URL")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("demo: project") {
                    let _ = tx.send(line);
                }
            }
        });
        // "demo: project prj_…, API key mp_sk_…"
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("dev --demo printed no demo line");
        let words: Vec<&str> = line.split_whitespace().collect();
        Dev {
            child,
            dir,
            base: format!("http://127.0.0.1:{port}"),
            project: words[2].trim_end_matches(',').to_owned(),
            key: words[5].to_owned(),
        }
    }
}

impl Dev {
    /// Stops the server as a rolling restart does (`SIGTERM`), and waits
    /// for it to exit.
    pub fn terminate(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let _ = self.child.wait();
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A duel mode (`[1,1]`, MMR, one-second cycles) with a webhook to `hook`.
pub fn duel(name: &str, hook: &str) -> serde_json::Value {
    serde_json::json!({
        "name": name, "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                      "baseTolerance": 100, "expansionMultiplier": 2},
        "webhook": {"url": hook}
    })
}

/// The kinds of `seen` (`searching`, `status`, …), for failure messages.
pub fn kinds(seen: &[matchplane_client::SearchMessage]) -> Vec<&str> {
    seen.iter()
        .map(matchplane_client::SearchMessage::kind)
        .collect()
}

/// Two game clients of `dev`: one over the WebSocket, one polling REST
/// every 500 ms.
pub fn clients(dev: &Dev) -> (matchplane_client::GameClient, matchplane_client::GameClient) {
    let socket = matchplane_client::GameClient::new(&dev.base).unwrap();
    let rest = socket
        .clone()
        .with_options(matchplane_client::SearchOptions {
            transport: matchplane_client::Transport::Rest,
            poll_interval: Duration::from_millis(500),
            ..Default::default()
        });
    (socket, rest)
}
