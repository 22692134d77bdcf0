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

#[tokio::test]
async fn the_readme_example_runs() {
    let dev = common::Dev::start();
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        quickstart::run(&dev.base, &dev.project, &dev.key),
    )
    .await
    .unwrap()
    .unwrap();
}
