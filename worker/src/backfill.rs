//! Backfill on the worker (docs/backfill.md): the open backfills a cycle serves,
//! each fill claimed atomically under the lease (its searches, its seats at
//! the revision it was computed from, its record in the outbox), and each
//! recorded fill stored with its `match.backfilled` delivery, its players
//! added to the stored match (marked `backfill: true`) and told `matched`.
//!
//! A fill's record leaves the outbox only once stored, like a match's; a
//! record handed over twice stores nothing the second time (the fill row,
//! the match's players and the delivery are each written once).

use crate::db_wait::Budget;
use crate::error::WorkerError;
use crate::modes::ModeConfig;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::{OpenBackfill, ProposedFill, RawJson};
use matchplane_store::entities::{backfill_fill, match_ticket, webhook_delivery};
use matchplane_store::pool::{Claim, FillClaim, FillOutcome, ModeKey, PoolStore};
use matchplane_store::repos::deliveries::{self, PendingDelivery};
use matchplane_store::repos::{backfills, match_tickets, matches, StoreError};
use matchplane_store::tickets::{publish, StatusMessage};
use matchplane_webhook::{Event, EventType, FillIdentity, MatchBackfilled, MatchMade};
use sea_orm::{ActiveModelTrait, DatabaseConnection, IntoActiveModel, Set, TransactionTrait};
use std::collections::HashMap;

mod auto;

pub use auto::{auto_id, open_auto};
pub(crate) use auto::{prepare_auto, AutoBackfill};

/// The delivery id of a fill's webhook (`dlv_bff_…`): derived from the
/// fill id, so a record handed over twice queues one delivery, and the
/// fill id (its `webhook-id`) is the id without `dlv_`.
pub fn delivery_id(fill_id: &str) -> String {
    format!("dlv_{fill_id}")
}

/// The mode's open backfills for this cycle at `now`: those past their
/// expiry are ended (`expired` in the database, dropped from the pool
/// store) and left out. A mode without backfill on serves none.
///
/// # Errors
/// A pool store failure (a database failure, or a database that does not
/// answer within what is left of the cycle's `budget`, only logs: the
/// expiry is written again next time).
pub async fn open_backfills(
    pool: &dyn PoolStore,
    db: &DatabaseConnection,
    mode: &ModeKey,
    config: &ModeConfig,
    now: DateTime<Utc>,
    budget: &Budget,
) -> Result<Vec<OpenBackfill>, WorkerError> {
    if config.config.backfill_enabled().is_none() {
        return Ok(Vec::new());
    }
    let now_secs = now.timestamp_micros() as f64 / 1e6;
    let all = pool.open_backfills(mode).await?;
    let mut open = Vec::with_capacity(all.len());
    for b in all {
        if now_secs < b.expires_at {
            open.push(b);
            continue;
        }
        let ended = backfills::end(
            db,
            &mode.project_id,
            &b.backfill_id,
            backfills::EXPIRED,
            now,
        );
        match budget.try_run("expiring a backfill", None, ended).await {
            Ok(()) => pool.forget_backfill(mode, &b.backfill_id).await?,
            Err(err) => {
                tracing::warn!(backfill_id = %b.backfill_id, error = %err, "expiring a backfill failed");
            }
        }
    }
    crate::metrics::backfills_open(mode, open.len());
    Ok(open)
}

/// What claiming a cycle's fills came to.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FillsClaimed {
    /// Fills claimed.
    pub fills: usize,
    /// Seats they took (players).
    pub seats: usize,
    /// Fills refused (the backfill changed, or a search went).
    pub refused: usize,
    /// The lease was lost.
    pub lease_lost: bool,
}

