//! A backfill request's match, and its roster checked against it: the
//! open seats it leaves, the values its players hold for the mode's rules
//! (docs/rules.md#backfill), and the roster as stored.

use super::bots::{caps, kept_bot_roles};
use crate::extract::parse_value;
use crate::problem::ApiError;
use crate::state::AppState;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::backfill::roster::{
    check_roster, check_roster_roles, Roster, RosterSeats,
};
use matchplane_matchmaker::roles::open::OpenRoles;
use matchplane_matchmaker::rules::own_players::check_roster_players;
use matchplane_matchmaker::rules::parse::value_of;
use matchplane_matchmaker::rules::reachable::check_reachable_sent;
use matchplane_matchmaker::rules::roster::{check_sent, roles_not_read, unread_roles, SentIn};
use matchplane_matchmaker::rules::{DeclaredValues, RosterMember, RosterValues};
use matchplane_matchmaker::{Algorithm, Code, FieldError, GameModeConfig};
use matchplane_store::entities::match_;
use matchplane_store::pool::ModeKey;
use matchplane_store::repos::backfills::{self};
use matchplane_store::repos::{match_status, matches};
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
    if row.status != match_status::MADE {
        return Err(not_made(&row));
    }
    let not_enabled = |why: &str| {
        ApiError::invalid(vec![FieldError::new(
            "backfill",
            Code::BackfillNotEnabled,
            format!("game mode {} {why}", row.game_mode),
        )])
    };
    // A match of a deleted mode is not backfilled, also once a mode of the
    // same name is created again: that is a new mode (docs/game-modes.md).
    let deleted = || {
        ApiError::invalid(vec![FieldError::new(
            "matchId",
            Code::ValidationError,
            format!(
                "match {}'s game mode {} was deleted: a deleted mode's matches are not backfilled",
                row.id, row.game_mode
            ),
        )])
    };
    let Some(mode) = matches::own_mode(&state.db, &row).await? else {
        return Err(deleted());
    };
    let config: GameModeConfig =
        serde_json::from_value(mode.config).map_err(|e| ApiError::internal(&e))?;
    if config.backfill_enabled().is_none() {
        return Err(not_enabled("has no enabled backfill block"));
    }
    // A disabled mode fills nothing: its open requests wait, and no roster
    // is taken meanwhile (docs/backfill.md, "Changing or closing a request").
    if !config.enabled {
        return Err(not_enabled("is disabled: its matches are not backfilled"));
    }
    let key = ModeKey::new(project_id, &row.game_mode);
    Ok(Context {
        row,
        config,
        mode: key,
    })
}

