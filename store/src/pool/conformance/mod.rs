//! The conformance suite: every case is written once, against
//! `Arc<dyn PoolStore>`, and run on both [`MemoryPoolStore`] and
//! [`RedisPoolStore`] (real Redis at `MATCHPLANE_TEST_REDIS_URL`, under a
//! random key prefix per test, deleted afterwards even when the test fails).

mod backfills;
mod claims;
mod concurrency;
mod late_answers;
mod leases;
mod outbox;
mod player_scope;
mod project_slot;
mod proposal_races;
mod proposals;
mod reads;
mod redis_only;
mod releases;
mod searches;
mod status;

use std::sync::Arc;
use std::time::Duration;

use super::{
    Claim, MemoryPoolStore, ModeKey, PoolStore, RedisPoolConfig, RedisPoolStore, Search,
    SearchState,
};

use backfills::*;
use claims::*;
use concurrency::*;
use late_answers::*;
use leases::*;
use outbox::*;
use player_scope::*;
use proposal_races::*;
use proposals::*;
use reads::*;
use releases::*;
use searches::*;
use status::*;

/// Runs each named case (an `async fn(Arc<dyn PoolStore>)`) on both stores,
/// and on the Redis store over a Redis Cluster
/// (`MATCHPLANE_TEST_REDIS_CLUSTER_URL`; a case fails when it is unset,
/// never skips).
macro_rules! conformance {
    ($($case:ident),* $(,)?) => {
        mod on_memory {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    super::$case(super::memory_store()).await;
                }
            )*
        }
        mod on_redis {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    let harness = super::RedisHarness::new().await;
                    super::$case(harness.store()).await;
                }
            )*
        }
        mod on_redis_cluster {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn $case() {
                    let url = super::cluster_url();
                    let harness = super::RedisHarness::on(url, std::time::Duration::from_secs(24 * 3600)).await;
                    super::$case(harness.store()).await;
                }
            )*
        }
    };
}

conformance!(
    add_and_snapshot,
    one_search_per_ticket_and_player,
    quota_counts_the_whole_project,
    end_search_reports_how_it_stood,
    ping_is_the_median_of_the_last_five,
    waiting_reasons_only_for_live_searches,
    deadlines_expire_and_touch_extends,
    expiry_by_a_cutoff_leaves_later_deadlines,
    a_socket_held_add_is_marked_live_and_ended,
    claim_takes_all_or_nothing,
    claim_refused_under_a_stale_fencing_token,
    tokens_of_two_epochs_never_meet,
    the_lease_probe_renews_and_counts,
    workers_heartbeat_lapse_and_leave,
    claim_many_takes_each_group_on_its_own,
    claim_many_gives_a_ticket_listed_twice_to_the_first,
    claim_many_spans_several_script_runs,
    claimed_searches_never_hold_up_expiry,
    outbox_entries_of_a_dead_consumer_are_taken_over,
    a_consumer_reads_its_own_unacknowledged_entries_again_at_once,
    status_messages_reach_every_subscriber,
    cancels_racing_claims_end_every_search_exactly_once,
    modes_with_searches_follow_the_pools,
    projects_with_searches_follow_the_pools,
    a_proposal_holds_its_searches_out_of_snapshots_and_expiry,
    everyone_accepting_makes_the_match_once,
    a_party_members_decline_drops_the_whole_party_and_nobody_else,
    the_deadline_fails_the_silent_and_requeues_who_accepted,
    a_cancel_during_a_proposal_counts_as_a_decline,
    a_start_while_a_leaving_members_proposal_closes_is_refused,
    two_declines_at_once_record_only_the_first,
    a_search_failed_by_the_service_cools_nobody_down,
    a_search_ended_by_a_stopping_server_cools_nobody_down,
    a_stopping_server_drops_nobodys_party,
    an_accept_racing_a_cancel_has_exactly_one_outcome,
    two_answers_of_one_ticket_at_once_close_it_once,
    a_proposed_search_still_counts_as_searching,
    backfills_open_replace_and_close,
    fills_take_searches_and_seats_in_one_step,
    a_fill_stores_its_grown_roster_with_the_claim,
    role_seats_are_taken_with_the_seats,
    fills_are_refused_when_stale_fenced_or_gone,
    two_fills_of_one_revision_take_one_seat,
    a_close_racing_a_fill_ends_with_one_of_them,
    project_scope_holds_one_search_per_player_across_modes,
    project_scope_counts_proposed_searches_not_matched_ones,
    project_scope_adds_racing_in_two_modes_keep_one,
    a_cancelled_proposal_queues_its_closing_record,
    a_released_matchs_tickets_search_again_from_their_first_queued_at,
    answers_at_or_after_accept_by_are_not_recorded,
    an_answer_naming_its_proposal_counts_only_there,
);

fn memory_store() -> Arc<dyn PoolStore> {
    Arc::new(MemoryPoolStore::new())
}

/// A deadline nobody reaches in a test (Unix seconds).
pub(crate) const FAR: f64 = 1e12;

/// `prj_a`'s mode of that name.
pub(crate) fn mode(name: &str) -> ModeKey {
    ModeKey::new("prj_a", name)
}

