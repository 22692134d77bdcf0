//! The automatic backfill (docs/backfill.md, `backfill.auto`): a match made
//! with open seats gets a backfill at once, its view computed from the
//! match's record alone (its seats, its players' MMR, pings and the values
//! its rules read), so the claiming worker and an outbox consumer
//! re-creating it agree.

use crate::error::WorkerError;
use crate::modes::ModeConfig;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::backfill::BackfillConfig;
use matchplane_matchmaker::roles::open::OpenRoles;
use matchplane_matchmaker::roles::Composition;
use matchplane_matchmaker::{OpenBackfill, ProposedMatch};
use matchplane_store::entities::{backfill, game_mode_version};
use matchplane_store::pool::{Claim, ModeKey, PoolStore};
use matchplane_store::repos::{backfills, game_modes, StoreError};
use matchplane_webhook::{Event, MatchMade};
use sea_orm::DatabaseConnection;

/// The id of the backfill `backfill.auto` opens for `proposed` (a match
/// with open seats), if the mode has it.
pub fn auto_id(config: &ModeConfig, proposed: &ProposedMatch) -> Option<String> {
    let auto = config.config.backfill_enabled().is_some_and(|b| b.auto);
    (auto && proposed.seats_open.iter().any(|s| *s > 0))
        .then(|| format!("bf_{}", ulid::Ulid::new()))
}

/// The live view of the automatic backfill `backfill_id` of the match
/// `body`: its empty seats (`seatsOpen`), its players' mean MMR and pings,
/// open from `opened` (when the match was made: its `createdAt`, or for a
/// proposal its `madeAt`) for `ttl_seconds`; in a role queue
/// (`composition`), the role seats its players and bots leave open.
/// Computed from the match's record alone, so the claim's worker and an
/// outbox consumer re-creating it get the same view.
pub(crate) fn auto_view(
    body: &MatchMade,
    backfill_id: &str,
    opened: DateTime<Utc>,
    (ttl_seconds, composition): (u32, Option<&Composition>),
) -> OpenBackfill {
    let players = || body.teams.iter().flat_map(|t| t.players.iter());
    let mmrs: Vec<f64> = players().filter_map(|p| p.mmr).collect();
    let opened_at = opened.timestamp_micros() as f64 / 1e6;
    OpenBackfill {
        backfill_id: backfill_id.into(),
        match_id: body.match_id.as_str().into(),
        revision: 1,
        open_seats: body.seats_open.clone(),
        opened_at,
        expires_at: opened_at + f64::from(ttl_seconds),
        mean_mmr: (!mmrs.is_empty()).then(|| mmrs.iter().sum::<f64>() / mmrs.len() as f64),
        pings: players().filter_map(|p| p.ping_ms).collect(),
        region: body.region.as_deref().map(Into::into),
        roster: roster_values(players()),
        open_roles: composition.map_or_else(Vec::new, |c| open_roles(body, c)),
    }
}

/// The role seats the match `body` leaves open under `composition`
/// (docs/rules.md, "Backfill by role"): each team's seats minus the roles
/// of its players and of the bots whose seats are not open (a replaceable
/// bot's seat is open: its role is free for a newcomer). Empty when they
/// fit no step of it (a match made before the mode had its composition):
/// then fills take any role.
fn open_roles(body: &MatchMade, composition: &Composition) -> Vec<OpenRoles> {
    let team_size: u32 = composition.per_team.values().sum();
    let mut held: Vec<Vec<&str>> = vec![Vec::new(); body.seats_open.len()];
    for team in &body.teams {
        let (Some(h), Some(open)) = (held.get_mut(team.index), body.seats_open.get(team.index))
        else {
            continue;
        };
        let seated = team_size.saturating_sub(*open) as usize;
        let roles = team.players.iter().map(|p| p.role.as_deref());
        let bots = team.bots.iter().map(|b| b.role.as_deref());
        h.extend(
            roles
                .chain(bots)
                .take(seated)
                .map(|r| r.unwrap_or(matchplane_matchmaker::roles::ANY)),
        );
    }
    matchplane_matchmaker::roles::open::open_roles(composition, &held).unwrap_or_default()
}

/// The match's players under the mode's rules (docs/rules.md#backfill):
/// each with the values it was matched with; empty when no player has any
/// (a mode without declared attributes).
fn roster_values<'a>(
    players: impl Iterator<Item = &'a matchplane_webhook::payload::Player> + Clone,
) -> matchplane_matchmaker::rules::RosterValues {
    // Every player, values or not: a fill never seats a roster player
    // again (docs/backfill.md).
    matchplane_matchmaker::rules::RosterValues {
        attributes: Default::default(),
        players: players
            .map(|p| matchplane_matchmaker::rules::RosterMember {
                player_id: p.player_id.clone(),
                attributes: p.attributes.clone(),
            })
            .collect(),
    }
}

/// Opens the automatic backfill of a claimed match in the pool store (its
/// record names the id). Does nothing for a match without one. Should the
/// worker die before this, the outbox consumer opens it when it records
/// the match ([`prepare_auto`]).
///
/// # Errors
/// A pool store failure.
pub async fn open_auto(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    config: &ModeConfig,
    claim: &Claim,
) -> Result<(), WorkerError> {
    let Ok(Event::MatchMade(body)) = serde_json::from_str::<Event>(&claim.record_json) else {
        return Ok(());
    };
    let (Some(id), Some(block)) = (&body.backfill_id, config.config.backfill_enabled()) else {
        return Ok(());
    };
    let view = auto_view(
        &body,
        id,
        body.created_at,
        (block.ttl_seconds, config.config.composition.as_ref()),
    );
    pool.open_backfill(mode, &view).await?;
    Ok(())
}

