//! A bot match's bot seats under a backfill (docs/backfill.md): the seats
//! a roster may fill, and the roles of the bots that keep theirs.

use matchplane_matchmaker::GameModeConfig;
use matchplane_store::entities::match_;
use serde_json::Value;

/// The match's team sizes a roster may fill: the mode's shape (a flexible
/// shape's `max` for each of the match's teams), less each team's bots
/// unless the mode's bots are `replaceable` (a bot that may not be
/// replaced keeps its seat: docs/game-modes.md#thin-pools-smaller-matches-and-bots).
pub(super) fn caps(config: &GameModeConfig, row: &match_::Model) -> Vec<u32> {
    let caps = config.match_shape.caps();
    let caps: Vec<u32> = match config.match_shape.flexible() {
        None => caps,
        Some(_) => {
            let teams = row.teams.as_array().map_or(caps.len(), Vec::len);
            caps.into_iter().take(teams).collect()
        }
    };
    if config.bots.as_ref().is_some_and(|b| b.replaceable) {
        return caps;
    }
    less_bots(caps, &row.teams)
}

/// `caps` less the bot seats of each team of the stored `teams` (by
/// position: entries of a team's `players` with `"bot": true`).
pub(super) fn less_bots(caps: Vec<u32>, teams: &Value) -> Vec<u32> {
    let bots = |t: usize| -> u32 {
        let players = teams.get(t).and_then(|team| team.get("players"));
        let count = players.and_then(Value::as_array).map_or(0, |p| {
            p.iter()
                .filter(|e| e.get("bot") == Some(&Value::Bool(true)))
                .count()
        });
        u32::try_from(count).unwrap_or(u32::MAX)
    };
    caps.into_iter()
        .enumerate()
        .map(|(t, cap)| cap.saturating_sub(bots(t)))
        .collect()
}

/// Per team of the stored `teams`, the roles of its bot seats when the
/// mode's bots may not be replaced: they keep their seats, and so their
/// roles (docs/backfill.md); empty when they may be.
pub(super) fn kept_bot_roles<'a>(config: &GameModeConfig, teams: &'a Value) -> Vec<Vec<&'a str>> {
    if config.bots.as_ref().is_some_and(|b| b.replaceable) {
        return Vec::new();
    }
    let seats = |team: &'a Value| team.get("players").and_then(Value::as_array);
    teams
        .as_array()
        .map(|teams| {
            teams
                .iter()
                .map(|team| {
                    seats(team)
                        .into_iter()
                        .flatten()
                        .filter(|e| e.get("bot") == Some(&Value::Bool(true)))
                        .filter_map(|e| e.get("role").and_then(Value::as_str))
                        .collect()
                })
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{kept_bot_roles, less_bots};
    use matchplane_matchmaker::backfill::roster::{check_roster_roles, Roster};
    use matchplane_matchmaker::GameModeConfig;
    use serde_json::json;

    #[test]
    fn a_bot_keeps_its_seat_from_a_roster() {
        let bot = json!({"bot": true, "playerId": null, "ticketId": null, "mmr": 1500.0});
        let teams = json!([
            {"index": 0, "players": [{"playerId": "a"}, bot.clone()]},
            {"index": 1, "players": [{"playerId": "b"}, bot.clone(), bot]}
        ]);
        assert_eq!(less_bots(vec![2, 3], &teams), [1, 1]);
        assert_eq!(less_bots(vec![2, 3], &json!([])), [2, 3]);
    }

    /// A bot that may not be replaced keeps its role seat: the roster
    /// that leaves out team 0's tank opens the tank seat only, not the
    /// damage bot's, and team 1 (a tank and two bots) opens nothing.
    #[test]
    fn a_kept_bot_keeps_its_role() {
        let config: GameModeConfig = serde_json::from_value(json!({
            "name": "bt", "matchShape": [3, 3], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"},
            "attributes": {"roles": {"type": "stringSet", "values": ["tank", "damage", "support"]}},
            "composition": {"attribute": "roles", "perTeam": {"tank": 1, "damage": 1, "support": 1}},
            "bots": {"fillAfterSeconds": 2, "minHumans": 2, "replaceable": false},
            "backfill": {"enabled": true}
        }))
        .unwrap();
        let bot = |role: &str| json!({"bot": true, "playerId": null, "ticketId": null, "mmr": 1500.0, "role": role});
        let teams = json!([
            {"index": 0, "players": [{"playerId": "a", "role": "tank"}, {"playerId": "c", "role": "support"}, bot("damage")]},
            {"index": 1, "players": [{"playerId": "b", "role": "tank"}, bot("damage"), bot("support")]}
        ]);
        let kept = kept_bot_roles(&config, &teams);
        assert_eq!(kept, [vec!["damage"], vec!["damage", "support"]]);
        let roster: Roster = serde_json::from_value(json!({"teams": [
            {"index": 0, "players": [{"playerId": "c"}]},
            {"index": 1, "players": [{"playerId": "b"}]}
        ]}))
        .unwrap();
        let known = |id: &str| match id {
            "b" => Some("tank".to_owned()),
            "c" => Some("support".to_owned()),
            _ => None,
        };
        let caps = less_bots(vec![3, 3], &teams);
        let open =
            check_roster_roles(config.composition.as_ref(), &caps, &roster, &kept, known).unwrap();
        let open = serde_json::to_value(open).unwrap();
        let none = json!({"any": 0, "damage": 0, "support": 0, "tank": 0});
        let mut tank = none.clone();
        tank["tank"] = 1.into();
        assert_eq!(open, json!([tank, none]));

        let mut replaceable = config.clone();
        replaceable.bots.as_mut().unwrap().replaceable = true;
        assert!(kept_bot_roles(&replaceable, &teams).is_empty());
    }
}
