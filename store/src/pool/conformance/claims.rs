//! Cases of [`crate::pool::Claims`]: all of a group or nothing, many groups
//! at once, and what a claim leaves behind.

use std::sync::Arc;
use std::time::Duration;

use super::{add_solos, claim_of, lease, live, mode, solo, FAR};
use crate::pool::{
    AddSearchError, Claim, ClaimOutcome, EndOutcome, EndResult, Ended, PoolError, PoolStore,
    SearchState,
};

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

/// A ticket listed by two groups of one call while every search is still
/// live goes to the first group; the second takes nothing, and every index
/// of the searches it left stays as it was.
pub async fn claim_many_gives_a_ticket_listed_twice_to_the_first(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 5).await;
    let claims = [
        claim_of("mat_a", &["t1", "t2"]),
        claim_of("mat_b", &["t3", "t2"]),
        claim_of("mat_c", &["t4"]),
    ];
    let outcomes = store.claim_many(&m, token, &claims).await.unwrap();
    assert!(
        matches!(outcomes[0], ClaimOutcome::Claimed { .. }),
        "{outcomes:?}"
    );
    assert_eq!(
        outcomes[1],
        ClaimOutcome::Conflict {
            gone: vec!["t2".into()]
        }
    );
    assert!(
        matches!(outcomes[2], ClaimOutcome::Claimed { .. }),
        "{outcomes:?}"
    );
    assert!(live(store.as_ref(), &m, "t3").await);
    assert!(live(store.as_ref(), &m, "t5").await);
    assert_eq!(
        store
            .live_ticket_of_player(&m, "p3")
            .await
            .unwrap()
            .as_deref(),
        Some("t3")
    );
    for (ticket, player) in [("t1", "p1"), ("t2", "p2"), ("t4", "p4")] {
        assert!(!live(store.as_ref(), &m, ticket).await, "{ticket}");
        assert_eq!(store.live_ticket_of_player(&m, player).await.unwrap(), None);
    }
    assert_eq!(
        store
            .search_state(&m, "t2")
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Matched {
            match_id: "mat_a".into()
        })
    );
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
    // Each of the two left can be claimed in the next call.
    let next = store
        .claim_many(&m, token, &[claim_of("mat_d", &["t3", "t5"])])
        .await
        .unwrap();
    assert!(matches!(next[0], ClaimOutcome::Claimed { .. }), "{next:?}");
    assert_eq!(store.count_live("prj_a").await.unwrap(), 0);
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
