//! The cases of the conformance suite, one rule each.

use std::sync::Arc;
use std::time::Duration;

use super::{mode, next_status, solo, FAR};
use crate::pool::{
    AddSearchError, Claim, ClaimOutcome, EndOutcome, EndResult, Ended, Party, PoolError, PoolStore,
    Search, SearchState,
};

fn sorted(mut searches: Vec<Search>) -> Vec<Search> {
    searches.sort_by(|a, b| a.ticket_id.cmp(&b.ticket_id));
    searches
}

/// A claim of `tickets`, each of the player these cases give it: ticket
/// `t3` (or `r3`) is player `p3`.
fn claim_of(match_id: &str, tickets: &[&str]) -> Claim {
    Claim {
        match_id: match_id.into(),
        ticket_ids: tickets.iter().map(|t| (*t).to_owned()).collect(),
        player_ids: tickets.iter().map(|t| format!("p{}", &t[1..])).collect(),
        record_json: format!(r#"{{"matchId":"{match_id}","tickets":{tickets:?}}}"#),
    }
}

/// `m`'s lease for one worker (30 s): its fencing token.
async fn lease(store: &dyn PoolStore, m: &crate::pool::ModeKey) -> u64 {
    store
        .acquire_lease(m, "worker-1", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap()
}

/// Solo searches `t1`..`tn` of players `p1`..`pn`, none due.
async fn add_solos(store: &dyn PoolStore, m: &crate::pool::ModeKey, n: u32) {
    for i in 1..=n {
        let s = solo(&format!("t{i}"), &format!("p{i}"));
        store.add_search(m, &s, FAR, None).await.unwrap();
    }
}

async fn live(store: &dyn PoolStore, m: &crate::pool::ModeKey, ticket: &str) -> bool {
    matches!(
        store.search_state(m, ticket).await.unwrap(),
        Some(SearchState::Live(_))
    )
}

pub async fn add_and_snapshot(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let mut expected = Vec::new();
    for i in 0..3 {
        let s = solo(&format!("tkt_{i}"), &format!("p{i}"));
        store.add_search(&m, &s, FAR, None).await.unwrap();
        expected.push(s);
    }
    let party = Search {
        ticket_id: "tkt_party".into(),
        player_id: "Zoë🎮".into(),
        party: Some(Party {
            id: "party-7".into(),
            members: vec!["Zoë🎮".into(), "p9".into()],
        }),
        mmr: None,
        ping_ms: None,
        queued_at: 17.25,
    };
    store.add_search(&m, &party, FAR, None).await.unwrap();
    expected.push(party);

    assert_eq!(sorted(store.snapshot(&m).await.unwrap()), sorted(expected));
    assert!(store.snapshot(&mode("other")).await.unwrap().is_empty());
    assert_eq!(store.count_live("prj_a").await.unwrap(), 4);
    assert_eq!(store.count_live("prj_b").await.unwrap(), 0);
    assert_eq!(
        store.live_ticket_of_player(&m, "Zoë🎮").await.unwrap(),
        Some("tkt_party".into())
    );
    assert_eq!(
        store.live_ticket_of_player(&m, "nobody").await.unwrap(),
        None
    );
    match store.search_state(&m, "tkt_1").await.unwrap() {
        Some(SearchState::Live(live)) => {
            assert_eq!(live.search, solo("tkt_1", "p1"));
            assert_eq!(live.deadline, FAR);
            assert_eq!(live.waiting_reason, None);
        }
        other => panic!("tkt_1: {other:?}"),
    }
    assert_eq!(store.search_state(&m, "tkt_none").await.unwrap(), None);
}

pub async fn one_search_per_ticket_and_player(store: Arc<dyn PoolStore>) {
    let (m, other) = (mode("ranked"), mode("casual"));
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    let again = store.add_search(&m, &solo("t1", "p1"), FAR, None).await;
    assert!(
        matches!(again, Err(AddSearchError::SearchAlreadyActive)),
        "{again:?}"
    );
    let twice = store.add_search(&m, &solo("t2", "p1"), FAR, None).await;
    match twice {
        Err(AddSearchError::PlayerAlreadySearching { ticket_id }) => assert_eq!(ticket_id, "t1"),
        other => panic!("{other:?}"),
    }
    // Another mode is another pool.
    store
        .add_search(&other, &solo("t3", "p1"), FAR, None)
        .await
        .unwrap();
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);

    // Once ended, the player may search again, and so may the ticket.
    let ended = store
        .end_search(&m, "t1", &EndOutcome::Cancelled)
        .await
        .unwrap();
    assert_eq!(ended, EndResult::Ended);
    store
        .add_search(&m, &solo("t2", "p1"), FAR, None)
        .await
        .unwrap();
    store
        .end_search(&m, "t2", &EndOutcome::Cancelled)
        .await
        .unwrap();
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    assert!(live(store.as_ref(), &m, "t1").await);
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
}

pub async fn quota_counts_the_whole_project(store: Arc<dyn PoolStore>) {
    let (m, other) = (mode("ranked"), mode("casual"));
    let limit = Some(2);
    store
        .add_search(&m, &solo("a", "pa"), FAR, limit)
        .await
        .unwrap();
    store
        .add_search(&other, &solo("b", "pb"), FAR, limit)
        .await
        .unwrap();
    for target in [&m, &other] {
        let over = store.add_search(target, &solo("c", "pc"), FAR, limit).await;
        assert!(
            matches!(over, Err(AddSearchError::QuotaExceeded { limit: 2 })),
            "{over:?}"
        );
    }
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
    // Another project has its own count; no limit means none.
    let foreign = crate::pool::ModeKey::new("prj_b", "ranked");
    store
        .add_search(&foreign, &solo("d", "pd"), FAR, limit)
        .await
        .unwrap();
    store
        .add_search(&m, &solo("e", "pe"), FAR, None)
        .await
        .unwrap();
    assert_eq!(store.count_live("prj_a").await.unwrap(), 3);
    store
        .end_search(&m, "a", &EndOutcome::Expired)
        .await
        .unwrap();
    store
        .end_search(&m, "e", &EndOutcome::Expired)
        .await
        .unwrap();
    store
        .add_search(&m, &solo("c", "pc"), FAR, limit)
        .await
        .unwrap();
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
    assert_eq!(store.count_live("prj_b").await.unwrap(), 1);
}

pub async fn end_search_reports_how_it_stood(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&m, &solo("t2", "p2"), FAR, None)
        .await
        .unwrap();
    let cancel = EndOutcome::Cancelled;
    assert_eq!(
        store.end_search(&m, "t1", &cancel).await.unwrap(),
        EndResult::Ended
    );
    assert_eq!(
        store.end_search(&m, "t1", &cancel).await.unwrap(),
        EndResult::NotLive
    );
    assert_eq!(
        store.end_search(&m, "nope", &cancel).await.unwrap(),
        EndResult::NotLive
    );
    let failed = EndOutcome::Failed {
        code: "GAME_MODE_DISABLED".into(),
        message: "the mode was disabled".into(),
    };
    assert_eq!(
        store.end_search(&m, "t2", &failed).await.unwrap(),
        EndResult::Ended
    );
    assert_eq!(
        store
            .search_state(&m, "t1")
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Cancelled)
    );
    assert_eq!(
        store
            .search_state(&m, "t2")
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Failed {
            code: "GAME_MODE_DISABLED".into(),
            message: "the mode was disabled".into(),
        })
    );
    // The record keeps when the search started and when it ended.
    let Some(SearchState::Ended(ended)) = store.search_state(&m, "t2").await.unwrap() else {
        panic!("t2 not ended");
    };
    assert_eq!(ended.queued_at, Some(solo("t2", "p2").queued_at));
    assert!(ended.ended_at.is_some_and(|at| at > 1_764_486_133.0));
    assert!(store.snapshot(&m).await.unwrap().is_empty());
    assert_eq!(store.count_live("prj_a").await.unwrap(), 0);
    assert_eq!(store.live_ticket_of_player(&m, "p1").await.unwrap(), None);
}

