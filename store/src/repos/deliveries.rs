//! Webhook deliveries and their attempts (docs/webhooks.md).
//!
//! A delivery is `pending` until an attempt succeeds (`succeeded`) or the
//! schedule gives up (`failed`). Workers take due deliveries with
//! [`claim_due_fairly`]: on PostgreSQL the due rows are selected `FOR UPDATE SKIP
//! LOCKED`, on both backends each row is then taken by a compare-and-set
//! UPDATE on its status and lock, so two workers never take one delivery
//! while its lock (`locked_until`) runs. A worker that dies leaves the lock
//! to expire, and the delivery to another worker (at least once).
//!
//! Each claim sets a new `lock_token`, and every write of an attempt (its
//! start, the lock's renewal, its end) compares it: a worker whose lock ran
//! out cannot send again what the next holder sent, nor write over its
//! outcome. An attempt is logged before it is sent ([`start_attempt`]) and
//! completed after ([`finish_attempt`]), or taken back with its count when
//! it was not sent after all ([`withdraw_attempt`]), so the attempt count
//! always equals the attempts listed.

use crate::entities::match_;
use crate::entities::webhook_attempt::{self, Entity as Attempts};
use crate::entities::webhook_delivery::{self, Entity as Deliveries};
use crate::repos::insert_absent::insert_absent;
use crate::repos::{matches, StoreError};
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, Query};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, EntityTrait, QueryFilter,
    QueryOrder, QuerySelect, Select, TransactionTrait,
};

/// `webhook_deliveries.status` of a delivery still to make.
pub const PENDING: &str = "pending";

mod claims;

pub use claims::{
    claim_due_fairly, finish_attempt, release, renew, start_attempt, withdraw_attempt, ClaimFilter,
    ClaimHeld, ATTEMPT_UNFINISHED,
};

/// The one way into a project's deliveries.
pub fn scoped(project_id: &str) -> Select<Deliveries> {
    Deliveries::find().filter(webhook_delivery::Column::ProjectId.eq(project_id))
}

/// What a new delivery row needs; [`PendingDelivery::row`] makes the one
/// row shape every queued delivery has (`pending`, due at `now`, no
/// attempt, no lock).
#[derive(Debug, Clone)]
pub struct PendingDelivery {
    /// `dlv_…`, derived from what it delivers so a record handed over twice
    /// queues one delivery.
    pub id: String,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode whose endpoint it goes to.
    pub game_mode: String,
    /// The match it is about, if any.
    pub match_id: Option<String>,
    /// The event type as bodies name it (`match.made`, …: the webhook
    /// crate's `EventType::as_str`).
    pub event_type: &'static str,
    /// The exact body every attempt sends.
    pub payload: String,
}

impl PendingDelivery {
    /// The row to queue: `pending`, first attempt due at `now`.
    pub fn row(self, now: DateTime<Utc>) -> webhook_delivery::Model {
        webhook_delivery::Model {
            id: self.id,
            project_id: self.project_id,
            game_mode: self.game_mode,
            match_id: self.match_id,
            event_type: self.event_type.to_owned(),
            payload: self.payload,
            status: PENDING.to_owned(),
            attempt_count: 0,
            next_attempt_at: Some(now),
            locked_until: None,
            lock_token: None,
            attempts_before_run: 0,
            created_at: now,
            updated_at: now,
        }
    }
}

/// Queues `rows`, leaving alone each whose delivery id exists (the outbox
/// may hand the same match over twice); many rows per statement. Returns
/// how many this call queued.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn queue_if_absent<C: ConnectionTrait>(
    db: &C,
    rows: Vec<webhook_delivery::Model>,
) -> Result<u64, StoreError> {
    insert_absent::<Deliveries, _>(db, rows, [webhook_delivery::Column::Id]).await
}

/// Due now: pending, its next attempt due, not locked.
fn due(now: DateTime<Utc>) -> Condition {
    Condition::all()
        .add(webhook_delivery::Column::Status.eq(PENDING))
        .add(webhook_delivery::Column::NextAttemptAt.lte(now))
        .add(
            Condition::any()
                .add(webhook_delivery::Column::LockedUntil.is_null())
                .add(webhook_delivery::Column::LockedUntil.lte(now)),
        )
}

