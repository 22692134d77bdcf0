//! Flexible shapes (free-for-all, battle royale, arena; docs/game-modes.md#thin-pools-smaller-matches-and-bots).
//!
//! A full flexible match is `teams` teams of `max` players, grouped like an
//! array shape of `[max; teams]` with keep-together (a party is one team's
//! core, solos fill teams up to `max`, parties share a team when they fit
//! whole). Once the anchor has waited `settleAfterSeconds`, a group may
//! also settle short: its units are packed into as few teams as fill up to
//! `max`, then solos are moved out to reach `minTeams` teams and to lift
//! every team to `min`; the match is made when that succeeds.

use crate::config::{FlexibleShape, GameModeConfig};
use crate::grouping::Grouper;
use crate::reasons::WaitingReason;
use crate::seating::{unit_sizes, Formed, SeatPlan};
use crate::teams::pack_partial;

/// The settle pass over anchors still unmatched (`waits[c]` in seconds,
/// longest first). Does nothing for an array shape. Returns the anchors
/// whose group had the seats of a settled match but whose parties cannot
/// be split into its teams (e.g. three trios for at least four teams),
/// each with `NO_EXACT_SEATING`: their full-size try's `NOT_ENOUGH_PLAYERS`
/// would contradict `found` reaching `needed`.
pub fn settle_pass(
    grouper: &mut Grouper,
    config: &GameModeConfig,
    waits: &[f64],
    formed: &mut Vec<Formed>,
) -> Vec<(usize, WaitingReason)> {
    let mut unseated = Vec::new();
    let Some(flex) = config.match_shape.flexible() else {
        return unseated;
    };
    let base = config.match_shape.caps();
    let fewest = flex.min_teams().saturating_mul(flex.team_size.min);
    let candidates = grouper.candidates();
    for (anchor, &wait) in waits.iter().enumerate() {
        if wait < flex.settle_after() {
            break;
        }
        if grouper.is_matched(anchor) || grouper.alive_seats() < u64::from(fewest) {
            continue;
        }
        let attempt = grouper.try_anchor(anchor, &base);
        let plan = if attempt.short.is_none() {
            Some(base.clone())
        } else if attempt.seats >= fewest {
            team_sizes(&unit_sizes(candidates, &attempt.group, true), flex)
        } else {
            None
        };
        if let Some(sizes) = plan {
            grouper.take(&attempt.group);
            formed.push(Formed {
                group: attempt.group,
                plan: SeatPlan::Exact(sizes),
            });
        } else if attempt.seats >= fewest {
            let units = unit_sizes(candidates, &attempt.group, true);
            let reason = WaitingReason::NoExactSeating {
                completing_party_sizes: completing_solos(&units, flex),
            };
            unseated.push((anchor, reason));
        }
    }
    unseated
}

/// The solos that would let a group of units of `sizes` seats settle
/// under `flex` (`[1]`: one more solo player), the fewest that do; empty
/// when no number of solos would (docs/error-codes.md, `NO_EXACT_SEATING`).
/// Solos are what a short settled group lacks: they open teams and lift
/// teams to `min`, where parties of its own cannot be split.
pub fn completing_solos(sizes: &[u32], flex: &FlexibleShape) -> Vec<u32> {
    let seats: u32 = sizes.iter().sum();
    let room = flex
        .teams
        .saturating_mul(flex.team_size.max)
        .saturating_sub(seats);
    let mut with = sizes.to_vec();
    for added in 1..=room {
        with.push(1);
        if team_sizes(&with, flex).is_some() {
            return vec![1; added as usize];
        }
    }
    Vec::new()
}

/// One team while team sizes are settled: players, of whom solos.
#[derive(Debug, Clone, Copy)]
struct Team {
    players: u32,
    solos: u32,
}

