//! Starting a search from a stored ticket, on memory and on real Redis (the
//! start script), from the pool entry the ticket holds.

use super::tests::{new_ticket, stores, ticket};
use super::{Hold, StartSearchError, Ticket, TicketStart};
use crate::pool::{AddSearchError, ModeKey, Party, PlayerSearchScope, SearchState};
use matchplane_matchmaker::search::SearchEntry;

fn variants() -> Vec<Ticket> {
    let mut plain = new_ticket("tkt_1", "p1");
    plain.attributes.mmr = None;
    let mut precise = new_ticket("tkt_2", "Zo\"ë🎮\\ \u{1}x");
    // 17 significant digits (cjson keeps 14), one serde_json reads back
    // exactly (without its `float_roundtrip` feature it may miss by an ulp).
    precise.attributes.mmr = Some(1_520.123_456_789_012_3);
    precise.party = Some(Party {
        id: "party \"7\"".into(),
        members: vec!["Zo\"ë🎮\\ \u{1}x".into(), "m2".into()],
    });
    let mut party_only = new_ticket("tkt_3", "p3");
    party_only.attributes.mmr = None;
    party_only.party = precise.party.clone();
    let mut everything = new_ticket("tkt_5", "p5");
    everything.attributes = serde_json::from_str(
        r#"{"mmr":1200.5,"latencies":{"eu-west":31,"us-east":110.25},"data":{"z":1,"a":[1.50]}}"#,
    )
    .unwrap();
    [
        plain,
        precise,
        party_only,
        new_ticket("tkt_4", "p4"),
        everything,
    ]
    .into_iter()
    .map(|t| t.into_ticket().unwrap())
    .collect()
}

#[test]
fn a_tickets_entry_started_is_its_searchs_pool_entry() {
    for t in variants() {
        let read_back: Ticket = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(read_back, t, "a test value serde_json cannot read back");
        assert!(!t.entry().contains("data"), "data is never in the pool");
        for now in [1_764_486_133.123_456_7, 1_764_486_133.0, 0.1 + 0.2] {
            assert_eq!(
                SearchEntry::started(t.entry(), now).unwrap(),
                serde_json::to_string(&super::search_of(&t, now)).unwrap()
            );
        }
    }
}

fn start<'a>(mode: &'a ModeKey, t: &'a Ticket, now: f64, hold: Hold) -> TicketStart<'a> {
    TicketStart {
        mode,
        ticket_id: &t.ticket_id,
        token_hash: &t.token_hash,
        now,
        hold,
        max_live: None,
        scope: PlayerSearchScope::Mode,
        config: None,
    }
}

/// A WebSocket's hold, with a 30 s lease.
const SOCKET: Hold = Hold::Socket {
    lease_seconds: 30.0,
};

#[tokio::test]
async fn a_search_starts_from_its_ticket_with_the_exact_entry() {
    for (pool, tickets) in stores().await {
        let mode = ModeKey::new("prj_t", "duel");
        for t in variants() {
            tickets.create(&t, 1000.0).await.unwrap();
            let now = 1100.125;
            let started = tickets
                .start_search(&start(&mode, &t, now, SOCKET))
                .await
                .unwrap();
            assert_eq!(started, t);
            let Some(SearchState::Live(live)) =
                pool.search_state(&mode, &t.ticket_id).await.unwrap()
            else {
                panic!("not live")
            };
            assert_eq!(live.search, super::search_of(&t, now));
            assert_eq!(live.deadline, now + 30.0, "the socket's lease");
            assert!(live.socket);
            assert_eq!(
                pool.live_ticket_of_player(&mode, &t.player_id)
                    .await
                    .unwrap()
                    .as_deref(),
                Some(t.ticket_id.as_str())
            );
        }
        // Its project is listed for the worker's sweep.
        assert_eq!(pool.projects_with_searches().await.unwrap(), ["prj_t"]);
        // A polled search's deadline: the poll timeout, capped by the expiry.
        let t = ticket("tkt_rest", "rest");
        tickets.create(&t, 1000.0).await.unwrap();
        let polled = Hold::Polled { poll_seconds: 30.0 };
        tickets
            .start_search(&start(&mode, &t, 1580.0, polled))
            .await
            .unwrap();
        let Some(SearchState::Live(live)) = pool.search_state(&mode, "tkt_rest").await.unwrap()
        else {
            panic!("not live")
        };
        assert_eq!(live.deadline, 1600.0);
        assert!(!live.socket);
        assert_eq!(polled.deadline(1000.0, 1600.0), 1030.0);
        assert_eq!(SOCKET.deadline(1590.0, 1600.0), 1600.0);
    }
}

