//! Idempotency keys: one row per project and `Idempotency-Key`, reserved by
//! the first request (an insert: of two requests at once, exactly one
//! wins), completed with its answer, and pruned 24 hours later.

use crate::entities::idempotency_key::{self, Entity as IdempotencyKeys};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};

/// What [`reserve`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum Reservation {
    /// This request holds the key now: run it, then [`complete`] or
    /// [`release`].
    Reserved,
    /// Another request holds (or held) the key: its row.
    Taken(idempotency_key::Model),
}

/// A request to reserve a key for.
#[derive(Debug, Clone, Copy)]
pub struct NewReservation<'a> {
    /// The project.
    pub project_id: &'a str,
    /// The `Idempotency-Key` header.
    pub key: &'a str,
    /// Hex SHA-256 of the request.
    pub request_digest: &'a str,
    /// Hex random seed of the answer's encryption.
    pub seed: &'a str,
    /// Now.
    pub now: DateTime<Utc>,
    /// Rows created before this are gone (24 hours).
    pub expired_before: DateTime<Utc>,
    /// Unfinished rows created before this were abandoned (a process
    /// stopped mid-request) and may be taken over.
    pub abandoned_before: DateTime<Utc>,
}

/// Reserves `key` of `project_id` for this request, unless another holds
/// it (an expired or abandoned holder is replaced).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn reserve<C: ConnectionTrait>(
    db: &C,
    new: NewReservation<'_>,
) -> Result<Reservation, StoreError> {
    // Two rounds: the row found taken may be deleted (released) before it
    // is read back.
    for _ in 0..2 {
        IdempotencyKeys::delete_many()
            .filter(idempotency_key::Column::ProjectId.eq(new.project_id))
            .filter(idempotency_key::Column::Key.eq(new.key))
            .filter(
                idempotency_key::Column::CreatedAt
                    .lt(new.expired_before)
                    .or(idempotency_key::Column::Status
                        .is_null()
                        .and(idempotency_key::Column::CreatedAt.lt(new.abandoned_before))),
            )
            .exec(db)
            .await?;
        let row = idempotency_key::ActiveModel {
            project_id: Set(new.project_id.to_owned()),
            key: Set(new.key.to_owned()),
            request_digest: Set(new.request_digest.to_owned()),
            seed: Set(new.seed.to_owned()),
            status: Set(None),
            content_type: Set(None),
            body: Set(None),
            location: Set(None),
            created_at: Set(new.now),
        };
        match row.insert(db).await.map_err(StoreError::from) {
            Ok(_) => return Ok(Reservation::Reserved),
            Err(StoreError::Conflict) => {}
            Err(other) => return Err(other),
        }
        if let Some(taken) = get(db, new.project_id, new.key).await? {
            return Ok(Reservation::Taken(taken));
        }
    }
    Err(StoreError::Conflict)
}

/// The row of `key` of `project_id`, if any.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    key: &str,
) -> Result<Option<idempotency_key::Model>, StoreError> {
    Ok(IdempotencyKeys::find()
        .filter(idempotency_key::Column::ProjectId.eq(project_id))
        .filter(idempotency_key::Column::Key.eq(key))
        .one(db)
        .await?)
}

/// An answer to keep for a key's retries.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// HTTP status.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: Option<&'a str>,
    /// The body, encrypted and encoded by the caller.
    pub body: &'a str,
    /// `Location` (a `201`'s created resource).
    pub location: Option<&'a str>,
}

/// Stores the answer of the request holding `key` of `project_id`.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn complete<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    key: &str,
    answer: Answer<'_>,
) -> Result<(), StoreError> {
    IdempotencyKeys::update_many()
        .col_expr(
            idempotency_key::Column::Status,
            Expr::value(i32::from(answer.status)),
        )
        .col_expr(
            idempotency_key::Column::ContentType,
            Expr::value(answer.content_type.map(str::to_owned)),
        )
        .col_expr(
            idempotency_key::Column::Body,
            Expr::value(answer.body.to_owned()),
        )
        .col_expr(
            idempotency_key::Column::Location,
            Expr::value(answer.location.map(str::to_owned)),
        )
        .filter(idempotency_key::Column::ProjectId.eq(project_id))
        .filter(idempotency_key::Column::Key.eq(key))
        .filter(idempotency_key::Column::Status.is_null())
        .exec(db)
        .await?;
    Ok(())
}

/// Gives up the reservation of `key` of `project_id` (the request failed:
/// a retry runs again).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn release<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    key: &str,
) -> Result<(), StoreError> {
    IdempotencyKeys::delete_many()
        .filter(idempotency_key::Column::ProjectId.eq(project_id))
        .filter(idempotency_key::Column::Key.eq(key))
        .filter(idempotency_key::Column::Status.is_null())
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes every row created before `before` (24 hours ago), of every
/// project; returns how many.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn prune<C: ConnectionTrait>(db: &C, before: DateTime<Utc>) -> Result<u64, StoreError> {
    Ok(IdempotencyKeys::delete_many()
        .filter(idempotency_key::Column::CreatedAt.lt(before))
        .exec(db)
        .await?
        .rows_affected)
}
