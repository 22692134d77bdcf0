//! Logs via `tracing`: human-readable by default, JSON with
//! `--log-format json` (`MATCHPLANE_LOG_FORMAT`). The filter comes from
//! `RUST_LOG` (default `info`, with the migrator's line per applied
//! migration and PostgreSQL's notices kept back: `dev` and `migrate` say
//! in one line how many they applied).
//!
//! The one logging set-up of the binary: `main` installs it before any
//! command runs, so every command logs the same way.

use clap::ValueEnum;
use std::io::IsTerminal;
use tracing_subscriber::EnvFilter;

/// How log lines are written.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LogFormat {
    /// One readable line per event.
    Human,
    /// One JSON object per event, for log collectors.
    Json,
}

/// The filter without `RUST_LOG`: `info`, but sea-orm's migrator and
/// PostgreSQL's notices only from `warn` (a first `dev` would otherwise
/// open with two lines for each of its many migrations, above the banner a
/// newcomer needs to read, and every `migrate` of an up-to-date database
/// with PostgreSQL's word that its migrations table exists already), and
/// the Redis client's own lines only from `error`: while a Redis Cluster
/// master is down it wrote about a thousand warnings a second (each
/// reconnection and slot refresh it tried), where the stores' own warnings
/// already say Redis is out of reach.
const DEFAULT_FILTER: &str = "info,sea_orm_migration=warn,sqlx::postgres::notice=warn,redis=error";

/// The format [`init`] installed.
static FORMAT: std::sync::OnceLock<LogFormat> = std::sync::OnceLock::new();

/// Whether log lines are JSON (`--log-format json`).
pub fn is_json() -> bool {
    matches!(FORMAT.get(), Some(LogFormat::Json))
}

/// Installs the global subscriber once, at start-up.
pub fn init(format: LogFormat) {
    let _ = FORMAT.set(format);
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    // Colours only on a terminal: redirected to a file or a collector, the
    // escape codes would be noise in every line. A line that cannot be
    // written (standard error a closed pipe) is dropped: by default the
    // layer reports it with `eprintln!`, which panics on that same pipe
    // and stops the task that logged, the shutdown's included.
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(std::io::stderr)
        .log_internal_errors(false);
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

#[cfg(test)]
mod tests {
    use super::DEFAULT_FILTER;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::EnvFilter;

    /// A writer the test reads back.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| std::io::ErrorKind::Other)?
                .extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// The Redis client's warnings are left out by default, the stores'
    /// own are kept (before, a Redis Cluster master down wrote about a
    /// thousand of the client's lines a second).
    #[test]
    fn the_redis_clients_own_warnings_are_left_out() {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(EnvFilter::new(DEFAULT_FILTER))
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(target: "redis::cluster_handling::async_connection", "Failed to connect to node");
            tracing::warn!(target: "matchplane_store::pool::redis", "Redis is out of reach");
        });
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        assert!(!text.contains("Failed to connect to node"), "{text}");
        assert!(text.contains("Redis is out of reach"), "{text}");
    }
}
