//! Nothing lost, nothing twice (issue 4, deliverable 5): cancels racing claims.
//!
//! 2 000 searches; four claimers take groups of ten (dropping the members a
//! conflict reports gone and retrying the rest) while four cancellers cancel
//! half of the searches, some of them from two cancellers at once. Then every
//! search must have ended exactly once, matched XOR cancelled, and no ticket
//! may be in two matches; the outbox must hold exactly the matches made.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use super::{mode, solo, FAR};
use crate::pool::{Claim, ClaimOutcome, EndOutcome, EndResult, Ended, PoolStore, SearchState};

const SEARCHES: usize = 2_000;
const GROUP: usize = 10;
const TASKS: usize = 4;

/// A deterministic shuffle (xorshift), so a failure replays.
fn shuffled<T>(mut items: Vec<T>, mut seed: u64) -> Vec<T> {
    for i in (1..items.len()).rev() {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        items.swap(i, (seed % (i as u64 + 1)) as usize);
    }
    items
}

/// The player of ticket `tkt_00042` in these cases: `player-42`.
fn player_of(ticket: &str) -> String {
    let number: usize = ticket
        .trim_start_matches("tkt_")
        .parse()
        .unwrap_or(usize::MAX);
    format!("player-{number}")
}

/// What one claimer committed: match id → its tickets.
type Claimed = Vec<(String, Vec<String>)>;