pub async fn ping_is_the_median_of_the_last_five(store: Arc<dyn PoolStore>) {
    let m = mode("ping");
    assert_eq!(store.record_ping(&m, "t1", 10.0).await.unwrap(), None);
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    let mut medians = Vec::new();
    for rtt in [10.0, 50.0, 30.0, 20.0, 40.0, 100.0, 120.5] {
        medians.push(store.record_ping(&m, "t1", rtt).await.unwrap());
    }
    // [10] [10,50] [10,50,30] [10,50,30,20] [10,50,30,20,40]
    // [50,30,20,40,100] [30,20,40,100,120.5]
    let expected = [10.0, 30.0, 30.0, 25.0, 30.0, 40.0, 40.0];
    assert_eq!(medians, expected.map(Some).to_vec());
    let snap = store.snapshot(&m).await.unwrap();
    assert_eq!(snap.len(), 1);
    assert_eq!(snap[0].ping_ms, Some(40.0));
    match store.search_state(&m, "t1").await.unwrap() {
        Some(SearchState::Live(live)) => assert_eq!(live.search.ping_ms, Some(40.0)),
        other => panic!("{other:?}"),
    }
    store
        .end_search(&m, "t1", &EndOutcome::Cancelled)
        .await
        .unwrap();
    assert_eq!(store.record_ping(&m, "t1", 5.0).await.unwrap(), None);
    // A new search of the ticket starts with no samples.
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    assert_eq!(store.snapshot(&m).await.unwrap()[0].ping_ms, None);
}

