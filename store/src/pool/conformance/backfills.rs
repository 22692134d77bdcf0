//! Cases of [`crate::pool::Backfills`]: open, replace and close; fills
//! claimed atomically with their searches, fenced, at the revision they
//! were computed from; races between fills and with a close.

use std::sync::Arc;

use super::{add_solos, claim_of, lease, live, mode};
use crate::pool::{
    BackfillChange, BackfillStatus, Ended, FillClaim, FillOutcome, OpenBackfill, PoolStore,
    SearchState,
};

const NOW: f64 = 1_800_000_000.0;

fn backfill(id: &str, seats: &[u32]) -> OpenBackfill {
    OpenBackfill {
        open_roles: Vec::new(),
        backfill_id: id.into(),
        match_id: "mat_run".into(),
        revision: 1,
        open_seats: seats.to_vec(),
        opened_at: NOW - 10.0,
        expires_at: NOW + 110.25,
        mean_mmr: Some(1512.5),
        pings: vec![20.0, 31.5],
        region: Some("eu-west".into()),
        roster: Default::default(),
    }
}

fn fill(id: &str, revision: u64, seats: &[u32], tickets: &[&str]) -> FillClaim {
    FillClaim {
        backfill_id: id.into(),
        revision,
        seats_taken: seats.to_vec(),
        roles_taken: Vec::new(),
        claim: claim_of("mat_run", tickets),
        view_after: None,
    }
}

pub async fn backfills_open_replace_and_close(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    assert!(store
        .open_backfill(&m, &backfill("bf_1", &[1, 2]))
        .await
        .unwrap());
    let live = store.backfill(&m, "bf_1").await.unwrap().unwrap();
    assert_eq!(live.status, BackfillStatus::Open);
    assert_eq!(live.backfill, backfill("bf_1", &[1, 2]));
    assert_eq!(store.open_backfills(&m).await.unwrap().len(), 1);

    let mut newer = backfill("bf_1", &[0, 1]);
    newer.mean_mmr = Some(1600.0);
    let changed = store.replace_backfill(&m, &newer).await.unwrap();
    assert_eq!(changed, BackfillChange::Changed { revision: 2 });
    let live = store.backfill(&m, "bf_1").await.unwrap().unwrap();
    assert_eq!(live.backfill.open_seats, vec![0, 1]);
    assert_eq!(live.backfill.mean_mmr, Some(1600.0));
    assert_eq!(live.backfill.revision, 2);

    let closed = store.close_backfill(&m, "bf_1").await.unwrap();
    assert_eq!(closed, BackfillChange::Changed { revision: 3 });
    assert_eq!(
        store.close_backfill(&m, "bf_1").await.unwrap(),
        BackfillChange::NotOpen(BackfillStatus::Closed)
    );
    assert_eq!(
        store.replace_backfill(&m, &newer).await.unwrap(),
        BackfillChange::NotOpen(BackfillStatus::Closed)
    );
    assert!(store.open_backfills(&m).await.unwrap().is_empty());
    assert!(
        !store
            .open_backfill(&m, &backfill("bf_1", &[1, 2]))
            .await
            .unwrap(),
        "a closed backfill is not reopened"
    );
    assert!(store.open_backfills(&m).await.unwrap().is_empty());
    assert_eq!(
        store.close_backfill(&m, "bf_none").await.unwrap(),
        BackfillChange::Unknown
    );
    store.forget_backfill(&m, "bf_1").await.unwrap();
    assert!(store.backfill(&m, "bf_1").await.unwrap().is_none());
}

