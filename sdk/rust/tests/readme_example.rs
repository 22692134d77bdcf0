//! README's example, run against a real `matchplane dev`; README carries
//! the example's source verbatim.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "../examples/quickstart.rs"]
#[allow(dead_code)]
mod quickstart;

#[test]
fn readme_shows_the_example_verbatim() {
    let readme = include_str!("../README.md");
    let example = include_str!("../examples/quickstart.rs");
    assert!(
        readme.contains(example.trim()),
        "README.md must carry examples/quickstart.rs verbatim"
    );
}

/// Twice against one server: the second run replaces the mode (whose PUT
/// answer masks the webhook secret) and must still verify its webhook.
#[tokio::test]
async fn the_readme_example_runs_twice_against_one_server() {
    let dev = common::Dev::start();
    for run in 1..=2 {
        // The example bounds its own waits (30 s each); this only reports a run that hangs anyway.
        tokio::time::timeout(
            std::time::Duration::from_secs(90),
            quickstart::run(&dev.base, &dev.project, &dev.key),
        )
        .await
        .unwrap_or_else(|_| panic!("run {run} hung"))
        .unwrap_or_else(|e| panic!("run {run}: {e}"));
    }
}
