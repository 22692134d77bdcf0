#![allow(clippy::unwrap_used)]
use super::*;

const TANK: u64 = 1;
const DAMAGE: u64 = 2;
const SUPPORT: u64 = 4;

fn seats(tank: u32, damage: u32, support: u32, any: u32) -> RoleSeats {
    RoleSeats {
        counts: vec![tank, damage, support],
        any,
    }
}

#[test]
fn a_later_player_moves_an_earlier_one_along_an_augmenting_path() {
    // The flexible player takes tank first; the tank-only player moves it.
    let roles = assign(&[TANK | DAMAGE, TANK], &seats(1, 1, 0, 0)).unwrap();
    assert_eq!(roles, vec![1, 0]);
}

#[test]
fn any_seats_come_last_and_take_anyone() {
    let roles = assign(&[SUPPORT, SUPPORT], &seats(0, 0, 1, 1)).unwrap();
    assert_eq!(roles, vec![2, 3]);
    assert!(assign(&[SUPPORT, SUPPORT, SUPPORT], &seats(0, 0, 1, 1)).is_none());
    // A player listing no role of the composition takes `any` only.
    assert_eq!(assign(&[0], &seats(1, 0, 0, 1)).unwrap(), vec![3]);
    assert!(assign(&[0], &seats(1, 0, 0, 0)).is_none());
}

#[test]
fn a_party_of_two_tanks_cannot_share_a_team_with_one_tank_seat() {
    let duo = [TANK, TANK];
    let caps = [3, 3];
    let s = seats(1, 1, 1, 0);
    assert!(!can_seat(&[&duo], &caps, &s));
    // Split into solos, they seat on two teams.
    assert!(can_seat(&[&duo[..1], &duo[1..]], &caps, &s));
}

#[test]
fn the_final_seating_fills_every_team_exactly_and_balances() {
    let units: Vec<&[u64]> = vec![&[TANK], &[TANK], &[DAMAGE], &[DAMAGE]];
    let values = [2000.0, 1000.0, 1900.0, 1100.0];
    let chosen = seat_group(
        &units,
        &values,
        &[2, 2],
        &seats(1, 1, 0, 0),
        Choice::Balanced,
    )
    .unwrap();
    // Each team one tank and one damage, the strong tank with the weak damage.
    assert_ne!(chosen.team_of[0], chosen.team_of[1]);
    assert_eq!(chosen.team_of[0], chosen.team_of[3]);
    assert_eq!(chosen.roles, vec![vec![0], vec![0], vec![1], vec![1]]);
    let snake = seat_group(&units, &values, &[2, 2], &seats(1, 1, 0, 0), Choice::Snake).unwrap();
    assert_ne!(snake.team_of[0], snake.team_of[1]);
    assert!(seat_group(
        &units[..3],
        &values,
        &[2, 2],
        &seats(1, 1, 0, 0),
        Choice::Balanced
    )
    .is_none());
}

#[test]
fn without_role_limits_the_balanced_seating_equals_the_teams_module() {
    // Twenty solos on four teams of five, every seat `any`: the role
    // seating must balance exactly as teams::balanced does.
    let masks: Vec<[u64; 1]> = (0..20).map(|_| [TANK | DAMAGE]).collect();
    let units: Vec<&[u64]> = masks.iter().map(|m| &m[..]).collect();
    let values: Vec<f64> = (0..20u32)
        .map(|i| 1000.0 + f64::from((i * 7919) % 1000))
        .collect();
    let caps = [5, 5, 5, 5];
    let chosen = seat_group(&units, &values, &caps, &seats(0, 0, 0, 5), Choice::Balanced).unwrap();
    let team_units: Vec<crate::teams::Unit> = values
        .iter()
        .map(|v| crate::teams::Unit {
            seats: 1,
            value_sum: *v,
        })
        .collect();
    let exact = crate::teams::balanced(&team_units, &caps).unwrap();
    let ours = crate::teams::spread(&team_units, &caps, &chosen.team_of);
    let theirs = crate::teams::spread(&team_units, &caps, &exact);
    assert!(ours <= theirs + 1e-9, "{ours} vs {theirs}");
}
