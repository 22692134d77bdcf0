//! A match report turned into new ratings.
//!
//! One report is one rating period. Placements become pairwise results:
//! each player meets every other team once (a better place wins, an equal
//! place draws). Everyone is rated against the field as it stood before the
//! report, so the order of teams and players does not matter.
//!
//! Team rule: a player of side A meets side B as a virtual opponent rated
//! `mean(B) - (mean(A) - player)`, i.e. the other side's mean shifted by the
//! player's own distance from their side's mean, so a strong player on a
//! weak side loses little to an expected defeat. The opponent's deviation is
//! the root mean square of B's deviations. A leaver loses every pairing; a
//! player whose participation is under [`MIN_PARTICIPATION`] is not rated
//! (but still counts in their side's mean).

use super::glicko2::{rate, Game, Glicko2Error, Rating};
use crate::codes::Code;
use crate::validation::FieldError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Below this share of the match a player is not rated.
pub const MIN_PARTICIPATION: f64 = 0.25;

/// One side of a report and its place (1 = best; equal places draw).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = TeamResultSchema, example = json!({"players": ["ana"], "place": 1})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeamResult {
    /// Player ids on this side (free-for-all: one each); each one of the
    /// match's original players.
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub players: Vec<String>,
    /// 1-based place; equal places are draws.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub place: u32,
}

/// `POST …/game-modes/{name}/results` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = ResultReportSchema, example = json!({"matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0",
    "teams": [{"players": ["ana"], "place": 1}, {"players": ["ben"], "place": 2}]})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MatchReport {
    /// A match of this mode in the project (`404` if unknown); applied
    /// once per mode (`RESULT_ALREADY_REPORTED` after that).
    #[cfg_attr(feature = "openapi", schema(min_length = 1))]
    pub match_id: String,
    /// At least two sides.
    #[cfg_attr(feature = "openapi", schema(min_items = 2))]
    pub teams: Vec<TeamResult>,
    /// Players who left: rated as having lost every pairing.
    #[serde(default)]
    pub leavers: Vec<String>,
    /// Share of the match each player took part in, 0..=1 (default 1);
    /// under 0.25 is not rated.
    #[serde(default)]
    pub participation: BTreeMap<String, f64>,
}

/// Why a report cannot be rated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ReportError {
    /// The report is malformed: every failure, `VALIDATION_ERROR`.
    #[error("invalid result report")]
    Invalid(Vec<FieldError>),
    /// The maths failed for a player (non-finite input or no convergence).
    #[error("rating {player} failed: {source}")]
    Rating {
        /// The player whose update failed.
        player: String,
        /// What failed.
        source: Glicko2Error,
    },
}

impl MatchReport {
    /// Every player of every side.
    pub fn players(&self) -> impl Iterator<Item = &String> {
        self.teams.iter().flat_map(|t| t.players.iter())
    }

    /// Checks the report's shape; every failure at once.
    pub fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let mut bad = |field: String, message: String| {
            errors.push(FieldError::new(field, Code::ValidationError, message));
        };
        if self.match_id.is_empty() || self.match_id.len() > 128 {
            bad(
                "matchId".into(),
                "matchId must be 1 to 128 characters".into(),
            );
        }
        if self.teams.len() < 2 {
            bad("teams".into(), "a result needs at least two teams".into());
        }
        let mut seen = HashSet::new();
        for (i, team) in self.teams.iter().enumerate() {
            if team.players.is_empty() {
                bad(
                    format!("teams[{i}].players"),
                    "a team needs at least one player".into(),
                );
            }
            if team.place == 0 {
                bad(format!("teams[{i}].place"), "places start at 1".into());
            }
            for p in &team.players {
                if !crate::ticket::is_valid_player_id(p) {
                    bad(
                        format!("teams[{i}].players"),
                        "player ids are 1 to 128 printable characters".into(),
                    );
                } else if !seen.insert(p.as_str()) {
                    bad(
                        format!("teams[{i}].players"),
                        format!("player {p} is listed twice"),
                    );
                }
            }
        }
        let mut left = HashSet::new();
        for p in &self.leavers {
            if !seen.contains(p.as_str()) {
                bad("leavers".into(), format!("leaver {p} is not in any team"));
            } else if !left.insert(p.as_str()) {
                bad("leavers".into(), format!("leaver {p} is listed twice"));
            }
        }
        for (p, share) in &self.participation {
            if !seen.contains(p.as_str()) {
                bad("participation".into(), format!("{p} is not in any team"));
            } else if !share.is_finite() || !(0.0..=1.0).contains(share) {
                bad(
                    format!("participation.{p}"),
                    "participation is a share between 0 and 1".into(),
                );
            }
        }
        errors
    }
}

/// New ratings of the rated players of `report`, by player id. `before`
/// must hold every player's rating as it stood before the report (idle
/// growth already applied); `tau` is the mode's system constant.
///
/// # Errors
/// [`ReportError::Invalid`] for a malformed report or a missing rating,
/// [`ReportError::Rating`] when the maths fails for a player.
pub fn rate_report(
    report: &MatchReport,
    before: &HashMap<String, Rating>,
    tau: f64,
) -> Result<BTreeMap<String, Rating>, ReportError> {
    let errors = report.validate();
    if !errors.is_empty() {
        return Err(ReportError::Invalid(errors));
    }
    let rating_of = |p: &String| {
        before.get(p).copied().ok_or_else(|| {
            ReportError::Invalid(vec![FieldError::new(
                "teams",
                Code::ValidationError,
                format!("no rating for {p}"),
            )])
        })
    };
    // Side means and RMS deviations, before the report.
    let mut sides = Vec::with_capacity(report.teams.len());
    for team in &report.teams {
        let ratings: Vec<Rating> = team
            .players
            .iter()
            .map(rating_of)
            .collect::<Result<_, _>>()?;
        let n = ratings.len() as f64;
        let mean = ratings.iter().map(|r| r.rating).sum::<f64>() / n;
        let rms = (ratings
            .iter()
            .map(|r| r.deviation * r.deviation)
            .sum::<f64>()
            / n)
            .sqrt();
        let vol = ratings.iter().map(|r| r.volatility).sum::<f64>() / n;
        sides.push((mean, rms, vol));
    }
    let leavers: HashSet<&str> = report.leavers.iter().map(String::as_str).collect();
    let mut out = BTreeMap::new();
    for (a, team) in report.teams.iter().enumerate() {
        for player in &team.players {
            let share = report.participation.get(player).copied().unwrap_or(1.0);
            if share < MIN_PARTICIPATION {
                continue;
            }
            let own = rating_of(player)?;
            let left = leavers.contains(player.as_str());
            let games: Vec<Game> = report
                .teams
                .iter()
                .enumerate()
                .filter(|(b, _)| *b != a)
                .map(|(b, other)| {
                    let (other_mean, other_rms, other_vol) = sides[b];
                    let score = if left {
                        0.0
                    } else {
                        match team.place.cmp(&other.place) {
                            std::cmp::Ordering::Less => 1.0,
                            std::cmp::Ordering::Equal => 0.5,
                            std::cmp::Ordering::Greater => 0.0,
                        }
                    };
                    Game {
                        opponent: Rating {
                            rating: other_mean - (sides[a].0 - own.rating),
                            deviation: other_rms,
                            volatility: other_vol,
                        },
                        score,
                    }
                })
                .collect();
            let new = rate(own, &games, tau).map_err(|source| ReportError::Rating {
                player: player.clone(),
                source,
            })?;
            out.insert(player.clone(), new);
        }
    }
    Ok(out)
}
