//! Candidates (docs/game-modes.md#how-a-cycle-forms-matches): which searches are candidates, in which
//! order, and why the others wait.

mod common;

use common::*;
use matchplane_matchmaker::candidate::build_candidates;
use matchplane_matchmaker::{Search, WaitingReason};

fn build(
    config: &matchplane_matchmaker::GameModeConfig,
    pool: &[Search],
) -> (Vec<Vec<usize>>, Vec<(usize, WaitingReason)>) {
    let valid: Vec<usize> = (0..pool.len()).collect();
    let set = build_candidates(config, pool, &valid);
    let order = set.candidates.iter().map(|c| c.searches.to_vec()).collect();
    (order, set.waiting)
}

#[test]
fn solos_and_parties_are_ordered_longest_waiting_first_ties_by_pool_position() {
    let config = with_parties(mmr_mode(&[2, 2], 5.0, 2.0), 2, true);
    let mut pool = vec![solo("a", 1500.0, -1.0)];
    // A party whose earliest member queued before everyone else.
    let mut p = party("p", 2, 1500.0, -3.0);
    p[1].queued_at = -9.0;
    pool.extend(p);
    pool.push(solo("b", 1500.0, -5.0));
    // Equal waits: pool position decides.
    pool.push(solo("c", 1500.0, -1.0));
    pool.push(solo("d", 1500.0, -5.0));
    let (order, waiting) = build(&config, &pool);
    assert_eq!(order, vec![vec![1, 2], vec![3], vec![5], vec![0], vec![4]]);
    assert!(waiting.is_empty());
}

#[test]
fn a_candidate_carries_its_members_seats_mean_mmr_and_earliest_wait() {
    let config = with_parties(mmr_mode(&[2, 2], 5.0, 2.0), 2, true);
    let mut pool = party("p", 2, 1000.0, -3.0);
    pool[1].mmr = Some(2000.0);
    pool[1].queued_at = -4.0;
    pool.push(solo("a", 1200.0, -2.0));
    let set = build_candidates(&config, &pool, &[0, 1, 2]);
    let party = &set.candidates[0];
    assert_eq!(
        (party.seats, party.mmr, party.wait_start),
        (2, Some(1500.0), -4.0)
    );
    let single = &set.candidates[1];
    assert_eq!(single.searches.to_vec(), vec![2]);
    assert_eq!(
        (single.seats, single.mmr, single.wait_start),
        (1, Some(1200.0), -2.0)
    );
}

#[test]
fn unmeasured_pings_and_incomplete_parties_wait_with_their_reason() {
    let config = with_parties(ping_mode(&[1, 1], 50.0), 2, true);
    let mut pool = vec![pinged("a", 40.0, -1.0), solo("b", 1500.0, -2.0)];
    let mut p = party("p", 2, 1500.0, -3.0);
    p.truncate(1);
    p[0].ping_ms = Some(30.0);
    pool.extend(p);
    let (order, waiting) = build(&config, &pool);
    assert_eq!(order, vec![vec![0]]);
    assert_eq!(waiting.len(), 2);
    assert_eq!(waiting[0], (1, WaitingReason::PingNotMeasured));
    assert!(
        matches!(&waiting[1], (2, WaitingReason::PartyIncomplete { missing }) if missing == &vec!["p-1".to_string()])
    );
}

#[test]
fn a_partys_mmr_is_its_mean_its_max_or_a_blend_as_parties_mmr_says() {
    let mut pool = party("duo", 2, 1000.0, 0.0);
    pool[1].mmr = Some(2000.0);
    let mut config = with_parties(mmr_mode(&[2, 2], 5.0, 2.0), 2, true);
    let mmr_of = |config: &matchplane_matchmaker::GameModeConfig| {
        build_candidates(config, &pool, &[0, 1]).candidates[0].mmr
    };
    assert_eq!(mmr_of(&config), Some(1500.0));
    config.parties.mmr = serde_json::from_value(serde_json::json!("max")).unwrap();
    assert_eq!(mmr_of(&config), Some(2000.0));
    config.parties.mmr = serde_json::from_value(serde_json::json!({"blend": 0.5})).unwrap();
    assert_eq!(mmr_of(&config), Some(1750.0));
    // Out of range: refused naming the field.
    config.parties.mmr = serde_json::from_value(serde_json::json!({"blend": 1.5})).unwrap();
    let errors = matchplane_matchmaker::validate(
        &config,
        &matchplane_matchmaker::Tier::by_name("pro").unwrap(),
    )
    .unwrap_err();
    assert!(
        errors.0.iter().any(|e| e.field == "parties.mmr.blend"),
        "{errors:?}"
    );
}
