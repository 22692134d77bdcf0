//! A running match's teams as the studio's latest backfill roster has them
//! (docs/backfill.md, "The roster the views show"): every player the match
//! ever seated is kept; one the roster lists sits on the roster's team, one
//! it does not list is marked `left`, on the team it last sat on.

use super::Team;
use matchplane_matchmaker::backfill::roster::CurrentSeat;
use std::collections::HashMap;

/// Applies `current` (the players of the match now, by player id, with the
/// team each sits on and the role the roster gives it: the newest backfill
/// roster and the fills seated after it) to `teams`: a player it lists
/// moves to the team it names (after that team's own players, keeping
/// their order) and takes the role it gives, a player it lists as departed
/// moves there too and is marked `left`, and a player it does not list at
/// all stays where it was and is marked `left`. `None` (no
/// backfill request named the match) leaves the players as made. A team
/// index `teams` does not have leaves the player where it was.
///
/// With `shape` (the match's players per team, as made), each team then
/// shows no more bots than the seats its players in the match leave: a
/// bot whose seat a fill took is gone (first one of the newcomer's role,
/// then the last).
pub fn follow_roster(
    teams: &mut [Team],
    current: Option<&HashMap<String, CurrentSeat>>,
    shape: Option<&[u32]>,
) {
    if let Some(current) = current {
        move_players(teams, current);
    }
    if let Some(shape) = shape {
        drop_replaced_bots(teams, shape);
    }
}

/// A stored match's `matchShape` (players per team) as
/// [`follow_roster`] reads it; `None` when absent or not an array of
/// counts (a flexible shape's teams are sized by their players).
pub fn shape_of(stored: Option<&serde_json::Value>) -> Option<Vec<u32>> {
    stored.and_then(|s| serde_json::from_value(s.clone()).ok())
}

/// Each team's bots beyond the seats its players in the match leave, the
/// seats of `shape` (by position), taken out.
fn drop_replaced_bots(teams: &mut [Team], shape: &[u32]) {
    for (team, seats) in teams.iter_mut().zip(shape) {
        let in_match = team.players.iter().filter(|p| !p.left).count();
        let keep = usize::try_from(*seats)
            .unwrap_or(usize::MAX)
            .saturating_sub(in_match);
        // The newcomers' roles first: a fill takes a bot's role seat.
        let Team { players, bots, .. } = team;
        let roles = players
            .iter()
            .filter(|p| p.backfill && !p.left)
            .filter_map(|p| p.role.as_deref());
        for role in roles {
            if bots.len() <= keep {
                break;
            }
            if let Some(at) = bots.iter().position(|b| b.role.as_deref() == Some(role)) {
                bots.remove(at);
            }
        }
        bots.truncate(keep);
    }
}

/// The ticket each player seated more than once sits with now: a player
/// that left and was seated again by a fill (with a new ticket) is in the
/// match by its latest seating only. That is the ticket `current` names,
/// else the newest of its tickets (ticket ids grow with time).
fn latest_tickets(
    teams: &[Team],
    current: &HashMap<String, CurrentSeat>,
) -> HashMap<String, String> {
    let mut seen: HashMap<&str, Vec<&str>> = HashMap::new();
    for p in teams.iter().flat_map(|t| &t.players) {
        seen.entry(&p.player_id).or_default().push(&p.ticket_id);
    }
    seen.into_iter()
        .filter(|(_, tickets)| tickets.len() > 1)
        .filter_map(|(id, tickets)| {
            let named = current.get(id).and_then(|s| s.ticket.as_deref());
            let ticket = named.or_else(|| tickets.iter().max().copied())?;
            Some((id.to_owned(), ticket.to_owned()))
        })
        .collect()
}