#[tokio::test]
async fn a_wrong_hash_mode_project_or_an_expired_ticket_is_invalid() {
    for (pool, tickets) in stores().await {
        let mode = ModeKey::new("prj_t", "duel");
        let t = ticket("tkt_1", "p1");
        tickets.create(&t, 1000.0).await.unwrap();
        let wrong_hash = "cd".repeat(32);
        let other_mode = ModeKey::new("prj_t", "ranked");
        let other_project = ModeKey::new("prj_u", "duel");
        let unknown = ticket("tkt_none", "p1");
        let cases = [
            TicketStart {
                token_hash: &wrong_hash,
                ..start(&mode, &t, 1100.0, SOCKET)
            },
            start(&other_mode, &t, 1100.0, SOCKET),
            start(&other_project, &t, 1100.0, SOCKET),
            start(&mode, &t, 1600.0, SOCKET),
            start(&mode, &unknown, 1100.0, SOCKET),
        ];
        for case in &cases {
            assert!(
                matches!(
                    tickets.start_search(case).await,
                    Err(StartSearchError::TicketInvalid)
                ),
                "{case:?}"
            );
        }
        assert_eq!(pool.search_state(&mode, "tkt_1").await.unwrap(), None);
        assert_eq!(pool.count_live("prj_t").await.unwrap(), 0);
    }
}

