//! The ticket stores on memory and on real Redis
//! (`MATCHPLANE_TEST_REDIS_URL`, a random prefix per test).

use std::sync::Arc;

use super::{
    CreateTicketError, MemoryTicketStore, NewTicket, RedisTicketStore, Ticket, TicketStore,
};
use crate::pool::{MemoryPoolStore, ModeKey, PoolStore, RedisPoolConfig, RedisPoolStore, Search};
use matchplane_matchmaker::Attributes;

pub(super) fn redis_url() -> String {
    crate::test_support::redis_url()
}

pub(super) fn new_ticket(id: &str, player: &str) -> NewTicket {
    NewTicket {
        ticket_id: id.into(),
        project_id: "prj_t".into(),
        game_mode: "duel".into(),
        player_id: player.into(),
        party: None,
        attributes: Attributes {
            mmr: Some(1500.0),
            ..Attributes::default()
        },
        token_hash: "ab".repeat(32),
        created_at: 1000.0,
        expires_at: 1600.0,
    }
}

pub(super) fn ticket(id: &str, player: &str) -> Ticket {
    new_ticket(id, player).into_ticket().unwrap()
}

type StorePair = (Arc<dyn PoolStore>, Arc<dyn TicketStore>);

/// The memory and the Redis stores, in that order; the Redis keys go when
/// the iteration over them ends.
pub(super) struct Stores {
    pairs: std::vec::IntoIter<StorePair>,
    _keys: RedisKeys,
}

impl Iterator for Stores {
    type Item = StorePair;

    fn next(&mut self) -> Option<StorePair> {
        self.pairs.next()
    }
}

/// A test's Redis prefix, deleted on drop.
pub(super) struct RedisKeys(pub(super) String);

impl Drop for RedisKeys {
    fn drop(&mut self) {
        let _ = crate::pool::redis::delete_prefix_blocking(&redis_url(), &self.0);
    }
}

pub(super) async fn stores() -> Stores {
    let memory: Arc<dyn PoolStore> = Arc::new(MemoryPoolStore::new());
    let memory_tickets: Arc<dyn TicketStore> = Arc::new(MemoryTicketStore::new(memory.clone()));
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let mut config = RedisPoolConfig::new(redis_url());
    config.prefix = prefix.clone();
    let redis = RedisPoolStore::connect(config).await.unwrap();
    let redis_tickets: Arc<dyn TicketStore> = Arc::new(RedisTicketStore::new(redis.clone()));
    let redis: Arc<dyn PoolStore> = Arc::new(redis);
    Stores {
        pairs: vec![(memory, memory_tickets), (redis, redis_tickets)].into_iter(),
        _keys: RedisKeys(prefix),
    }
}

#[tokio::test]
async fn a_ticket_is_stored_and_read_back_only_in_its_project() {
    for (_, tickets) in stores().await {
        let t = ticket("tkt_1", "p1");
        tickets.create(&t, 1000.0).await.unwrap();
        assert_eq!(tickets.get("prj_t", "tkt_1").await.unwrap(), Some(t));
        assert_eq!(tickets.get("prj_other", "tkt_1").await.unwrap(), None);
        assert_eq!(tickets.get("prj_t", "tkt_2").await.unwrap(), None);
        tickets.ping().await.unwrap();
    }
}

#[tokio::test]
async fn a_player_searching_in_the_mode_gets_the_live_ticket() {
    for (pool, tickets) in stores().await {
        let mode = ModeKey::new("prj_t", "duel");
        let live = Search::solo("tkt_live", "p1", 1500.0, 1000.0);
        pool.add_search(&mode, &live, 2000.0, None).await.unwrap();
        match tickets.create(&ticket("tkt_2", "p1"), 1000.0).await {
            Err(CreateTicketError::PlayerAlreadySearching { ticket_id, .. }) => {
                assert_eq!(ticket_id, "tkt_live")
            }
            other => panic!("expected PlayerAlreadySearching, got {other:?}"),
        }
        assert_eq!(tickets.get("prj_t", "tkt_2").await.unwrap(), None);
        // Another player, or the same player in another mode, is fine.
        tickets
            .create(&ticket("tkt_3", "p2"), 1000.0)
            .await
            .unwrap();
        let mut other_mode = ticket("tkt_4", "p1");
        other_mode.game_mode = "ranked".into();
        tickets.create(&other_mode, 1000.0).await.unwrap();
    }
}

