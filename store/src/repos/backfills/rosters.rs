//! Who is in a running match now (docs/backfill.md, "The roster the views
//! show"): the players each fill seated and when, and the newest roster
//! with the fills after it.

use super::{LEFT, SET_AT};
use crate::entities::backfill::{self, Entity as Backfills};
use crate::entities::backfill_fill::{self, Entity as Fills};
use crate::repos::StoreError;
use chrono::{DateTime, Utc};
use matchplane_matchmaker::backfill::roster::CurrentSeat;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder};
use std::collections::HashMap;

/// When each player a fill seated in the match `match_id` of `project_id`
/// was seated (ticket id to the fill's `createdAt`, Unix seconds): the
/// instant its `waitSeconds` counts to, where the match's own players
/// count to the match's `createdAt` (docs/backfill.md).
///
/// # Errors
/// A database failure.
pub async fn seated_at<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_id: &str,
) -> Result<std::collections::HashMap<String, f64>, StoreError> {
    let rows = Fills::find()
        .filter(backfill_fill::Column::ProjectId.eq(project_id))
        .filter(backfill_fill::Column::MatchId.eq(match_id))
        .all(db)
        .await?;
    let mut seated = std::collections::HashMap::new();
    for row in rows {
        let at = row.created_at.timestamp_micros() as f64 / 1e6;
        let tickets = crate::repos::matches::players_of(&row.teams)
            .filter_map(|p| p.get("ticketId")?.as_str());
        for ticket in tickets {
            seated.insert(ticket.to_owned(), at);
        }
    }
    Ok(seated)
}

/// The players each of `match_ids` (of `project_id`) has now, by match id,
/// for the matches a backfill request names: the newest request's roster
/// (as the studio last sent it, at `setAt`, else at the request's
/// opening) and every player a fill seated after it. A match with no
/// request is absent: its players are the ones it was made with
/// (docs/backfill.md, 'The roster the views show').
///
/// # Errors
/// A database failure.
pub async fn current_rosters<C: ConnectionTrait>(
    db: &C,
    project_id: &str,
    match_ids: &[&str],
) -> Result<HashMap<String, CurrentRoster>, StoreError> {
    if match_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let requests = Backfills::find()
        .filter(backfill::Column::ProjectId.eq(project_id))
        .filter(backfill::Column::MatchId.is_in(match_ids.iter().copied()))
        .order_by_asc(backfill::Column::CreatedAt)
        .order_by_asc(backfill::Column::Id)
        .all(db)
        .await?;
    // The newest request of each match: (its roster's players and their
    // teams, when it was set).
    let mut newest: HashMap<String, (CurrentRoster, DateTime<Utc>)> = HashMap::new();
    for request in requests {
        let set_at = request
            .roster
            .get(SET_AT)
            .and_then(|v| v.as_str())
            .and_then(|v| DateTime::parse_from_rfc3339(v).ok())
            .map_or(request.created_at, |v| v.to_utc());
        // Its departed players first: a player it lists sits where it says.
        let ids = departed(&request.roster)
            .chain(player_teams(&request.roster))
            .collect();
        newest.insert(request.match_id, (ids, set_at));
    }
    let fills = Fills::find()
        .filter(backfill_fill::Column::ProjectId.eq(project_id))
        .filter(backfill_fill::Column::MatchId.is_in(match_ids.iter().copied()))
        .all(db)
        .await?;
    for fill in fills {
        if let Some((ids, set_at)) = newest.get_mut(&fill.match_id) {
            if fill.created_at > *set_at {
                ids.extend(player_teams(&fill.teams));
            }
        }
    }
    Ok(newest.into_iter().map(|(id, (ids, _))| (id, ids)).collect())
}

/// The players of a match now, by player id, with the team each sits on
/// and the role the roster gives it (see [`current_rosters`]).
pub type CurrentRoster = HashMap<String, CurrentSeat>;

/// Every `playerId` of `{"teams": [{"index", "players": [{"playerId", "role"?, "ticketId"?}, …]}, …]}`
/// (a roster, a fill's teams) with its team's `index` (its position when
/// it has none), and its `role` and `ticketId`, if given.
fn player_teams(teams: &serde_json::Value) -> impl Iterator<Item = (String, CurrentSeat)> + '_ {
    teams
        .get("teams")
        .unwrap_or(teams)
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(at, team)| {
            let index = team
                .get("index")
                .and_then(serde_json::Value::as_u64)
                .and_then(|i| usize::try_from(i).ok())
                .unwrap_or(at);
            team.get("players")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(move |p| {
                    let text = |field| p.get(field).and_then(serde_json::Value::as_str);
                    let seat = CurrentSeat {
                        team: index,
                        role: text("role").map(str::to_owned),
                        ticket: text("ticketId").map(str::to_owned),
                        left: false,
                    };
                    Some((p.get("playerId")?.as_str()?.to_owned(), seat))
                })
        })
}

/// The departed players a stored roster lists ([`LEFT`]), each on the team
/// it last sat on, marked left.
fn departed(roster: &serde_json::Value) -> impl Iterator<Item = (String, CurrentSeat)> + '_ {
    roster
        .get(LEFT)
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let team = p.get("index")?.as_u64()?;
            let seat = CurrentSeat {
                team: usize::try_from(team).ok()?,
                role: None,
                ticket: None,
                left: true,
            };
            Some((p.get("playerId")?.as_str()?.to_owned(), seat))
        })
}
