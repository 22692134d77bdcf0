//! A matched ticket's match, read from the database (docs/searching.md).
//!
//! A claim marks a search matched in the pool before the worker has stored
//! the match; a player is told `matched` only once it is stored. So every
//! status read of a matched ticket (the REST poll, the studio's ticket
//! status, the WebSocket's own re-read when the worker's publish is late or
//! lost) takes the match from the `matches` table, and a match not stored
//! yet reads as still searching, `waitingReason` `MATCH_PENDING`.

use matchplane_matchmaker::{Attributes, RawJson};
use matchplane_store::entities::{match_, match_ticket};
use matchplane_store::repos::{backfills, match_status, match_tickets, matches, StoreError};
use matchplane_store::tickets::{NewTicket, Ticket};
use matchplane_webhook::payload::{Quality, Team};
use matchplane_webhook::{player_match, MatchMade};
use sea_orm::DatabaseConnection;

/// Who reads a ticket's status, which sets how much of its match it sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The game client (REST poll, WebSocket): the player's own view
    /// (teams as player ids, its own entry, region, quality).
    Player,
    /// The studio (`GET …/tickets/{ticketId}`): the whole match, as its
    /// `match.made` body.
    Studio,
}

/// A stored match as one reader sees it, with the ticket's wait in it.
#[derive(Debug, Clone)]
pub struct StoredMatch {
    /// The match as `reader` sees it, as JSON text.
    pub view: RawJson,
    /// When the ticket's search started (Unix seconds).
    pub queued_at: Option<f64>,
    /// Seconds it waited until the cycle that matched it.
    pub wait_seconds: Option<f64>,
    /// The match's status (`made`, `released`, `unassigned`, …).
    pub status: String,
    /// The ticket's own assignment (`{"connection", "data"}`: the match's
    /// `data` with the player's merged over it), once posted.
    pub assignment: Option<serde_json::Value>,
}

/// How long a status read waits for the stored match before it answers
/// `MATCH_PENDING` instead: a database that takes the query and answers
/// nothing (or a lock held on the table) must not hold a player's poll
/// past it (docs/operations.md, "What losing a dependency costs").
pub const STORED_MATCH_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

/// The match `match_id` of `project_id`, as `reader` of `ticket_id` sees
/// it; `None` while it is not stored yet, and while the database is out
/// of reach or does not answer within [`STORED_MATCH_WAIT`], when it may
/// not be stored either: its player waits for it as for any such match
/// (docs/operations.md, "PostgreSQL outages").
///
/// # Errors
/// A database failure other than the database being out of reach, or a
/// stored match that cannot be read.
pub async fn stored_match(
    db: &DatabaseConnection,
    project_id: &str,
    match_id: &str,
    ticket_id: &str,
    reader: Reader,
) -> Result<Option<StoredMatch>, StoreError> {
    let read = read_stored(db, project_id, match_id, ticket_id, reader);
    match tokio::time::timeout(STORED_MATCH_WAIT, read).await {
        Err(_) => Ok(None),
        Ok(Err(error)) if error.is_unavailable() => Ok(None),
        Ok(read) => read,
    }
}

async fn read_stored(
    db: &DatabaseConnection,
    project_id: &str,
    match_id: &str,
    ticket_id: &str,
    reader: Reader,
) -> Result<Option<StoredMatch>, StoreError> {
    let row = match matches::get(db, project_id, match_id).await {
        Ok(row) => row,
        Err(StoreError::NotFound) => return Ok(None),
        Err(err) => return Err(err),
    };
    // A proposal everyone accepted has left the pool, but its row says
    // `proposed` until the record consumer makes it: not stored as a match
    // yet (docs/searching.md, '"Matched" means stored').
    if row.status == match_status::PROPOSED {
        return Ok(None);
    }
    let mut body = body_of_row(&row).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let tickets = match_tickets::of_matches(db, project_id, &[match_id]).await?;
    fill_data(&mut body.teams, &tickets);
    let current = backfills::current_rosters(db, project_id, &[match_id]).await?;
    // The teams as the studio's latest roster has them (docs/backfill.md).
    let shape = matchplane_webhook::payload::shape_of(row.match_shape.as_ref());
    matchplane_webhook::payload::follow_roster(
        &mut body.teams,
        current.get(match_id),
        shape.as_deref(),
    );
    let own = body
        .teams
        .iter()
        .flat_map(|t| &t.players)
        .find(|p| p.ticket_id == ticket_id);
    let wait_seconds = own.map(|p| p.wait_seconds);
    // A player a backfill seated waited until its fill, not the match's
    // creation (docs/backfill.md).
    let seated = match own {
        Some(own) if own.backfill => backfills::seated_at(db, project_id, match_id).await?,
        _ => std::collections::HashMap::new(),
    };
    let view = match reader {
        Reader::Player => player_match(&body, ticket_id),
        Reader::Studio => RawJson::of(&body).ok(),
    };
    // A ticket not in its own match: the record is not this ticket's.
    // A ticket a backfill fill took is seated in the stored match once the
    // fill is recorded; until then it reads as not stored yet.
    let Some(view) = view else {
        return Ok(None);
    };
    let assignment = match (&row.assignment, own) {
        (Some(assignment), Some(own)) => {
            match crate::routes::match_lifecycle::assigned_to(assignment, &own.player_id) {
                matchplane_store::tickets::StatusMessage::Assigned { connection, data } => {
                    Some(serde_json::json!({"connection": connection, "data": data}))
                }
                _ => None,
            }
        }
        _ => None,
    };
    Ok(Some(StoredMatch {
        view,
        queued_at: wait_seconds.map(|w| match_status::queued_at(&row, &seated, ticket_id, w)),
        wait_seconds,
        status: row.status.clone(),
        assignment,
    }))
}