#[tokio::test]
async fn pending_tickets_are_bounded_per_project_until_they_search_or_expire() {
    use super::{Hold, TicketStart};
    for (_, tickets) in stores().await {
        let limited = |id: &str, player: &str| ticket(id, player);
        for (i, player) in ["p1", "p2", "p3"].iter().enumerate() {
            tickets
                .create_within(&limited(&format!("tkt_{i}"), player), 1000.0, Some(3))
                .await
                .unwrap();
        }
        assert_eq!(tickets.pending("prj_t", 1000.0).await.unwrap(), 3);
        match tickets
            .create_within(&limited("tkt_over", "p4"), 1000.0, Some(3))
            .await
        {
            Err(CreateTicketError::LimitExceeded { limit }) => assert_eq!(limit, 3),
            other => panic!("expected LimitExceeded, got {other:?}"),
        }
        // The refused ticket is not kept, nor counted.
        assert_eq!(tickets.get("prj_t", "tkt_over").await.unwrap(), None);
        assert_eq!(tickets.pending("prj_t", 1000.0).await.unwrap(), 3);
        // Another project has its own count.
        let mut other = limited("tkt_elsewhere", "p1");
        other.project_id = "prj_other".into();
        tickets
            .create_within(&other, 1000.0, Some(3))
            .await
            .unwrap();

        // A search started with one: no longer pending, room for another.
        let mode = ModeKey::new("prj_t", "duel");
        let first = limited("tkt_0", "p1");
        tickets
            .start_search(&TicketStart {
                mode: &mode,
                ticket_id: &first.ticket_id,
                token_hash: &first.token_hash,
                now: 1001.0,
                hold: Hold::Socket {
                    lease_seconds: 30.0,
                },
                max_live: None,
                scope: crate::pool::PlayerSearchScope::Mode,
                config: None,
            })
            .await
            .unwrap();
        assert_eq!(tickets.pending("prj_t", 1001.0).await.unwrap(), 2);
        tickets
            .create_within(&limited("tkt_4", "p4"), 1001.0, Some(3))
            .await
            .unwrap();
        // One revoked before it searched leaves too, and is gone.
        let revoked = tickets.get("prj_t", "tkt_4").await.unwrap().unwrap();
        assert!(tickets.revoke_unstarted(&revoked).await.unwrap());
        assert_eq!(tickets.pending("prj_t", 1001.0).await.unwrap(), 2);
        assert!(tickets.get("prj_t", "tkt_4").await.unwrap().is_none());

        // Expired tickets (expiresAt 1600) no longer count, and make room.
        assert_eq!(tickets.pending("prj_t", 1600.0).await.unwrap(), 0);
        for (i, player) in ["p5", "p6", "p7"].iter().enumerate() {
            let mut late = limited(&format!("tkt_late_{i}"), player);
            late.expires_at = 2200.0;
            tickets.create_within(&late, 1600.5, Some(3)).await.unwrap();
        }
        assert_eq!(tickets.pending("prj_t", 1601.0).await.unwrap(), 3);
    }
}

/// A start reads the ticket's record, then adds its search: one that read
/// the record just before the studio revoked the ticket adds nothing (the
/// pool refuses the revoked ticket in the same step as its other checks),
/// and a ticket whose search started, live or ended, is not revoked.
#[tokio::test]
async fn a_start_that_read_a_ticket_before_its_revocation_adds_no_search() {
    for (pool, tickets) in stores().await {
        let mode = ModeKey::new("prj_t", "duel");
        let now = crate::pool::wall_clock();
        let mut new = new_ticket("tkt_race", "p1");
        (new.created_at, new.expires_at) = (now, now + 600.0);
        let raced = new.into_ticket().unwrap();
        tickets.create_within(&raced, now, None).await.unwrap();
        // The start's read, before the revocation.
        let read = tickets.get("prj_t", "tkt_race").await.unwrap().unwrap();
        assert!(tickets.revoke_unstarted(&raced).await.unwrap());
        // The start's add, after it.
        let added = pool
            .add_search(&mode, &super::search_of(&read, now), now + 600.0, None)
            .await;
        assert!(
            matches!(added, Err(crate::pool::AddSearchError::TicketRevoked)),
            "{added:?}"
        );
        assert!(pool.snapshot(&mode).await.unwrap().is_empty());

        // A live search's ticket, and an ended one's, are not revoked.
        for (id, player) in [("tkt_live", "p2"), ("tkt_ended", "p3")] {
            let mut new = new_ticket(id, player);
            (new.created_at, new.expires_at) = (now, now + 600.0);
            let started = new.into_ticket().unwrap();
            tickets.create_within(&started, now, None).await.unwrap();
            let search = super::search_of(&started, now);
            pool.add_search(&mode, &search, now + 600.0, None)
                .await
                .unwrap();
            if id == "tkt_ended" {
                pool.end_search(&mode, id, &crate::pool::EndOutcome::Cancelled)
                    .await
                    .unwrap();
            }
            assert!(!tickets.revoke_unstarted(&started).await.unwrap(), "{id}");
            assert!(tickets.get("prj_t", id).await.unwrap().is_some(), "{id}");
        }
    }
}

