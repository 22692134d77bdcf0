//! The commands' settings as docs/configuration.md gives them: a number of
//! seconds that is `NaN`, infinite or out of its range is refused by name
//! (exit 1), never a panic; a blank operator token is taken as unset; a
//! value that does not parse exits 2 as the exit-code table says; and
//! `--help` shows the defaults the docs' tables give.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The variables these tests set, removed from the inherited environment.
const SETTINGS: [&str; 9] = [
    "MATCHPLANE_DEMO",
    "MATCHPLANE_OPERATOR_TOKEN",
    "MATCHPLANE_REST_POLL_TIMEOUT",
    "MATCHPLANE_SOCKET_LEASE",
    "MATCHPLANE_LEASE_TTL_SECONDS",
    "MATCHPLANE_LOG_FORMAT",
    "MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS",
    "MATCHPLANE_LISTEN",
    "MATCHPLANE_REQUEST_TIMEOUT_SECONDS",
];

/// A PostgreSQL URL on a port nothing listens on: a start that gets as far
/// as the database fails there in milliseconds.
fn refusing_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("postgres://postgres@127.0.0.1:{port}/nothing")
}

/// `matchplane <args>` with `env` and no reachable store, killed after 30 s
/// (a setting let through would otherwise serve for ever).
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let dir = std::env::temp_dir().join(format!(
        "mp-cli-settings-{}-{:08x}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_matchplane"));
    for name in SETTINGS {
        command.env_remove(name);
    }
    let mut child = command
        .args(args)
        .current_dir(&dir)
        .env("DATABASE_URL", refusing_url())
        .env("REDIS_URL", "redis://127.0.0.1:1/0")
        .env("MATCHPLANE_LISTEN", "127.0.0.1:0")
        .env("RUST_LOG", "info")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let output = child.wait_with_output().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    output
}

