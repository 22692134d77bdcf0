//! A backfill's roster: the players a running match has now, as the studio
//! reports them. Checked against the match's shape, it gives the open seats
//! (each team's size minus its players) and the roster's mean MMR.

use crate::codes::Code;
use crate::validation::FieldError;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// `{"teams":[{"index":0,"players":[{"playerId":"a","mmr":1510}]}]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"teams": [
    {"index": 0, "players": [{"playerId": "a", "mmr": 1510}]},
    {"index": 1, "players": [{"playerId": "b"}, {"playerId": "c"}]}]})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Roster {
    /// The teams that still have players; a team left out has none.
    pub teams: Vec<RosterTeam>,
    /// The match's current values of attributes the mode declares (e.g.
    /// the map being played, `{"maps": ["dust"]}`): each stands for the
    /// whole roster when newcomers are checked against the mode's rules
    /// (docs/rules.md#backfill). Any subset of the declared attributes.
    #[serde(
        default,
        skip_serializing_if = "crate::rules::DeclaredValues::is_empty"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<HashMap<String, crate::rules::AttributeValue>>, nullable = false))]
    pub attributes: crate::rules::DeclaredValues,
}

/// One team of a roster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RosterTeam {
    /// Position in the match shape, from 0 (below the shape's team count:
    /// a mode has at most 64 teams).
    #[cfg_attr(feature = "openapi", schema(maximum = 63))]
    pub index: usize,
    /// The players on it now.
    pub players: Vec<RosterPlayer>,
}

/// One player of a roster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RosterPlayer {
    /// The studio's player id (1 to 128 printable characters).
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 128))]
    pub player_id: String,
    /// The player's MMR; optional for players matchplane seated in the
    /// match (their ticket's MMR is used), required for others in MMR modes.
    #[serde(
        default,
        deserialize_with = "crate::config::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub mmr: Option<f64>,
    /// The player's values of attributes the mode declares, for its rules
    /// (docs/rules.md#backfill); a player matchplane seated keeps those it
    /// was matched with when this is left out, another player without
    /// values fits every rule but `avoid`.
    #[serde(
        default,
        skip_serializing_if = "crate::rules::DeclaredValues::is_empty"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<HashMap<String, crate::rules::AttributeValue>>, nullable = false))]
    pub attributes: crate::rules::DeclaredValues,
    /// The role the player plays, in a mode with `composition`
    /// (docs/rules.md, "Backfill by role"): one of the composition's roles,
    /// or `any` for a player in an `any` seat. Optional for players
    /// matchplane seated in the match (the role they were seated in is
    /// used), required for others; refused in a mode without
    /// `composition`.
    #[serde(
        default,
        deserialize_with = "crate::config::present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(nullable = false, example = "tank"))]
    pub role: Option<String>,
}

/// What a valid roster leaves open.
#[derive(Debug, Clone, PartialEq)]
pub struct RosterSeats {
    /// Open seats per team (players), in shape order.
    pub open_seats: Vec<u32>,
    /// Mean MMR of the roster's players that have one (given, or known
    /// from the match); `None` if none has.
    pub mean_mmr: Option<f64>,
}

impl RosterSeats {
    /// The mean a request's newcomers are measured against: the roster's,
    /// or where nobody on it has an MMR (everyone left: `"teams": []`),
    /// the mean of `made`, the MMRs of the players the match was made
    /// with, so that an emptied match keeps its level (docs/backfill.md,
    /// "Who fits").
    #[must_use]
    pub fn or_made_mean(mut self, made: &[f64]) -> Self {
        self.mean_mmr = self.mean_mmr.or_else(|| crate::mean::mean(made));
        self
    }
}

