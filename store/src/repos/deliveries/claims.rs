//! Taking due deliveries and the life of one attempt (docs/webhooks.md): the claim,
//! its lock (renewed while the attempt runs, compared by token at every
//! write, never moved earlier by its own claim's writes), the attempt logged
//! before it is sent and completed after, or taken back unsent when the lock
//! has too little time left for it (docs/operations.md, "Webhook delivery:
//! one studio never holds up another").

use super::{due, AfterAttempt, PENDING};
use crate::entities::webhook_attempt::{self, Entity as Attempts};
use crate::entities::webhook_delivery::{self, Entity as Deliveries};
use crate::repos::StoreError;
use chrono::{DateTime, Duration, Utc};
use sea_orm::sea_query::{Expr, LockBehavior, LockType, SimpleExpr};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, DbBackend, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, TransactionTrait,
};
use std::collections::HashMap;

/// Which due deliveries a claim leaves alone, so one tenant's backlog never
/// fills a claim meant for everyone.
#[derive(Debug, Clone, Default)]
pub struct ClaimFilter {
    /// Modes (`(project_id, game_mode)`) not to take now: their endpoint has
    /// no free slot.
    pub skip: Vec<(String, String)>,
    /// At most this many deliveries of one mode per claim (`0`: no cap).
    pub per_mode: usize,
    /// Projects (`project_id`) not to take now: they hold their whole share
    /// of the worker's in-flight attempts.
    pub skip_projects: Vec<String>,
    /// At most this many deliveries of one project per claim (`0`: no cap).
    pub per_project: usize,
}

/// Takes up to `limit` due deliveries (pending, `next_attempt_at <= now`,
/// not locked), leaving out `filter.skip` and `filter.skip_projects` and
/// taking at most `filter.per_mode` deliveries of one mode and
/// `filter.per_project` of one project, oldest due first, and locks
/// each until `now + lock_for` under a new `lock_token`. Returns the rows
/// with the lock this claim set.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn claim_due_fairly<C: TransactionTrait>(
    db: &C,
    now: DateTime<Utc>,
    lock_for: Duration,
    limit: u64,
    filter: &ClaimFilter,
) -> Result<Vec<webhook_delivery::Model>, StoreError> {
    let txn = db.begin().await?;
    let mut condition = due(now);
    for (project_id, game_mode) in &filter.skip {
        condition = condition.add(
            Condition::any()
                .add(webhook_delivery::Column::ProjectId.ne(project_id.as_str()))
                .add(webhook_delivery::Column::GameMode.ne(game_mode.as_str())),
        );
    }
    if !filter.skip_projects.is_empty() {
        condition = condition.add(
            webhook_delivery::Column::ProjectId
                .is_not_in(filter.skip_projects.iter().map(String::as_str)),
        );
    }
    // Reading a few times the limit lets the per-mode and per-project caps
    // pick from more than the oldest mode's or project's backlog; the rows
    // not taken stay as they are.
    let read = if filter.per_mode == 0 && filter.per_project == 0 {
        limit
    } else {
        limit.saturating_mul(4)
    };
    let mut query = Deliveries::find()
        .filter(condition)
        .order_by_asc(webhook_delivery::Column::NextAttemptAt)
        .limit(read);
    if txn.get_database_backend() == DbBackend::Postgres {
        query = query.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked);
    }
    let rows = query.all(&txn).await?;
    let until = now + lock_for;
    let mut per_mode: HashMap<(String, String), usize> = HashMap::new();
    let mut per_project: HashMap<String, usize> = HashMap::new();
    let mut taken = Vec::with_capacity(rows.len());
    for mut row in rows {
        if taken.len() as u64 >= limit {
            break;
        }
        let mode = (row.project_id.clone(), row.game_mode.clone());
        let of_mode = per_mode.get(&mode).copied().unwrap_or(0);
        let of_project = per_project.get(&row.project_id).copied().unwrap_or(0);
        if (filter.per_mode > 0 && of_mode >= filter.per_mode)
            || (filter.per_project > 0 && of_project >= filter.per_project)
        {
            continue;
        }
        per_mode.insert(mode, of_mode + 1);
        per_project.insert(row.project_id.clone(), of_project + 1);
        let token = ulid::Ulid::new().to_string();
        let result = Deliveries::update_many()
            .col_expr(webhook_delivery::Column::LockedUntil, Expr::value(until))
            .col_expr(
                webhook_delivery::Column::LockToken,
                Expr::value(token.clone()),
            )
            .filter(webhook_delivery::Column::Id.eq(row.id.clone()))
            .filter(due(now))
            .exec(&txn)
            .await?;
        if result.rows_affected == 1 {
            row.locked_until = Some(until);
            row.lock_token = Some(token);
            taken.push(row);
        }
    }
    txn.commit().await?;
    Ok(taken)
}

