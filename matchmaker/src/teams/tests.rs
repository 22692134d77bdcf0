//! Unit tests of team seating.

use super::*;

fn solos(values: &[f64]) -> Vec<Unit> {
    values
        .iter()
        .map(|v| Unit {
            seats: 1,
            value_sum: *v,
        })
        .collect()
}

fn team_sums(units: &[Unit], k: usize, seat: &[usize]) -> Vec<f64> {
    let mut sums = vec![0.0; k];
    for (u, t) in units.iter().zip(seat) {
        sums[*t] += u.value_sum;
    }
    sums
}

#[test]
fn four_solos_are_not_stacked() {
    // Case from the field: 2000, 1900, 1100, 1000 in [2,2] split 3000 vs 3000.
    let units = solos(&[2000.0, 1900.0, 1100.0, 1000.0]);
    let seat = balanced(&units, &[2, 2]).unwrap();
    let mut sums = team_sums(&units, 2, &seat);
    sums.sort_by(f64::total_cmp);
    assert_eq!(sums, vec![3000.0, 3000.0]);
}

#[test]
fn snake_deals_in_snake_order() {
    let units = solos(&[6.0, 5.0, 4.0, 3.0, 2.0, 1.0]);
    let seat = snake(&units, &[3, 3]).unwrap();
    // 0,1,1,0,0,1
    assert_eq!(seat, vec![0, 1, 1, 0, 0, 1]);
}

#[test]
fn snake_handles_uneven_shapes() {
    let units = solos(&[4.0, 3.0, 2.0, 1.0]);
    let seat = snake(&units, &[1, 3]).unwrap();
    assert_eq!(seat, vec![0, 1, 1, 1]);
}

#[test]
fn three_duos_never_fill_three_v_three() {
    assert!(!can_pack(&[2, 2, 2], &[3, 3]));
    assert!(can_pack(&[2, 2, 1, 1], &[3, 3]));
    let units = vec![
        Unit {
            seats: 2,
            value_sum: 2.0,
        },
        Unit {
            seats: 2,
            value_sum: 2.0,
        },
        Unit {
            seats: 2,
            value_sum: 2.0,
        },
    ];
    assert!(balanced(&units, &[3, 3]).is_none());
    assert!(snake(&units, &[3, 3]).is_none());
}

#[test]
fn duo_sits_on_the_team_of_three() {
    let units = vec![
        Unit {
            seats: 2,
            value_sum: 4000.0,
        },
        Unit {
            seats: 1,
            value_sum: 1000.0,
        },
        Unit {
            seats: 1,
            value_sum: 1000.0,
        },
    ];
    for seat in [
        balanced(&units, &[1, 3]).unwrap(),
        snake(&units, &[1, 3]).unwrap(),
    ] {
        assert_eq!(seat[0], 1, "the duo must sit on the team of three");
    }
}

#[test]
fn beyond_the_exact_limit_is_never_worse_than_snake() {
    let values: Vec<f64> = (0..24).map(|i| f64::from((i * 37) % 101) * 13.0).collect();
    let units = solos(&values);
    let caps = [6, 6, 6, 6];
    let b = balanced(&units, &caps).unwrap();
    let s = snake(&units, &caps).unwrap();
    assert!(spread(&units, &caps, &b) <= spread(&units, &caps, &s));
}