/// Checks `roster` against the match's team sizes `caps`: every team index
/// known and listed once, no team over its size, no player twice, and in
/// an MMR mode (`mmr_required`) an MMR for every player that `known_mmr`
/// (the match's own players) does not give one. Returns the open seats.
///
/// # Errors
/// Every broken rule, each `INVALID_ROSTER` with its field
/// (`teams[1].index`, `teams[0].players`, `teams[0].players[2].playerId`,
/// `teams[0].players[2].mmr`), or `NO_OPEN_SEATS` (field `teams`) when the
/// roster is otherwise valid and fills every seat.
pub fn check_roster(
    caps: &[u32],
    roster: &Roster,
    mmr_required: bool,
    known_mmr: impl Fn(&str) -> Option<f64>,
) -> Result<RosterSeats, Vec<FieldError>> {
    let mut errors = Vec::new();
    let invalid =
        |field: String, message: String| FieldError::new(field, Code::InvalidRoster, message);
    let mut seated = vec![0u32; caps.len()];
    let mut seen_teams = HashSet::new();
    let mut seen_players = HashSet::new();
    let (mut sum, mut count) = (0.0, 0u32);
    for (t, team) in roster.teams.iter().enumerate() {
        if team.index >= caps.len() {
            errors.push(invalid(
                format!("teams[{t}].index"),
                format!(
                    "team index {} is unknown: the match has teams 0 to {}",
                    team.index,
                    caps.len().saturating_sub(1)
                ),
            ));
        } else if !seen_teams.insert(team.index) {
            errors.push(invalid(
                format!("teams[{t}].index"),
                format!("team {} is listed twice", team.index),
            ));
        } else {
            let n = u32::try_from(team.players.len()).unwrap_or(u32::MAX);
            seated[team.index] = n;
            if n > caps[team.index] {
                errors.push(invalid(
                    format!("teams[{t}].players"),
                    format!(
                        "team {} has {n} players, its size is {}",
                        team.index, caps[team.index]
                    ),
                ));
            }
        }
        for (p, player) in team.players.iter().enumerate() {
            if !crate::ticket::is_valid_player_id(&player.player_id) {
                // As a ticket's: a roster player is a player of the match.
                errors.push(FieldError::new(
                    format!("teams[{t}].players[{p}].playerId"),
                    Code::ValidationError,
                    format!(
                        "playerId must be 1 to {} printable characters",
                        crate::ticket::MAX_PLAYER_ID_CHARS
                    ),
                ));
            } else if !seen_players.insert(player.player_id.as_str()) {
                errors.push(invalid(
                    format!("teams[{t}].players[{p}].playerId"),
                    format!("player {} is listed twice", player.player_id),
                ));
            }
            let mmr = match player.mmr {
                Some(m) if !m.is_finite() => {
                    errors.push(FieldError::new(
                        format!("teams[{t}].players[{p}].mmr"),
                        Code::ValidationError,
                        "mmr must be a finite number",
                    ));
                    None
                }
                Some(m) => Some(m),
                None => known_mmr(&player.player_id),
            };
            match mmr {
                Some(m) => {
                    sum += m;
                    count += 1;
                }
                None if mmr_required => errors.push(invalid(
                    format!("teams[{t}].players[{p}].mmr"),
                    format!(
                        "player {} was not seated by matchplane: its mmr is required",
                        player.player_id
                    ),
                )),
                None => {}
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let open_seats: Vec<u32> = caps
        .iter()
        .zip(&seated)
        .map(|(c, s)| c.saturating_sub(*s))
        .collect();
    if open_seats.iter().all(|s| *s == 0) {
        return Err(vec![FieldError::new(
            "teams",
            Code::NoOpenSeats,
            "the roster fills every seat of the match",
        )]);
    }
    Ok(RosterSeats {
        open_seats,
        mean_mmr: (count > 0).then(|| sum / f64::from(count)),
    })
}

/// Where a player of a running match sits now, as the studio's latest
/// roster (or a fill after it) has it (docs/backfill.md, "The roster the
/// views show").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentSeat {
    /// The index of its team.
    pub team: usize,
    /// The role seat the roster gives it in a role queue; `None` when the
    /// roster gave none (it keeps the one it was seated in).
    pub role: Option<String>,
    /// The ticket it sits with, when known (a fill after the roster names
    /// it): a player seated again by a fill, with a new ticket, after it
    /// left is in the match by that ticket only.
    pub ticket: Option<String>,
    /// Whether the player left while sitting on `team` (a later roster
    /// dropped it): shown there, marked left.
    pub left: bool,
}

/// The open role seats `roster` leaves in a mode with `composition`
/// (docs/rules.md, "Backfill by role"), each player in the role it gives
/// or, left out, the role `known_role` (the match's own players) gives;
/// `kept[t]` are the roles of team `t`'s seats no roster frees (its bots,
/// when they may not be replaced). `None` composition: no role may be
/// given, and the answer is empty.
///
/// # Errors
/// Every broken rule, each `INVALID_ROSTER` with its field: a role given
/// in a mode without `composition`, a role missing or not among the
/// composition's (`teams[0].players[2].role`), a team whose roles no step
/// of the composition seats (`teams[1].players`).
pub fn check_roster_roles(
    composition: Option<&crate::roles::Composition>,
    caps: &[u32],
    roster: &Roster,
    kept: &[Vec<&str>],
    known_role: impl Fn(&str) -> Option<String>,
) -> Result<Vec<crate::roles::open::OpenRoles>, Vec<FieldError>> {
    let invalid =
        |field: String, message: String| FieldError::new(field, Code::InvalidRoster, message);
    let mut errors = Vec::new();
    let Some(composition) = composition else {
        for (t, team) in roster.teams.iter().enumerate() {
            for (p, player) in team.players.iter().enumerate() {
                if player.role.is_some() {
                    errors.push(invalid(
                        format!("teams[{t}].players[{p}].role"),
                        "the game mode has no composition: its players hold no role".into(),
                    ));
                }
            }
        }
        return if errors.is_empty() {
            Ok(Vec::new())
        } else {
            Err(errors)
        };
    };
    let roles = composition.roles();
    let mut held: Vec<Vec<String>> = vec![Vec::new(); caps.len()];
    // Where each team's entry is, for an error about the whole team.
    let mut entry_of: Vec<Option<usize>> = vec![None; caps.len()];
    for (t, team) in roster.teams.iter().enumerate() {
        if let Some(slot) = entry_of.get_mut(team.index) {
            *slot = Some(t);
        }
        for (p, player) in team.players.iter().enumerate() {
            let field = format!("teams[{t}].players[{p}].role");
            let role = player
                .role
                .clone()
                .or_else(|| known_role(&player.player_id));
            match role {
                None => errors.push(invalid(
                    field,
                    format!(
                        "player {} was not seated by matchplane: its role is required",
                        player.player_id
                    ),
                )),
                Some(r) if r != crate::roles::ANY && !roles.contains(&r.as_str()) => {
                    errors.push(invalid(
                        field,
                        format!(
                            "role {r} is not among the composition's roles ({}) nor `{}`",
                            roles.join(", "),
                            crate::roles::ANY
                        ),
                    ))
                }
                Some(r) => {
                    if let Some(h) = held.get_mut(team.index) {
                        h.push(r);
                    }
                }
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let held: Vec<Vec<&str>> = held
        .iter()
        .enumerate()
        .map(|(t, h)| {
            let kept = kept.get(t).map(Vec::as_slice).unwrap_or_default();
            h.iter()
                .map(String::as_str)
                .chain(kept.iter().copied())
                .collect()
        })
        .collect();
    crate::roles::open::open_roles(composition, &held).map_err(|e| {
        let at = entry_of.get(e.team).copied().flatten().unwrap_or(0);
        vec![invalid(format!("teams[{at}].players"), e.message)]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roster(teams: &[(usize, &[&str])]) -> Roster {
        Roster {
            teams: teams
                .iter()
                .map(|(i, ps)| RosterTeam {
                    index: *i,
                    players: ps
                        .iter()
                        .map(|p| RosterPlayer {
                            player_id: (*p).to_owned(),
                            mmr: Some(1000.0),
                            attributes: Default::default(),
                            role: None,
                        })
                        .collect(),
                })
                .collect(),
            attributes: Default::default(),
        }
    }

    #[test]
    fn open_seats_are_the_shape_minus_the_roster() {
        let seats = check_roster(
            &[2, 2],
            &roster(&[(0, &["a", "b"]), (1, &["c"])]),
            true,
            |_| None,
        );
        assert_eq!(seats.map(|s| s.open_seats), Ok(vec![0, 1]));
        let seats = check_roster(&[2, 2], &roster(&[(1, &["c"])]), true, |_| None);
        assert_eq!(seats.map(|s| s.open_seats), Ok(vec![2, 1]));
    }

    #[test]
    fn every_broken_rule_is_named() {
        let r = roster(&[(0, &["a", "b", "c"]), (5, &["d"]), (0, &["a"])]);
        let errors = check_roster(&[2, 2], &r, true, |_| None).unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert!(fields.contains(&"teams[0].players"), "{fields:?}");
        assert!(fields.contains(&"teams[1].index"), "{fields:?}");
        assert!(fields.contains(&"teams[2].index"), "{fields:?}");
        assert!(
            fields.contains(&"teams[2].players[0].playerId"),
            "{fields:?}"
        );
        assert!(errors.iter().all(|e| e.code == Code::InvalidRoster));
    }

    #[test]
    fn a_roster_player_id_is_one_a_ticket_could_carry() {
        let long = "x".repeat(129);
        let r = roster(&[(0, &["", long.as_str()]), (1, &["p\u{7}bell", "ok"])]);
        let errors = check_roster(&[3, 3], &r, true, |_| None).unwrap_err();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "teams[0].players[0].playerId",
                "teams[0].players[1].playerId",
                "teams[1].players[0].playerId"
            ]
        );
        assert!(errors.iter().all(|e| e.code == Code::ValidationError));
        let longest = "x".repeat(128);
        let r = roster(&[(0, &[longest.as_str()])]);
        assert!(check_roster(&[1, 1], &r, true, |_| None).is_ok());
    }

    #[test]
    fn a_full_roster_has_no_open_seats() {
        let errors = check_roster(&[1, 1], &roster(&[(0, &["a"]), (1, &["b"])]), true, |_| {
            None
        })
        .unwrap_err();
        assert_eq!(errors[0].code, Code::NoOpenSeats);
    }

    #[test]
    fn mmr_comes_from_the_match_or_is_required() {
        let mut r = roster(&[(0, &["a", "b"])]);
        r.teams[0].players[1].mmr = None;
        let known = |p: &str| (p == "b").then_some(2000.0);
        let seats = check_roster(&[2, 2], &r, true, known).unwrap();
        assert_eq!(seats.mean_mmr, Some(1500.0));
        let errors = check_roster(&[2, 2], &r, true, |_| None).unwrap_err();
        assert_eq!(errors[0].field, "teams[0].players[1].mmr");
        assert!(check_roster(&[2, 2], &r, false, |_| None).is_ok());
        // Nobody left: the match's own level, not any MMR.
        let empty = check_roster(&[2, 2], &roster(&[]), true, known).unwrap();
        assert_eq!(empty.mean_mmr, None);
        assert_eq!(empty.or_made_mean(&[1400.0, 1600.0]).mean_mmr, Some(1500.0));
    }
}