pub async fn waiting_reasons_only_for_live_searches(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    let reason = |code: &str| format!(r#"{{"code":"{code}"}}"#);
    store
        .set_waiting_reasons(
            &m,
            &[
                ("t1".into(), reason("PARTY_INCOMPLETE")),
                ("gone".into(), reason("NOT_ENOUGH_PLAYERS")),
            ],
        )
        .await
        .unwrap();
    store
        .set_waiting_reasons(&m, &[("t1".into(), reason("NO_CANDIDATES_IN_RANGE"))])
        .await
        .unwrap();
    match store.search_state(&m, "t1").await.unwrap() {
        Some(SearchState::Live(live)) => {
            assert_eq!(live.waiting_reason, Some(reason("NO_CANDIDATES_IN_RANGE")));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(store.search_state(&m, "gone").await.unwrap(), None);
    // A new search of the same ticket starts without the old reason.
    store
        .end_search(&m, "t1", &EndOutcome::Cancelled)
        .await
        .unwrap();
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    match store.search_state(&m, "t1").await.unwrap() {
        Some(SearchState::Live(live)) => assert_eq!(live.waiting_reason, None),
        other => panic!("{other:?}"),
    }
}

pub async fn deadlines_expire_and_touch_extends(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    store
        .add_search(&m, &solo("a", "pa"), 100.0, None)
        .await
        .unwrap();
    store
        .add_search(&m, &solo("b", "pb"), 200.0, None)
        .await
        .unwrap();
    store
        .add_search(&m, &solo("c", "pc"), 300.0, None)
        .await
        .unwrap();
    assert!(store.touch_search(&m, "a", 250.0).await.unwrap());
    assert!(store.touch_search(&m, "a", 250.0).await.unwrap());
    assert!(!store.touch_search(&m, "nope", 250.0).await.unwrap());
    assert!(store.expire_due(&m, 199.0, 10).await.unwrap().is_empty());
    assert_eq!(store.expire_due(&m, 210.0, 10).await.unwrap(), vec!["b"]);
    assert_eq!(
        store
            .search_state(&m, "b")
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Expired)
    );
    let Some(SearchState::Ended(ended)) = store.search_state(&m, "b").await.unwrap() else {
        panic!("b not ended");
    };
    assert_eq!(
        (ended.queued_at, ended.ended_at),
        (Some(solo("b", "pb").queued_at), Some(210.0))
    );
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
    // The limit bounds one sweep; earliest deadlines first.
    assert_eq!(store.expire_due(&m, 1000.0, 1).await.unwrap(), vec!["a"]);
    assert_eq!(store.expire_due(&m, 1000.0, 10).await.unwrap(), vec!["c"]);
    assert!(store.snapshot(&m).await.unwrap().is_empty());
    assert!(!store.touch_search(&m, "c", 2000.0).await.unwrap());
    assert_eq!(store.count_live("prj_a").await.unwrap(), 0);
}

pub async fn claim_takes_all_or_nothing(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 4).await;
    store
        .end_search(&m, "t2", &EndOutcome::Cancelled)
        .await
        .unwrap();

    let conflict = store
        .claim(&m, token, &claim_of("mat_1", &["t1", "t2", "t3"]))
        .await
        .unwrap();
    assert_eq!(
        conflict,
        ClaimOutcome::Conflict {
            gone: vec!["t2".into()]
        }
    );
    assert_eq!(store.snapshot(&m).await.unwrap().len(), 3);
    assert_eq!(store.count_live("prj_a").await.unwrap(), 3);

    let claimed = store
        .claim(&m, token, &claim_of("mat_2", &["t1", "t3"]))
        .await
        .unwrap();
    assert!(
        matches!(claimed, ClaimOutcome::Claimed { .. }),
        "{claimed:?}"
    );
    let left: Vec<String> = store
        .snapshot(&m)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.ticket_id.to_string())
        .collect();
    assert_eq!(left, vec!["t4"]);
    assert_eq!(store.count_live("prj_a").await.unwrap(), 1);
    let matched = EndResult::Matched {
        match_id: "mat_2".into(),
    };
    let cancel = store
        .end_search(&m, "t1", &EndOutcome::Cancelled)
        .await
        .unwrap();
    assert_eq!(cancel, matched);
    assert_eq!(
        store
            .search_state(&m, "t3")
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Matched {
            match_id: "mat_2".into()
        })
    );
    // A matched ticket is spent; its player may search with a new one.
    let spent = store.add_search(&m, &solo("t1", "p1"), FAR, None).await;
    assert!(
        matches!(spent, Err(AddSearchError::TicketAlreadyMatched)),
        "{spent:?}"
    );
    store
        .add_search(&m, &solo("t5", "p1"), FAR, None)
        .await
        .unwrap();
    // A claim of a matched search conflicts, and nothing else is taken.
    let again = store
        .claim(&m, token, &claim_of("mat_3", &["t4", "t3"]))
        .await
        .unwrap();
    assert_eq!(
        again,
        ClaimOutcome::Conflict {
            gone: vec!["t3".into()]
        }
    );
    assert!(live(store.as_ref(), &m, "t4").await);

    let outbox = store
        .read_outbox(&m, "c1", 10, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(outbox.len(), 1);
    assert_eq!(outbox[0].match_id, "mat_2");
    assert_eq!(
        outbox[0].record_json,
        claim_of("mat_2", &["t1", "t3"]).record_json
    );
    let ids = vec![outbox[0].id.clone()];
    assert_eq!(store.ack_outbox(&m, &ids).await.unwrap(), 1);
    assert_eq!(store.ack_outbox(&m, &ids).await.unwrap(), 0);
    let idle = Duration::ZERO;
    assert!(store
        .read_outbox(&m, "c1", 10, idle)
        .await
        .unwrap()
        .is_empty());

    let many: Vec<String> = (0..1001).map(|i| format!("x{i}")).collect();
    let too_many = claim_of(
        "mat_4",
        &many.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    for bad in [
        claim_of("mat_4", &[]),
        claim_of("mat_4", &["t4", "t4"]),
        too_many,
    ] {
        let refused = store.claim(&m, token, &bad).await;
        assert!(
            matches!(refused, Err(PoolError::InvalidClaim(_))),
            "{refused:?}"
        );
    }
    assert!(live(store.as_ref(), &m, "t4").await);
}

pub async fn claim_refused_under_a_stale_fencing_token(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 4).await;
    let none = store
        .claim(&m, 1, &claim_of("mat_0", &["t1"]))
        .await
        .unwrap();
    assert_eq!(none, ClaimOutcome::LeaseLost, "no lease at all");

    let short = Duration::from_millis(200);
    let a = store
        .acquire_lease(&m, "worker-a", short)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.acquire_lease(&m, "worker-b", short).await.unwrap(),
        None
    );
    // Worker A pauses past its lease; B takes the mode over.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let long = Duration::from_secs(30);
    let b = store
        .acquire_lease(&m, "worker-b", long)
        .await
        .unwrap()
        .unwrap();
    assert!(b > a, "fencing tokens grow: {a} then {b}");

    let late = store
        .claim(&m, a, &claim_of("mat_a", &["t1", "t2"]))
        .await
        .unwrap();
    assert_eq!(late, ClaimOutcome::LeaseLost);
    assert_eq!(store.snapshot(&m).await.unwrap().len(), 4);
    assert!(!store.renew_lease(&m, a, long).await.unwrap());
    assert!(!store.release_lease(&m, a).await.unwrap());

    let fresh = store
        .claim(&m, b, &claim_of("mat_b", &["t1", "t2"]))
        .await
        .unwrap();
    assert!(matches!(fresh, ClaimOutcome::Claimed { .. }), "{fresh:?}");
    assert!(store.renew_lease(&m, b, long).await.unwrap());
    assert!(store.release_lease(&m, b).await.unwrap());
    // Released: the next owner gets the mode at once, with a newer token.
    let c = store
        .acquire_lease(&m, "worker-a", long)
        .await
        .unwrap()
        .unwrap();
    assert!(c > b);
    let stale = store
        .claim(&m, b, &claim_of("mat_c", &["t3", "t4"]))
        .await
        .unwrap();
    assert_eq!(stale, ClaimOutcome::LeaseLost);
    let outbox = store.read_outbox(&m, "c", 10, long).await.unwrap();
    let matches: Vec<&str> = outbox.iter().map(|e| e.match_id.as_str()).collect();
    assert_eq!(matches, vec!["mat_b"]);
}

