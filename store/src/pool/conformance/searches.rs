//! Cases of [`crate::pool::Searches`]: adding, ending, touching, expiring
//! and annotating live searches.

use std::sync::Arc;

use super::{live, mode, solo, sorted, FAR};
use crate::pool::{
    AddSearchError, EndOutcome, EndResult, Ended, Party, PoolStore, Search, SearchState,
};

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
        latencies: None,
        queued_at: 17.25,
        attributes: Default::default(),
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
        Err(AddSearchError::PlayerAlreadySearching {
            ticket_id,
            game_mode,
        }) => {
            assert_eq!(
                (ticket_id.as_str(), game_mode.as_str()),
                ("t1", m.mode.as_str())
            )
        }
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

/// Expiring by an earlier cutoff than now (after an outage of the store)
/// leaves the searches due after the cutoff, and records the ends at now.
pub async fn expiry_by_a_cutoff_leaves_later_deadlines(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    for (ticket, deadline) in [("early", 100.0), ("late", 150.0)] {
        let s = solo(ticket, &format!("p-{ticket}"));
        store.add_search(&m, &s, deadline, None).await.unwrap();
    }
    let expired = store.expire_due_by(&m, 120.0, 200.0, 10).await.unwrap();
    assert_eq!(expired, ["early"]);
    let Some(SearchState::Ended(ended)) = store.search_state(&m, "early").await.unwrap() else {
        panic!("early not ended");
    };
    assert_eq!(ended.ended_at, Some(200.0));
    assert!(matches!(
        store.search_state(&m, "late").await.unwrap(),
        Some(SearchState::Live(_))
    ));
    // A cutoff past now is now.
    let expired = store.expire_due_by(&m, 500.0, 140.0, 10).await.unwrap();
    assert!(expired.is_empty(), "{expired:?}");
    assert_eq!(store.expire_due(&m, 150.0, 10).await.unwrap(), ["late"]);
}

/// A search added as held by a socket says so while live and once swept;
/// one added without says not, and both read back the same search.
pub async fn a_socket_held_add_is_marked_live_and_ended(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let scope = crate::pool::PlayerSearchScope::Mode;
    for (ticket, socket) in [("held", true), ("polled", false)] {
        let s = solo(ticket, &format!("p-{ticket}"));
        store
            .add_search_scoped(&m, &s, 100.0, None, scope, socket)
            .await
            .unwrap();
        let Some(SearchState::Live(live)) = store.search_state(&m, ticket).await.unwrap() else {
            panic!("{ticket} not live");
        };
        assert_eq!((live.socket, &live.search), (socket, &s), "{ticket}");
        assert_eq!(store.snapshot(&m).await.unwrap().len(), 1, "{ticket}");
        assert_eq!(store.expire_due(&m, 101.0, 10).await.unwrap(), [ticket]);
        let Some(SearchState::Ended(ended)) = store.search_state(&m, ticket).await.unwrap() else {
            panic!("{ticket} not ended");
        };
        assert_eq!(ended.socket, socket, "{ticket}: {ended:?}");
    }
}
