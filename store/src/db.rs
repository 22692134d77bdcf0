//! Opening the control-plane database and refusing one whose migrations
//! are behind this build: the API, the worker and `matchplane migrate` all
//! connect through [`connect`], and the API and the worker check the schema
//! with [`ensure_migrated`] before they start.

use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbErr};
use std::time::Duration;

/// How long the database may keep a caller waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DbTimeouts {
    /// One new connection (TCP, TLS, authentication): 3 s by default.
    pub connect: Duration,
    /// Taking a connection from the pool, a new one included: 3 s by
    /// default. While the database is out of reach, a request fails after
    /// this long instead of queueing for the whole outage.
    pub acquire: Duration,
}

impl Default for DbTimeouts {
    fn default() -> Self {
        Self {
            connect: Duration::from_secs(3),
            acquire: Duration::from_secs(3),
        }
    }
}

/// Why a database cannot be used by this build.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    /// The migration state could not be read.
    #[error("cannot connect to the database: {0}")]
    Connect(DbErr),
    /// The schema is older than this build.
    #[error("the database is {0} migration(s) behind this build; run `matchplane migrate` first")]
    MigrationsBehind(usize),
}

/// Connects to `url` (`postgres://…`, or `sqlite://path`, the file created
/// if needed) with the driver's own waits (30 s to take a pooled
/// connection): the worker, `matchplane dev` and `migrate`. Per-statement
/// SQL logging is off: statements are logged by our own handlers, with
/// fields we chose, never with bound values.
///
/// # Errors
/// The connection error.
pub async fn connect(url: &str) -> Result<DatabaseConnection, DbErr> {
    open(url, None).await
}

/// [`connect`] with `timeouts` (`matchplane api`: a request fails fast
/// while the database is out of reach rather than queue for the pool).
///
/// # Errors
/// The connection error.
pub async fn connect_with(url: &str, timeouts: DbTimeouts) -> Result<DatabaseConnection, DbErr> {
    open(url, Some(timeouts)).await
}

async fn open(url: &str, timeouts: Option<DbTimeouts>) -> Result<DatabaseConnection, DbErr> {
    let url = if url.starts_with("sqlite:") && !url.contains("mode=") {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}mode=rwc")
    } else {
        url.to_owned()
    };
    let mut options = ConnectOptions::new(url.clone());
    options.sqlx_logging(false);
    // SQLite (`matchplane dev`): a write-ahead log, so that reads do not
    // wait behind a write and a commit appends instead of rewriting pages
    // through a rollback journal (a soak of `dev` wrote 65 times what the
    // file grew, and reads waited on its lock), synced at checkpoints
    // only (a crash of the machine, not of the process, can lose the last
    // commits; docs/configuration.md, "`matchplane dev`").
    options.map_sqlx_sqlite_opts(|o| {
        use sea_orm::sqlx::sqlite::{SqliteJournalMode, SqliteSynchronous};
        o.journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
    });
    if let Some(timeouts) = timeouts {
        options
            .connect_timeout(timeouts.connect)
            .acquire_timeout(timeouts.acquire);
    }
    // The driver quotes a URL it cannot parse whole, password included.
    Database::connect(options)
        .await
        .map_err(|e| crate::redact::db_error(e, &url))
}

/// Fails when `db` has pending migrations.
///
/// # Errors
/// [`SchemaError::MigrationsBehind`], or [`SchemaError::Connect`] when the
/// migration state cannot be read.
pub async fn ensure_migrated(db: &DatabaseConnection) -> Result<(), SchemaError> {
    match matchplane_migrations::pending(db).await {
        Ok(0) => Ok(()),
        Ok(n) => Err(SchemaError::MigrationsBehind(n)),
        Err(err) => Err(SchemaError::Connect(err)),
    }
}
