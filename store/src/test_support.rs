//! What the store's own tests and the root package's end-to-end tests share
//! about the test Redis Cluster (feature `test-support`; never built into
//! the binary).

use std::path::PathBuf;

/// The test cluster's URL (`MATCHPLANE_TEST_REDIS_CLUSTER_URL`, see
/// `scripts/redis-cluster`), or `None` with a printed notice when it is
/// unset.
///
/// # Panics
/// When it is unset under `CI=true`, so that CI cannot skip the cluster
/// tests silently.
pub fn cluster_url() -> Option<String> {
    match std::env::var("MATCHPLANE_TEST_REDIS_CLUSTER_URL") {
        Ok(url) if !url.trim().is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| v == "true") => {
            panic!("CI=true but MATCHPLANE_TEST_REDIS_CLUSTER_URL is unset (start one with scripts/redis-cluster)")
        }
        _ => {
            eprintln!(
                "skipped: MATCHPLANE_TEST_REDIS_CLUSTER_URL is unset (scripts/redis-cluster start)"
            );
            None
        }
    }
}

/// The advisory lock file every cluster test takes (`flock`): shared by
/// the tests that only use the cluster, exclusive for those that move its
/// slots or restart its nodes, so that the two never overlap even across
/// test binaries.
pub fn cluster_lock_path() -> PathBuf {
    std::env::temp_dir().join("matchplane-redis-cluster.lock")
}
