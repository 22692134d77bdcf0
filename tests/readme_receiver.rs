//! README's quickstart receiver, `examples/receiver.py`, run as a reader
//! runs it (needs `python3`): it listens on the port given as its argument or in `PORT`
//! (9000 only when neither is given, as a taken 9000 must not stop the
//! quickstart), and verifies a Standard Webhooks signature.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use base64::Engine;
use hmac::{Hmac, Mac};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// The quickstart receiver README runs, as the repository ships it.
fn receiver_source() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    assert!(
        readme.contains("python3 examples/receiver.py"),
        "README runs examples/receiver.py"
    );
    std::fs::read_to_string(root.join("examples/receiver.py")).unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Kills the receiver when the test ends, whatever the outcome.
struct Receiver(Child, mpsc::Receiver<String>);

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn run(script: &std::path::Path, args: &[String], port_env: Option<u16>) -> Receiver {
    let mut cmd = Command::new("python3");
    cmd.arg(script)
        .args(args)
        .env("WEBHOOK_SECRET", SECRET)
        .env_remove("PORT")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    if let Some(port) = port_env {
        cmd.env("PORT", port.to_string());
    }
    let mut child = cmd
        .spawn()
        .expect("python3 runs (README's quickstart needs it)");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    Receiver(child, rx)
}

/// Posts one signed event to `port`, retrying while the receiver starts.
async fn post_signed(port: u16) -> reqwest::StatusCode {
    let key = base64::engine::general_purpose::STANDARD
        .decode(SECRET.trim_start_matches("whsec_"))
        .unwrap();
    let (id, ts, body) = ("tst_1", "1700000000", r#"{"type":"webhook.test"}"#);
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.{body}").as_bytes());
    let signature = format!(
        "v1,{}",
        base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
    );
    let client = reqwest::Client::new();
    let mut last = None;
    for _ in 0..100 {
        match client
            .post(format!("http://127.0.0.1:{port}/hook"))
            .header("webhook-id", id)
            .header("webhook-timestamp", ts)
            .header("webhook-signature", &signature)
            .body(body)
            .send()
            .await
        {
            Ok(answer) => return answer.status(),
            Err(err) => last = Some(err),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no receiver on port {port}: {last:?}");
}

fn printed(receiver: &Receiver, what: &str) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match receiver.1.recv_timeout(left) {
            Ok(line) if line.contains(what) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    false
}

#[tokio::test]
async fn the_readme_receiver_listens_on_the_port_it_is_given() {
    let dir = std::env::temp_dir().join(format!("mp-receiver-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("receiver.py");
    std::fs::write(&script, receiver_source()).unwrap();

    // As its argument.
    let port = free_port();
    let receiver = run(&script, &[port.to_string()], None);
    assert_eq!(post_signed(port).await, reqwest::StatusCode::OK);
    assert!(
        printed(&receiver, "verified"),
        "the receiver did not verify"
    );
    drop(receiver);

    // In `PORT`.
    let port = free_port();
    let receiver = run(&script, &[], Some(port));
    assert_eq!(post_signed(port).await, reqwest::StatusCode::OK);
    assert!(
        printed(&receiver, "verified"),
        "the receiver did not verify"
    );
    drop(receiver);

    // Neither: 9000, as the quickstart's mode URL says.
    assert!(
        receiver_source().contains(r#"os.environ.get("PORT", "9000")"#),
        "the default port is 9000"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
