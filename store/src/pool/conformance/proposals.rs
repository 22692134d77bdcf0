//! Cases of [`crate::pool::Proposals`]: the fenced hold, answers, and the
//! ways a proposal closes by its members' answers and its deadline (a
//! cancel, a failure and the races are in `proposal_races`).

use std::sync::Arc;

use matchplane_matchmaker::Code;

const ACCEPTANCE_TIMEOUT: &str = Code::AcceptanceTimeout.as_str();
const MATCH_DECLINED: &str = Code::MatchDeclined.as_str();
const PARTY_MEMBER_DECLINED: &str = Code::PartyMemberDeclined.as_str();

use super::{add_solos, claim_of, lease, live, mode, FAR};
use crate::pool::closed::CancelledProposal;
use crate::pool::{
    settle, AnswerOutcome, ClaimOutcome, Ended, ModeKey, PoolStore, ProposalClaim, SearchState,
};

/// Unix seconds the cases' proposals start at.
pub(super) const NOW: f64 = 1_764_500_000.0;

/// A proposal of `tickets` (solo each, unless `parties` says), answerable
/// until `NOW + 20`, with a 60 s cooldown.
pub(super) fn proposal(match_id: &str, tickets: &[&str], parties: &[&str]) -> ProposalClaim {
    ProposalClaim {
        claim: claim_of(match_id, tickets),
        parties: if parties.is_empty() {
            tickets.iter().map(|t| (*t).to_owned()).collect()
        } else {
            parties.iter().map(|p| (*p).to_owned()).collect()
        },
        accept_by: NOW + 20.0,
        cooldown_seconds: 60.0,
    }
}

/// Holds `p` under `m`'s lease (taken and given back around it).
pub(super) async fn propose(store: &dyn PoolStore, m: &ModeKey, p: ProposalClaim) -> ClaimOutcome {
    let token = lease(store, m).await;
    let mut out = store.propose_many(m, token, &[p]).await.unwrap();
    store.release_lease(m, token).await.unwrap();
    out.pop().unwrap()
}

pub(super) async fn ended(store: &dyn PoolStore, m: &ModeKey, ticket: &str) -> Option<Ended> {
    store
        .search_state(m, ticket)
        .await
        .unwrap()
        .and_then(SearchState::into_ended)
}

pub(super) fn failed(code: &str) -> Option<Ended> {
    Some(Ended::Failed {
        code: code.into(),
        message: crate::pool::proposals::fail_message(code).into(),
    })
}

/// Made matches' records in `m`'s outbox (a cancelled proposal's closing
/// record is not one).
pub(super) async fn outbox_len(store: &dyn PoolStore, m: &ModeKey) -> usize {
    store
        .read_outbox(m, "c", 100, std::time::Duration::from_secs(60))
        .await
        .unwrap()
        .iter()
        .filter(|e| CancelledProposal::parse(&e.record_json).is_none())
        .count()
}

