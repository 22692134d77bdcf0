//! What a user reads stands on its own: README, `docs/`, the data's notes,
//! the OpenAPI document and every command's `--help` never send the reader
//! to files outside the repository or to the internal specification's
//! section numbers, and README's and docs' relative links point at files
//! that exist.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use regex::Regex;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every Markdown page a user is pointed at.
fn pages() -> Vec<PathBuf> {
    let mut out = vec![
        root().join("README.md"),
        root().join("data/lichess/README.md"),
        root().join("sdk/rust/README.md"),
        root().join("sdk/typescript/README.md"),
        root().join("sdk/unity/README.md"),
    ];
    let docs = root().join("docs");
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&docs)
        .unwrap_or_else(|err| panic!("{}: {err}", docs.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    entries.sort();
    assert!(!entries.is_empty(), "docs/ has no pages");
    out.extend(entries);
    out
}

fn help_texts() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for cmd in [
        vec!["--help"],
        vec!["dev", "--help"],
        vec!["api", "--help"],
        vec!["worker", "--help"],
        vec!["migrate", "--help"],
        vec!["simulate", "--help"],
        vec!["openapi", "--help"],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_matchplane"))
            .args(&cmd)
            .output()
            .unwrap();
        assert!(output.status.success(), "matchplane {cmd:?} failed");
        out.push((
            format!("matchplane {}", cmd.join(" ")),
            String::from_utf8(output.stdout).unwrap(),
        ));
    }
    out
}

/// The phrases that would send a user somewhere they cannot follow.
fn outside_references(text: &str) -> Vec<String> {
    // The sibling folder beside a developer's checkout, spelt in two parts
    // so that this file does not itself name it.
    let sibling = format!(r"\.\./{}", "shared");
    let pattern = Regex::new(&format!(r"{sibling}|SPEC\.md|SPEC\s?\d|\bSPEC\b")).unwrap();
    pattern
        .find_iter(text)
        .map(|m| {
            let start = text[..m.start()].rfind('\n').map_or(0, |i| i + 1);
            let end = text[m.end()..]
                .find('\n')
                .map_or(text.len(), |i| m.end() + i);
            text[start..end].trim().to_owned()
        })
        .collect()
}

#[test]
fn user_facing_texts_cite_nothing_outside_the_repository() {
    let mut found = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for line in outside_references(&text) {
            found.push(format!("{}: {line}", page.display()));
        }
    }
    let openapi = std::fs::read_to_string(root().join("openapi/openapi.json")).unwrap();
    for line in outside_references(&openapi) {
        found.push(format!("openapi/openapi.json: {line}"));
    }
    for (cmd, text) in help_texts() {
        for line in outside_references(&text) {
            found.push(format!("{cmd}: {line}"));
        }
    }
    assert!(
        found.is_empty(),
        "outside references:\n{}",
        found.join("\n")
    );
}

#[test]
fn relative_links_in_readme_and_docs_resolve() {
    let link = Regex::new(r"\]\(([^)#\s]+)(#[^)]*)?\)").unwrap();
    let mut broken = Vec::new();
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let dir = page.parent().unwrap_or(Path::new("."));
        for cap in link.captures_iter(&text) {
            let target = &cap[1];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            if !dir.join(target).exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_detector_finds_what_it_must() {
    assert_eq!(
        outside_references(&format!("see ../{}/data", "shared")).len(),
        1
    );
    assert_eq!(outside_references("as SPEC 4 says").len(), 1);
    assert_eq!(outside_references("(SPEC 5.9)").len(), 1);
    assert!(outside_references("a specification of our own").is_empty());
}