/// Deliveries of every project whose attempt is due at `now` and not made
/// yet: pending, `next_attempt_at <= now`, being attempted or not. The
/// webhook backlog of docs/operations.md.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn count_due<C: ConnectionTrait>(db: &C, now: DateTime<Utc>) -> Result<u64, StoreError> {
    use sea_orm::PaginatorTrait;
    Ok(Deliveries::find()
        .filter(webhook_delivery::Column::Status.eq(PENDING))
        .filter(webhook_delivery::Column::NextAttemptAt.lte(now))
        .count(db)
        .await?)
}

/// What follows an attempt, for [`finish_attempt`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterAttempt {
    /// Attempt again at this time.
    RetryAt(DateTime<Utc>),
    /// The delivery is over with this status (`succeeded` or `failed`).
    Finished(&'static str),
}

/// Logs a finished `attempt` at once and moves its delivery on (attempt
/// count set to `attempt_count`, status, next attempt, lock released), in
/// one transaction; for tests that need an attempt history without a claim
/// (the workers log theirs with [`start_attempt`] and [`finish_attempt`]).
///
/// # Errors
/// [`StoreError::NotFound`] if the delivery is gone (its project or match
/// was deleted); [`StoreError::Db`] on a database failure.
#[cfg(feature = "test-support")]
pub async fn record_attempt<C: TransactionTrait>(
    db: &C,
    attempt: webhook_attempt::Model,
    attempt_count: i32,
    after: AfterAttempt,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    let txn = db.begin().await?;
    let delivery_id = attempt.delivery_id.clone();
    let (status, next) = match after {
        AfterAttempt::RetryAt(at) => (PENDING, Some(at)),
        AfterAttempt::Finished(status) => (status, None),
    };
    let result = Deliveries::update_many()
        .col_expr(
            webhook_delivery::Column::AttemptCount,
            Expr::value(attempt_count),
        )
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
        .filter(webhook_delivery::Column::Id.eq(delivery_id))
        .exec(&txn)
        .await?;
    if result.rows_affected != 1 {
        return Err(StoreError::NotFound);
    }
    let active: webhook_attempt::ActiveModel = attempt.into();
    active.insert(&txn).await?;
    txn.commit().await?;
    Ok(())
}

/// Logs a one-off delivery made outside the queue (a `webhook.test`): the
/// delivery, already finished (`status` set, no next attempt), and its one
/// attempt, in one transaction, so the attempts log holds every attempt.
///
/// # Errors
/// [`StoreError::Db`] on a database failure (nothing is written).
pub async fn log_sent<C: TransactionTrait>(
    db: &C,
    delivery: webhook_delivery::Model,
    attempt: webhook_attempt::Model,
) -> Result<(), StoreError> {
    let txn = db.begin().await?;
    let delivery: webhook_delivery::ActiveModel = delivery.into();
    delivery.insert(&txn).await?;
    let attempt: webhook_attempt::ActiveModel = attempt.into();
    attempt.insert(&txn).await?;
    txn.commit().await?;
    Ok(())
}

/// When what `row` delivers happened, which tells the mode of its name it
/// belongs to ([`matches::is_own_mode`]): the earlier of its own
/// `created_at` and its match's (a match claimed just before its mode was
/// deleted may be queued after); for a `webhook.test` its own.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn born_at<C: ConnectionTrait>(
    db: &C,
    row: &webhook_delivery::Model,
) -> Result<DateTime<Utc>, StoreError> {
    let made = match &row.match_id {
        Some(match_id) => matches::created_at(db, &row.project_id, match_id).await?,
        None => None,
    };
    Ok(made.map_or(row.created_at, |at| at.min(row.created_at)))
}