/// The refusal of a backfill request for `row`, a match that is not
/// `made` (a proposal, cancelled, released or unassigned): nobody is
/// seated in a match that is not played (docs/backfill.md, "Refusals").
/// Worded as an assignment's for the same match.
pub(super) fn not_made(row: &match_::Model) -> ApiError {
    ApiError::invalid(vec![FieldError::new(
        "matchId",
        Code::ValidationError,
        format!(
            "match {} is {}, not made: only a made match is backfilled",
            row.id, row.status
        ),
    )])
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

/// Attribute values of a backfill body that no attribute type reads (a
/// boolean, `null`, an object, a list holding anything but strings): taken
/// out of the body before its shape is read, so that they are refused
/// beside the request's other failures, as a ticket's are (`422` naming
/// each), rather than as a malformed body. Each is (the object's field,
/// the attribute's name, the value).
#[derive(Debug, Default)]
pub(super) struct Untyped(Vec<(String, String, Value)>);

/// Whether an attribute value is of a JSON type some attribute type reads.
fn typed(value: &Value) -> bool {
    match value {
        Value::Number(_) | Value::String(_) => true,
        Value::Array(items) => items.iter().all(Value::is_string),
        _ => false,
    }
}

/// Reads a backfill body as a roster, the values no attribute type reads
/// taken out first ([`Untyped`]).
///
/// # Errors
/// The body's shape (`400`), as every strict body.
pub(super) fn read_roster(mut body: Value) -> Result<(Roster, Untyped), ApiError> {
    let mut untyped = Untyped::default();
    let mut take = |object: Option<&mut Value>, field: String| {
        let Some(Value::Object(values)) = object else {
            return;
        };
        let names: Vec<String> = values
            .iter()
            .filter(|(_, v)| !typed(v))
            .map(|(k, _)| k.clone())
            .collect();
        for name in names {
            if let Some(value) = values.remove(&name) {
                untyped.0.push((field.clone(), name, value));
            }
        }
    };
    take(body.get_mut("attributes"), "attributes".to_owned());
    if let Some(Value::Array(teams)) = body.get_mut("teams") {
        for (t, team) in teams.iter_mut().enumerate() {
            if let Some(Value::Array(players)) = team.get_mut("players") {
                for (i, player) in players.iter_mut().enumerate() {
                    let field = format!("teams[{t}].players[{i}].attributes");
                    take(player.get_mut("attributes"), field);
                }
            }
        }
    }
    Ok((parse_value(body)?, untyped))
}

/// Checks a roster (read by [`read_roster`]) against the match and its
/// mode: its values under the rules and its seats and roles, every failure
/// of both at once.
///
/// # Errors
/// `422` with every failure: `VALIDATION_ERROR` for the values,
/// `INVALID_ROSTER` and `NO_OPEN_SEATS` for the seats.
pub(super) fn check(
    ctx: &Context,
    roster: Roster,
    untyped: &Untyped,
) -> Result<(RosterValues, Roster, Open), ApiError> {
    let values = roster_values(ctx, &roster, untyped);
    let seats = seats_of(ctx, roster);
    match (values, seats) {
        (Ok(values), Ok((roster, open))) => Ok((values, roster, open)),
        (values, seats) => {
            let mut errors = values.err().unwrap_or_default();
            errors.extend(seats.err().unwrap_or_default());
            Err(ApiError::invalid(errors))
        }
    }
}

/// The roster under the mode's rules (docs/rules.md#backfill): the
/// request's values, and each roster player's (those the entry gives, else
/// those the match seated it with). Every value sent is checked against the
/// mode's declarations, those taken out as [`Untyped`] included, all
/// failures at once; a value of the composition's attribute no rule reads
/// is refused ([`check_sent`]): the roster's `role`s give the seats. In a
/// mode without rules, only the roster's player ids (a fill never seats a
/// roster player again).
fn roster_values(
    ctx: &Context,
    roster: &Roster,
    untyped: &Untyped,
) -> Result<RosterValues, Vec<FieldError>> {
    let declarations = ctx.config.attributes.as_ref();
    // As a ticket's: typed and within bounds, and no set too small for
    // its `intersect` rule ever to be filled, every failure at once (a
    // field already refused is not judged again).
    let check = |values: &DeclaredValues, field: &str, sent_in: SentIn| {
        let mut errors = check_sent(values, &ctx.config, field, sent_in);
        for e in check_reachable_sent(&ctx.config, values, field) {
            let entry = format!("{}[", e.field);
            if !errors
                .iter()
                .any(|seen| seen.field == e.field || seen.field.starts_with(&entry))
            {
                errors.push(e);
            }
        }
        errors
    };
    // A block list naming the roster's own players: the roster is one
    // match, as a party is one candidate (a ticket's own, docs/rules.md).
    let ids: Vec<&str> = roster
        .teams
        .iter()
        .flat_map(|t| t.players.iter().map(|p| p.player_id.as_str()))
        .collect();
    let declared = |name: &str| declarations.and_then(|d| d.get(name));
    let own =
        |values: &DeclaredValues, field: &str| check_roster_players(values, declared, &ids, field);
    let mut errors = check(&roster.attributes, "attributes", SentIn::Request);
    errors.extend(own(&roster.attributes, "attributes"));
    for (t, team) in roster.teams.iter().enumerate() {
        for (i, p) in team.players.iter().enumerate() {
            let field = format!("teams[{t}].players[{i}].attributes");
            errors.extend(check(&p.attributes, &field, SentIn::Entry));
            errors.extend(own(&p.attributes, &field));
        }
    }
    let roles = unread_roles(&ctx.config);
    for (object, name, value) in &untyped.0 {
        if roles == Some(name.as_str()) {
            let sent_in = if object == "attributes" {
                SentIn::Request
            } else {
                SentIn::Entry
            };
            errors.push(roles_not_read(name, object, sent_in));
            continue;
        }
        let field = format!("{object}.{name}");
        let not_declared = || {
            vec![FieldError::new(
                &field,
                Code::ValidationError,
                "not an attribute the game mode declares",
            )]
        };
        errors.extend(match declarations.and_then(|d| d.get(name)) {
            None => not_declared(),
            // Always a failure: no declaration reads such a value.
            Some(declaration) => value_of(declaration, value, &field)
                .err()
                .unwrap_or_default(),
        });
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    // Without rules only who is on the roster is kept: a fill never seats
    // them again.
    let ruled = !ctx.config.rules.is_empty();
    let seated: std::collections::HashMap<String, DeclaredValues> = if ruled {
        matchplane_store::repos::matches::players_of(&ctx.row.teams)
            .filter_map(|p| {
                let id = p.get("playerId")?.as_str()?.to_owned();
                let values = serde_json::from_value(p.get("attributes")?.clone()).ok()?;
                Some((id, values))
            })
            .collect()
    } else {
        std::collections::HashMap::new()
    };
    let players = roster
        .teams
        .iter()
        .flat_map(|t| &t.players)
        .map(|p| RosterMember {
            player_id: p.player_id.clone(),
            attributes: match (ruled, p.attributes.is_empty()) {
                (false, _) => DeclaredValues::default(),
                (true, true) => seated.get(&p.player_id).cloned().unwrap_or_default(),
                (true, false) => p.attributes.clone(),
            },
        })
        .collect();
    Ok(RosterValues {
        attributes: if ruled {
            roster.attributes.clone()
        } else {
            DeclaredValues::default()
        },
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
fn seats_of(ctx: &Context, roster: Roster) -> Result<(Roster, Open), Vec<FieldError>> {
    let players = match_players(&ctx.row);
    let mmr_required = matches!(ctx.config.algorithm, Algorithm::Mmr { .. });
    let caps = caps(&ctx.config, &ctx.row);
    let made: Vec<f64> = players.iter().filter_map(|p| p.1).collect();
    let seats = check_roster(&caps, &roster, mmr_required, |id| {
        players.iter().find(|p| p.0 == id).and_then(|p| p.1)
    })
    .map(|seats| seats.or_made_mean(&made));
    // A given MMR outside the mode's range is refused as a ticket's
    // (`MMR_OUT_OF_RANGE`): no candidate could ever fit such a roster.
    let mut mmr_errors = Vec::new();
    for (t, team) in roster.teams.iter().enumerate() {
        for (p, player) in team.players.iter().enumerate() {
            let Some(mmr) = player.mmr.filter(|m| m.is_finite() && mmr_required) else {
                continue;
            };
            if let Err(e) = matchplane_matchmaker::attributes::check_mmr(&ctx.config, Some(mmr)) {
                mmr_errors.push(FieldError::new(
                    format!("teams[{t}].players[{p}].mmr"),
                    e.code,
                    e.message,
                ));
            }
        }
    }
    let seated = seated_roles(&ctx.row);
    let kept = kept_bot_roles(&ctx.config, &ctx.row.teams);
    let roles = check_roster_roles(
        ctx.config.composition.as_ref(),
        &caps,
        &roster,
        &kept,
        |id| seated.get(id).map(|r| (*r).to_owned()),
    );
    match (seats, roles) {
        (Ok(seats), Ok(roles)) if mmr_errors.is_empty() => Ok((roster, Open { seats, roles })),
        (seats, roles) => {
            let mut errors = seats.err().unwrap_or_default();
            errors.extend(mmr_errors);
            errors.extend(roles.err().unwrap_or_default());
            Err(errors)
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
pub(super) fn stored_roster(
    roster: &Roster,
    now: DateTime<Utc>,
    departed: &[(String, usize)],
) -> Result<Value, ApiError> {
    let mut value = serde_json::to_value(roster).map_err(|e| ApiError::internal(&e))?;
    if let Some(fields) = value.as_object_mut() {
        fields.insert(
            backfills::SET_AT.to_owned(),
            Value::String(now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)),
        );
        if !departed.is_empty() {
            let left = departed
                .iter()
                .map(|(id, team)| serde_json::json!({"playerId": id, "index": team}))
                .collect();
            fields.insert(backfills::LEFT.to_owned(), Value::Array(left));
        }
    }
    Ok(value)
}

/// The players of match `match_id` that `roster` leaves out, each with the
/// team it last sat on (as the match's newest roster and the fills after
/// it have them; a player that left earlier keeps the team it left from),
/// sorted: stored with the roster so the views show a departed player on
/// that team (docs/backfill.md, "The roster the views show"). Empty when no
/// request named the match before: its players sit where it made them.
///
/// # Errors
/// A database failure.
pub(super) async fn departed(
    state: &AppState,
    project_id: &str,
    match_id: &str,
    roster: &Roster,
) -> Result<Vec<(String, usize)>, ApiError> {
    let mut current = backfills::current_rosters(&state.db, project_id, &[match_id]).await?;
    let Some(current) = current.remove(match_id) else {
        return Ok(Vec::new());
    };
    let listed: std::collections::HashSet<&str> = roster
        .teams
        .iter()
        .flat_map(|t| t.players.iter().map(|p| p.player_id.as_str()))
        .collect();
    let mut left: Vec<(String, usize)> = current
        .into_iter()
        .filter(|(id, _)| !listed.contains(id.as_str()))
        .map(|(id, seat)| (id, seat.team))
        .collect();
    left.sort_unstable();
    Ok(left)
}