fn move_players(teams: &mut [Team], current: &HashMap<String, CurrentSeat>) {
    let latest = latest_tickets(teams, current);
    let mut moving = Vec::new();
    for (at, team) in teams.iter_mut().enumerate() {
        let index = team.index;
        let mut kept = Vec::with_capacity(team.players.len());
        for mut player in team.players.drain(..) {
            let superseded = latest
                .get(&player.player_id)
                .is_some_and(|t| *t != player.ticket_id);
            let seat = current.get(&player.player_id).filter(|_| !superseded);
            let Some(seat) = seat else {
                player.left = true;
                kept.push(player);
                continue;
            };
            player.left = seat.left;
            if let Some(role) = &seat.role {
                player.role = Some(role.clone());
            }
            if seat.team == index {
                kept.push(player);
            } else {
                moving.push((seat.team, at, player));
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

    fn seat(team: usize, role: Option<&str>) -> CurrentSeat {
        CurrentSeat {
            team,
            role: role.map(str::to_owned),
            ticket: None,
            left: false,
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
        let current: HashMap<String, CurrentSeat> =
            [("a", 0), ("d", 0), ("b", 1), ("e", 1), ("f", 1)]
                .into_iter()
                .map(|(id, t)| (id.to_owned(), seat(t, None)))
                .collect();
        follow_roster(&mut teams, Some(&current), None);
        assert_eq!(ids(&teams[0]), [("a", false), ("c", true), ("d", false)]);
        assert_eq!(ids(&teams[1]), [("e", false), ("f", false), ("b", false)]);
        let in_match = |t: &Team| t.players.iter().filter(|p| !p.left).count();
        assert_eq!((in_match(&teams[0]), in_match(&teams[1])), (2, 3));
    }

    /// A player an earlier roster moved and a later one dropped is shown
    /// left on the team it moved to, the one it last sat on.
    #[test]
    fn a_departed_player_is_left_on_the_team_it_last_sat_on() {
        let mut teams = vec![team(0, &["a", "b"]), team(1, &["c", "d"])];
        let current: HashMap<String, CurrentSeat> = [
            (
                "a",
                CurrentSeat {
                    left: true,
                    ..seat(1, None)
                },
            ),
            ("c", seat(1, None)),
            ("d", seat(1, None)),
        ]
        .into_iter()
        .map(|(id, s)| (id.to_owned(), s))
        .collect();
        follow_roster(&mut teams, Some(&current), None);
        assert_eq!(ids(&teams[0]), [("b", true)]);
        assert_eq!(ids(&teams[1]), [("c", false), ("d", false), ("a", true)]);
    }

    /// A player that left (the roster dropped it) and was seated again by
    /// a fill, with a new ticket, is in the match once: by the new ticket.
    /// Whether the fill names the ticket or a later roster lists the
    /// player without one, the old seating reads `left`.
    #[test]
    fn a_player_seated_again_is_in_the_match_once() {
        let again = Player {
            ticket_id: "tkt_02".into(),
            backfill: true,
            ..player("a")
        };
        let mut made = vec![team(0, &["a", "b"]), team(1, &["c", "d"])];
        made[0].players[0].ticket_id = "tkt_01".into();
        made[0].players.push(again);
        let by_fill: HashMap<String, CurrentSeat> =
            [("a", Some("tkt_02")), ("b", None), ("c", None), ("d", None)]
                .into_iter()
                .map(|(id, ticket)| {
                    let team = usize::from(id >= "c");
                    let seat = CurrentSeat {
                        ticket: ticket.map(str::to_owned),
                        ..seat(team, None)
                    };
                    (id.to_owned(), seat)
                })
                .collect();
        let by_roster: HashMap<String, CurrentSeat> = by_fill
            .iter()
            .map(|(id, s)| (id.clone(), seat(s.team, None)))
            .collect();
        for current in [by_fill, by_roster] {
            let mut teams = made.clone();
            follow_roster(&mut teams, Some(&current), Some(&[2, 2]));
            let seated: Vec<(&str, &str, bool)> = teams[0]
                .players
                .iter()
                .map(|p| (p.player_id.as_str(), p.ticket_id.as_str(), p.left))
                .collect();
            assert_eq!(
                seated,
                [
                    ("a", "tkt_01", true),
                    ("b", "tkt_b", false),
                    ("a", "tkt_02", false)
                ]
            );
        }
    }

    #[test]
    fn without_a_roster_the_teams_stay_as_made() {
        let mut teams = vec![team(0, &["a"]), team(1, &["b"])];
        let before = teams.clone();
        follow_roster(&mut teams, None, None);
        assert_eq!(teams, before);
        follow_roster(&mut teams, None, Some(&[1, 1]));
        assert_eq!(teams, before);
    }

    /// A bot match of `[2, 2]` (one human and one bot a team) whose bot
    /// seats fills took: each team shows its two players and no bot, with
    /// or without a roster; a team whose newcomer left shows its bot again.
    #[test]
    fn a_bot_whose_seat_a_fill_took_is_not_shown() {
        use crate::payload::BotSeat;
        let newcomer = |id: &str, role: Option<&str>| Player {
            backfill: true,
            role: role.map(str::to_owned),
            ..player(id)
        };
        let bot = |role: Option<&str>| BotSeat::new(Some(1500.0)).with_role(role);
        let mut teams = vec![team(0, &["a"]), team(1, &["b"])];
        teams[0].bots = vec![bot(Some("tank")), bot(Some("healer"))];
        teams[1].bots = vec![bot(None)];
        teams[0].players.push(newcomer("c", Some("healer")));
        teams[1].players.push(newcomer("d", None));
        let made = teams.clone();
        follow_roster(&mut teams, None, Some(&[3, 2]));
        let roles = |t: &Team| t.bots.iter().map(|b| b.role.clone()).collect::<Vec<_>>();
        assert_eq!(
            roles(&teams[0]),
            [Some("tank".to_owned())],
            "the healer's seat was taken"
        );
        assert!(teams[1].bots.is_empty());
        // `d` left (the roster lists a, b and c): its team's bot is back.
        let mut teams = made;
        let current: HashMap<String, CurrentSeat> = [("a", 0), ("c", 0), ("b", 1)]
            .into_iter()
            .map(|(id, t)| (id.to_owned(), seat(t, None)))
            .collect();
        follow_roster(&mut teams, Some(&current), Some(&[3, 2]));
        assert_eq!(teams[1].bots.len(), 1);
    }

    /// A role the roster gives a player is the one the views show; a
    /// player it gives none keeps the role it was seated in.
    #[test]
    fn a_player_takes_the_role_the_roster_gives_it() {
        let mut teams = vec![team(0, &["a", "b"]), team(1, &["c", "d"])];
        for p in teams.iter_mut().flat_map(|t| &mut t.players) {
            p.role = Some("tank".into());
        }
        let current: HashMap<String, CurrentSeat> = [
            ("a".to_owned(), seat(0, Some("damage"))),
            ("b".to_owned(), seat(0, None)),
            ("c".to_owned(), seat(1, Some("tank"))),
            ("d".to_owned(), seat(1, Some("damage"))),
        ]
        .into();
        follow_roster(&mut teams, Some(&current), None);
        let roles: Vec<(&str, Option<&str>)> = teams
            .iter()
            .flat_map(|t| &t.players)
            .map(|p| (p.player_id.as_str(), p.role.as_deref()))
            .collect();
        assert_eq!(
            roles,
            [
                ("a", Some("damage")),
                ("b", Some("tank")),
                ("c", Some("tank")),
                ("d", Some("damage"))
            ]
        );
    }
}