/// Claims each fill under `token`, one after the other (a backfill gets at
/// most one fill per cycle, so they never compete with one another).
/// `views` gives each backfill as this cycle read it, by id: a claimed
/// fill's seats count their time to fill from its opening, and in a mode
/// with rules the fill stores the view with its players in the roster, so
/// that the backfill's later fills agree with them (docs/rules.md#backfill).
///
/// # Errors
/// A pool store failure (fills claimed before it stay claimed).
pub async fn claim_fills(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    config: &ModeConfig,
    token: u64,
    now: DateTime<Utc>,
    fills: &[ProposedFill],
    views: &HashMap<String, OpenBackfill>,
) -> Result<FillsClaimed, WorkerError> {
    let rules = !config.config.rules.is_empty();
    let now_secs = now.timestamp_micros() as f64 / 1e6;
    let mut done = FillsClaimed::default();
    for proposed in fills {
        let fill_id = format!("bff_{}", ulid::Ulid::new());
        let body = MatchBackfilled::new(
            FillIdentity {
                fill_id,
                project_id: mode.project_id.clone(),
                game_mode: mode.mode.clone(),
                game_mode_version: config.version,
                created_at: now,
            },
            proposed,
        );
        let record_json = serde_json::to_string(&Event::Backfilled(body))
            .map_err(|e| WorkerError::Corrupt(format!("fill body: {e}")))?;
        let claim = FillClaim {
            backfill_id: proposed.backfill_id.to_string(),
            revision: proposed.revision,
            seats_taken: proposed.seats_taken(),
            roles_taken: proposed.roles_taken(),
            claim: Claim::of_teams(proposed.match_id.as_str(), &proposed.teams, record_json),
            view_after: views
                .get(proposed.backfill_id.as_str())
                .filter(|_| rules)
                .map(|view| view.with_fill_roster(proposed)),
        };
        match pool.claim_fill(mode, token, &claim, now_secs).await? {
            FillOutcome::Claimed { .. } => {
                done.fills += 1;
                done.seats += claim.claim.ticket_ids.len();
                let waited = views
                    .get(claim.backfill_id.as_str())
                    .map(|view| (now_secs - view.opened_at).max(0.0));
                crate::metrics::backfilled(mode, claim.claim.ticket_ids.len(), waited);
            }
            FillOutcome::Stale | FillOutcome::Conflict { .. } => done.refused += 1,
            FillOutcome::LeaseLost => {
                done.lease_lost = true;
                return Ok(done);
            }
        }
    }
    Ok(done)
}

/// What one fill record becomes.
pub(crate) struct PreparedFill {
    body: MatchBackfilled,
    record_json: String,
}

impl PreparedFill {
    pub(crate) fn new(body: MatchBackfilled, record_json: String) -> Self {
        Self { body, record_json }
    }

    /// (ticket id, match id) of each new player.
    pub(crate) fn seats(&self) -> Vec<(String, String)> {
        self.body
            .players()
            .map(|(_, p)| (p.ticket_id.clone(), self.body.match_id.clone()))
            .collect()
    }
}

