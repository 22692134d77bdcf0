//! Lease epochs (table `lease_epochs`): one per worker start, the high half
//! of each fencing token that worker draws
//! ([`crate::pool::Leases::acquire_lease_in_epoch`]). The database hands
//! them out, so they never repeat, whatever Redis keeps.

use super::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Alias, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection};

/// A new epoch for `worker_id`, taken at `now`: greater than every epoch
/// taken before.
///
/// # Errors
/// A database failure (the worker waits and tries again: it draws no
/// token without its epoch).
pub async fn take(
    db: &DatabaseConnection,
    worker_id: &str,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let mut insert = Query::insert();
    insert
        .into_table(Alias::new("lease_epochs"))
        .columns([Alias::new("worker_id"), Alias::new("taken_at")])
        .values([worker_id.into(), now.into()])
        .map_err(|e| StoreError::Corrupt(e.to_string()))?
        .returning_col(Alias::new("epoch"));
    let backend = db.get_database_backend();
    let row = db
        .query_one(backend.build(&insert))
        .await?
        .ok_or_else(|| StoreError::Corrupt("no epoch returned".into()))?;
    let epoch: i32 = row.try_get("", "epoch")?;
    u64::try_from(epoch).map_err(|_| StoreError::Corrupt(format!("epoch {epoch}")))
}