/// The delivery `id` still held by the claim `token`, still pending.
fn held(id: &str, token: &str) -> Condition {
    Condition::all()
        .add(webhook_delivery::Column::Id.eq(id))
        .add(webhook_delivery::Column::LockToken.eq(token))
        .add(webhook_delivery::Column::Status.eq(PENDING))
}

/// Gives back a claimed delivery without attempting it (its endpoint was
/// busy): unlocked, due as before, its attempt count unchanged. Does
/// nothing if the claim no longer holds it.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn release<C: ConnectionTrait>(db: &C, id: &str, token: &str) -> Result<(), StoreError> {
    unlock(db, id, token).await.map(|_| ())
}

/// Unlocks delivery `id` if the claim `token` still holds it; how many
/// rows it unlocked (0 or 1).
async fn unlock<C: ConnectionTrait>(db: &C, id: &str, token: &str) -> Result<u64, StoreError> {
    let unlocked = Deliveries::update_many()
        .col_expr(
            webhook_delivery::Column::LockedUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(
            webhook_delivery::Column::LockToken,
            Expr::value(Option::<String>::None),
        )
        .filter(held(id, token))
        .exec(db)
        .await?;
    Ok(unlocked.rows_affected)
}

/// `locked_until` extended to `until`, or kept where it already is later:
/// the writes of one claim (its renewals, its attempt's start) may commit
/// in another order than they were sent, and the lock never moves back, so
/// a worker may count on the latest `until` its claim wrote.
fn extended_to(until: DateTime<Utc>) -> SimpleExpr {
    Expr::case(
        webhook_delivery::Column::LockedUntil.gt(until),
        Expr::col(webhook_delivery::Column::LockedUntil),
    )
    .finally(Expr::value(until))
    .into()
}

/// Extends the claim `token` on delivery `id` until `until` (an attempt is
/// about to run, or still running; a lock already later is kept). Returns
/// whether the claim still holds it: `true` proves that no other claim took
/// the delivery, and that it is locked until at least `until`.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn renew<C: ConnectionTrait>(
    db: &C,
    id: &str,
    token: &str,
    until: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let result = Deliveries::update_many()
        .col_expr(webhook_delivery::Column::LockedUntil, extended_to(until))
        .filter(held(id, token))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// What an attempt's start or end found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimHeld {
    /// The claim held the delivery: written.
    Yes,
    /// Another claim holds it now, or it is over: the delivery was left
    /// alone (an attempt's own log row is still completed).
    Lost,
}

/// The text an attempt's log row carries from its start until its end is
/// recorded: what a reader sees if the worker stopped in between.
pub const ATTEMPT_UNFINISHED: &str =
    "no outcome recorded: the attempt is running, or its worker stopped or lost its database during it";