/// Stores `fills` (each in its own transaction, with its tickets' rows
/// from `seated`), then tells each new player `matched` with its view of
/// the match. Idempotent per fill.
///
/// # Errors
/// A database failure: the records stay in the outbox.
pub(crate) async fn store_fills(
    pool: &dyn PoolStore,
    db: &DatabaseConnection,
    mode: &ModeKey,
    fills: Vec<PreparedFill>,
    seated: &[match_ticket::Model],
    webhook: bool,
    now: DateTime<Utc>,
) -> Result<(), WorkerError> {
    // Each newcomer's ticket `data`, from its record (never in the pool,
    // docs/backfill.md), as `match.made` gets it.
    let data: HashMap<&str, &str> = seated
        .iter()
        .filter_map(|row| Some((row.ticket_id.as_str(), row.data.as_deref()?)))
        .collect();
    for fill in fills {
        let (body, payload) = with_data(&fill, &data)?;
        let body = &body;
        let txn = db.begin().await.map_err(StoreError::from)?;
        let row = matches::get(&txn, &mode.project_id, &body.match_id).await?;
        let mut teams: Vec<matchplane_webhook::payload::Team> =
            serde_json::from_value(row.teams.clone())
                .map_err(|e| WorkerError::Corrupt(format!("match teams: {e}")))?;
        for (index, player) in body.players() {
            let Some(team) = teams.iter_mut().find(|t| t.index == index) else {
                continue;
            };
            if !team.players.iter().any(|p| p.ticket_id == player.ticket_id) {
                // The stored teams never hold `data` (it is kept as text in
                // `match_tickets.data`, which the views read).
                let mut seat = player.clone();
                seat.data = None;
                team.players.push(seat);
            }
        }
        let mut active = row.clone().into_active_model();
        active.teams =
            Set(serde_json::to_value(&teams).map_err(|e| WorkerError::Corrupt(e.to_string()))?);
        active.update(&txn).await.map_err(StoreError::from)?;
        let mine: Vec<match_ticket::Model> = seated
            .iter()
            .filter(|s| body.players().any(|(_, p)| p.ticket_id == s.ticket_id))
            .cloned()
            .collect();
        match_tickets::insert_if_absent(&txn, mine).await?;
        let taken = u32::try_from(body.players().count()).unwrap_or(u32::MAX);
        let filled = body.open_seats_left.iter().all(|s| *s == 0);
        backfills::record_fill(
            &txn,
            backfill_fill::Model {
                id: body.fill_id.clone(),
                backfill_id: body.backfill_id.clone(),
                project_id: mode.project_id.clone(),
                match_id: body.match_id.clone(),
                // Without `data`, as the stored match's teams.
                teams: serde_json::to_value(&fill.body.teams)
                    .map_err(|e| WorkerError::Corrupt(e.to_string()))?,
                open_seats_left: serde_json::json!(body.open_seats_left),
                created_at: body.created_at,
            },
            (!body.open_roles_left.is_empty()).then(|| serde_json::json!(body.open_roles_left)),
            (taken, filled),
            now,
        )
        .await?;
        if webhook {
            deliveries::queue_if_absent(
                &txn,
                vec![PendingDelivery {
                    id: delivery_id(&body.fill_id),
                    project_id: mode.project_id.clone(),
                    game_mode: mode.mode.clone(),
                    match_id: Some(body.match_id.clone()),
                    event_type: EventType::MatchBackfilled.as_str(),
                    payload: payload.clone(),
                }
                .row(now)],
            )
            .await?;
        }
        txn.commit().await.map_err(StoreError::from)?;
        // Each newcomer's own view carries its `data` (the stored teams
        // never do).
        for team in &mut teams {
            for seat in &mut team.players {
                if let Some((_, p)) = body.players().find(|(_, p)| p.ticket_id == seat.ticket_id) {
                    seat.data.clone_from(&p.data);
                }
            }
        }
        // The newcomer sees the roster the studio sent, not who left
        // (docs/backfill.md).
        let current = backfills::current_rosters(db, &mode.project_id, &[&row.id]).await?;
        let shape = matchplane_webhook::payload::shape_of(row.match_shape.as_ref());
        matchplane_webhook::payload::follow_roster(
            &mut teams,
            current.get(&row.id),
            shape.as_deref(),
        );
        let made = MatchMade {
            match_id: row.id.clone(),
            project_id: row.project_id.clone(),
            game_mode: row.game_mode.clone(),
            game_mode_version: row.game_mode_version,
            created_at: row.created_at,
            made_at: row.made_at,
            teams,
            quality: serde_json::from_value(row.quality.clone())
                .map_err(|e| WorkerError::Corrupt(e.to_string()))?,
            match_shape: Vec::new(),
            seats_open: Vec::new(),
            region: row.region.clone(),
            backfill_id: None,
            attributes: row
                .attributes
                .clone()
                .map(serde_json::from_value)
                .transpose()
                .map_err(|e| WorkerError::Corrupt(e.to_string()))?
                .unwrap_or_default(),
        };
        for (_, player) in body.players() {
            if let Some(view) = matchplane_webhook::player_match(&made, &player.ticket_id) {
                publish(
                    pool,
                    &player.ticket_id,
                    &StatusMessage::Matched { match_: view },
                )
                .await;
            }
        }
    }
    Ok(())
}

/// `fill`'s body with each newcomer's ticket `data` (ticket id to its JSON
/// text) in its entry, and the webhook payload: the claim's record as it
/// is, or, when a newcomer brought `data`, that body re-encoded.
///
/// # Errors
/// [`WorkerError::Corrupt`] for stored `data` that is not JSON.
fn with_data(
    fill: &PreparedFill,
    data: &HashMap<&str, &str>,
) -> Result<(MatchBackfilled, String), WorkerError> {
    let corrupt = |e: serde_json::Error| WorkerError::Corrupt(e.to_string());
    let mut body = fill.body.clone();
    let mut any = false;
    for player in body.teams.iter_mut().flat_map(|t| &mut t.players) {
        if let Some(text) = data.get(player.ticket_id.as_str()) {
            player.data = Some(RawJson::from_text(*text).map_err(corrupt)?);
            any = true;
        }
    }
    let payload = if any {
        serde_json::to_string(&Event::Backfilled(body.clone())).map_err(corrupt)?
    } else {
        fill.record_json.clone()
    };
    Ok((body, payload))
}

/// The message of a stored fill delivery: `webhook-id` is the fill id.
pub fn webhook_id(row: &webhook_delivery::Model) -> Option<String> {
    (row.event_type == EventType::MatchBackfilled.as_str())
        .then(|| row.id.strip_prefix("dlv_").unwrap_or(&row.id).to_owned())
}
