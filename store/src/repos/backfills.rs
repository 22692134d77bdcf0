//! Backfill requests and their fills (docs/backfill.md): opened, replaced and
//! closed by the API, filled by the worker's outbox consumer.
//!
//! One open request per match: `open_match_id` carries the match id while
//! a request is open, under a unique index, so two requests racing for one
//! match cannot both open. A request whose `expires_at` passed is `expired`
//! (written so when the next request of its match opens, and reported so by
//! [`status_at`] before that).

use crate::entities::backfill::{self, Entity as Backfills};
use crate::entities::backfill_fill::{self, Entity as Fills};
use crate::repos::insert_absent::insert_absent;
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, IntoActiveModel, QueryFilter,
    QueryOrder, QuerySelect, Select, Set,
};
mod rosters;

pub use rosters::{current_rosters, seated_at, CurrentRoster};

/// `status` of an open request.
pub const OPEN: &str = "open";
/// `status` once a fill took the last seat.
pub const FILLED: &str = "filled";
/// `status` once the studio closed it.
pub const CLOSED: &str = "closed";
/// `status` once `ttlSeconds` passed.
pub const EXPIRED: &str = "expired";

/// The one way into a project's backfills.
pub fn scoped(project_id: &str) -> Select<Backfills> {
    Backfills::find().filter(backfill::Column::ProjectId.eq(project_id))
}

/// The status a row has at `now`: `expired` for an open row past its
/// expiry, else its stored status.
pub fn status_at(row: &backfill::Model, now: DateTime<Utc>) -> &str {
    if row.status == OPEN && row.expires_at <= now {
        EXPIRED
    } else {
        &row.status
    }
}

/// Why a request could not open.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The match has an open request already (`BACKFILL_ALREADY_OPEN`).
    #[error("backfill {0} is already open for this match")]
    AlreadyOpen(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Opens `row` (status `open`, `open_match_id` set), after marking an
/// open request of the same match whose expiry passed at `now` `expired`.
///
/// # Errors
/// [`OpenError::AlreadyOpen`] with the open request's id, or a database
/// failure.
pub async fn open<C: ConnectionTrait>(
    db: &C,
    row: backfill::Model,
    now: DateTime<Utc>,
) -> Result<(), OpenError> {
    Backfills::update_many()
        .col_expr(backfill::Column::Status, Expr::value(EXPIRED))
        .col_expr(
            backfill::Column::OpenMatchId,
            Expr::value(Option::<String>::None),
        )
        .col_expr(backfill::Column::UpdatedAt, Expr::value(now))
        .filter(backfill::Column::ProjectId.eq(row.project_id.as_str()))
        .filter(backfill::Column::OpenMatchId.eq(row.match_id.as_str()))
        .filter(backfill::Column::ExpiresAt.lte(now))
        .exec(db)
        .await
        .map_err(StoreError::from)?;
    let project = row.project_id.clone();
    let match_id = row.match_id.clone();
    match Backfills::insert(row.into_active_model()).exec(db).await {
        Ok(_) => Ok(()),
        Err(err) => match StoreError::from(err) {
            StoreError::Conflict => {
                let open = scoped(&project)
                    .filter(backfill::Column::OpenMatchId.eq(match_id.as_str()))
                    .one(db)
                    .await
                    .map_err(StoreError::from)?;
                Err(OpenError::AlreadyOpen(
                    open.map(|r| r.id).unwrap_or_default(),
                ))
            }
            other => Err(other.into()),
        },
    }
}

/// Inserts `rows` (requests opened by the worker with their matches:
/// `backfill.auto`), leaving alone a row whose id is there already, so a
/// match recorded twice opens its request once. Returns how many this call
/// inserted.
///
/// # Errors
/// A database failure.
pub async fn open_if_absent<C: ConnectionTrait>(
    db: &C,
    rows: Vec<backfill::Model>,
) -> Result<u64, StoreError> {
    insert_absent::<Backfills, _>(db, rows, [backfill::Column::Id]).await
}

/// One request of `project_id`.
///
/// # Errors
/// [`StoreError::NotFound`] when the project has no such request.
pub async fn get<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    backfill_id: &str,
) -> Result<backfill::Model, StoreError> {
    scoped(project_id)
        .filter(backfill::Column::Id.eq(backfill_id))
        .one(db)
        .await?
        .ok_or(StoreError::NotFound)
}

/// Most requests [`of_match`] lists.
pub const MATCH_REQUESTS: u64 = 100;

