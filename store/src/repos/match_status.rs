//! A match's lifecycle (docs/acceptance.md, docs/searching.md#statuses) in `matches.status`:
//!
//! - [`PROPOSED`]: a proposal stored before its players are told, with each
//!   ticket's answer `none`;
//! - [`MADE`]: everyone accepted (or the mode has no acceptance); a
//!   proposal's row gets `made_at` and every answer `accepted`;
//! - [`CANCELLED`]: the proposal ended otherwise, with each ticket's answer
//!   as the closing read it;
//! - [`RELEASED`]: the studio released the made match within the release
//!   window ([`release`]);
//! - [`UNASSIGNED`]: no assignment within the mode's `assignment.waitSeconds`:
//!   released by the worker the same way.
//!
//! Every change is a compare-and-set on the status it leaves, so two
//! callers racing (a release and the assignment timeout, two releases)
//! change a row once.

use crate::entities::match_::{self, Entity as Matches};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, TransactionTrait};
use serde_json::Value;
use std::collections::HashMap;

mod lost;
mod waiting;

pub use lost::proposed_between;
use waiting::reported;
pub use waiting::{first_unassigned_made_at, unassigned_due};

/// A proposal not yet answered by everyone.
pub const PROPOSED: &str = "proposed";
/// A made match.
pub const MADE: &str = "made";
/// A proposal that did not become a match.
pub const CANCELLED: &str = "cancelled";
/// A made match the studio released.
pub const RELEASED: &str = "released";
/// A made match nobody assigned in time (released by the worker).
pub const UNASSIGNED: &str = "unassigned";

/// A stored match's `status`: the values of [`PROPOSED`], [`MADE`],
/// [`CANCELLED`], [`RELEASED`] and [`UNASSIGNED`], as one type for the
/// OpenAPI document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum MatchStatus {
    /// A proposal not yet answered by everyone.
    Proposed,
    /// A made match.
    Made,
    /// A proposal that did not become a match.
    Cancelled,
    /// A made match the studio released.
    Released,
    /// A made match nobody assigned in time.
    Unassigned,
}

/// One ticket's answer to a proposal, as a match's `answers` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum AnswerWord {
    /// Accepted.
    Accepted,
    /// Declined (or left: its search ended).
    Declined,
    /// Did not answer before the deadline.
    Timeout,
    /// Not answered yet.
    None,
}

/// The answers of a proposal whose `ticket_ids` all gave `word`: JSON
/// object ticketId → word.
pub fn answers_all<'a>(ticket_ids: impl IntoIterator<Item = &'a str>, word: &str) -> Value {
    Value::Object(
        ticket_ids
            .into_iter()
            .map(|t| (t.to_owned(), Value::String(word.to_owned())))
            .collect(),
    )
}

/// Stores `row` (a proposal, status [`PROPOSED`]) unless its match id is
/// stored already.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn store_proposed<C: ConnectionTrait>(
    db: &C,
    rows: Vec<match_::Model>,
) -> Result<u64, StoreError> {
    super::matches::insert_if_absent(db, rows).await
}

/// Marks the stored proposals among `made` (match ids of stored records)
/// [`MADE`] at `now`, in one statement; rows of other statuses (a match
/// of a mode without acceptance, a proposal made before) are left alone.
/// A [`CANCELLED`] row is marked too: a made record is queued only by the
/// closing that made the proposal, so a cancelled row of it is one the
/// worker took for lost while its record waited in the outbox (the
/// database out of reach for longer than the grace, see [`lost`]).
/// Returns the rows it changed (the proposals made by this call).
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn mark_made<C: ConnectionTrait>(
    db: &C,
    made: &[String],
    now: DateTime<Utc>,
) -> Result<Vec<match_::Model>, StoreError> {
    if made.is_empty() {
        return Ok(Vec::new());
    }
    let update = Matches::update_many()
        .col_expr(match_::Column::Status, Expr::value(MADE))
        .col_expr(match_::Column::MadeAt, Expr::value(Some(now)))
        .filter(match_::Column::Id.is_in(made.iter().map(String::as_str)))
        .filter(match_::Column::Status.is_in([PROPOSED, CANCELLED]));
    if db.get_database_backend() == sea_orm::DatabaseBackend::Postgres {
        return Ok(update.exec_with_returning(db).await?);
    }
    // SQLite as built here has no UPDATE … RETURNING (sea-orm refuses it
    // with a panic): the proposals are read, then changed. SQLite has one
    // writer at a time, and `dev` one worker, so nobody changes them between.
    let proposed = Matches::find()
        .filter(match_::Column::Id.is_in(made.iter().map(String::as_str)))
        .filter(match_::Column::Status.is_in([PROPOSED, CANCELLED]))
        .all(db)
        .await?;
    if proposed.is_empty() {
        return Ok(Vec::new());
    }
    update.exec(db).await?;
    Ok(proposed
        .into_iter()
        .map(|mut row| {
            row.status = MADE.to_owned();
            row.made_at = Some(now);
            row
        })
        .collect())
}

