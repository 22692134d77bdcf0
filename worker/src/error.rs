//! [`WorkerError`]: what a worker step can fail with. A failed step is
//! logged by the loop that ran it and tried again at its next turn.

use matchplane_store::pool::PoolError;
use matchplane_store::repos::StoreError;

/// A failure of one worker step.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    /// The pool store (Redis) failed.
    #[error("pool store: {0}")]
    Pool(#[from] PoolError),
    /// The database failed.
    #[error("database: {0}")]
    Store(#[from] StoreError),
    /// A stored value could not be read (a game mode's config, a match record).
    #[error("corrupt data: {0}")]
    Corrupt(String),
    /// A blocking task (the matching core) panicked or was cancelled.
    #[error("the matching task stopped: {0}")]
    Task(String),
    /// A step took longer than it may (a database that does not answer).
    #[error("{0} timed out")]
    Timeout(&'static str),
}

impl From<sea_orm::DbErr> for WorkerError {
    fn from(err: sea_orm::DbErr) -> Self {
        WorkerError::Store(StoreError::from(err))
    }
}
