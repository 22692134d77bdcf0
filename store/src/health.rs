//! The dependencies' check of readiness (docs/operations.md, 'Readiness'
//! and 'Metrics'): the database and the live store, each one read within
//! a time limit. The API's `/readyz` and both processes' scrapes of
//! `/metrics` (`matchplane_dependency_up`) read it.

use crate::tickets::TicketStore;
use sea_orm::DatabaseConnection;
use std::time::Duration;

/// How long each check may take before it counts as failed.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

/// Checks the database and the live store at once, each within
/// [`CHECK_TIMEOUT`]: (database, live store), each `Ok` or its error as
/// text (`no answer in time` past the limit).
pub async fn check(
    db: &DatabaseConnection,
    live: &dyn TicketStore,
) -> (Result<(), String>, Result<(), String>) {
    tokio::join!(
        within(async { db.ping().await.map_err(|e| e.to_string()) }),
        within(async { live.ping().await.map_err(|e| e.to_string()) })
    )
}

/// One check within [`CHECK_TIMEOUT`]; its error as text.
async fn within(
    check: impl std::future::Future<Output = Result<(), String>>,
) -> Result<(), String> {
    tokio::time::timeout(CHECK_TIMEOUT, check)
        .await
        .unwrap_or_else(|_| Err("no answer in time".to_owned()))
}