pub async fn outbox_entries_of_a_dead_consumer_are_taken_over(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 4).await;
    store
        .claim(&m, token, &claim_of("mat_1", &["t1", "t2"]))
        .await
        .unwrap();
    store
        .claim(&m, token, &claim_of("mat_2", &["t3", "t4"]))
        .await
        .unwrap();
    let idle = Duration::from_millis(150);

    // c1 takes one and dies before acknowledging it.
    let c1 = store.read_outbox(&m, "c1", 1, idle).await.unwrap();
    assert_eq!(c1.len(), 1);
    assert_eq!(c1[0].match_id, "mat_1");
    let c2 = store.read_outbox(&m, "c2", 10, idle).await.unwrap();
    let ids: Vec<&str> = c2.iter().map(|e| e.match_id.as_str()).collect();
    assert_eq!(ids, vec!["mat_2"], "c1's entry is not idle yet");
    let c2_ids: Vec<String> = c2.iter().map(|e| e.id.clone()).collect();
    store.ack_outbox(&m, &c2_ids).await.unwrap();

    tokio::time::sleep(Duration::from_millis(250)).await;
    let taken = store.read_outbox(&m, "c2", 10, idle).await.unwrap();
    assert_eq!(taken.len(), 1);
    assert_eq!(taken[0].id, c1[0].id);
    assert_eq!(taken[0].record_json, c1[0].record_json);
    assert_eq!(
        store.ack_outbox(&m, &[taken[0].id.clone()]).await.unwrap(),
        1
    );
    tokio::time::sleep(Duration::from_millis(250)).await;
    assert!(store
        .read_outbox(&m, "c3", 10, idle)
        .await
        .unwrap()
        .is_empty());
}