/// The backfill requests of match `match_id` of `project_id`, newest
/// first, at most [`MATCH_REQUESTS`].
///
/// # Errors
/// A database failure.
pub async fn of_match<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_id: &str,
) -> Result<Vec<backfill::Model>, StoreError> {
    Ok(scoped(project_id)
        .filter(backfill::Column::MatchId.eq(match_id))
        .order_by_desc(backfill::Column::CreatedAt)
        .order_by_desc(backfill::Column::Id)
        .limit(MATCH_REQUESTS)
        .all(db)
        .await?)
}

/// Writes a newer roster, its open seats (per team, and per team and role
/// in a role queue: `None` otherwise) and revision into an open row.
///
/// # Errors
/// [`StoreError::NotFound`] when no open row has that id.
pub async fn replace_roster<C: ConnectionTrait>(
    db: &C,
    row: &backfill::Model,
    roster: serde_json::Value,
    (open_seats, open_roles): (&[u32], Option<serde_json::Value>),
    revision: u64,
    now: DateTime<Utc>,
) -> Result<backfill::Model, StoreError> {
    let mut active = row.clone().into_active_model();
    active.roster = Set(roster);
    active.open_seats = Set(serde_json::json!(open_seats));
    active.open_roles = Set(open_roles);
    active.revision = Set(i64::try_from(revision).unwrap_or(i64::MAX));
    active.updated_at = Set(now);
    Ok(active.update(db).await?)
}

/// Ends a row as `status` (`closed`, `expired`): no longer open.
///
/// # Errors
/// A database failure.
pub async fn end<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    backfill_id: &str,
    status: &str,
    now: DateTime<Utc>,
) -> Result<(), StoreError> {
    Backfills::update_many()
        .col_expr(backfill::Column::Status, Expr::value(status))
        .col_expr(
            backfill::Column::OpenMatchId,
            Expr::value(Option::<String>::None),
        )
        .col_expr(backfill::Column::UpdatedAt, Expr::value(now))
        .filter(backfill::Column::ProjectId.eq(project_id))
        .filter(backfill::Column::Id.eq(backfill_id))
        .filter(backfill::Column::Status.eq(OPEN))
        .exec(db)
        .await?;
    Ok(())
}

/// Closes every open backfill request of every project (`closed`): the
/// in-process pool store of `matchplane dev` starts empty, so a request a
/// previous run left open could never be filled (docs/backfill.md).
/// Returns how many it closed.
///
/// # Errors
/// A database failure.
pub async fn close_all_open<C: ConnectionTrait>(
    db: &C,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    let result = Backfills::update_many()
        .col_expr(backfill::Column::Status, Expr::value(CLOSED))
        .col_expr(
            backfill::Column::OpenMatchId,
            Expr::value(Option::<String>::None),
        )
        .col_expr(backfill::Column::UpdatedAt, Expr::value(now))
        .filter(backfill::Column::Status.eq(OPEN))
        // One past its time reads `expired` as it is.
        .filter(backfill::Column::ExpiresAt.gt(now))
        .exec(db)
        .await?;
    Ok(result.rows_affected)
}

/// The fills of a request, oldest first.
///
/// # Errors
/// A database failure.
pub async fn fills<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    backfill_id: &str,
) -> Result<Vec<backfill_fill::Model>, StoreError> {
    Ok(Fills::find()
        .filter(backfill_fill::Column::ProjectId.eq(project_id))
        .filter(backfill_fill::Column::BackfillId.eq(backfill_id))
        .order_by_asc(backfill_fill::Column::CreatedAt)
        .order_by_asc(backfill_fill::Column::Id)
        .all(db)
        .await?)
}

/// The key a stored roster carries its time in (RFC 3339): when the studio
/// sent it.
pub const SET_AT: &str = "setAt";

/// The key a stored roster lists its departed players in: each player an
/// earlier roster (or a fill after it) seated that this one leaves out,
/// with the team it last sat on, `[{"playerId", "index"}, …]`
/// (docs/backfill.md, "The roster the views show").
pub const LEFT: &str = "left";