/// Logs the start of an attempt before it is sent: the delivery's attempt
/// count goes up by one and its lock is extended to `until` (as by
/// [`renew`]), and `attempt`
/// (its `error` [`ATTEMPT_UNFINISHED`]) is inserted, in one transaction and
/// only while the claim `token` holds the delivery. A worker killed during
/// the attempt thus leaves it in the log, counted.
///
/// # Errors
/// [`StoreError::Db`] on a database failure (nothing is written).
pub async fn start_attempt<C: TransactionTrait>(
    db: &C,
    attempt: webhook_attempt::Model,
    token: &str,
    until: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<ClaimHeld, StoreError> {
    let txn = db.begin().await?;
    let result = Deliveries::update_many()
        .col_expr(
            webhook_delivery::Column::AttemptCount,
            Expr::col(webhook_delivery::Column::AttemptCount).add(1),
        )
        .col_expr(webhook_delivery::Column::LockedUntil, extended_to(until))
        .col_expr(webhook_delivery::Column::UpdatedAt, Expr::value(now))
        .filter(held(&attempt.delivery_id, token))
        .exec(&txn)
        .await?;
    if result.rows_affected != 1 {
        txn.rollback().await?;
        return Ok(ClaimHeld::Lost);
    }
    let active: webhook_attempt::ActiveModel = attempt.into();
    active.insert(&txn).await?;
    txn.commit().await?;
    Ok(ClaimHeld::Yes)
}

/// Completes an attempt logged by [`start_attempt`]: its log row (same id)
/// gets the outcome, and the delivery moves on (status, next attempt, lock
/// released) if the claim `token` still holds it; in one transaction.
///
/// # Errors
/// [`StoreError::NotFound`] if the attempt's row is gone (its project or
/// match was deleted); [`StoreError::Db`] on a database failure.
pub async fn finish_attempt<C: TransactionTrait>(
    db: &C,
    attempt: webhook_attempt::Model,
    token: &str,
    after: AfterAttempt,
    now: DateTime<Utc>,
) -> Result<ClaimHeld, StoreError> {
    let txn = db.begin().await?;
    let (status, next) = match after {
        AfterAttempt::RetryAt(at) => (PENDING, Some(at)),
        AfterAttempt::Finished(status) => (status, None),
    };
    let logged = Attempts::update_many()
        .col_expr(
            webhook_attempt::Column::StatusCode,
            Expr::value(attempt.status_code),
        )
        .col_expr(
            webhook_attempt::Column::LatencyMs,
            Expr::value(attempt.latency_ms),
        )
        .col_expr(webhook_attempt::Column::Error, Expr::value(attempt.error))
        .col_expr(
            webhook_attempt::Column::ResponseBody,
            Expr::value(attempt.response_body),
        )
        .filter(webhook_attempt::Column::Id.eq(attempt.id))
        .exec(&txn)
        .await?;
    if logged.rows_affected != 1 {
        txn.rollback().await?;
        return Err(StoreError::NotFound);
    }
    let moved = Deliveries::update_many()
        .col_expr(webhook_delivery::Column::Status, Expr::value(status))
        .col_expr(webhook_delivery::Column::NextAttemptAt, Expr::value(next))
        .col_expr(
            webhook_delivery::Column::LockedUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(
            webhook_delivery::Column::LockToken,
            Expr::value(Option::<String>::None),
        )
        .col_expr(webhook_delivery::Column::UpdatedAt, Expr::value(now))
        .filter(held(&attempt.delivery_id, token))
        .exec(&txn)
        .await?;
    txn.commit().await?;
    Ok(if moved.rows_affected == 1 {
        ClaimHeld::Yes
    } else {
        ClaimHeld::Lost
    })
}

/// Takes back an attempt logged by [`start_attempt`] and never sent (its
/// lock had too little time left to send it): its log row `attempt_id` is
/// deleted and delivery `delivery_id`'s attempt count goes down by one with
/// it, so the count still equals the attempts listed and the retry schedule
/// does not count it; and, while the claim `token` still holds the
/// delivery, the delivery is unlocked, due as before, for the next claim.
/// In one transaction. Taking back an attempt already taken back changes
/// nothing. Returns whether the claim still held the delivery.
///
/// # Errors
/// [`StoreError::Db`] on a database failure (nothing is written).
pub async fn withdraw_attempt<C: TransactionTrait>(
    db: &C,
    delivery_id: &str,
    attempt_id: &str,
    token: &str,
    now: DateTime<Utc>,
) -> Result<ClaimHeld, StoreError> {
    let txn = db.begin().await?;
    let removed = Attempts::delete_many()
        .filter(webhook_attempt::Column::Id.eq(attempt_id))
        .filter(webhook_attempt::Column::DeliveryId.eq(delivery_id))
        .exec(&txn)
        .await?;
    if removed.rows_affected == 1 {
        let count = Expr::col(webhook_delivery::Column::AttemptCount).sub(1);
        Deliveries::update_many()
            .col_expr(webhook_delivery::Column::AttemptCount, count.clone())
            // A redelivery made meanwhile began its run at the count.
            .col_expr(
                webhook_delivery::Column::AttemptsBeforeRun,
                Expr::case(
                    Expr::col(webhook_delivery::Column::AttemptsBeforeRun)
                        .gte(Expr::col(webhook_delivery::Column::AttemptCount)),
                    count,
                )
                .finally(Expr::col(webhook_delivery::Column::AttemptsBeforeRun))
                .into(),
            )
            .col_expr(webhook_delivery::Column::UpdatedAt, Expr::value(now))
            .filter(webhook_delivery::Column::Id.eq(delivery_id))
            .exec(&txn)
            .await?;
    }
    let released = unlock(&txn, delivery_id, token).await?;
    txn.commit().await?;
    Ok(if released == 1 {
        ClaimHeld::Yes
    } else {
        ClaimHeld::Lost
    })
}