/// A fill stores the view it grew (its seated players in the roster, for
/// the rules), and a view's seats and revision stay the store's.
pub async fn a_fill_stores_its_grown_roster_with_the_claim(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 2).await;
    let opened = backfill("bf_1", &[2, 0]);
    store.open_backfill(&m, &opened).await.unwrap();
    let mut grown = opened.clone();
    grown
        .roster
        .players
        .push(matchplane_matchmaker::rules::RosterMember {
            player_id: "p1".into(),
            attributes: [(
                "maps".to_owned(),
                matchplane_matchmaker::rules::AttributeValue::Set(vec!["inferno".into()]),
            )]
            .into_iter()
            .collect(),
        });
    let mut claim = fill("bf_1", 1, &[1, 0], &["t1"]);
    claim.view_after = Some(grown.clone());
    let claimed = store.claim_fill(&m, token, &claim, NOW).await.unwrap();
    assert!(
        matches!(claimed, FillOutcome::Claimed { .. }),
        "{claimed:?}"
    );
    let after = store.backfill(&m, "bf_1").await.unwrap().unwrap();
    assert_eq!(after.backfill.roster, grown.roster);
    assert_eq!(after.backfill.open_seats, vec![1, 0]);
    assert_eq!(after.backfill.revision, 2);
    let open = store.open_backfills(&m).await.unwrap();
    assert_eq!(open[0].roster, grown.roster);

    // Without a view, the roster stays as it was.
    let claimed = store
        .claim_fill(&m, token, &fill("bf_1", 2, &[1, 0], &["t2"]), NOW)
        .await
        .unwrap();
    assert!(
        matches!(claimed, FillOutcome::Claimed { .. }),
        "{claimed:?}"
    );
    let done = store.backfill(&m, "bf_1").await.unwrap().unwrap();
    assert_eq!(done.backfill.roster, grown.roster);
    assert_eq!(done.backfill.open_seats, vec![0, 0]);
}

pub async fn fills_take_searches_and_seats_in_one_step(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 3).await;
    store
        .open_backfill(&m, &backfill("bf_1", &[1, 2]))
        .await
        .unwrap();

    let first = store
        .claim_fill(&m, token, &fill("bf_1", 1, &[0, 2], &["t1", "t2"]), NOW)
        .await
        .unwrap();
    assert!(
        matches!(
            first,
            FillOutcome::Claimed {
                status: BackfillStatus::Open,
                ..
            }
        ),
        "{first:?}"
    );
    assert!(!live(store.as_ref(), &m, "t1").await);
    assert_eq!(
        store
            .search_state(&m, "t1")
            .await
            .unwrap()
            .and_then(SearchState::into_ended),
        Some(Ended::Matched {
            match_id: "mat_run".into()
        })
    );
    assert_eq!(store.count_live("prj_a").await.unwrap(), 1);
    let left = store.backfill(&m, "bf_1").await.unwrap().unwrap();
    assert_eq!(left.backfill.open_seats, vec![1, 0]);
    assert_eq!(left.backfill.revision, 2);

    // Opened again (an outbox record re-recorded): the seats a fill took
    // stay taken.
    let again = store
        .open_backfill(&m, &backfill("bf_1", &[1, 2]))
        .await
        .unwrap();
    assert!(!again, "already there");
    let left = store.backfill(&m, "bf_1").await.unwrap().unwrap();
    assert_eq!(left.backfill.open_seats, vec![1, 0]);
    assert_eq!(left.backfill.revision, 2);

    // A team with no seat left takes nobody; the seats never go below zero.
    let over = store
        .claim_fill(&m, token, &fill("bf_1", 2, &[0, 1], &["t3"]), NOW)
        .await
        .unwrap();
    assert_eq!(over, FillOutcome::Stale);
    assert!(live(store.as_ref(), &m, "t3").await);

    let last = store
        .claim_fill(&m, token, &fill("bf_1", 2, &[1, 0], &["t3"]), NOW)
        .await
        .unwrap();
    assert!(
        matches!(
            last,
            FillOutcome::Claimed {
                status: BackfillStatus::Filled,
                ..
            }
        ),
        "{last:?}"
    );
    let done = store.backfill(&m, "bf_1").await.unwrap().unwrap();
    assert_eq!(done.status, BackfillStatus::Filled);
    assert_eq!(done.backfill.open_seats, vec![0, 0]);
    assert!(store.open_backfills(&m).await.unwrap().is_empty());
    let records = store
        .read_outbox(&m, "c1", 10, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(records.len(), 2);
    assert!(records.iter().all(|r| r.match_id == "mat_run"));
}

