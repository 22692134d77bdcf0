//! How the live workers share the modes: rendezvous (highest random
//! weight) hashing over the workers' heartbeat set
//! ([`Leases::worker_heartbeat`](matchplane_store::pool::Leases::worker_heartbeat)).
//!
//! Every worker ranks every live worker for a mode by a stable hash of
//! (worker id, mode) and the mode is its top worker's: the workers agree
//! without talking to one another, the modes spread evenly (each worker's
//! share is binomial: for 10 000 modes over three workers the standard
//! deviation is 47 modes, 1.4 % of a share), and a worker joining or
//! leaving moves only the modes it takes or gives up. A worker only
//! tries to take the modes that are its own and gives up, at its next
//! wait, a mode that became another's; the lease and its fencing token keep
//! one holder at a time while views of the set differ for a moment.

use matchplane_store::pool::ModeKey;
use xxhash_rust::xxh3::xxh3_64;

/// The worker of `workers` that runs `mode`; `None` if there is none.
pub fn owner<'a>(workers: &'a [String], mode: &ModeKey) -> Option<&'a str> {
    workers
        .iter()
        .max_by_key(|worker| (weight(worker, mode), worker.as_str()))
        .map(String::as_str)
}

/// The rank of `worker` for `mode`: the same number on every worker and
/// every build (xxh3 is specified).
fn weight(worker: &str, mode: &ModeKey) -> u64 {
    let mut text =
        String::with_capacity(worker.len() + mode.project_id.len() + mode.mode.len() + 2);
    text.push_str(worker);
    text.push('\n');
    text.push_str(&mode.project_id);
    text.push('\n');
    text.push_str(&mode.mode);
    xxh3_64(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modes(n: usize) -> Vec<ModeKey> {
        (0..n)
            .map(|i| ModeKey::new(format!("prj_{}", i % 7), format!("mode-{i}")))
            .collect()
    }

    fn workers(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    #[test]
    fn modes_spread_evenly_and_a_join_moves_only_the_newcomers_share() {
        let all = modes(10_000);
        let three = workers(&["wrk_a", "wrk_b", "wrk_c"]);
        let four = workers(&["wrk_a", "wrk_b", "wrk_c", "wrk_d"]);
        let mut shares = std::collections::HashMap::new();
        let mut moved = 0;
        for mode in &all {
            let before = owner(&three, mode).unwrap();
            *shares.entry(before).or_insert(0usize) += 1;
            let after = owner(&four, mode).unwrap();
            if after != before {
                assert_eq!(after, "wrk_d", "a join moves modes to the newcomer only");
                moved += 1;
            }
        }
        for (worker, count) in &shares {
            assert!(
                (3_033..=3_633).contains(count),
                "{worker} runs {count} of 10 000 modes (±9 % of a third)"
            );
        }
        assert!(
            (2_200..=2_800).contains(&moved),
            "{moved} moved to the fourth"
        );
    }

    #[test]
    fn the_owner_does_not_depend_on_the_listing_order() {
        let mode = ModeKey::new("prj_1", "ranked");
        let one = workers(&["wrk_a", "wrk_b", "wrk_c"]);
        let other = workers(&["wrk_c", "wrk_a", "wrk_b"]);
        assert_eq!(owner(&one, &mode), owner(&other, &mode));
        assert_eq!(owner(&[], &mode), None);
    }
}