/// Each ticket's answer as the match views show it: a made proposal's
/// tickets all `accepted` (it is made only then), others as stored.
pub fn shown_answers(row: &match_::Model) -> Option<Value> {
    let answers = row.answers.as_ref()?;
    if row.status == PROPOSED || row.status == CANCELLED {
        return Some(answers.clone());
    }
    let tickets = answers.as_object()?.keys().map(String::as_str);
    Some(answers_all(tickets, "accepted"))
}

/// Marks the stored proposal `match_id` of `project_id` [`CANCELLED`] with
/// `answers`, if it is still [`PROPOSED`]. `false` when it was not.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn mark_cancelled<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_id: &str,
    answers: Value,
) -> Result<bool, StoreError> {
    let result = Matches::update_many()
        .col_expr(match_::Column::Status, Expr::value(CANCELLED))
        .col_expr(match_::Column::Answers, Expr::value(Some(answers)))
        .filter(match_::Column::ProjectId.eq(project_id))
        .filter(match_::Column::Id.eq(match_id))
        .filter(match_::Column::Status.eq(PROPOSED))
        .exec(db)
        .await?;
    Ok(result.rows_affected == 1)
}

/// Marks every stored proposal still [`PROPOSED`] [`CANCELLED`], answers
/// kept; returns how many. For `matchplane dev` on the in-process pools,
/// at start: the pools of the run that stored them are gone, so nobody can
/// answer them any more.
///
/// # Errors
/// [`StoreError::Db`] on a database failure.
pub async fn cancel_all_proposed<C: ConnectionTrait>(db: &C) -> Result<u64, StoreError> {
    let result = Matches::update_many()
        .col_expr(match_::Column::Status, Expr::value(CANCELLED))
        .filter(match_::Column::Status.eq(PROPOSED))
        .exec(db)
        .await?;
    Ok(result.rows_affected)
}

/// What a release came to.
#[derive(Debug, Clone, PartialEq)]
pub enum ReleaseOutcome {
    /// This call released it (the row after).
    Released(match_::Model),
    /// It was released already with the same status (the same release
    /// again: answered with the current state).
    Already(match_::Model),
    /// Not made, or made too long ago (`RELEASE_WINDOW_CLOSED`).
    WindowClosed(match_::Model),
    /// Its result was reported: it was played, and stands
    /// (`RELEASE_WINDOW_CLOSED`; docs/acceptance.md, "Releasing a match").
    Reported(match_::Model),
}

/// When a match was made: its `made_at`, or (no proposal) `created_at`.
pub fn made_at(row: &match_::Model) -> DateTime<Utc> {
    row.made_at.unwrap_or(row.created_at)
}

/// Releases the made match `match_id` of `project_id` as `to`
/// ([`RELEASED`] or [`UNASSIGNED`]) if it was made less than `window`
/// before `now` (docs/acceptance.md's window: max(120 s, `assignment.waitSeconds`))
/// and its result was not reported: a reported match was played
/// ([`ReleaseOutcome::Reported`]). The status changes under the row's
/// lock and the report is read after it, in one transaction; a report
/// marks the same row in its own ([`super::ratings::apply_report`]), so of
/// a release and a report racing one wins whole.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such match,
/// [`StoreError::Db`] on a database failure.
pub async fn release<C: ConnectionTrait + TransactionTrait>(
    db: &C,
    project_id: &str,
    match_id: &str,
    to: &str,
    window: chrono::Duration,
    now: DateTime<Utc>,
) -> Result<ReleaseOutcome, StoreError> {
    // Twice at most: a change between the read and the write is read again.
    for _ in 0..2 {
        let row = super::matches::get(db, project_id, match_id).await?;
        if row.status == to {
            return Ok(ReleaseOutcome::Already(row));
        }
        if row.status != MADE || made_at(&row) + window <= now {
            return Ok(ReleaseOutcome::WindowClosed(row));
        }
        let rated_in = super::matches::own_mode(db, &row).await?.map(|m| m.id);
        let txn = db.begin().await?;
        let result = Matches::update_many()
            .col_expr(match_::Column::Status, Expr::value(to))
            .filter(match_::Column::ProjectId.eq(project_id))
            .filter(match_::Column::Id.eq(match_id))
            .filter(match_::Column::Status.eq(MADE))
            .exec(&txn)
            .await?;
        if result.rows_affected == 1 {
            if let Some(rated_in) = &rated_in {
                if reported(&txn, rated_in, match_id).await? {
                    txn.rollback().await?;
                    return Ok(ReleaseOutcome::Reported(row));
                }
            }
            txn.commit().await?;
            let row = super::matches::get(db, project_id, match_id).await?;
            return Ok(ReleaseOutcome::Released(row));
        }
        txn.rollback().await?;
    }
    let row = super::matches::get(db, project_id, match_id).await?;
    Ok(ReleaseOutcome::WindowClosed(row))
}

