//! A backfill request's match, and its roster checked against it: the
//! open seats it leaves, the values its players hold for the mode's rules
//! (docs/rules.md#backfill), and the roster as stored.

use crate::problem::ApiError;
use crate::state::AppState;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::backfill::roster::{
    check_roster, check_roster_roles, Roster, RosterSeats,
};
use matchplane_matchmaker::roles::open::OpenRoles;
use matchplane_matchmaker::rules::reachable::check_reachable_sent;
use matchplane_matchmaker::rules::roster::check_values;
use matchplane_matchmaker::rules::{DeclaredValues, RosterMember, RosterValues};
use matchplane_matchmaker::{Algorithm, Code, FieldError, GameModeConfig};
use matchplane_store::entities::match_;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::backfills::{self};
use matchplane_store::repos::{game_modes, matches};
use serde_json::Value;

/// The match, its mode's config and the mode's key.
pub(super) struct Context {
    pub(super) row: match_::Model,
    pub(super) config: GameModeConfig,
    pub(super) mode: ModeKey,
}

pub(super) async fn context(
    state: &AppState,
    project_id: &str,
    match_id: &str,
) -> Result<Context, ApiError> {
    let row = matches::get(&state.db, project_id, match_id).await?;
    let not_enabled = || {
        ApiError::invalid(vec![FieldError::new(
            "backfill",
            Code::BackfillNotEnabled,
            format!("game mode {} has no enabled backfill block", row.game_mode),
        )])
    };
    let mode = match game_modes::get(&state.db, project_id, &row.game_mode).await {
        Ok(mode) => mode,
        Err(matchplane_store::repos::StoreError::NotFound) => return Err(not_enabled()),
        Err(err) => return Err(err.into()),
    };
    let config: GameModeConfig =
        serde_json::from_value(mode.config).map_err(|e| ApiError::internal(&e))?;
    if config.backfill_enabled().is_none() {
        return Err(not_enabled());
    }
    let key = ModeKey::new(project_id, &row.game_mode);
    Ok(Context {
        row,
        config,
        mode: key,
    })
}

/// The match's team sizes: the mode's shape (a flexible shape's `max` for
/// each of the match's teams).
fn caps(config: &GameModeConfig, row: &match_::Model) -> Vec<u32> {
    let caps = config.match_shape.caps();
    match config.match_shape.flexible() {
        None => caps,
        Some(_) => {
            let teams = row.teams.as_array().map_or(caps.len(), Vec::len);
            caps.into_iter().take(teams).collect()
        }
    }
}

/// Every player of the stored match: (playerId, mmr, pingMs).
pub(super) fn match_players(row: &match_::Model) -> Vec<(String, Option<f64>, Option<f64>)> {
    matchplane_store::repos::matches::players_of(&row.teams)
        .filter_map(|p| {
            Some((
                p.get("playerId")?.as_str()?.to_owned(),
                p.get("mmr").and_then(Value::as_f64),
                p.get("pingMs").and_then(Value::as_f64),
            ))
        })
        .collect()
}

/// The roster under the mode's rules (docs/rules.md#backfill): the
/// request's values, and each roster player's (those the entry gives, else
/// those the match seated it with). Every value sent is checked against the
/// mode's declarations, all failures at once; empty in a mode without
/// rules.
pub(super) fn roster_values(ctx: &Context, roster: &Roster) -> Result<RosterValues, ApiError> {
    let declarations = ctx.config.attributes.as_ref();
    // As a ticket's: typed and within bounds, and no set too small for
    // its `intersect` rule ever to be filled.
    let check = |values: &DeclaredValues, field: &str| {
        let mut errors = check_values(values, declarations, field);
        if errors.is_empty() {
            errors = check_reachable_sent(&ctx.config, values, field);
        }
        errors
    };
    let mut errors = check(&roster.attributes, "attributes");
    for (t, team) in roster.teams.iter().enumerate() {
        for (i, p) in team.players.iter().enumerate() {
            errors.extend(check(
                &p.attributes,
                &format!("teams[{t}].players[{i}].attributes"),
            ));
        }
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid(errors));
    }
    if ctx.config.rules.is_empty() {
        return Ok(RosterValues::default());
    }
    let seated: std::collections::HashMap<String, DeclaredValues> =
        matchplane_store::repos::matches::players_of(&ctx.row.teams)
            .filter_map(|p| {
                let id = p.get("playerId")?.as_str()?.to_owned();
                let values = serde_json::from_value(p.get("attributes")?.clone()).ok()?;
                Some((id, values))
            })
            .collect();
    let players = roster
        .teams
        .iter()
        .flat_map(|t| &t.players)
        .map(|p| RosterMember {
            player_id: p.player_id.clone(),
            attributes: match p.attributes.is_empty() {
                true => seated.get(&p.player_id).cloned().unwrap_or_default(),
                false => p.attributes.clone(),
            },
        })
        .collect();
    Ok(RosterValues {
        attributes: roster.attributes.clone(),
        players,
    })
}

/// What a roster leaves open: seats per team, and in a role-queue mode
/// per team and role (docs/rules.md, "Backfill by role").
pub(super) struct Open {
    pub(super) seats: RosterSeats,
    pub(super) roles: Vec<OpenRoles>,
}

impl Open {
    /// The open roles as the row stores them (`None` outside role queues).
    pub(super) fn roles_json(&self) -> Option<Value> {
        (!self.roles.is_empty()).then(|| serde_json::json!(self.roles))
    }
}

/// Checks `roster` (a body already read as a roster's shape) against the
/// match: its seats, and in a role queue its players' roles (those given,
/// else those the match seated them in), every failure at once.
pub(super) fn seats_of(ctx: &Context, roster: Roster) -> Result<(Roster, Open), ApiError> {
    let players = match_players(&ctx.row);
    let mmr_required = matches!(ctx.config.algorithm, Algorithm::Mmr { .. });
    let caps = caps(&ctx.config, &ctx.row);
    let seats = check_roster(&caps, &roster, mmr_required, |id| {
        players.iter().find(|p| p.0 == id).and_then(|p| p.1)
    });
    let seated = seated_roles(&ctx.row);
    let roles = check_roster_roles(ctx.config.composition.as_ref(), &caps, &roster, |id| {
        seated.get(id).map(|r| (*r).to_owned())
    });
    match (seats, roles) {
        (Ok(seats), Ok(roles)) => Ok((roster, Open { seats, roles })),
        (seats, roles) => {
            let mut errors = seats.err().unwrap_or_default();
            errors.extend(roles.err().unwrap_or_default());
            Err(ApiError::invalid(errors))
        }
    }
}

/// The role each player of the stored match was seated in, by player id
/// (players matchplane seated in a role queue).
fn seated_roles(row: &match_::Model) -> std::collections::HashMap<&str, &str> {
    matchplane_store::repos::matches::players_of(&row.teams)
        .filter_map(|p| Some((p.get("playerId")?.as_str()?, p.get("role")?.as_str()?)))
        .collect()
}

/// `roster` as stored, with when it was sent: the match views show the
/// players it lists and those filled after it (docs/backfill.md).
pub(super) fn stored_roster(roster: &Roster, now: DateTime<Utc>) -> Result<Value, ApiError> {
    let mut value = serde_json::to_value(roster).map_err(|e| ApiError::internal(&e))?;
    if let Some(fields) = value.as_object_mut() {
        fields.insert(
            backfills::SET_AT.to_owned(),
            Value::String(now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)),
        );
    }
    Ok(value)
}
