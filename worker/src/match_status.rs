//! The worker's side of a match's status (docs/acceptance.md, docs/searching.md#statuses; the states are in
//! [`matchplane_store::repos::match_status`]):
//!
//! - a held proposal's row is stored `proposed` before its players are told
//!   ([`store_proposed`]);
//! - the record consumer marks a made proposal's row `made` and stores a
//!   cancelled one's status and answers from the closing's outbox record
//!   ([`apply`]), whichever process closed it, and adds the cancelled
//!   proposals to the minute's figures.

use crate::db_wait::Budget;
use crate::error::WorkerError;
use chrono::{DateTime, Utc};
use matchplane_store::pool::closed::CancelledProposal;
use matchplane_store::pool::{ClaimOutcome, ModeKey, ProposalClaim};
use matchplane_store::repos::match_status::{self, PROPOSED};
use matchplane_store::repos::stats_history::{self, Figures};
use matchplane_webhook::Event;
use sea_orm::DatabaseConnection;

/// Stores the rows of the held proposals of `claims` (their `outcomes`) as
/// `proposed`, every answer `none`, within what is left of the cycle's
/// `budget`. A failure is logged, not returned: the proposals are held
/// already (their made records store them anyway).
pub async fn store_proposed(
    db: &DatabaseConnection,
    mode: &ModeKey,
    claims: &[ProposalClaim],
    outcomes: &[ClaimOutcome],
    budget: &Budget,
) {
    let rows: Vec<_> = claims
        .iter()
        .zip(outcomes)
        .filter(|(_, outcome)| matches!(outcome, ClaimOutcome::Claimed { .. }))
        .filter_map(
            |(p, _)| match serde_json::from_str::<Event>(&p.claim.record_json) {
                Ok(Event::MatchMade(body)) => crate::record::match_row(mode, &body).ok(),
                _ => None,
            },
        )
        .map(|row| {
            let id = row.id.clone();
            as_proposed(row, proposal_tickets(claims, &id))
        })
        .collect();
    if rows.is_empty() {
        return;
    }
    let stored = budget.try_run(
        "storing the held proposals",
        None,
        match_status::store_proposed(db, rows),
    );
    if let Err(error) = stored.await {
        tracing::warn!(%error, game_mode = %mode.mode, "storing held proposals failed");
    }
}

/// A held proposal's `row` as it is first stored: `proposed`, every
/// answer of its `tickets` `none`, not made.
pub(crate) fn as_proposed<'a>(
    mut row: matchplane_store::entities::match_::Model,
    tickets: impl IntoIterator<Item = &'a str>,
) -> matchplane_store::entities::match_::Model {
    row.status = PROPOSED.to_owned();
    row.answers = Some(match_status::answers_all(tickets, "none"));
    row.made_at = None;
    row
}

/// The ticket ids of the proposal `match_id` among `claims`.
fn proposal_tickets<'a>(
    claims: &'a [ProposalClaim],
    match_id: &'a str,
) -> impl Iterator<Item = &'a str> {
    claims
        .iter()
        .filter(move |p| p.claim.match_id == match_id)
        .flat_map(|p| p.claim.ticket_ids.iter().map(String::as_str))
}

/// After a batch of records was stored: marks the proposals among `made`
/// (match ids) made at `now`, stores each of `cancelled` as such, and adds
/// to the minute's figures the proposals made (as matches) and the
/// cancelled ones a player declined or let time out (`declines`).
///
/// # Errors
/// A database failure (the batch stays in the outbox: every step here may
/// be applied twice).
pub async fn apply(
    db: &DatabaseConnection,
    mode: &ModeKey,
    made: &[String],
    cancelled: &[CancelledProposal],
    now: DateTime<Utc>,
) -> Result<(), WorkerError> {
    let proposals = match_status::mark_made(db, made, now).await?;
    crate::metrics::proposals_made(mode, &proposals);
    let mut declines = 0;
    for closed in cancelled {
        let answers = serde_json::to_value(&closed.answers)
            .map_err(|e| WorkerError::Corrupt(e.to_string()))?;
        let first =
            match_status::mark_cancelled(db, &mode.project_id, &closed.match_id, answers).await?;
        if first {
            crate::metrics::proposal_cancelled(mode, closed);
            if closed
                .answers
                .values()
                .any(|a| a == "declined" || a == "timeout")
            {
                declines += 1;
            }
        }
    }
    // The minute's figures: the proposals made count as its matches (a
    // claim counts its match in the cycle; a proposal only once made).
    let made: Vec<(Vec<f64>, Option<f64>)> = proposals
        .iter()
        .map(|row| {
            let waits = matchplane_store::repos::matches::players_of(&row.teams)
                .filter_map(|p| p.get("waitSeconds")?.as_f64())
                .collect();
            (waits, row.quality.get("mmrSpread").and_then(|v| v.as_f64()))
        })
        .collect();
    // Per role seat, the made proposals' players (docs/rules.md, "Role
    // waits"): each player entry of a mode with `composition` has its role.
    let mut roles = matchplane_matchmaker::role_waits::RoleWaits::default();
    for row in &proposals {
        for player in matchplane_store::repos::matches::players_of(&row.teams) {
            let role = player.get("role").and_then(|r| r.as_str());
            let wait = player.get("waitSeconds").and_then(|w| w.as_f64());
            if let (Some(role), Some(wait)) = (role, wait) {
                roles.add(role, wait);
            }
        }
    }
    let mut figures = Figures::of_cycle(
        0,
        made.iter()
            .map(|(waits, spread)| (waits.as_slice(), *spread)),
    )
    .with_roles(&roles);
    figures.cycles = 0;
    figures.declines = declines;
    stats_history::record(db, &mode.project_id, &mode.mode, now, &figures).await?;
    Ok(())
}