/// The tickets of `row` as a release frees them: each player's ticket with
/// its first `queuedAt` ([`queued_at`]). `seated` is
/// [`super::backfills::seated_at`] of the match. Bot seats and unreadable
/// entries are skipped.
pub fn released_tickets(
    row: &match_::Model,
    seated: &HashMap<String, f64>,
) -> Vec<crate::pool::ReleasedTicket> {
    super::matches::players_of(&row.teams)
        .filter_map(|p| {
            let ticket_id = p.get("ticketId")?.as_str()?;
            let wait = p.get("waitSeconds").and_then(Value::as_f64).unwrap_or(0.0);
            Some(crate::pool::ReleasedTicket {
                ticket_id: ticket_id.to_owned(),
                queued_at: queued_at(row, seated, ticket_id, wait),
            })
        })
        .collect()
}

/// When the search of `ticket_id`, seated in `row` after waiting
/// `wait_seconds`, started (Unix seconds): its wait counts to the match's
/// `createdAt`, or, for a player a backfill seated later, to its fill's
/// (`seated`, from [`super::backfills::seated_at`]).
pub fn queued_at(
    row: &match_::Model,
    seated: &HashMap<String, f64>,
    ticket_id: &str,
    wait_seconds: f64,
) -> f64 {
    let created = row.created_at.timestamp_micros() as f64 / 1e6;
    seated.get(ticket_id).copied().unwrap_or(created) - wait_seconds
}

/// Each player of `row`: (ticket id, player id), bot seats left out.
pub fn seated_players(row: &match_::Model) -> Vec<(String, String)> {
    super::matches::players_of(&row.teams)
        .filter_map(|p| {
            Some((
                p.get("ticketId")?.as_str()?.to_owned(),
                p.get("playerId")?.as_str()?.to_owned(),
            ))
        })
        .collect()
}

/// What an assignment came to.
#[derive(Debug, Clone, PartialEq)]
pub enum AssignOutcome {
    /// Stored by this call (the row after).
    Assigned(match_::Model),
    /// The match has an assignment already (`ALREADY_ASSIGNED`).
    AlreadyAssigned(match_::Model),
    /// The match is not `made` (a proposal, cancelled, released).
    NotMade(match_::Model),
}

/// Stores `assignment` (the studio's body) on the made match `match_id` of
/// `project_id` unless it has one: one assignment per match, a
/// compare-and-set on `assignment IS NULL` and status `made`.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such match,
/// [`StoreError::Db`] on a database failure.
pub async fn assign<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_id: &str,
    assignment: Value,
) -> Result<AssignOutcome, StoreError> {
    let result = Matches::update_many()
        .col_expr(match_::Column::Assignment, Expr::value(Some(assignment)))
        .filter(match_::Column::ProjectId.eq(project_id))
        .filter(match_::Column::Id.eq(match_id))
        .filter(match_::Column::Status.eq(MADE))
        .filter(match_::Column::Assignment.is_null())
        .exec(db)
        .await?;
    let row = super::matches::get(db, project_id, match_id).await?;
    Ok(if result.rows_affected == 1 {
        AssignOutcome::Assigned(row)
    } else if row.assignment.is_some() {
        AssignOutcome::AlreadyAssigned(row)
    } else {
        AssignOutcome::NotMade(row)
    })
}
