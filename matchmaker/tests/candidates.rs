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

/// `parties.incompleteTimeoutSeconds` (docs/game-modes.md#parties): an
/// incomplete party's waiting member fails once it has been found
/// incomplete for the timeout; a held cycle keeps the clock running but
/// fails nobody; a party complete again drops its clock; the bounds are
/// 5..=3600.
#[test]
fn an_incomplete_party_times_out_but_not_while_held() {
    use matchplane_matchmaker::{run_cycle, run_held_cycle, IncompleteParties};
    use rand::SeedableRng;
    let mut config = with_parties(mmr_mode(&[2, 2], 5.0, 2.0), 2, true);
    config.parties.incomplete_timeout_seconds = 10;
    let whole = party("p", 2, 1500.0, 0.0);
    let half = vec![whole[0].clone()];
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let mut clocks = IncompleteParties::new();
    let mut cycle = |pool: &[Search], now: f64, held: bool, clocks: &mut IncompleteParties| {
        let mut outcome = if held {
            run_held_cycle(&config, pool, now)
        } else {
            run_cycle(&config, pool, now, &mut rng)
        };
        clocks.settle(&config, now, &mut outcome);
        outcome
    };
    assert!(cycle(&half, 1.0, false, &mut clocks).failed.is_empty());
    // Held past the timeout: nobody fails, the clock keeps its start.
    let held = cycle(&half, 20.0, true, &mut clocks);
    assert!(held.failed.is_empty());
    assert_eq!(clocks.len(), 1);
    // The first cycle after the hold fails it: incomplete since 1.0.
    let failed = cycle(&half, 21.0, false, &mut clocks).failed;
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].code.as_str(), "PARTY_INCOMPLETE");
    assert!(
        failed[0].message.ends_with("missing: p-1"),
        "{}",
        failed[0].message
    );
    assert!(clocks.is_empty());

    // Complete again before the timeout: the clock is dropped, and a
    // later break starts a new one.
    let mut clocks = IncompleteParties::new();
    assert!(cycle(&half, 0.0, false, &mut clocks).failed.is_empty());
    assert!(cycle(&whole, 5.0, false, &mut clocks).failed.is_empty());
    assert!(clocks.is_empty());
    assert!(cycle(&half, 12.0, false, &mut clocks).failed.is_empty());
    assert!(cycle(&half, 21.9, false, &mut clocks).failed.is_empty());
    assert_eq!(cycle(&half, 22.0, false, &mut clocks).failed.len(), 1);

    for (seconds, ok) in [(4, false), (5, true), (3600, true), (3601, false)] {
        config.parties.incomplete_timeout_seconds = seconds;
        let verdict = matchplane_matchmaker::validate(
            &config,
            &matchplane_matchmaker::Tier::by_name("pro").unwrap(),
        );
        let named = verdict.as_ref().err().is_some_and(|e| {
            e.0.iter()
                .any(|e| e.field == "parties.incompleteTimeoutSeconds")
        });
        assert_eq!(named, !ok, "{seconds}: {verdict:?}");
    }
}
