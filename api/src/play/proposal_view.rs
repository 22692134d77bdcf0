//! The `proposal` of a proposed ticket's status: `{matchId, acceptBy,
//! acceptInSeconds, accepted, attributes}`.

use super::status::mode_key;
use super::{rfc3339, Play};
use crate::problem::ApiError;
use matchplane_store::tickets::Ticket;
use sea_orm::DatabaseConnection;
use serde::Serialize;
use utoipa::ToSchema;

/// An open match proposal, as a proposed ticket's status shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[schema(example = json!({"matchId": "mat_01JDZ8P2X5Y6Z7A8B9C0D1E2F3", "acceptBy": "2026-12-01T10:00:20.000Z",
    "acceptInSeconds": 17.5, "accepted": ["tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9"]}))]
#[serde(rename_all = "camelCase")]
pub struct ProposalView {
    /// `mat_…`: the match's id once everyone accepted.
    pub match_id: String,
    /// The deadline to answer (RFC 3339); an accept never moves it.
    #[schema(format = DateTime)]
    pub accept_by: String,
    /// Seconds left until `acceptBy` (0 once past).
    pub accept_in_seconds: f64,
    /// The tickets that accepted so far.
    pub accepted: Vec<String>,
    /// What every player agreed on under the mode's rules (docs/rules.md,
    /// "What the match carries"), by attribute; absent without rules.
    #[serde(skip_serializing_if = "matchplane_matchmaker::rules::DeclaredValues::is_empty")]
    #[schema(value_type = Option<HashMap<String, matchplane_matchmaker::rules::AttributeValue>>, nullable = false)]
    pub attributes: matchplane_matchmaker::rules::DeclaredValues,
}

/// The part of a proposal's `match.made` body the view shows.
#[derive(serde::Deserialize)]
struct Agreed {
    #[serde(default)]
    attributes: matchplane_matchmaker::rules::DeclaredValues,
}

/// `ticket`'s open proposal at `now`, if its mode has acceptance and it is
/// in one.
///
/// # Errors
/// `500` when a store fails.
pub async fn of_ticket(
    play: &Play,
    db: &DatabaseConnection,
    ticket: &Ticket,
    now: f64,
) -> Result<Option<ProposalView>, ApiError> {
    let config = play
        .cache
        .mode(db, &ticket.project_id, &ticket.game_mode)
        .await?;
    if config.is_none_or(|c| c.acceptance.is_none()) {
        return Ok(None);
    }
    let mode = mode_key(ticket);
    let Some(match_id) = play.pool.proposal_of(&mode, &ticket.ticket_id).await? else {
        return Ok(None);
    };
    let Some(state) = play.pool.proposal(&mode, &match_id).await? else {
        return Ok(None);
    };
    let agreed = serde_json::from_str::<Agreed>(&state.record_json)
        .map(|a| a.attributes)
        .unwrap_or_default();
    Ok(Some(ProposalView {
        accept_by: rfc3339(state.accept_by),
        accept_in_seconds: ((state.accept_by - now).max(0.0) * 1000.0).round() / 1000.0,
        accepted: state.accepted(),
        match_id,
        attributes: agreed,
    }))
}
