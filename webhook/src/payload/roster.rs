//! A running match's teams as the studio's latest backfill roster has them
//! (docs/backfill.md, "The roster the views show"): every player the match
//! ever seated is kept; one the roster lists sits on the roster's team, one
//! it does not list is marked `left`.

use super::Team;
use std::collections::HashMap;

/// Applies `current` (the players of the match now, by player id, with the
/// index of the team each sits on: the newest backfill roster and the
/// fills seated after it) to `teams`: a player it lists moves to the team it
/// names (after that team's own players, keeping their order), a player it
/// does not list stays where it was and is marked `left`. `None` (no
/// backfill request named the match) leaves the teams as made. A team
/// index `teams` does not have leaves the player where it was.
pub fn follow_roster(teams: &mut [Team], current: Option<&HashMap<String, usize>>) {
    let Some(current) = current else { return };
    let mut moving = Vec::new();
    for (at, team) in teams.iter_mut().enumerate() {
        let index = team.index;
        let mut kept = Vec::with_capacity(team.players.len());
        for mut player in team.players.drain(..) {
            match current.get(&player.player_id) {
                None => {
                    player.left = true;
                    kept.push(player);
                }
                Some(&to) if to == index => {
                    player.left = false;
                    kept.push(player);
                }
                Some(&to) => {
                    player.left = false;
                    moving.push((to, at, player));
                }
            }
        }
        team.players = kept;
    }
    for (to, from, player) in moving {
        let at = teams.iter().position(|t| t.index == to).unwrap_or(from);
        if let Some(team) = teams.get_mut(at) {
            team.players.push(player);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::payload::Player;

    fn player(id: &str) -> Player {
        Player {
            player_id: id.into(),
            ticket_id: format!("tkt_{id}"),
            party_id: None,
            mmr: None,
            ping_ms: None,
            wait_seconds: 0.0,
            latency_ms: None,
            data: None,
            backfill: false,
            left: false,
            attributes: Default::default(),
            role: None,
        }
    }

    fn team(index: usize, ids: &[&str]) -> Team {
        Team {
            index,
            players: ids.iter().map(|id| player(id)).collect(),
            mean_mmr: None,
            bots: Vec::new(),
        }
    }

    fn ids(team: &Team) -> Vec<(&str, bool)> {
        team.players
            .iter()
            .map(|p| (p.player_id.as_str(), p.left))
            .collect()
    }

    #[test]
    fn a_player_the_roster_moves_changes_team_and_one_it_drops_is_left() {
        let mut teams = vec![team(0, &["a", "b", "c"]), team(1, &["d", "e", "f"])];
        let current: HashMap<String, usize> = [("a", 0), ("d", 0), ("b", 1), ("e", 1), ("f", 1)]
            .into_iter()
            .map(|(id, t)| (id.to_owned(), t))
            .collect();
        follow_roster(&mut teams, Some(&current));
        assert_eq!(ids(&teams[0]), [("a", false), ("c", true), ("d", false)]);
        assert_eq!(ids(&teams[1]), [("e", false), ("f", false), ("b", false)]);
        let in_match = |t: &Team| t.players.iter().filter(|p| !p.left).count();
        assert_eq!((in_match(&teams[0]), in_match(&teams[1])), (2, 3));
    }

    #[test]
    fn without_a_roster_the_teams_stay_as_made() {
        let mut teams = vec![team(0, &["a"]), team(1, &["b"])];
        let before = teams.clone();
        follow_roster(&mut teams, None);
        assert_eq!(teams, before);
    }
}