pub async fn status_messages_reach_every_subscriber(store: Arc<dyn PoolStore>) {
    let mut first = store.subscribe_status("tkt_1").await.unwrap();
    let mut second = store.subscribe_status("tkt_1").await.unwrap();
    let mut other = store.subscribe_status("tkt_2").await.unwrap();
    store
        .publish_status("tkt_1", r#"{"type":"searching"}"#)
        .await
        .unwrap();
    assert_eq!(
        next_status(&mut first).await.as_deref(),
        Some(r#"{"type":"searching"}"#)
    );
    assert_eq!(
        next_status(&mut second).await.as_deref(),
        Some(r#"{"type":"searching"}"#)
    );
    drop(first);
    store
        .publish_status("tkt_1", r#"{"type":"matched"}"#)
        .await
        .unwrap();
    assert_eq!(
        next_status(&mut second).await.as_deref(),
        Some(r#"{"type":"matched"}"#)
    );
    drop(second);
    store
        .publish_status("tkt_2", r#"{"type":"expired"}"#)
        .await
        .unwrap();
    assert_eq!(
        next_status(&mut other).await.as_deref(),
        Some(r#"{"type":"expired"}"#)
    );
    // Nobody listening is not an error, and a new subscriber works again.
    store.publish_status("tkt_1", "{}").await.unwrap();
    let mut again = store.subscribe_status("tkt_1").await.unwrap();
    store
        .publish_status("tkt_1", r#"{"type":"cancelled"}"#)
        .await
        .unwrap();
    assert_eq!(
        next_status(&mut again).await.as_deref(),
        Some(r#"{"type":"cancelled"}"#)
    );
}

pub async fn modes_with_searches_follow_the_pools(store: Arc<dyn PoolStore>) {
    let (ranked, casual, duel) = (mode("ranked"), mode("casual"), mode("duel"));
    let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    assert!(store.modes_with_searches("prj_a").await.unwrap().is_empty());
    store
        .add_search(&ranked, &solo("r1", "p1"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&ranked, &solo("r2", "p2"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&casual, &solo("c1", "p1"), FAR, None)
        .await
        .unwrap();
    store
        .add_search(&duel, &solo("d1", "p1"), 10.0, None)
        .await
        .unwrap();
    let foreign = crate::pool::ModeKey::new("prj_b", "solo");
    store
        .add_search(&foreign, &solo("f1", "p1"), FAR, None)
        .await
        .unwrap();
    let all = store.modes_with_searches("prj_a").await.unwrap();
    assert_eq!(all, names(&["casual", "duel", "ranked"]));
    assert_eq!(
        store.modes_with_searches("prj_b").await.unwrap(),
        names(&["solo"])
    );

    // Emptied by an end, an expiry, a claim: the mode leaves the set.
    store
        .end_search(&casual, "c1", &EndOutcome::Cancelled)
        .await
        .unwrap();
    store.expire_due(&duel, 20.0, 10).await.unwrap();
    let left = store.modes_with_searches("prj_a").await.unwrap();
    assert_eq!(left, names(&["ranked"]));
    let ttl = Duration::from_secs(30);
    let token = store
        .acquire_lease(&ranked, "w", ttl)
        .await
        .unwrap()
        .unwrap();
    let one = claim_of("mat_1", &["r1"]);
    store.claim(&ranked, token, &one).await.unwrap();
    assert_eq!(
        store.modes_with_searches("prj_a").await.unwrap(),
        names(&["ranked"])
    );
    store
        .claim(&ranked, token, &claim_of("mat_2", &["r2"]))
        .await
        .unwrap();
    assert!(store.modes_with_searches("prj_a").await.unwrap().is_empty());
}

pub async fn claim_many_takes_each_group_on_its_own(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 6).await;
    store
        .end_search(&m, "t3", &EndOutcome::Cancelled)
        .await
        .unwrap();
    let claims = [
        claim_of("mat_a", &["t1", "t2"]),
        // t3 was cancelled: this group takes nothing, t4 stays live.
        claim_of("mat_b", &["t3", "t4"]),
        // t2 went to mat_a, listed first in the batch.
        claim_of("mat_c", &["t2", "t5"]),
        claim_of("mat_d", &["t6"]),
    ];

    // A stale token claims nothing at all.
    let stale = store.claim_many(&m, token + 1, &claims).await.unwrap();
    assert_eq!(stale, vec![ClaimOutcome::LeaseLost; 4]);
    assert_eq!(store.count_live("prj_a").await.unwrap(), 5);

    let outcomes = store.claim_many(&m, token, &claims).await.unwrap();
    assert!(
        matches!(outcomes[0], ClaimOutcome::Claimed { .. }),
        "{outcomes:?}"
    );
    assert_eq!(
        outcomes[1],
        ClaimOutcome::Conflict {
            gone: vec!["t3".into()]
        }
    );
    assert_eq!(
        outcomes[2],
        ClaimOutcome::Conflict {
            gone: vec!["t2".into()]
        }
    );
    assert!(
        matches!(outcomes[3], ClaimOutcome::Claimed { .. }),
        "{outcomes:?}"
    );

    let mut left: Vec<String> = store
        .snapshot(&m)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.ticket_id.to_string())
        .collect();
    left.sort();
    assert_eq!(left, vec!["t4", "t5"]);
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
    assert_eq!(
        store
            .search_state(&m, "t6")
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Matched {
            match_id: "mat_d".into()
        })
    );
    // Matched players are out of the player index: they may search again.
    store
        .add_search(&m, &solo("t7", "p1"), FAR, None)
        .await
        .unwrap();
    assert_eq!(
        store
            .live_ticket_of_player(&m, "p4")
            .await
            .unwrap()
            .as_deref(),
        Some("t4")
    );
    let outbox = store
        .read_outbox(&m, "c1", 10, Duration::from_secs(60))
        .await
        .unwrap();
    let ids: Vec<&str> = outbox.iter().map(|e| e.match_id.as_str()).collect();
    assert_eq!(ids, vec!["mat_a", "mat_d"]);

    // A claimed search cannot be touched back to life.
    assert!(!store.touch_search(&m, "t6", FAR).await.unwrap());
    assert_eq!(
        store
            .search_state(&m, "t6")
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Matched {
            match_id: "mat_d".into()
        })
    );

    // A ticket claimed under another player is not taken: the claim
    // conflicts and the search stays live.
    let mut wrong = claim_of("mat_w", &["t4"]);
    wrong.player_ids = vec!["p5".into()];
    assert_eq!(
        store.claim_many(&m, token, &[wrong]).await.unwrap(),
        vec![ClaimOutcome::Conflict {
            gone: vec!["t4".into()]
        }]
    );
    assert!(live(store.as_ref(), &m, "t4").await);

    // One invalid group refuses the whole call, before anything is claimed.
    let refused = store
        .claim_many(
            &m,
            token,
            &[claim_of("mat_e", &["t4"]), claim_of("mat_f", &[])],
        )
        .await;
    assert!(
        matches!(refused, Err(PoolError::InvalidClaim(_))),
        "{refused:?}"
    );
    assert!(live(store.as_ref(), &m, "t4").await);
}

pub async fn claim_many_spans_several_script_runs(store: Arc<dyn PoolStore>) {
    // More searches than one run of the Redis script takes (2 000), with a
    // player id the script cannot read without decoding its JSON.
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    let n = 4_500;
    for i in 0..n {
        let player = if i == 7 {
            "Zo\"ë🎮".to_owned()
        } else {
            format!("p{i}")
        };
        let s = solo(&format!("t{i}"), &player);
        store.add_search(&m, &s, FAR, None).await.unwrap();
    }
    let tickets: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
    let claims: Vec<Claim> = tickets
        .chunks(10)
        .enumerate()
        .map(|(k, group)| {
            let refs: Vec<&str> = group.iter().map(String::as_str).collect();
            let mut claim = claim_of(&format!("mat_{k}"), &refs);
            if k == 0 {
                claim.player_ids[7] = "Zo\"ë🎮".into();
            }
            claim
        })
        .collect();
    let outcomes = store.claim_many(&m, token, &claims).await.unwrap();
    assert_eq!(outcomes.len(), claims.len());
    assert!(outcomes
        .iter()
        .all(|o| matches!(o, ClaimOutcome::Claimed { .. })));
    assert!(store.snapshot(&m).await.unwrap().is_empty());
    assert_eq!(store.count_live("prj_a").await.unwrap(), 0);
    assert_eq!(
        store.live_ticket_of_player(&m, "Zo\"ë🎮").await.unwrap(),
        None
    );
    assert_eq!(
        store.live_ticket_of_player(&m, "p4499").await.unwrap(),
        None
    );
    assert!(store.modes_with_searches("prj_a").await.unwrap().is_empty());
}

pub async fn claimed_searches_never_hold_up_expiry(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    // Three searches due first are claimed; two due later are not.
    for i in 1..=5 {
        let deadline = if i <= 3 { 5.0 } else { 10.0 };
        let s = solo(&format!("t{i}"), &format!("p{i}"));
        store.add_search(&m, &s, deadline, None).await.unwrap();
    }
    let claimed = store
        .claim(&m, token, &claim_of("mat_1", &["t1", "t2", "t3"]))
        .await
        .unwrap();
    assert!(
        matches!(claimed, ClaimOutcome::Claimed { .. }),
        "{claimed:?}"
    );
    let mut expired = store.expire_due(&m, 20.0, 2).await.unwrap();
    expired.sort();
    assert_eq!(expired, vec!["t4", "t5"]);
    assert_eq!(store.count_live("prj_a").await.unwrap(), 0);
    assert_eq!(
        store
            .search_state(&m, "t1")
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Matched {
            match_id: "mat_1".into()
        })
    );
}