/// Records a fill once (a record handed over twice changes nothing the
/// second time): the fill row, and on its request the counts, the seats
/// left (and in a role queue `open_roles`, the role seats left) and, with
/// none left, `filled`. Returns whether this call stored it.
///
/// # Errors
/// A database failure.
pub async fn record_fill<C: ConnectionTrait>(
    db: &C,
    fill: backfill_fill::Model,
    open_roles: Option<serde_json::Value>,
    (seats_taken, filled): (u32, bool),
    now: DateTime<Utc>,
) -> Result<bool, StoreError> {
    let (project, backfill_id) = (fill.project_id.clone(), fill.backfill_id.clone());
    let left = fill.open_seats_left.clone();
    let inserted = insert_absent::<Fills, _>(db, vec![fill], [backfill_fill::Column::Id]).await?;
    if inserted == 0 {
        return Ok(false);
    }
    let mut update = Backfills::update_many()
        .col_expr(
            backfill::Column::Fills,
            Expr::col(backfill::Column::Fills).add(1),
        )
        .col_expr(
            backfill::Column::SeatsFilled,
            Expr::col(backfill::Column::SeatsFilled).add(i64::from(seats_taken)),
        )
        .col_expr(backfill::Column::OpenSeats, Expr::value(left))
        .col_expr(backfill::Column::UpdatedAt, Expr::value(now));
    if let Some(roles) = open_roles {
        update = update.col_expr(backfill::Column::OpenRoles, Expr::value(roles));
    }
    if filled {
        update = update
            .col_expr(backfill::Column::Status, Expr::value(FILLED))
            .col_expr(
                backfill::Column::OpenMatchId,
                Expr::value(Option::<String>::None),
            );
    }
    update
        .filter(backfill::Column::ProjectId.eq(project.as_str()))
        .filter(backfill::Column::Id.eq(backfill_id.as_str()))
        .exec(db)
        .await?;
    Ok(true)
}

/// A mode's backfill figures over a span (docs/backfill.md, the mode's stats).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures {
    /// Requests open now (status `open`, not past their expiry).
    pub open: u64,
    /// Fills in the span (the newest `sample` at most).
    pub fills: u64,
    /// Seats those fills took (players).
    pub seats_filled: u64,
    /// Each of those seats' time from its request's opening to its fill
    /// (seconds), sorted.
    pub time_to_fill: Vec<f64>,
}

/// The figures of mode `game_mode` of `project_id`: the requests open at
/// `now`, and the fills since `since` (the newest `sample`).
///
/// # Errors
/// A database failure.
pub async fn figures<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    game_mode: &str,
    since: DateTime<Utc>,
    now: DateTime<Utc>,
    sample: u64,
) -> Result<Figures, StoreError> {
    use sea_orm::sea_query::Query;
    use sea_orm::{PaginatorTrait, QuerySelect};
    let open = scoped(project_id)
        .filter(backfill::Column::GameMode.eq(game_mode))
        .filter(backfill::Column::Status.eq(OPEN))
        .filter(backfill::Column::ExpiresAt.gt(now))
        .count(db)
        .await?;
    let of_mode = Query::select()
        .column(backfill::Column::Id)
        .from(Backfills)
        .and_where(backfill::Column::ProjectId.eq(project_id))
        .and_where(backfill::Column::GameMode.eq(game_mode))
        .to_owned();
    let fills = Fills::find()
        .filter(backfill_fill::Column::ProjectId.eq(project_id))
        .filter(backfill_fill::Column::CreatedAt.gte(since))
        .filter(backfill_fill::Column::BackfillId.in_subquery(of_mode))
        .order_by_desc(backfill_fill::Column::CreatedAt)
        .limit(sample)
        .all(db)
        .await?;
    let ids: std::collections::BTreeSet<&str> =
        fills.iter().map(|f| f.backfill_id.as_str()).collect();
    let opened: std::collections::HashMap<String, DateTime<Utc>> = scoped(project_id)
        .filter(backfill::Column::Id.is_in(ids))
        .select_only()
        .column(backfill::Column::Id)
        .column(backfill::Column::CreatedAt)
        .into_tuple::<(String, DateTime<Utc>)>()
        .all(db)
        .await?
        .into_iter()
        .collect();
    let mut figures = Figures {
        open,
        fills: fills.len() as u64,
        ..Figures::default()
    };
    for fill in &fills {
        let seats = fill
            .teams
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|team| team.get("players")?.as_array())
            .map(Vec::len)
            .sum::<usize>();
        figures.seats_filled += seats as u64;
        if let Some(at) = opened.get(&fill.backfill_id) {
            let seconds = (fill.created_at - *at).num_microseconds().unwrap_or(0) as f64 / 1e6;
            figures
                .time_to_fill
                .extend(std::iter::repeat_n(seconds.max(0.0), seats));
        }
    }
    figures.time_to_fill.sort_by(f64::total_cmp);
    Ok(figures)
}
