//! Sizes a reader can take in (docs/architecture.md): no product source
//! file over 450 lines (a file that grows past it is split where its parts
//! divide), and README under 14 000 characters, with the rest in `docs/`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

/// Most lines of one product source file.
const MAX_LINES: usize = 450;
/// Most characters of README.
const MAX_README_CHARS: usize = 14_000;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every `.rs` file under `dir`, tests aside (a `tests` folder, a
/// `tests.rs` or a `*_tests.rs` module).
fn product_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "tests" {
                product_sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
            out.push(path);
        }
    }
}

fn all_product_sources() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for krate in [
        "",
        "matchmaker",
        "store",
        "webhook",
        "api",
        "worker",
        "migrations",
        "sdk/rust",
    ] {
        product_sources(&root().join(krate).join("src"), &mut out);
    }
    out.sort();
    out
}

#[test]
fn no_product_source_file_is_over_450_lines() {
    let sources = all_product_sources();
    assert!(sources.len() > 100, "found only {} files", sources.len());
    assert!(sources
        .iter()
        .any(|p| p.ends_with("matchmaker/src/cycle.rs")));
    assert!(!sources
        .iter()
        .any(|p| p.ends_with("api/src/body_errors/tests.rs")));
    let long: Vec<String> = sources
        .iter()
        .filter_map(|path| {
            let lines = std::fs::read_to_string(path).unwrap().lines().count();
            (lines > MAX_LINES)
                .then(|| format!("{} ({lines})", path.strip_prefix(root()).unwrap().display()))
        })
        .collect();
    assert!(long.is_empty(), "over {MAX_LINES} lines: {long:?}");
}

#[test]
fn readme_is_under_14_000_characters() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let chars = readme.chars().count();
    assert!(chars < MAX_README_CHARS, "README.md has {chars} characters");
}