/// Team sizes (largest first) for units of `sizes` seats under `flex`:
/// between `minTeams` and `teams` teams of `min..=max` players, every unit
/// whole on one team. `None` if no such split is found.
pub fn team_sizes(sizes: &[u32], flex: &FlexibleShape) -> Option<Vec<u32>> {
    let (min, max) = (flex.team_size.min, flex.team_size.max);
    let (most, fewest) = (flex.teams as usize, flex.min_teams() as usize);
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|a, b| sizes[*b].cmp(&sizes[*a]));
    // First fit decreasing: parties are cores, solos fill up to max.
    let mut teams: Vec<Team> = Vec::new();
    for &u in &order {
        let s = sizes[u];
        match teams.iter_mut().find(|t| t.players + s <= max) {
            Some(t) => {
                t.players += s;
                t.solos += u32::from(s == 1);
            }
            None => teams.push(Team {
                players: s,
                solos: u32::from(s == 1),
            }),
        }
    }
    if teams.len() > most {
        let seat = pack_partial(sizes, &vec![max; most])?;
        teams = vec![
            Team {
                players: 0,
                solos: 0
            };
            most
        ];
        for (u, &t) in seat.iter().enumerate() {
            teams[t].players += sizes[u];
            teams[t].solos += u32::from(sizes[u] == 1);
        }
        teams.retain(|t| t.players > 0);
    }
    // More teams: open one with `min` solos taken from teams above `min`.
    while teams.len() < fewest {
        let mut new = Team {
            players: 0,
            solos: 0,
        };
        while new.players < min {
            move_solo(&mut teams, min)?;
            new.players += 1;
            new.solos += 1;
        }
        teams.push(new);
    }
    // Lift every team to `min`.
    while let Some(low) = teams.iter().position(|t| t.players < min) {
        move_solo_except(&mut teams, min, low)?;
        teams[low].players += 1;
        teams[low].solos += 1;
    }
    if teams.len() > most || teams.len() < fewest {
        return None;
    }
    let mut out: Vec<u32> = teams.iter().map(|t| t.players).collect();
    out.sort_unstable_by(|a, b| b.cmp(a));
    Some(out)
}

/// Takes a solo from the largest team that keeps at least `min` players.
fn move_solo(teams: &mut [Team], min: u32) -> Option<()> {
    move_solo_except(teams, min, usize::MAX).map(|_| ())
}

fn move_solo_except(teams: &mut [Team], min: u32, except: usize) -> Option<usize> {
    let donor = (0..teams.len())
        .filter(|&t| t != except && teams[t].solos > 0 && teams[t].players > min)
        .max_by_key(|&t| teams[t].players)?;
    teams[donor].players -= 1;
    teams[donor].solos -= 1;
    Some(donor)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TeamSize;

    fn flex(teams: u32, min: u32, max: u32, min_teams: u32) -> FlexibleShape {
        FlexibleShape {
            teams,
            team_size: TeamSize { min, max },
            min_teams: Some(min_teams),
            settle_after_seconds: None,
        }
    }

    #[test]
    fn solos_fill_teams_up_to_max() {
        assert_eq!(team_sizes(&[1; 7], &flex(20, 1, 3, 2)), Some(vec![3, 3, 1]));
        assert_eq!(
            team_sizes(&[2, 1, 1, 1], &flex(20, 1, 3, 2)),
            Some(vec![3, 2])
        );
    }

    #[test]
    fn min_teams_split_solos_out() {
        assert_eq!(team_sizes(&[1; 6], &flex(8, 1, 1, 4)), Some(vec![1; 6]));
        assert_eq!(team_sizes(&[1; 3], &flex(8, 1, 1, 4)), None);
        assert_eq!(team_sizes(&[1; 4], &flex(10, 1, 3, 4)), Some(vec![1; 4]));
    }

    #[test]
    fn the_solos_that_complete_a_settled_group() {
        // Three trios, at least four teams: one solo opens the fourth.
        assert_eq!(completing_solos(&[3, 3, 3], &flex(4, 1, 3, 4)), vec![1]);
        // Teams of at least 2: the fourth needs two.
        assert_eq!(completing_solos(&[3, 3, 3], &flex(4, 2, 3, 4)), vec![1, 1]);
        // Three duos in two teams of three: no number of solos seats them.
        assert!(completing_solos(&[2, 2, 2], &flex(2, 1, 3, 2)).is_empty());
    }

    #[test]
    fn every_team_reaches_min() {
        assert_eq!(team_sizes(&[3, 3, 1], &flex(5, 2, 3, 2)), None);
        assert_eq!(team_sizes(&[1; 5], &flex(5, 2, 3, 2)), Some(vec![3, 2]));
    }
}
