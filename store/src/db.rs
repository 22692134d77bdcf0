//! Opening the control-plane database and refusing one whose migrations
//! are behind this build: the API, the worker and `matchplane migrate` all
//! connect through [`connect`], and the API and the worker check the schema
//! with [`ensure_migrated`] before they start.

use sea_orm::{ConnectOptions, Database, DatabaseConnection, DbErr};

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
/// if needed). Per-statement SQL logging is off: statements are logged by
/// our own handlers, with fields we chose, never with bound values.
///
/// # Errors
/// The connection error.
pub async fn connect(url: &str) -> Result<DatabaseConnection, DbErr> {
    let url = if url.starts_with("sqlite:") && !url.contains("mode=") {
        let sep = if url.contains('?') { '&' } else { '?' };
        format!("{url}{sep}mode=rwc")
    } else {
        url.to_owned()
    };
    let mut options = ConnectOptions::new(url);
    options.sqlx_logging(false);
    Database::connect(options).await
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