#[test]
fn a_number_of_seconds_out_of_range_or_not_finite_is_refused_by_name() {
    let cases: [(&str, &str, &str, &str); 13] = [
        (
            "api",
            "MATCHPLANE_REST_POLL_TIMEOUT",
            "inf",
            "--rest-poll-timeout",
        ),
        (
            "api",
            "MATCHPLANE_REST_POLL_TIMEOUT",
            "1e300",
            "--rest-poll-timeout",
        ),
        (
            "api",
            "MATCHPLANE_REST_POLL_TIMEOUT",
            "0",
            "--rest-poll-timeout",
        ),
        ("api", "MATCHPLANE_SOCKET_LEASE", "NaN", "--socket-lease"),
        ("api", "MATCHPLANE_SOCKET_LEASE", "1", "--socket-lease"),
        ("api", "MATCHPLANE_SOCKET_LEASE", "86401", "--socket-lease"),
        (
            "api",
            "MATCHPLANE_REQUEST_TIMEOUT_SECONDS",
            "inf",
            "--request-timeout-seconds",
        ),
        (
            "api",
            "MATCHPLANE_DB_CONNECT_TIMEOUT_SECONDS",
            "NaN",
            "--db-connect-timeout-seconds",
        ),
        (
            "dev",
            "MATCHPLANE_HEADER_READ_TIMEOUT_SECONDS",
            "NaN",
            "--header-read-timeout-seconds",
        ),
        (
            "worker",
            "MATCHPLANE_LEASE_TTL_SECONDS",
            "NaN",
            "--lease-ttl-seconds",
        ),
        (
            "worker",
            "MATCHPLANE_LEASE_TTL_SECONDS",
            "1e300",
            "--lease-ttl-seconds",
        ),
        (
            "worker",
            "MATCHPLANE_LEASE_TTL_SECONDS",
            "0.1",
            "--lease-ttl-seconds",
        ),
        (
            "worker",
            "MATCHPLANE_WEBHOOK_RETRY_SCALE",
            "2",
            "--webhook-retry-scale",
        ),
    ];
    for (command, variable, value, flag) in cases {
        let output = run(&[command], &[(variable, value)]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        let case = format!("{command} {variable}={value}");
        assert_eq!(output.status.code(), Some(1), "{case}: {stderr}");
        assert!(!stderr.contains("panicked"), "{case}: {stderr}");
        assert!(stderr.contains(flag), "{case}: {stderr}");
        assert!(stderr.contains(variable), "{case}: {stderr}");
    }
}

/// The timeouts documented as clamped are, and say so at start.
#[test]
fn a_timeout_out_of_range_is_clamped_with_a_warning() {
    let output = run(&["api"], &[("MATCHPLANE_REQUEST_TIMEOUT_SECONDS", "1e300")]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // It gets as far as the database, out of reach here.
    assert!(
        stderr.contains("cannot connect to the database"),
        "{stderr}"
    );
    let warning = stderr
        .lines()
        .find(|l| l.contains("WARN") && l.contains("--request-timeout-seconds"))
        .unwrap_or_else(|| panic!("no warning: {stderr}"));
    assert!(warning.contains("clamped"), "{warning}");
    assert!(warning.contains("used=600"), "{warning}");
}

#[test]
fn a_blank_operator_token_is_unset_with_the_same_warning() {
    for token in ["", "   "] {
        let output = run(&["api"], &[("MATCHPLANE_OPERATOR_TOKEN", token)]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("MATCHPLANE_OPERATOR_TOKEN is not set"),
            "{token:?}: {stderr}"
        );
    }
}

fn configuration() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/configuration.md");
    std::fs::read_to_string(path).unwrap()
}

/// The cells of a Markdown table row, trimmed; `None` for a line that is
/// not one.
fn cells(line: &str) -> Option<Vec<&str>> {
    let inner = line.trim().strip_prefix('|')?.strip_suffix('|')?;
    Some(inner.split('|').map(str::trim).collect())
}

/// A value that does not parse exits 2, one out of range 1: the codes of
/// docs/configuration.md's table, which the worker's section once gave as
/// 1 for both.
#[test]
fn exit_codes_are_those_of_the_docs() {
    let docs = configuration();
    let code = |n: &str| {
        docs.lines()
            .filter_map(cells)
            .find(|c| c.first() == Some(&format!("`{n}`").as_str()))
            .map(|c| c[1].to_owned())
            .unwrap_or_else(|| panic!("no exit code `{n}` in docs/configuration.md"))
    };
    let (one, two) = (code("1"), code("2"));
    assert!(two.contains("does not parse"), "{two}");
    assert!(one.contains("outside its range"), "{one}");
    assert!(
        !docs.contains("or a setting is invalid"),
        "a section still gives one code for both"
    );
    // The examples the row of `2` gives, and one of `1`'s.
    let cases: [(&str, &str, &str, i32); 5] = [
        ("worker", "MATCHPLANE_LEASE_TTL_SECONDS", "abc", 2),
        ("worker", "MATCHPLANE_LOG_FORMAT", "xml", 2),
        ("worker", "MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS", "maybe", 2),
        ("api", "MATCHPLANE_LISTEN", "notanaddr", 2),
        ("worker", "MATCHPLANE_LEASE_TTL_SECONDS", "0.1", 1),
    ];
    for (command, variable, value, expected) in cases {
        if expected == 2 {
            assert!(two.contains(&format!("{variable}={value}")), "{two}");
        }
        let output = run(&[command], &[(variable, value)]);
        assert_eq!(
            output.status.code(),
            Some(expected),
            "{command} {variable}={value}: {output:?}"
        );
    }
}

/// `MATCHPLANE_DEMO` takes the spellings of every other on/off variable
/// (`1`, `yes`, `on`, …), as `MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS` does: such
/// a start gets past its settings (to the unreachable database, exit 1);
/// a value of neither kind does not parse (exit 2).
#[test]
fn the_demo_switch_takes_every_boolean_spelling() {
    for (value, expected) in [("1", 1), ("yes", 1), ("on", 1), ("false", 1), ("maybe", 2)] {
        let output = run(&["dev"], &[("MATCHPLANE_DEMO", value)]);
        assert_eq!(
            output.status.code(),
            Some(expected),
            "MATCHPLANE_DEMO={value}: {output:?}"
        );
    }
}

/// `matchplane <command> --help`.
fn help(command: &str) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_matchplane"))
        .args([command, "--help"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// The `[default: …]` of `flag` in a `--help` text, if it shows one.
fn help_default(help: &str, flag: &str) -> Option<String> {
    let start = help
        .lines()
        .position(|l| l.trim_start().starts_with(&format!("{flag} ")) || l.trim() == flag)
        .unwrap_or_else(|| panic!("no {flag} in:\n{help}"));
    // The flag's block ends at the next flag's line (`--x`, `-h, --help`),
    // not at a possible value's (`- human: …`).
    help.lines()
        .skip(start + 1)
        .take_while(|l| {
            let l = l.trim_start();
            !l.starts_with('-') || l.starts_with("- ")
        })
        .find_map(|l| l.trim().strip_prefix("[default: "))
        .map(|d| d.trim_end_matches(']').to_owned())
}

/// Every default docs/configuration.md gives as a value (in backticks) is
/// the one `--help` shows: `--webhook-retry-scale` showed none (docs: 1),
/// `simulate --games` a twenty-digit number (docs: all).
#[test]
fn help_shows_the_defaults_the_docs_give() {
    let docs = configuration();
    let commands = ["dev", "api", "worker", "migrate", "simulate", "openapi"];
    let helps: std::collections::HashMap<&str, String> =
        commands.iter().map(|c| (*c, help(c))).collect();
    let mut section: Vec<&str> = Vec::new();
    let mut checked = 0;
    let mut wrong = Vec::new();
    for line in docs.lines() {
        if let Some(title) = line.strip_prefix("## ") {
            section = if title == "Every command" {
                commands.to_vec()
            } else {
                commands
                    .iter()
                    .copied()
                    .filter(|c| title == format!("`matchplane {c}`"))
                    .collect()
            };
            continue;
        }
        let Some(row) = cells(line) else { continue };
        let (Some(flag), Some(default)) = (row.first(), row.get(2)) else {
            continue;
        };
        let Some(flag) = flag.strip_prefix("`--").and_then(|f| f.strip_suffix('`')) else {
            continue;
        };
        let Some(default) = default.strip_prefix('`').and_then(|d| d.strip_suffix('`')) else {
            continue;
        };
        for command in &section {
            checked += 1;
            let shown = help_default(&helps[command], &format!("--{flag}"));
            if shown.as_deref() != Some(default) {
                wrong.push(format!(
                    "{command} --{flag}: docs `{default}`, --help {shown:?}"
                ));
            }
        }
    }
    assert!(checked > 20, "only {checked} defaults found in the docs");
    assert!(wrong.is_empty(), "{wrong:#?}");
}

/// A connection limit of 0 does not parse as a limit (`--max-connections`
/// is at least 1): refused before the command starts, with exit code 2.
#[test]
fn a_connection_limit_of_zero_is_refused() {
    for command in ["api", "dev"] {
        let output = run(&[command], &[("MATCHPLANE_MAX_CONNECTIONS", "0")]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(stderr.contains("--max-connections"), "{command}: {stderr}");
    }
}