/// Frees `ticket` from its match `match_id` in the pool store (a
/// `released` record with its first `queuedAt`) if the stored match was
/// released or unassigned. The release's own steps store the status first
/// and free the tickets after: a socket that reads the status in between
/// (or after a worker stopped between the two) finishes its own part, so
/// it searches again rather than being refused as still matched
/// (docs/acceptance.md). Idempotent, as the release's.
///
/// # Errors
/// A database or pool store failure.
pub async fn free_released(
    play: &super::Play,
    db: &DatabaseConnection,
    ticket: &Ticket,
    match_id: &str,
) -> Result<(), crate::problem::ApiError> {
    let row = matches::get(db, &ticket.project_id, match_id).await?;
    if row.status != match_status::RELEASED && row.status != match_status::UNASSIGNED {
        return Ok(());
    }
    let seated = backfills::seated_at(db, &ticket.project_id, match_id).await?;
    let own: Vec<_> = match_status::released_tickets(&row, &seated)
        .into_iter()
        .filter(|t| t.ticket_id == ticket.ticket_id)
        .collect();
    let mode = matchplane_store::pool::ModeKey::new(&ticket.project_id, &ticket.game_mode);
    play.pool
        .release_tickets(&mode, match_id, &own, super::unix_now())
        .await?;
    Ok(())
}

/// The ticket `ticket_id` of `project_id`: its record in the ticket store,
/// or, when the store no longer holds it (Redis lost its data), the record
/// kept with the stored match that seated it (`match_tickets`, with its
/// token hash); `None` if neither has it.
///
/// # Errors
/// A ticket store or database failure.
pub async fn ticket_or_matched(
    play: &super::Play,
    db: &DatabaseConnection,
    project_id: &str,
    ticket_id: &str,
) -> Result<Option<Ticket>, crate::problem::ApiError> {
    if let Some(ticket) = play.tickets.get(project_id, ticket_id).await? {
        return Ok(Some(ticket));
    }
    // Cold path (the ticket store lost the record), boxed so the database
    // look-up does not grow every status read's future.
    let row = Box::pin(match_tickets::get(db, project_id, ticket_id)).await?;
    row.map(ticket_of_row).transpose()
}

/// A ticket rebuilt from its `match_tickets` row: what a status read needs
/// (no party, attributes or data; the match holds those).
fn ticket_of_row(row: match_ticket::Model) -> Result<Ticket, crate::problem::ApiError> {
    Ok(NewTicket {
        ticket_id: row.ticket_id,
        project_id: row.project_id,
        game_mode: row.game_mode,
        player_id: row.player_id,
        party: None,
        attributes: Attributes::default(),
        token_hash: row.token_hash,
        created_at: row.created_at,
        expires_at: row.expires_at,
    }
    .into_ticket()?)
}

/// The match id that seated `ticket_id` of `project_id`, from the stored
/// match's tickets (`None` when no stored match seats it).
///
/// # Errors
/// A database failure.
pub async fn matched_id(
    db: &DatabaseConnection,
    project_id: &str,
    ticket_id: &str,
) -> Result<Option<String>, StoreError> {
    Ok(match_tickets::get(db, project_id, ticket_id)
        .await?
        .map(|row| row.match_id))
}

/// Gives each player of `teams` the `data` its ticket brought, from the
/// match's stored tickets `tickets` (a player whose ticket is not among
/// them, or had none, keeps none).
pub fn fill_data(teams: &mut [Team], tickets: &[match_ticket::Model]) {
    let data: std::collections::HashMap<&str, &str> = tickets
        .iter()
        .filter_map(|t| Some((t.ticket_id.as_str(), t.data.as_deref()?)))
        .collect();
    for player in teams.iter_mut().flat_map(|team| &mut team.players) {
        if let Some(text) = data.get(player.ticket_id.as_str()) {
            player.data = RawJson::from_text(*text).ok();
        }
    }
}

/// The `match.made` body of a stored match (the studio's view of it is
/// this body, serialised).
///
/// # Errors
/// The stored `teams` or `quality` cannot be read as a match's.
fn body_of_row(row: &match_::Model) -> Result<MatchMade, serde_json::Error> {
    let teams: Vec<Team> = serde_json::from_value(row.teams.clone())?;
    let quality: Quality = serde_json::from_value(row.quality.clone())?;
    Ok(MatchMade {
        match_id: row.id.clone(),
        project_id: row.project_id.clone(),
        game_mode: row.game_mode.clone(),
        game_mode_version: row.game_mode_version,
        created_at: row.created_at,
        made_at: row.made_at,
        teams,
        quality,
        match_shape: shape_of(row.match_shape.as_ref())?,
        seats_open: shape_of(row.seats_open.as_ref())?,
        region: row.region.clone(),
        backfill_id: None,
        attributes: row
            .attributes
            .clone()
            .map(serde_json::from_value)
            .transpose()?
            .unwrap_or_default(),
    })
}

/// A stored `match_shape` / `seats_open` array; empty for matches stored
/// before they were kept.
fn shape_of(value: Option<&serde_json::Value>) -> Result<Vec<u32>, serde_json::Error> {
    value.map_or(Ok(Vec::new()), |v| serde_json::from_value(v.clone()))
}