/// A cancelled proposal's closing queues its own record (whoever closes
/// it), with each member's answer, so the worker stores the proposal's
/// status; a made one queues only the match.
pub async fn a_cancelled_proposal_queues_its_closing_record(store: Arc<dyn PoolStore>) {
    let m = mode("closing");
    add_solos(store.as_ref(), &m, 3).await;
    propose(
        store.as_ref(),
        &m,
        proposal("mat_1", &["t1", "t2", "t3"], &[]),
    )
    .await;
    store.answer(&m, "t1", true, NOW).await.unwrap();
    store.answer(&m, "t2", false, NOW).await.unwrap();
    let settled = settle(store.as_ref(), &m, "mat_1", NOW + 1.0)
        .await
        .unwrap();
    assert!(!settled.unwrap().made);
    let entries = store
        .read_outbox(&m, "c", 100, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!(entries[0].match_id, "mat_1");
    let closed = CancelledProposal::parse(&entries[0].record_json).unwrap();
    assert_eq!(closed.match_id, "mat_1");
    assert_eq!(closed.closed_at, NOW + 1.0);
    let answers: Vec<(&str, &str)> = closed
        .answers
        .iter()
        .map(|(t, a)| (t.as_str(), a.as_str()))
        .collect();
    assert_eq!(
        answers,
        [("t1", "accepted"), ("t2", "declined"), ("t3", "none")]
    );

    // The deadline: the silent one reads `timeout`.
    let m = mode("closing-late");
    add_solos(store.as_ref(), &m, 2).await;
    propose(store.as_ref(), &m, proposal("mat_2", &["t1", "t2"], &[])).await;
    store.answer(&m, "t1", true, NOW).await.unwrap();
    settle(store.as_ref(), &m, "mat_2", NOW + 20.0)
        .await
        .unwrap();
    let entries = store
        .read_outbox(&m, "c", 100, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    let closed = CancelledProposal::parse(&entries[0].record_json).unwrap();
    assert_eq!(closed.answers["t1"], "accepted");
    assert_eq!(closed.answers["t2"], "timeout");
}

pub async fn a_proposal_holds_its_searches_out_of_snapshots_and_expiry(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    for (t, p) in [("t1", "p1"), ("t2", "p2"), ("t3", "p3")] {
        let s = super::solo(t, p);
        store.add_search(&m, &s, NOW - 1.0, None).await.unwrap();
    }
    let token = lease(store.as_ref(), &m).await;
    let stale = store
        .propose_many(&m, token + 1, &[proposal("mat_x", &["t1", "t2"], &[])])
        .await
        .unwrap();
    assert_eq!(stale, vec![ClaimOutcome::LeaseLost]);
    assert_eq!(store.proposal_of(&m, "t1").await.unwrap(), None);

    let held = store
        .propose_many(
            &m,
            token,
            &[
                proposal("mat_1", &["t1", "t2"], &[]),
                proposal("mat_2", &["t2", "t3"], &[]),
            ],
        )
        .await
        .unwrap();
    assert!(matches!(held[0], ClaimOutcome::Claimed { .. }), "{held:?}");
    assert_eq!(
        held[1],
        ClaimOutcome::Conflict {
            gone: vec!["t2".into()]
        }
    );
    let left: Vec<String> = store
        .snapshot(&m)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.ticket_id.to_string())
        .collect();
    assert_eq!(left, vec!["t3"]);
    assert_eq!(
        store.proposal_of(&m, "t2").await.unwrap().as_deref(),
        Some("mat_1")
    );
    // Their ticket's deadline waits for the proposal; t3's does not.
    let expired = store.expire_due(&m, NOW, 100).await.unwrap();
    assert_eq!(expired, vec!["t3".to_owned()]);
    assert!(live(store.as_ref(), &m, "t1").await);
    assert!(live(store.as_ref(), &m, "t2").await);
    assert_eq!(
        store.open_proposals(&m, f64::INFINITY, 10).await.unwrap(),
        vec!["mat_1"]
    );
    assert!(store
        .open_proposals(&m, NOW + 19.0, 10)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        store.open_proposals(&m, NOW + 20.0, 10).await.unwrap(),
        vec!["mat_1"]
    );
}

pub async fn everyone_accepting_makes_the_match_once(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 2).await;
    propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
    assert_eq!(
        store.answer(&m, "t1", true, NOW).await.unwrap(),
        AnswerOutcome::Open {
            match_id: "mat_1".into()
        }
    );
    // Idempotent, and an accept never moves the deadline.
    store.answer(&m, "t1", true, NOW).await.unwrap();
    let state = store.proposal(&m, "mat_1").await.unwrap().unwrap();
    assert_eq!(state.accepted(), vec!["t1".to_owned()]);
    assert_eq!(state.accept_by, NOW + 20.0);
    assert_eq!(
        settle(store.as_ref(), &m, "mat_1", NOW).await.unwrap(),
        None
    );

    store.answer(&m, "t2", true, NOW).await.unwrap();
    let settled = settle(store.as_ref(), &m, "mat_1", NOW + 1.0)
        .await
        .unwrap()
        .unwrap();
    assert!(settled.made);
    assert_eq!(
        settle(store.as_ref(), &m, "mat_1", NOW + 1.0)
            .await
            .unwrap(),
        None
    );
    assert_eq!(outbox_len(store.as_ref(), &m).await, 1);
    let matched = Some(Ended::Matched {
        match_id: "mat_1".into(),
    });
    assert_eq!(ended(store.as_ref(), &m, "t1").await, matched);
    assert_eq!(ended(store.as_ref(), &m, "t2").await, matched);
    assert_eq!(store.count_live("prj_a").await.unwrap(), 0);
    assert_eq!(store.proposal(&m, "mat_1").await.unwrap(), None);
    // After the close: the same answer is told how it ended, another is not.
    assert_eq!(
        store.answer(&m, "t1", true, NOW).await.unwrap(),
        AnswerOutcome::Closed {
            match_id: "mat_1".into(),
            same: true
        }
    );
    assert_eq!(
        store.answer(&m, "t1", false, NOW).await.unwrap(),
        AnswerOutcome::Closed {
            match_id: "mat_1".into(),
            same: false
        }
    );
    assert_eq!(
        store.answer(&m, "t9", true, NOW).await.unwrap(),
        AnswerOutcome::NotProposed
    );
}

