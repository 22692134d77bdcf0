//! A result report is checked against the match it names before anything is
//! rated or recorded: the match must exist in the project (`404`), have been
//! made (a proposal, a cancelled proposal, a released or unassigned match
//! was never played) in the reported mode as it is now (not in a deleted
//! mode of the same name), and every reported player must be one of its
//! original players (`422`, naming each offending field). A refused report
//! therefore never spends the match's one report.

use crate::problem::ApiError;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::ratings::MatchReport;
use matchplane_matchmaker::{Code, FieldError};
use matchplane_store::repos::{match_status, matches, StoreError};
use sea_orm::ConnectionTrait;

/// Checks `report` against its match in `project_id`, for mode `mode_name`
/// as created at `mode_created_at`.
///
/// # Errors
/// `404 NOT_FOUND` (field `matchId`) when the project has no such match;
/// `422 VALIDATION_ERROR` when the match is not `made`, is of another mode
/// or of a deleted mode of the same name (field `matchId`), or names
/// players not in it (`teams[i].players[j]`, all at once); a database
/// failure as `500`.
pub async fn check<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    (mode_name, mode_created_at): (&str, DateTime<Utc>),
    report: &MatchReport,
) -> Result<(), ApiError> {
    let row = match matches::get(db, project_id, &report.match_id).await {
        Ok(row) => row,
        Err(StoreError::NotFound) => {
            return Err(ApiError::invalid(vec![FieldError::new(
                "matchId",
                Code::NotFound,
                format!("no match {} in this project", report.match_id),
            )]))
        }
        Err(other) => return Err(other.into()),
    };
    if row.game_mode != mode_name {
        return Err(ApiError::invalid(vec![FieldError::new(
            "matchId",
            Code::ValidationError,
            format!(
                "match {} was made in game mode {}, not {mode_name}",
                report.match_id, row.game_mode
            ),
        )]));
    }
    // The mode was deleted and created again since the match: a new mode,
    // which rates only its own matches (docs/game-modes.md).
    if !matches::is_own_mode(mode_created_at, row.created_at) {
        return Err(ApiError::invalid(vec![FieldError::new(
            "matchId",
            Code::ValidationError,
            format!(
                "match {} was made in a deleted game mode {mode_name}: a mode created again under its name rates only its own matches",
                report.match_id
            ),
        )]));
    }
    if row.status != match_status::MADE {
        return Err(ApiError::invalid(vec![FieldError::new(
            "matchId",
            Code::ValidationError,
            format!(
                "match {} is {}, not made: only a match that was played is rated",
                report.match_id, row.status
            ),
        )]));
    }
    let original = matches::original_players(&row);
    let strangers: Vec<FieldError> = report
        .teams
        .iter()
        .enumerate()
        .flat_map(|(i, team)| {
            team.players
                .iter()
                .enumerate()
                .map(move |(j, player)| (i, j, player))
        })
        .filter(|(_, _, player)| !original.contains(*player))
        .map(|(i, j, player)| {
            FieldError::new(
                format!("teams[{i}].players[{j}]"),
                Code::ValidationError,
                format!("player {player} was not in match {}", report.match_id),
            )
        })
        .collect();
    if strangers.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(strangers))
    }
}