pub async fn fills_are_refused_when_stale_fenced_or_gone(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 3).await;
    store
        .open_backfill(&m, &backfill("bf_1", &[2, 2]))
        .await
        .unwrap();

    // A newer roster (PUT) makes a fill computed from the old one stale.
    store
        .replace_backfill(&m, &backfill("bf_1", &[1, 0]))
        .await
        .unwrap();
    let stale = store
        .claim_fill(&m, token, &fill("bf_1", 1, &[0, 1], &["t1"]), NOW)
        .await
        .unwrap();
    assert_eq!(stale, FillOutcome::Stale);
    assert!(live(store.as_ref(), &m, "t1").await);

    let fenced = store
        .claim_fill(&m, token + 1, &fill("bf_1", 2, &[1, 0], &["t1"]), NOW)
        .await
        .unwrap();
    assert_eq!(fenced, FillOutcome::LeaseLost);

    store
        .end_search(&m, "t2", &crate::pool::EndOutcome::Cancelled)
        .await
        .unwrap();
    let gone = store
        .claim_fill(&m, token, &fill("bf_1", 2, &[1, 0], &["t2"]), NOW)
        .await
        .unwrap();
    assert_eq!(
        gone,
        FillOutcome::Conflict {
            gone: vec!["t2".into()]
        }
    );
    assert_eq!(
        store
            .backfill(&m, "bf_1")
            .await
            .unwrap()
            .unwrap()
            .backfill
            .revision,
        2,
        "a refused fill changes nothing"
    );

    // Past its expiry a backfill takes nobody.
    let expired = store
        .claim_fill(&m, token, &fill("bf_1", 2, &[1, 0], &["t1"]), NOW + 200.0)
        .await
        .unwrap();
    assert_eq!(expired, FillOutcome::Stale);
    assert!(live(store.as_ref(), &m, "t1").await);

    let bad = store
        .claim_fill(&m, token, &fill("bf_1", 2, &[2, 0], &["t1"]), NOW)
        .await;
    assert!(bad.is_err(), "seats that do not add up are refused");
}

/// Solo searches of `tickets` (`tX` of player `pX`), none due.
async fn add(store: &dyn PoolStore, m: &crate::pool::ModeKey, tickets: &[&str]) {
    for t in tickets {
        let s = super::solo(t, &format!("p{}", &t[1..]));
        store.add_search(m, &s, super::FAR, None).await.unwrap();
    }
}

pub async fn two_fills_of_one_revision_take_one_seat(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    for round in 0..10u32 {
        let (t1, t2) = (format!("t{round}a"), format!("t{round}b"));
        add(store.as_ref(), &m, &[&t1, &t2]).await;
        let id = format!("bf_{round}");
        store
            .open_backfill(&m, &backfill(&id, &[1, 0]))
            .await
            .unwrap();
        let (one, two) = (fill(&id, 1, &[1, 0], &[&t1]), fill(&id, 1, &[1, 0], &[&t2]));
        let (a, b) = tokio::join!(
            store.claim_fill(&m, token, &one, NOW),
            store.claim_fill(&m, token, &two, NOW),
        );
        let claimed = [a.unwrap(), b.unwrap()]
            .iter()
            .filter(|o| matches!(o, FillOutcome::Claimed { .. }))
            .count();
        assert_eq!(claimed, 1, "round {round}");
        let left = store.backfill(&m, &id).await.unwrap().unwrap();
        assert_eq!(left.backfill.open_seats, vec![0, 0]);
        let still = [
            live(store.as_ref(), &m, &t1).await,
            live(store.as_ref(), &m, &t2).await,
        ];
        assert_eq!(still.iter().filter(|l| **l).count(), 1);
    }
}