#[tokio::test]
async fn the_pools_rules_hold_for_a_start_from_a_ticket() {
    for (pool, tickets) in stores().await {
        let mode = ModeKey::new("prj_t", "duel");
        let t = ticket("tkt_1", "p1");
        let same_player = ticket("tkt_2", "p1");
        let other = ticket("tkt_3", "p3");
        for ticket in [&t, &same_player, &other] {
            tickets.create(ticket, 1000.0).await.unwrap();
        }
        let go = |t| start(&mode, t, 1100.0, SOCKET);
        tickets.start_search(&go(&t)).await.unwrap();
        let refusal = |r: Result<Ticket, StartSearchError>| match r {
            Err(StartSearchError::Add(e)) => e,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert!(matches!(
            refusal(tickets.start_search(&go(&t)).await),
            AddSearchError::SearchAlreadyActive
        ));
        match refusal(tickets.start_search(&go(&same_player)).await) {
            AddSearchError::PlayerAlreadySearching {
                ticket_id,
                game_mode,
            } => {
                assert_eq!((ticket_id.as_str(), game_mode.as_str()), ("tkt_1", "duel"))
            }
            other => panic!("{other:?}"),
        }
        let limited = TicketStart {
            max_live: Some(1),
            ..go(&other)
        };
        assert!(matches!(
            refusal(tickets.start_search(&limited).await),
            AddSearchError::QuotaExceeded { limit: 1 }
        ));
        // A matched ticket is spent.
        let lease = pool
            .acquire_lease(&mode, "w", std::time::Duration::from_secs(5))
            .await
            .unwrap()
            .unwrap();
        let claim = crate::pool::Claim {
            match_id: "mat_1".into(),
            ticket_ids: vec!["tkt_1".into()],
            player_ids: vec!["p1".into()],
            record_json: "{}".into(),
        };
        pool.claim(&mode, lease, &claim).await.unwrap();
        assert!(matches!(
            refusal(tickets.start_search(&go(&t)).await),
            AddSearchError::TicketAlreadyMatched
        ));
        assert_eq!(pool.count_live("prj_t").await.unwrap(), 0);
    }
}

#[tokio::test]
async fn a_start_under_project_scope_is_refused_while_the_player_searches_in_another_mode() {
    for (pool, tickets) in stores().await {
        let (duel, ranked) = (
            ModeKey::new("prj_t", "duel"),
            ModeKey::new("prj_t", "ranked"),
        );
        let first = ticket("tkt_1", "p1");
        let second = Ticket {
            game_mode: "ranked".into(),
            ..ticket("tkt_2", "p1")
        };
        for t in [&first, &second] {
            tickets.create(t, 1000.0).await.unwrap();
        }
        let scoped = |mode, t| TicketStart {
            scope: PlayerSearchScope::Project,
            ..start(mode, t, 1100.0, SOCKET)
        };
        tickets.start_search(&scoped(&duel, &first)).await.unwrap();
        match tickets.start_search(&scoped(&ranked, &second)).await {
            Err(StartSearchError::Add(AddSearchError::PlayerAlreadySearching {
                ticket_id,
                game_mode,
            })) => assert_eq!((ticket_id.as_str(), game_mode.as_str()), ("tkt_1", "duel")),
            other => panic!("expected PLAYER_ALREADY_SEARCHING, got {other:?}"),
        }
        assert_eq!(pool.count_live("prj_t").await.unwrap(), 1);
        // The default scope lets the same player search in another mode.
        tickets
            .start_search(&start(&ranked, &second, 1100.0, SOCKET))
            .await
            .unwrap();
        assert_eq!(pool.count_live("prj_t").await.unwrap(), 2);
    }
}

/// The record's fields may come in any order: the pool entry is a field of
/// its own, not the head of the record.
#[tokio::test]
async fn a_start_reads_the_entry_whatever_the_records_field_order() {
    use super::tests::{redis_url, RedisKeys};
    use super::{RedisTicketStore, TicketStore};
    use crate::pool::{PoolStore, RedisPoolConfig, RedisPoolStore};
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let _keys = RedisKeys(prefix.clone());
    let mut config = RedisPoolConfig::new(redis_url());
    config.prefix = prefix.clone();
    let redis = RedisPoolStore::connect(config).await.unwrap();
    let pool: std::sync::Arc<dyn PoolStore> = std::sync::Arc::new(redis.clone());
    let tickets = RedisTicketStore::new(redis);
    let client = redis::Client::open(redis_url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let mode = ModeKey::new("prj_t", "duel");
    for t in variants() {
        tickets.create(&t, 1000.0).await.unwrap();
        let key = crate::pool::redis::keys::ticket_key(&prefix, "prj_t", &t.ticket_id);
        let json: String = redis::cmd("GET")
            .arg(&key)
            .query_async(&mut conn)
            .await
            .unwrap();
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&json).unwrap();
        let reversed: serde_json::Map<_, _> = object.into_iter().rev().collect();
        let reordered = serde_json::to_string(&reversed).unwrap();
        assert!(!reordered.starts_with("{\"ticketId\""), "{reordered}");
        let () = redis::cmd("SET")
            .arg(&key)
            .arg(&reordered)
            .query_async(&mut conn)
            .await
            .unwrap();
        let now = 1100.5;
        tickets
            .start_search(&start(&mode, &t, now, SOCKET))
            .await
            .unwrap();
        let Some(SearchState::Live(live)) = pool.search_state(&mode, &t.ticket_id).await.unwrap()
        else {
            panic!("not live")
        };
        assert_eq!(live.search, super::search_of(&t, now));
    }
}

/// A ticket generated before an upgrade (its record in the previous
/// layout: attributes at the top, no entry) still reads and starts, on the
/// same entry a new record would hold.
#[tokio::test]
async fn a_record_of_the_previous_layout_still_starts() {
    use super::tests::{redis_url, RedisKeys};
    use super::{RedisTicketStore, TicketStore};
    use crate::pool::{PoolStore, RedisPoolConfig, RedisPoolStore};
    let mut new = new_ticket("tkt_old", "p1");
    new.attributes =
        serde_json::from_str(r#"{"mmr":1520.5,"latencies":{"eu-west":31},"data":{"k":[1.50]}}"#)
            .unwrap();
    new.party = Some(Party {
        id: "x".into(),
        members: vec!["p1".into(), "p2".into()],
    });
    let expected = new.clone().into_ticket().unwrap();
    let old = format!(
        r#"{{"ticketId":"tkt_old","playerId":"p1","party":{{"id":"x","members":["p1","p2"]}},"mmr":1520.5,"latencies":{{"eu-west":31.0}},"projectId":"prj_t","data":"{{\"k\":[1.50]}}","gameMode":"duel","tokenHash":"{}","createdAt":1000.0,"expiresAt":1600.0}}"#,
        "ab".repeat(32)
    );
    let read: Ticket = serde_json::from_str(&old).unwrap();
    assert_eq!(read, expected);

    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let _keys = RedisKeys(prefix.clone());
    let mut config = RedisPoolConfig::new(redis_url());
    config.prefix = prefix.clone();
    let redis = RedisPoolStore::connect(config).await.unwrap();
    let pool: std::sync::Arc<dyn PoolStore> = std::sync::Arc::new(redis.clone());
    let tickets = RedisTicketStore::new(redis);
    let client = redis::Client::open(redis_url()).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.unwrap();
    let key = crate::pool::redis::keys::ticket_key(&prefix, "prj_t", "tkt_old");
    let () = redis::cmd("SET")
        .arg(&key)
        .arg(&old)
        .query_async(&mut conn)
        .await
        .unwrap();
    let mode = ModeKey::new("prj_t", "duel");
    let started = tickets
        .start_search(&start(&mode, &expected, 1100.5, SOCKET))
        .await
        .unwrap();
    assert_eq!(started, expected);
    let Some(SearchState::Live(live)) = pool.search_state(&mode, "tkt_old").await.unwrap() else {
        panic!("not live")
    };
    assert_eq!(live.search, super::search_of(&expected, 1100.5));
}

/// A socket's search the sweep ends keeps in its `ended` record that a
/// socket held it (its lease lapsed), a polled one does not.
#[tokio::test]
async fn a_swept_search_says_whether_a_socket_held_it() {
    for (pool, tickets) in stores().await {
        let mode = ModeKey::new("prj_t", "duel");
        let socket = ticket("tkt_socket", "socket");
        let polled = ticket("tkt_polled", "polled");
        for (t, hold) in [
            (&socket, SOCKET),
            (&polled, Hold::Polled { poll_seconds: 30.0 }),
        ] {
            tickets.create(t, 1000.0).await.unwrap();
            tickets
                .start_search(&start(&mode, t, 1100.0, hold))
                .await
                .unwrap();
        }
        let mut expired = pool.expire_due(&mode, 1131.0, 100).await.unwrap();
        expired.sort();
        assert_eq!(expired, ["tkt_polled", "tkt_socket"]);
        for (id, socket) in [("tkt_socket", true), ("tkt_polled", false)] {
            let Some(SearchState::Ended(ended)) = pool.search_state(&mode, id).await.unwrap()
            else {
                panic!("{id} not ended")
            };
            assert_eq!(ended.socket, socket, "{id}: {ended:?}");
            assert_eq!(ended.queued_at, Some(1100.0), "{id}");
        }
    }
}
