//! What one outbox entry becomes (docs/architecture.md): read as a match,
//! its `matches` row, webhook delivery and the messages its players are
//! told; or, unreadable, a dead letter.

use super::{delivery_id, encode};
use crate::error::WorkerError;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::RawJson;
use matchplane_store::entities::{match_, outbox_dead_letter, webhook_delivery};
use matchplane_store::pool::{ModeKey, OutboxEntry};
use matchplane_store::repos::deliveries::PendingDelivery;
use matchplane_store::tickets::StatusMessage;
use matchplane_webhook::{Event, EventType, MatchMade};
use std::collections::HashMap;

/// What one readable outbox entry becomes.
pub(super) struct Prepared {
    pub(super) row: match_::Model,
    pub(super) delivery: Option<webhook_delivery::Model>,
    pub(super) notices: Vec<(String, StatusMessage)>,
    /// The match, when `backfill.auto` opened a backfill for it.
    pub(super) auto: Option<MatchMade>,
}

/// `entry` kept as a dead letter because of `err`, logged at error level.
pub(super) fn dead_letter(
    mode: &ModeKey,
    entry: &OutboxEntry,
    err: &WorkerError,
    now: DateTime<Utc>,
) -> outbox_dead_letter::Model {
    tracing::error!(
        outbox_id = %entry.id,
        match_id = %entry.match_id,
        project_id = %mode.project_id,
        game_mode = %mode.mode,
        error = %err,
        "unreadable match record moved to the dead letters"
    );
    outbox_dead_letter::Model {
        project_id: mode.project_id.clone(),
        game_mode: mode.mode.clone(),
        outbox_id: entry.id.clone(),
        match_id: entry.match_id.clone(),
        record: entry.record_json.clone(),
        error: err.to_string(),
        created_at: now,
    }
}

/// The match row, delivery and `matched` messages of an outbox entry's
/// match `body`, each player's entry given its ticket's `data` (ticket id
/// to the JSON text), made at `now` (`madeAt`); or why it cannot be
/// stored. A delivery is queued when
/// `webhook` is the creation of the mode of its name at or before the
/// match's: not for a match of a deleted mode of the same name
/// (docs/webhooks.md, "A deleted mode").
pub(super) fn prepare(
    mode: &ModeKey,
    mut body: MatchMade,
    data: &HashMap<String, String>,
    webhook: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<Prepared, WorkerError> {
    let corrupt = |e: serde_json::Error| WorkerError::Corrupt(e.to_string());
    let mut row = match_row(mode, &body)?;
    // Made when stored: its players are told `matched`, and the studio
    // gets `match.made`, only from now, so the release window and the
    // assignment wait count from now, also for a match whose record waited
    // out a database outage in the outbox (docs/acceptance.md).
    // `match.made` says so (`madeAt`), for the studio's own deadline.
    row.made_at = Some(now.max(body.created_at));
    body.made_at = row.made_at;
    for player in body.teams.iter_mut().flat_map(|team| &mut team.players) {
        if let Some(text) = data.get(player.ticket_id.as_str()) {
            player.data = Some(RawJson::from_text(text.as_str()).map_err(corrupt)?);
        }
    }
    // Each player is told its own view of the match (docs/architecture.md#where-each-rule-lives).
    let notices = body
        .teams
        .iter()
        .flat_map(|team| &team.players)
        .filter_map(|player| {
            let view = matchplane_webhook::player_match(&body, &player.ticket_id)?;
            Some((
                player.ticket_id.clone(),
                StatusMessage::Matched { match_: view },
            ))
        })
        .collect();
    let webhook = webhook.is_some_and(|since| {
        let own = matchplane_store::repos::matches::is_own_mode(since, body.created_at);
        if !own {
            tracing::info!(project_id = %mode.project_id, game_mode = %mode.mode,
                match_id = %body.match_id,
                "the match's game mode was deleted and created again: it is stored without a webhook");
        }
        own
    });
    let auto = body.backfill_id.is_some().then(|| body.clone());
    // The webhook body: the claim's record with `madeAt` and each player's
    // `data` in its entry.
    let delivery = if webhook {
        let id = delivery_id(&body.match_id);
        let match_id = Some(body.match_id.clone());
        let payload = encode(body)?;
        Some(
            PendingDelivery {
                id,
                project_id: mode.project_id.clone(),
                game_mode: mode.mode.clone(),
                match_id,
                event_type: EventType::MatchMade.as_str(),
                payload,
            }
            .row(now),
        )
    } else {
        None
    };
    Ok(Prepared {
        row,
        delivery,
        notices,
        auto,
    })
}

/// The `matches` row of `body` (status `made`; a proposal's row is stored
/// `proposed` first and marked made when its record is stored).
///
/// # Errors
/// [`WorkerError::Corrupt`] if the body cannot be turned into JSON values.
pub(crate) fn match_row(mode: &ModeKey, body: &MatchMade) -> Result<match_::Model, WorkerError> {
    let corrupt = |e: serde_json::Error| WorkerError::Corrupt(e.to_string());
    // The stored teams leave `data` out: a JSON column would re-order and
    // re-format it; `match_tickets.data` keeps each ticket's text.
    Ok(match_::Model {
        id: body.match_id.clone(),
        project_id: mode.project_id.clone(),
        game_mode: mode.mode.clone(),
        game_mode_version: body.game_mode_version,
        teams: serde_json::to_value(&body.teams).map_err(corrupt)?,
        quality: serde_json::to_value(&body.quality).map_err(corrupt)?,
        created_at: body.created_at,
        match_shape: Some(serde_json::json!(body.match_shape)),
        seats_open: Some(serde_json::json!(body.seats_open)),
        region: body.region.clone(),
        status: matchplane_store::repos::match_status::MADE.to_owned(),
        answers: None,
        made_at: None,
        assignment: None,
        attributes: (!body.attributes.is_empty())
            .then(|| serde_json::to_value(&body.attributes))
            .transpose()
            .map_err(corrupt)?,
    })
}

pub(super) fn parse(entry: &OutboxEntry) -> Result<MatchMade, WorkerError> {
    match serde_json::from_str::<Event>(&entry.record_json) {
        Ok(Event::MatchMade(body)) => Ok(body),
        Ok(Event::Test(_) | Event::Backfilled(_)) => Err(WorkerError::Corrupt(format!(
            "outbox entry {} is not a match",
            entry.id
        ))),
        Err(e) => Err(WorkerError::Corrupt(format!(
            "outbox entry {}: {e}",
            entry.id
        ))),
    }
}