/// Generations at once go to Redis in one batch (`batch.rs`): each is
/// answered as if they had been written one after the other in the order
/// they came, its own player checked and its own count read.
#[tokio::test]
async fn tickets_generated_at_once_are_counted_in_the_order_they_came() {
    for (pool, tickets) in stores().await {
        let mode = ModeKey::new("prj_t", "duel");
        let live = Search::solo("tkt_live", "p1", 1500.0, 1000.0);
        pool.add_search(&mode, &live, 2000.0, None).await.unwrap();
        let generated: Vec<Ticket> = (0..5)
            .map(|i| ticket(&format!("tkt_{i}"), &format!("p{}", i + 2)))
            .collect();
        let created = futures::future::join_all(
            generated
                .iter()
                .map(|t| tickets.create_within(t, 1000.0, Some(3))),
        )
        .await;
        for (i, result) in created.iter().enumerate() {
            match (i < 3, result) {
                (true, Ok(())) => {}
                (false, Err(CreateTicketError::LimitExceeded { limit: 3 })) => {}
                (_, other) => panic!("ticket {i}: {other:?}"),
            }
        }
        assert_eq!(tickets.pending("prj_t", 1000.0).await.unwrap(), 3);
        assert!(tickets.get("prj_t", "tkt_2").await.unwrap().is_some());
        assert_eq!(tickets.get("prj_t", "tkt_3").await.unwrap(), None);

        // Modes and projects apart in one batch: the searching player is
        // refused in its mode only, a party's members are kept.
        let searching = ticket("tkt_p1", "p1");
        let mut elsewhere = ticket("tkt_p1_ranked", "p1");
        elsewhere.game_mode = "ranked".into();
        let mut other_project = ticket("tkt_other", "p1");
        other_project.project_id = "prj_other".into();
        let mut partied = new_ticket("tkt_party", "p9");
        partied.project_id = "prj_other".into();
        partied.party = Some(matchplane_matchmaker::Party {
            id: "party-1".into(),
            members: vec!["p9".into(), "p10".into()],
        });
        let partied = partied.into_ticket().unwrap();
        let batch = [&searching, &elsewhere, &other_project, &partied];
        let created =
            futures::future::join_all(batch.iter().map(|t| tickets.create(t, 1000.0))).await;
        match &created[0] {
            Err(CreateTicketError::PlayerAlreadySearching { ticket_id, .. }) => {
                assert_eq!(ticket_id, "tkt_live")
            }
            other => panic!("expected PlayerAlreadySearching, got {other:?}"),
        }
        assert!(created[1..].iter().all(Result::is_ok), "{created:?}");
        assert_eq!(tickets.get("prj_t", "tkt_p1").await.unwrap(), None);
        assert_eq!(
            tickets.get("prj_other", "tkt_party").await.unwrap(),
            Some(partied.clone())
        );
        assert_eq!(
            tickets.party_members("prj_other", "party-1").await.unwrap(),
            // Sorted, as the trait gives them.
            Some(vec!["p10".to_owned(), "p9".to_owned()])
        );
        assert_eq!(tickets.pending("prj_other", 1000.0).await.unwrap(), 2);
    }
}

#[tokio::test]
async fn a_ticket_record_lives_its_ttl_and_a_short_grace_on_redis() {
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let _keys = RedisKeys(prefix.clone());
    let mut config = RedisPoolConfig::new(redis_url());
    config.prefix = prefix.clone();
    let redis = RedisPoolStore::connect(config).await.unwrap();
    let tickets = RedisTicketStore::new(redis.clone());
    let now = 1000.0;
    let t = ticket("tkt_ttl", "p1"); // expires 600 s after now
    tickets.create(&t, now).await.unwrap();
    let ttl: i64 = redis::cmd("TTL")
        .arg(crate::pool::redis::keys::ticket_key(
            &prefix, "prj_t", "tkt_ttl",
        ))
        .query_async(&mut redis.conn())
        .await
        .unwrap();
    let bound = 600 + super::RECORD_GRACE.as_secs() as i64;
    assert!(
        (bound - 2..=bound).contains(&ttl),
        "ttl {ttl}, bound {bound}"
    );
    assert!(super::RECORD_GRACE.as_secs() <= 300, "a short grace");
}

