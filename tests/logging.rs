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