/// A solo search of `player` with ticket `ticket`.
pub(crate) fn solo(ticket: &str, player: &str) -> Search {
    Search::solo(ticket, player, 1500.0, 1_764_486_133.123_456)
}

/// A real Redis under a random prefix, cleaned up on drop.
pub(crate) struct RedisHarness {
    url: String,
    prefix: String,
    store: RedisPoolStore,
}

impl RedisHarness {
    pub async fn new() -> Self {
        Self::with_retention(Duration::from_secs(24 * 3600)).await
    }

    /// A harness whose store keeps ended records for `retention`.
    pub async fn with_retention(retention: Duration) -> Self {
        Self::on(crate::test_support::redis_url(), retention).await
    }

    /// A harness on the Redis (node or cluster) at `url`.
    pub async fn on(url: String, retention: Duration) -> Self {
        let prefix = format!("mptest-{}", ulid::Ulid::new());
        let store = Self::connect(&url, &prefix, retention).await;
        Self { url, prefix, store }
    }

    async fn connect(url: &str, prefix: &str, retention: Duration) -> RedisPoolStore {
        let mut config = RedisPoolConfig::new(url);
        config.prefix = prefix.to_owned();
        config.ended_retention = retention;
        RedisPoolStore::connect(config)
            .await
            .expect("test Redis reachable (MATCHPLANE_TEST_REDIS_URL)")
    }

    pub fn store(&self) -> Arc<dyn PoolStore> {
        Arc::new(self.store.clone())
    }

    /// A second store on a new connection, as after an API restart.
    pub async fn reconnect(&self) -> RedisPoolStore {
        Self::connect(&self.url, &self.prefix, Duration::from_secs(24 * 3600)).await
    }
}

impl Drop for RedisHarness {
    fn drop(&mut self) {
        let _ = super::redis::delete_prefix_blocking(&self.url, &self.prefix);
    }
}

/// The test cluster's URL (`MATCHPLANE_TEST_REDIS_CLUSTER_URL`, see
/// `scripts/redis-cluster`), after taking the shared cluster lock
/// ([`hold_cluster_lock`]). Panics when it is unset: a case never passes
/// without having run.
pub(crate) fn cluster_url() -> String {
    let url = crate::test_support::cluster_url();
    hold_cluster_lock();
    url
}

/// Takes a shared lock on `<temp dir>/matchplane-redis-cluster.lock` and
/// keeps it until this test process exits. The root package's cluster tests
/// (`tests/support/cluster.rs`) that move slots or restart masters take it
/// exclusively, so they never run while these cases use the cluster, even
/// when two test binaries run at once. Waits at most ten minutes.
fn hold_cluster_lock() {
    static HELD: std::sync::OnceLock<std::fs::File> = std::sync::OnceLock::new();
    HELD.get_or_init(|| {
        let path = crate::test_support::cluster_lock_path();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
        let deadline = std::time::Instant::now() + Duration::from_secs(600);
        loop {
            match file.try_lock_shared() {
                Ok(()) => return file,
                Err(std::fs::TryLockError::WouldBlock) => {
                    assert!(
                        std::time::Instant::now() < deadline,
                        "{} stayed locked for 10 minutes",
                        path.display()
                    );
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(std::fs::TryLockError::Error(err)) => panic!("{}: {err}", path.display()),
            }
        }
    });
}

/// Waits for the next message of a status stream, at most a second.
pub(crate) async fn next_status(stream: &mut super::StatusStream) -> Option<String> {
    use futures::StreamExt;
    tokio::time::timeout(Duration::from_secs(1), stream.next())
        .await
        .ok()
        .flatten()
}

pub(crate) fn sorted(mut searches: Vec<Search>) -> Vec<Search> {
    searches.sort_by(|a, b| a.ticket_id.cmp(&b.ticket_id));
    searches
}

/// A claim of `tickets`, each of the player these cases give it: ticket
/// `t3` (or `r3`) is player `p3`.
pub(crate) fn claim_of(match_id: &str, tickets: &[&str]) -> Claim {
    Claim {
        match_id: match_id.into(),
        ticket_ids: tickets.iter().map(|t| (*t).to_owned()).collect(),
        player_ids: tickets.iter().map(|t| format!("p{}", &t[1..])).collect(),
        record_json: format!(r#"{{"matchId":"{match_id}","tickets":{tickets:?}}}"#),
    }
}

/// `m`'s lease for one worker (30 s): its fencing token.
pub(crate) async fn lease(store: &dyn PoolStore, m: &ModeKey) -> u64 {
    store
        .acquire_lease(m, "worker-1", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap()
}

/// Solo searches `t1`..`tn` of players `p1`..`pn`, none due.
pub(crate) async fn add_solos(store: &dyn PoolStore, m: &ModeKey, n: u32) {
    for i in 1..=n {
        let s = solo(&format!("t{i}"), &format!("p{i}"));
        store.add_search(m, &s, FAR, None).await.unwrap();
    }
}

pub(crate) async fn live(store: &dyn PoolStore, m: &ModeKey, ticket: &str) -> bool {
    matches!(
        store.search_state(m, ticket).await.unwrap(),
        Some(SearchState::Live(_))
    )
}