/// The unix time now, in seconds.
fn unix_now() -> f64 {
    chrono::Utc::now().timestamp_micros() as f64 / 1e6
}

#[tokio::test]
async fn kept_records_outlive_their_expiry_and_are_never_shortened() {
    // Redis: the record's own expiry (ticket expiry + grace) is pushed out
    // by `keep_until`, and a shorter keep leaves it alone.
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let _keys = RedisKeys(prefix.clone());
    let mut config = RedisPoolConfig::new(redis_url());
    config.prefix = prefix.clone();
    let redis = RedisPoolStore::connect(config).await.unwrap();
    let tickets = RedisTicketStore::new(redis);
    let now = unix_now();
    let mut t = ticket("tkt_kept", "p1");
    t.expires_at = now + 10.0;
    tickets.create(&t, now).await.unwrap();
    let key = crate::pool::redis::keys::ticket_key(&prefix, "prj_t", "tkt_kept");
    let client = redis::Client::open(redis_url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let ttl = |conn: &mut redis::aio::MultiplexedConnection| {
        let mut conn = conn.clone();
        let key = key.clone();
        async move {
            let ms: i64 = redis::cmd("PTTL")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .unwrap();
            ms as f64 / 1000.0
        }
    };
    let before = ttl(&mut conn).await;
    assert!((100.0..=131.0).contains(&before), "{before}");
    let ids = vec!["tkt_kept".to_owned(), "tkt_never_made".to_owned()];
    tickets
        .keep_until("prj_t", &ids, now + 3600.0)
        .await
        .unwrap();
    let kept = ttl(&mut conn).await;
    assert!((3500.0..=3601.0).contains(&kept), "{kept}");
    tickets.keep_until("prj_t", &ids, now + 5.0).await.unwrap();
    let after = ttl(&mut conn).await;
    assert!(after >= kept - 5.0, "shortened from {kept} to {after}");
    assert_eq!(tickets.get("prj_t", "tkt_never_made").await.unwrap(), None);

    // Memory: a kept record survives the prune of expired records, an
    // unkept one does not.
    let memory: Arc<dyn PoolStore> = Arc::new(MemoryPoolStore::new());
    let tickets = MemoryTicketStore::new(memory);
    for id in ["tkt_kept", "tkt_gone"] {
        let mut old = ticket(id, id);
        old.expires_at = now - 3600.0;
        tickets.create(&old, now - 7200.0).await.unwrap();
    }
    tickets
        .keep_until("prj_t", &["tkt_kept".to_owned()], now + 60.0)
        .await
        .unwrap();
    for i in 0..1100 {
        let mut fresh = ticket(&format!("tkt_f{i}"), &format!("f{i}"));
        fresh.expires_at = now + 600.0;
        tickets.create(&fresh, now).await.unwrap();
    }
    assert!(tickets.get("prj_t", "tkt_kept").await.unwrap().is_some());
    assert_eq!(tickets.get("prj_t", "tkt_gone").await.unwrap(), None);
}

/// A record past its expiry and grace reads as gone in memory, as its
/// Redis key has lapsed, whether or not an insert pruned it yet.
#[tokio::test]
async fn a_memory_record_past_its_grace_reads_as_gone() {
    let memory: Arc<dyn PoolStore> = Arc::new(MemoryPoolStore::new());
    let tickets = MemoryTicketStore::new(memory);
    let now = unix_now();
    let grace = super::RECORD_GRACE.as_secs_f64();
    let mut gone = ticket("tkt_gone", "p1");
    gone.expires_at = now - grace - 1.0;
    tickets.create(&gone, now).await.unwrap();
    let mut graced = ticket("tkt_graced", "p2");
    graced.expires_at = now - grace + 60.0;
    tickets.create(&graced, now).await.unwrap();
    assert_eq!(tickets.get("prj_t", "tkt_gone").await.unwrap(), None);
    assert!(tickets.get("prj_t", "tkt_graced").await.unwrap().is_some());
}
