//! What every test of the workspace shares about the servers it runs
//! against (feature `test-support`; never built into the binary).
//!
//! Tests reach only the servers `scripts/test` started, or the ones the
//! `MATCHPLANE_TEST_*` variables name: a test never falls back to a
//! well-known port, so a machine with nothing on 5432 or 6379 runs the same
//! suite as CI. A variable that is unset fails the test that needs it with
//! a message saying how to set it; nothing is skipped silently.

use std::path::PathBuf;

mod database;

pub use database::TestDatabase;

/// The PostgreSQL server tests create their databases on, as an
/// administrative URL (`MATCHPLANE_TEST_DATABASE_URL`, e.g.
/// `postgres://postgres@127.0.0.1:41234/postgres`).
///
/// # Panics
/// When the variable is unset or empty: run the tests with `scripts/test`,
/// which starts a throwaway server and sets it.
pub fn database_url() -> String {
    required("MATCHPLANE_TEST_DATABASE_URL", "a PostgreSQL server")
}

/// The Redis tests use, with its DB index (`MATCHPLANE_TEST_REDIS_URL`, e.g.
/// `redis://127.0.0.1:41235/0`); each test adds a key prefix of its own.
///
/// # Panics
/// When the variable is unset or empty (see [`database_url`]).
pub fn redis_url() -> String {
    required("MATCHPLANE_TEST_REDIS_URL", "a Redis server")
}

/// The test Redis Cluster's URL (`MATCHPLANE_TEST_REDIS_CLUSTER_URL`, a
/// `redis+cluster://host:port,…` list; `scripts/redis-cluster start` prints
/// one).
///
/// # Panics
/// When the variable is unset or empty (see [`database_url`]).
pub fn cluster_url() -> String {
    required("MATCHPLANE_TEST_REDIS_CLUSTER_URL", "a Redis Cluster")
}

/// `admin` (a PostgreSQL URL) with its database name replaced by
/// `database`, query string kept: the URL of a database a test created on
/// the test server.
///
/// # Panics
/// When `admin` has no `/database` part.
pub fn database_url_named(admin: &str, database: &str) -> String {
    let (base, query) = match admin.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (admin, String::new()),
    };
    let Some(cut) = base.rfind('/').filter(|&cut| cut > "postgres://".len()) else {
        panic!("MATCHPLANE_TEST_DATABASE_URL has no database part: {admin}");
    };
    format!("{}/{database}{query}", &base[..cut])
}

/// The `host:port` of a server URL (`scheme://[user@]host:port/…`), for a
/// test that puts a fault proxy in front of the server.
///
/// # Panics
/// When the URL names no explicit port.
pub fn host_port(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    if host_port.rsplit_once(':').is_none() {
        panic!("the test server URL names no port: {url}");
    }
    host_port.to_owned()
}

/// The advisory lock file every cluster test takes (`flock`): shared by
/// the tests that only use the cluster, exclusive for those that move its
/// slots or restart its nodes, so that the two never overlap even across
/// test binaries.
pub fn cluster_lock_path() -> PathBuf {
    std::env::temp_dir().join("matchplane-redis-cluster.lock")
}

fn required(name: &str, what: &str) -> String {
    match std::env::var(name) {
        Ok(value) if !value.trim().is_empty() => value,
        _ => panic!(
            "{name} is unset: the tests need {what}. Run them with scripts/test, which starts \
             throwaway servers (PostgreSQL, Redis and a three-master Redis Cluster) and sets \
             the MATCHPLANE_TEST_* variables, or set it to a server of your own"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_database_url_keeps_its_query_and_swaps_its_name() {
        assert_eq!(
            database_url_named("postgres://u@h:1/postgres?sslmode=disable", "mp_t_1"),
            "postgres://u@h:1/mp_t_1?sslmode=disable"
        );
        assert_eq!(
            database_url_named("postgres://u@h:1/postgres", "x"),
            "postgres://u@h:1/x"
        );
    }

    #[test]
    fn host_port_is_read_from_any_server_url() {
        assert_eq!(
            host_port("postgres://postgres@127.0.0.1:41234/postgres"),
            "127.0.0.1:41234"
        );
        assert_eq!(host_port("redis://127.0.0.1:6000/9"), "127.0.0.1:6000");
        assert_eq!(host_port("postgres://h:5/db?x=1"), "h:5");
    }
}
