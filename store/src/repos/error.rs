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
