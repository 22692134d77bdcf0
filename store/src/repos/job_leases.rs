//! Job leases (table `job_leases`): a job that one worker at a time runs
//! (the retention pruning) is held by one holder until its lease runs out.
//!
//! Taking and renewing are one upsert that succeeds when the row is absent,
//! expired, or already this holder's: it never waits beyond that one
//! statement, so a worker that does not get the lease skips the job rather
//! than queueing for it. The database's clock is not read: `now` comes in
//! (workers' clocks are assumed close, as for every lease here; a skew only
//! lets two holders overlap, which the jobs tolerate).

use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Alias, Expr, OnConflict, Query};
use sea_orm::ConnectionTrait;
use std::time::Duration;

/// The table.
fn table() -> Alias {
    Alias::new("job_leases")
}

/// Takes (or renews) `job`'s lease for `holder` until `now + ttl` if
/// nobody else holds it; `true` when `holder` holds it now.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn try_take<C: ConnectionTrait>(
    db: &C,
    job: &str,
    holder: &str,
    now: DateTime<Utc>,
    ttl: Duration,
) -> Result<bool, StoreError> {
    let now_ms = now.timestamp_millis();
    let until = now_ms.saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
    let (job_col, holder_col, expires_col) = (
        Alias::new("job"),
        Alias::new("holder"),
        Alias::new("expires_at_ms"),
    );
    let mut insert = Query::insert();
    insert
        .into_table(table())
        .columns([job_col.clone(), holder_col.clone(), expires_col.clone()])
        .values([job.into(), holder.into(), until.into()])
        .map_err(|e| StoreError::Corrupt(e.to_string()))?
        .on_conflict(
            OnConflict::column(job_col)
                .update_columns([holder_col.clone(), expires_col.clone()])
                .action_and_where(
                    Expr::col((table(), holder_col)).eq(holder).or(Expr::col((
                        table(),
                        expires_col,
                    ))
                    .lt(now_ms)),
                )
                .to_owned(),
        );
    let backend = db.get_database_backend();
    Ok(db.execute(backend.build(&insert)).await?.rows_affected() == 1)
}

/// Gives `job`'s lease up if `holder` holds it (shutdown), so another
/// worker takes the job at its next try.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn release<C: ConnectionTrait>(
    db: &C,
    job: &str,
    holder: &str,
) -> Result<(), StoreError> {
    let update = Query::update()
        .table(table())
        .value(Alias::new("expires_at_ms"), 0_i64)
        .and_where(Expr::col(Alias::new("job")).eq(job))
        .and_where(Expr::col(Alias::new("holder")).eq(holder))
        .to_owned();
    let backend = db.get_database_backend();
    db.execute(backend.build(&update)).await?;
    Ok(())
}