pub async fn a_close_racing_a_fill_ends_with_one_of_them(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    let (mut fills, mut closes) = (0, 0);
    for round in 0..20u32 {
        let t1 = format!("t{round}a");
        add(store.as_ref(), &m, &[&t1]).await;
        let id = format!("bf_{round}");
        store
            .open_backfill(&m, &backfill(&id, &[1, 0]))
            .await
            .unwrap();
        let one = fill(&id, 1, &[1, 0], &[&t1]);
        let (filled, closed) = tokio::join!(
            store.claim_fill(&m, token, &one, NOW),
            store.close_backfill(&m, &id),
        );
        let state = store.backfill(&m, &id).await.unwrap().unwrap().status;
        match (filled.unwrap(), closed.unwrap()) {
            (FillOutcome::Claimed { .. }, BackfillChange::NotOpen(BackfillStatus::Filled)) => {
                assert_eq!(state, BackfillStatus::Filled);
                assert!(!live(store.as_ref(), &m, &t1).await);
                fills += 1;
            }
            (FillOutcome::Stale, BackfillChange::Changed { .. }) => {
                assert_eq!(state, BackfillStatus::Closed);
                assert!(live(store.as_ref(), &m, &t1).await, "the search stays");
                closes += 1;
            }
            other => panic!("round {round}: both or neither: {other:?}"),
        }
    }
    assert_eq!(fills + closes, 20);
}

/// A role-queue backfill: its open roles kept beside its seats, a fill
/// taking a role seat that is gone refused as stale, and the open roles
/// after a fill those the fill left (docs/rules.md, "Backfill by role").
pub async fn role_seats_are_taken_with_the_seats(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let token = lease(store.as_ref(), &m).await;
    add_solos(store.as_ref(), &m, 3).await;
    let roles = |pairs: &[(&str, u32)]| -> matchplane_matchmaker::roles::open::OpenRoles {
        pairs.iter().map(|(r, n)| ((*r).to_owned(), *n)).collect()
    };
    let mut open = backfill("bf_r", &[2, 1]);
    open.open_roles = vec![
        roles(&[("any", 0), ("damage", 1), ("tank", 1)]),
        roles(&[("any", 0), ("damage", 0), ("tank", 1)]),
    ];
    store.open_backfill(&m, &open).await.unwrap();
    let state = store.backfill(&m, "bf_r").await.unwrap().unwrap();
    assert_eq!(state.backfill, open);
    assert_eq!(store.open_backfills(&m).await.unwrap(), vec![open.clone()]);

    // Two damage players onto team 0: its one damage seat cannot take them.
    let mut two_damage = fill("bf_r", 1, &[2, 0], &["t1", "t2"]);
    two_damage.roles_taken = vec![0, 2, 0, 0, 0, 0];
    assert_eq!(
        store.claim_fill(&m, token, &two_damage, NOW).await.unwrap(),
        FillOutcome::Stale
    );
    assert!(live(store.as_ref(), &m, "t1").await);

    let mut tank_and_damage = fill("bf_r", 1, &[2, 0], &["t1", "t2"]);
    tank_and_damage.roles_taken = vec![0, 1, 1, 0, 0, 0];
    let claimed = store
        .claim_fill(&m, token, &tank_and_damage, NOW)
        .await
        .unwrap();
    assert!(
        matches!(
            claimed,
            FillOutcome::Claimed {
                status: BackfillStatus::Open,
                ..
            }
        ),
        "{claimed:?}"
    );
    let state = store.backfill(&m, "bf_r").await.unwrap().unwrap();
    assert_eq!(state.backfill.open_seats, vec![0, 1]);
    assert_eq!(
        state.backfill.open_roles,
        vec![
            roles(&[("any", 0), ("damage", 0), ("tank", 0)]),
            roles(&[("any", 0), ("damage", 0), ("tank", 1)]),
        ]
    );
    let mut last_tank = fill("bf_r", 2, &[0, 1], &["t3"]);
    last_tank.roles_taken = vec![0, 0, 0, 0, 0, 1];
    let claimed = store.claim_fill(&m, token, &last_tank, NOW).await.unwrap();
    assert!(
        matches!(
            claimed,
            FillOutcome::Claimed {
                status: BackfillStatus::Filled,
                ..
            }
        ),
        "{claimed:?}"
    );
}