pub async fn a_party_members_decline_drops_the_whole_party_and_nobody_else(
    store: Arc<dyn PoolStore>,
) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 4).await;
    let queued = store.snapshot(&m).await.unwrap()[0].queued_at;
    propose(
        store.as_ref(),
        &m,
        proposal(
            "mat_1",
            &["t1", "t2", "t3", "t4"],
            &["pa", "pa", "t3", "t4"],
        ),
    )
    .await;
    store.answer(&m, "t2", true, NOW).await.unwrap();
    store.answer(&m, "t3", true, NOW).await.unwrap();
    store.answer(&m, "t1", false, NOW).await.unwrap();
    // A decline is final.
    assert!(matches!(
        store.answer(&m, "t1", true, NOW).await.unwrap(),
        AnswerOutcome::Closed { same: false, .. }
    ));
    let settled = settle(store.as_ref(), &m, "mat_1", NOW + 1.0)
        .await
        .unwrap()
        .unwrap();
    assert!(!settled.made);
    let mut requeued: Vec<&str> = settled.requeued().collect();
    requeued.sort_unstable();
    assert_eq!(requeued, vec!["t3", "t4"]);
    assert_eq!(
        ended(store.as_ref(), &m, "t1").await,
        failed(MATCH_DECLINED)
    );
    assert_eq!(
        ended(store.as_ref(), &m, "t2").await,
        failed(PARTY_MEMBER_DECLINED)
    );
    // The others are back, with their original queuedAt.
    let back = super::sorted(store.snapshot(&m).await.unwrap());
    let ids: Vec<&str> = back.iter().map(|s| s.ticket_id.as_str()).collect();
    assert_eq!(ids, vec!["t3", "t4"]);
    assert!(back.iter().all(|s| s.queued_at == queued));
    assert_eq!(store.proposal_of(&m, "t3").await.unwrap(), None);
    // Only the one who declined is cooled down.
    assert_eq!(
        store.cooldown_of(&m, "p1", NOW + 1.0).await.unwrap(),
        Some(NOW + 61.0)
    );
    assert_eq!(store.cooldown_of(&m, "p1", NOW + 61.0).await.unwrap(), None);
    for p in ["p2", "p3", "p4"] {
        assert_eq!(
            store.cooldown_of(&m, p, NOW + 1.0).await.unwrap(),
            None,
            "{p}"
        );
    }
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
}

pub async fn the_deadline_fails_the_silent_and_requeues_who_accepted(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 2).await;
    propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
    store.answer(&m, "t1", true, NOW).await.unwrap();
    assert_eq!(
        settle(store.as_ref(), &m, "mat_1", NOW + 19.9)
            .await
            .unwrap(),
        None
    );
    let settled = settle(store.as_ref(), &m, "mat_1", NOW + 20.0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(settled.requeued().collect::<Vec<_>>(), vec!["t1"]);
    assert_eq!(
        ended(store.as_ref(), &m, "t2").await,
        failed(ACCEPTANCE_TIMEOUT)
    );
    assert!(live(store.as_ref(), &m, "t1").await);
    assert!(store
        .cooldown_of(&m, "p2", NOW + 20.0)
        .await
        .unwrap()
        .is_some());
    assert!(store
        .cooldown_of(&m, "p1", NOW + 20.0)
        .await
        .unwrap()
        .is_none());
    // A later proposal of the same ticket is not ended by the old deadline.
    store
        .add_search(&m, &super::solo("t3", "p3"), FAR, None)
        .await
        .unwrap();
    propose(store.as_ref(), &m, proposal("mat_2", &["t1", "t3"], &[])).await;
    assert_eq!(
        settle(store.as_ref(), &m, "mat_1", NOW + 30.0)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store.proposal_of(&m, "t1").await.unwrap().as_deref(),
        Some("mat_2")
    );
}

/// A proposal's members stay live for a status read and count as live.
pub async fn a_proposed_search_still_counts_as_searching(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 2).await;
    propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
    assert_eq!(store.count_live("prj_a").await.unwrap(), 2);
    assert_eq!(
        store
            .live_ticket_of_player(&m, "p1")
            .await
            .unwrap()
            .as_deref(),
        Some("t1")
    );
    let again = store
        .add_search(&m, &super::solo("t9", "p1"), FAR, None)
        .await;
    assert!(again.is_err(), "{again:?}");
}