async fn claimer(
    store: Arc<dyn PoolStore>,
    token: u64,
    worker: usize,
    groups: Vec<Vec<String>>,
) -> (Claimed, usize) {
    let m = mode("race");
    let mut claimed = Vec::new();
    let mut conflicts = 0;
    for (n, mut group) in groups.into_iter().enumerate() {
        let mut attempt = 0;
        while group.len() >= 2 {
            let match_id = format!("mat_{worker}_{n}_{attempt}");
            let claim = Claim {
                match_id: match_id.clone(),
                ticket_ids: group.clone(),
                player_ids: group.iter().map(|t| player_of(t)).collect(),
                record_json: format!(r#"{{"matchId":"{match_id}"}}"#),
            };
            match store.claim(&m, token, &claim).await.unwrap() {
                ClaimOutcome::Claimed { .. } => {
                    claimed.push((match_id, group));
                    break;
                }
                ClaimOutcome::Conflict { gone } => {
                    conflicts += 1;
                    assert!(!gone.is_empty());
                    group.retain(|t| !gone.contains(t));
                }
                ClaimOutcome::LeaseLost => panic!("the lease is held for the whole test"),
            }
            attempt += 1;
        }
        // A cycle claims fewer groups than cancels arrive: slow down so the
        // cancellers keep pace and the two meet on the same searches.
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    (claimed, conflicts)
}

async fn canceller(store: Arc<dyn PoolStore>, tickets: Vec<String>) -> Vec<(String, EndResult)> {
    let m = mode("race");
    let mut results = Vec::with_capacity(tickets.len());
    for ticket in tickets {
        let result = store
            .end_search(&m, &ticket, &EndOutcome::Cancelled)
            .await
            .unwrap();
        results.push((ticket, result));
        tokio::task::yield_now().await;
    }
    results
}

pub async fn cancels_racing_claims_end_every_search_exactly_once(store: Arc<dyn PoolStore>) {
    let m = mode("race");
    let tickets: Vec<String> = (0..SEARCHES).map(|i| format!("tkt_{i:05}")).collect();
    for (i, ticket) in tickets.iter().enumerate() {
        let search = solo(ticket, &format!("player-{i}"));
        store.add_search(&m, &search, FAR, None).await.unwrap();
    }
    let token = store
        .acquire_lease(&m, "race-worker", Duration::from_secs(300))
        .await
        .unwrap()
        .unwrap();

    // Groups of ten dealt round-robin to the claimers.
    let groups: Vec<Vec<String>> = shuffled(tickets.clone(), 7)
        .chunks(GROUP)
        .map(<[String]>::to_vec)
        .collect();
    let mut per_claimer = vec![Vec::new(); TASKS];
    let mut turn_of: HashMap<String, usize> = HashMap::new();
    for (i, group) in groups.into_iter().enumerate() {
        for ticket in &group {
            turn_of.insert(ticket.clone(), i / TASKS);
        }
        per_claimer[i % TASKS].push(group);
    }
    // Half the tickets cancelled; the first 200 of them by two cancellers.
    let doomed: Vec<String> = shuffled(tickets.clone(), 11)
        .into_iter()
        .take(SEARCHES / 2)
        .collect();
    let mut per_canceller = vec![Vec::new(); TASKS];
    for (i, ticket) in doomed.iter().enumerate() {
        per_canceller[i % TASKS].push(ticket.clone());
        if i < 200 {
            per_canceller[(i + 1) % TASKS].push(ticket.clone());
        }
    }

    // Half the cancellers go in the order the claimers reach the tickets,
    // half in reverse: whatever the relative speeds, the reverse ones meet the
    // claimers somewhere, and cancels and claims of the same searches race.
    for (i, tickets) in per_canceller.iter_mut().enumerate() {
        tickets.sort_by_key(|t| turn_of.get(t).copied().unwrap_or_default());
        if i % 2 == 1 {
            tickets.reverse();
        }
    }

    let mut claim_tasks = Vec::new();
    for (worker, groups) in per_claimer.into_iter().enumerate() {
        claim_tasks.push(tokio::spawn(claimer(store.clone(), token, worker, groups)));
    }
    let mut cancel_tasks = Vec::new();
    for tickets in per_canceller {
        cancel_tasks.push(tokio::spawn(canceller(store.clone(), tickets)));
    }

    let mut match_of: HashMap<String, String> = HashMap::new();
    let (mut matches, mut conflicts) = (0, 0);
    for task in claim_tasks {
        let (claimed, n) = task.await.unwrap();
        conflicts += n;
        for (match_id, group) in claimed {
            matches += 1;
            for ticket in group {
                let before = match_of.insert(ticket.clone(), match_id.clone());
                assert!(before.is_none(), "{ticket} in two matches");
            }
        }
    }
    let mut cancelled: HashSet<String> = HashSet::new();
    let mut lost_to_claims = 0;
    for task in cancel_tasks {
        let results = task.await.unwrap();
        for (ticket, result) in results {
            match result {
                EndResult::Ended => {
                    assert!(cancelled.insert(ticket.clone()), "{ticket} cancelled twice");
                }
                EndResult::Matched { match_id } => {
                    lost_to_claims += 1;
                    assert_eq!(match_of.get(&ticket), Some(&match_id), "{ticket}");
                }
                EndResult::NotLive => {}
            }
        }
    }

    // Matched XOR cancelled XOR still live; none both, none neither.
    let still_live: HashSet<String> = store
        .snapshot(&m)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.ticket_id.to_string())
        .collect();
    for ticket in &tickets {
        let states = [
            match_of.contains_key(ticket),
            cancelled.contains(ticket),
            still_live.contains(ticket),
        ];
        assert_eq!(
            states.iter().filter(|s| **s).count(),
            1,
            "{ticket}: {states:?}"
        );
        let state = store.search_state(&m, ticket).await.unwrap();
        let state = match state {
            Some(SearchState::Ended(e)) => Some(Err(e.how)),
            Some(SearchState::Live(_)) => Some(Ok(())),
            None => None,
        };
        match (match_of.get(ticket), state) {
            (Some(id), Some(Err(Ended::Matched { match_id }))) => {
                assert_eq!(id, &match_id);
            }
            (None, Some(Err(Ended::Cancelled))) => {
                assert!(cancelled.contains(ticket));
            }
            (None, Some(Ok(()))) => assert!(still_live.contains(ticket)),
            (expected, state) => panic!("{ticket}: matched {expected:?}, state {state:?}"),
        }
    }
    assert_eq!(
        store.count_live("prj_a").await.unwrap(),
        still_live.len() as u64
    );

    // The outbox holds exactly the matches made, each once.
    let outbox = store
        .read_outbox(&m, "checker", SEARCHES, Duration::from_secs(300))
        .await
        .unwrap();
    let recorded: HashSet<String> = outbox.iter().map(|e| e.match_id.clone()).collect();
    let made: HashSet<String> = match_of.values().cloned().collect();
    assert_eq!(outbox.len(), matches);
    assert_eq!(recorded, made);

    println!(
        "race: {SEARCHES} searches -> {matches} matches ({} matched), {} cancelled, \
         {} left live; {conflicts} claim conflicts, {lost_to_claims} cancels found the \
         search already matched",
        match_of.len(),
        cancelled.len(),
        still_live.len()
    );
}
