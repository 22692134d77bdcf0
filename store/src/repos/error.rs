//! [`StoreError`]: what a repository call can fail with.

use sea_orm::{DbErr, SqlErr};

/// A repository failure, typed so the API can map it to a status.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No such row (or it belongs to another project).
    #[error("not found")]
    NotFound,
    /// A unique constraint (e.g. a game-mode name in its project) or a
    /// concurrent update got there first.
    #[error("conflict with an existing row")]
    Conflict,
    /// A referenced row (e.g. a tier by name) does not exist.
    #[error("unknown {0}")]
    UnknownReference(&'static str),
    /// A stored value could not be read back (e.g. corrupt JSON).
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    /// Any other database error; never shown to a client.
    #[error("database error: {0}")]
    Db(DbErr),
}

impl From<DbErr> for StoreError {
    fn from(err: DbErr) -> Self {
        match err.sql_err() {
            Some(SqlErr::UniqueConstraintViolation(_)) => StoreError::Conflict,
            _ => StoreError::Db(err),
        }
    }
}

impl StoreError {
    /// Whether this is the database being out of reach rather than a
    /// refusal or a bug: see [`db_unavailable`]. The API answers it `503
    /// SERVICE_UNAVAILABLE` with `Retry-After`.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, StoreError::Db(err) if db_unavailable(err))
    }
}

/// SQLSTATE classes and codes that mean "the database cannot take this
/// now", not "this request is wrong": `08…` connection exceptions,
/// `25006` a read-only transaction (a replica, or a primary during a
/// failover), `57P01`-`57P03` the server shutting down or starting.
const UNAVAILABLE_STATES: [&str; 4] = ["25006", "57P01", "57P02", "57P03"];

/// Whether `err` means the database is out of reach: no connection could
/// be made or taken from the pool in time, one broke (I/O, TLS, protocol),
/// or the server refuses work for now (read-only, shutting down). Our own
/// pool being closed (the process stopping) is not: that stays a failure
/// of ours.
pub fn db_unavailable(err: &DbErr) -> bool {
    use sea_orm::sqlx::Error as Sqlx;
    use sea_orm::{ConnAcquireErr, RuntimeErr};
    match err {
        DbErr::ConnectionAcquire(ConnAcquireErr::Timeout) => true,
        DbErr::Conn(RuntimeErr::SqlxError(err))
        | DbErr::Exec(RuntimeErr::SqlxError(err))
        | DbErr::Query(RuntimeErr::SqlxError(err)) => match err {
            Sqlx::Io(_)
            | Sqlx::Tls(_)
            | Sqlx::Protocol(_)
            | Sqlx::PoolTimedOut
            | Sqlx::WorkerCrashed => true,
            Sqlx::Database(db) => db
                .code()
                .is_some_and(|code| code.starts_with("08") || UNAVAILABLE_STATES.contains(&&*code)),
            _ => false,
        },
        DbErr::Conn(_) => true,
        _ => false,
    }
}