/// The `limit` newest deliveries of mode `game_mode` of `project_id`
/// created at `mode_created_at` (only those of `event_type` if given),
/// newest first, each with its attempts, oldest first. A delivery of a
/// deleted mode of the same name is not the mode's ([`born_at`] before
/// `mode_created_at`).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn of_mode<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    (game_mode, mode_created_at): (&str, DateTime<Utc>),
    event_type: Option<&str>,
    limit: u64,
) -> Result<Vec<(webhook_delivery::Model, Vec<webhook_attempt::Model>)>, StoreError> {
    // Queued since the mode was created, and not for a match made before.
    let earlier_match = Query::select()
        .expr(Expr::val(1))
        .from(match_::Entity)
        .and_where(
            Expr::col((match_::Entity, match_::Column::Id))
                .equals((Deliveries, webhook_delivery::Column::MatchId)),
        )
        .and_where(Expr::col((match_::Entity, match_::Column::ProjectId)).eq(project_id))
        .and_where(Expr::col((match_::Entity, match_::Column::CreatedAt)).lt(mode_created_at))
        .to_owned();
    let mut query = scoped(project_id)
        .filter(webhook_delivery::Column::GameMode.eq(game_mode))
        .filter(webhook_delivery::Column::CreatedAt.gte(mode_created_at))
        .filter(Expr::exists(earlier_match).not());
    if let Some(event_type) = event_type {
        query = query.filter(webhook_delivery::Column::EventType.eq(event_type));
    }
    let deliveries = query
        .order_by_desc(webhook_delivery::Column::CreatedAt)
        .order_by_desc(webhook_delivery::Column::Id)
        .limit(limit)
        .all(db)
        .await?;
    with_attempts(db, project_id, deliveries).await
}

async fn with_attempts<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    deliveries: Vec<webhook_delivery::Model>,
) -> Result<Vec<(webhook_delivery::Model, Vec<webhook_attempt::Model>)>, StoreError> {
    let mut out = Vec::with_capacity(deliveries.len());
    for delivery in deliveries {
        let attempts = Attempts::find()
            .filter(webhook_attempt::Column::ProjectId.eq(project_id))
            .filter(webhook_attempt::Column::DeliveryId.eq(delivery.id.clone()))
            .order_by_asc(webhook_attempt::Column::AttemptedAt)
            .order_by_asc(webhook_attempt::Column::Id)
            .all(db)
            .await?;
        out.push((delivery, attempts));
    }
    Ok(out)
}

/// Every delivery of match `match_id` of `project_id`, oldest first, each
/// with its attempts, oldest first.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn of_match<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_id: &str,
) -> Result<Vec<(webhook_delivery::Model, Vec<webhook_attempt::Model>)>, StoreError> {
    let deliveries = scoped(project_id)
        .filter(webhook_delivery::Column::MatchId.eq(match_id))
        .order_by_asc(webhook_delivery::Column::CreatedAt)
        .all(db)
        .await?;
    with_attempts(db, project_id, deliveries).await
}

/// Queues match `match_id`'s deliveries again from now with a fresh retry
/// schedule (a new run: `attempts_before_run` set to the attempt count,
/// unlocked). The attempt count is kept, so it stays equal to the attempts
/// listed, which all stay. Returns them.
///
/// # Errors
/// [`StoreError::NotFound`] when the match has no delivery (no webhook was
/// configured when it was made).
pub async fn redeliver<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_id: &str,
    now: DateTime<Utc>,
) -> Result<Vec<webhook_delivery::Model>, StoreError> {
    let result = Deliveries::update_many()
        .col_expr(webhook_delivery::Column::Status, Expr::value(PENDING))
        .col_expr(
            webhook_delivery::Column::AttemptsBeforeRun,
            Expr::col(webhook_delivery::Column::AttemptCount).into(),
        )
        .col_expr(
            webhook_delivery::Column::NextAttemptAt,
            Expr::value(Some(now)),
        )
        .col_expr(
            webhook_delivery::Column::LockedUntil,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .col_expr(
            webhook_delivery::Column::LockToken,
            Expr::value(Option::<String>::None),
        )
        .col_expr(webhook_delivery::Column::UpdatedAt, Expr::value(now))
        .filter(webhook_delivery::Column::ProjectId.eq(project_id))
        .filter(webhook_delivery::Column::MatchId.eq(match_id))
        .exec(db)
        .await?;
    if result.rows_affected == 0 {
        return Err(StoreError::NotFound);
    }
    Ok(scoped(project_id)
        .filter(webhook_delivery::Column::MatchId.eq(match_id))
        .order_by_asc(webhook_delivery::Column::CreatedAt)
        .all(db)
        .await?)
}