/// The automatic backfill of a match being recorded: its request row,
/// stored in the match's own transaction, and the view to open in the pool
/// store once it is stored when the store does not have it (the claim's
/// worker died before opening it, or the match came from a proposal).
pub(crate) struct AutoBackfill {
    pub(crate) row: backfill::Model,
    pub(crate) reopen: Option<OpenBackfill>,
}

/// The automatic backfill of the match `body`, recorded at `now`, if it
/// names one: as the pool store has it (opened by the claim's worker), or
/// else dated from when the match was made, the match's `createdAt` or,
/// where the mode's version the match was made under had acceptance (the
/// match was a proposal, recorded once the last player accepted), `now`,
/// the proposal's `madeAt`, and expiring the version's `ttlSeconds` after;
/// an expired one is not opened again.
///
/// # Errors
/// A pool store or database failure.
pub(crate) async fn prepare_auto(
    pool: &dyn PoolStore,
    db: &DatabaseConnection,
    mode: &ModeKey,
    body: &MatchMade,
    now: DateTime<Utc>,
) -> Result<Option<AutoBackfill>, WorkerError> {
    let Some(id) = &body.backfill_id else {
        return Ok(None);
    };
    let at = |secs: f64| DateTime::from_timestamp_micros((secs * 1e6) as i64);
    let (opened, expires_at, open_roles, reopen) = match pool.backfill(mode, id).await? {
        Some(live) => {
            let view = live.backfill;
            // To the millisecond, as a match's `createdAt` is kept.
            let opened = DateTime::from_timestamp_millis((view.opened_at * 1e3).round() as i64)
                .unwrap_or(body.created_at);
            (opened, view.expires_at, view.open_roles, None)
        }
        None => {
            let settings = auto_settings(db, mode, body.game_mode_version).await?;
            let opened = if settings.proposed {
                now
            } else {
                body.created_at
            };
            let composition = settings.composition.as_ref();
            let view = auto_view(body, id, opened, (settings.ttl_seconds, composition));
            let now_secs = now.timestamp_micros() as f64 / 1e6;
            (
                opened,
                view.expires_at,
                view.open_roles.clone(),
                (now_secs < view.expires_at).then_some(view),
            )
        }
    };
    // Fills recorded after the match write theirs (docs/rules.md,
    // "Backfill by role").
    let open_roles_json = (!open_roles.is_empty()).then(|| serde_json::json!(open_roles));
    let expires_at = at(expires_at).unwrap_or(body.created_at);
    let roster: Vec<serde_json::Value> = body
        .teams
        .iter()
        .map(|t| {
            serde_json::json!({"index": t.index, "players": t.players.iter()
                .map(|p| match &p.role {
                    Some(role) => serde_json::json!({"playerId": p.player_id, "mmr": p.mmr, "role": role}),
                    None => serde_json::json!({"playerId": p.player_id, "mmr": p.mmr}),
                })
                .collect::<Vec<_>>()})
        })
        .collect();
    let row = backfill::Model {
        id: id.clone(),
        project_id: mode.project_id.clone(),
        game_mode: mode.mode.clone(),
        match_id: body.match_id.clone(),
        open_match_id: Some(body.match_id.clone()),
        status: backfills::OPEN.to_owned(),
        roster: serde_json::json!({ "teams": roster }),
        open_seats: serde_json::json!(body.seats_open),
        open_roles: open_roles_json,
        fills: 0,
        seats_filled: 0,
        revision: 1,
        created_at: opened,
        updated_at: now,
        expires_at,
    };
    Ok(Some(AutoBackfill { row, reopen }))
}

/// What an automatic backfill reads of a mode's version.
struct AutoSettings {
    /// `backfill.ttlSeconds` (the default when there is no block).
    ttl_seconds: u32,
    composition: Option<Composition>,
    /// Whether the version has acceptance: its matches were proposals.
    proposed: bool,
}

/// The [`AutoSettings`] of `mode` at `version` (the current version's
/// when that one is gone).
async fn auto_settings(
    db: &DatabaseConnection,
    mode: &ModeKey,
    version: i64,
) -> Result<AutoSettings, WorkerError> {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let at_version = game_mode_version::Entity::find()
        .filter(game_mode_version::Column::ProjectId.eq(mode.project_id.as_str()))
        .filter(game_mode_version::Column::Name.eq(mode.mode.as_str()))
        .filter(game_mode_version::Column::Version.eq(version))
        .one(db)
        .await
        .map_err(StoreError::from)?;
    let config = match at_version {
        Some(row) => Some(row.config),
        None => match game_modes::get(db, &mode.project_id, &mode.mode).await {
            Ok(row) => Some(row.config),
            Err(StoreError::NotFound) => None,
            Err(err) => return Err(err.into()),
        },
    };
    let block = config
        .as_ref()
        .and_then(|c| c.get("backfill").cloned())
        .and_then(|b| serde_json::from_value::<BackfillConfig>(b).ok())
        .unwrap_or_default();
    let composition = config
        .as_ref()
        .and_then(|c| c.get("composition").cloned())
        .and_then(|c| serde_json::from_value::<Composition>(c).ok());
    let proposed = config
        .as_ref()
        .and_then(|c| c.get("acceptance"))
        .is_some_and(|a| !a.is_null());
    Ok(AutoSettings {
        ttl_seconds: block.ttl_seconds,
        composition,
        proposed,
    })
}
