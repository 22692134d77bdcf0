//! Answers at or after a proposal's `acceptBy`: nothing is recorded, even
//! while no sweep has closed the proposal yet (its workers stopped, or
//! slow), so a late accept can never make the match; the proposal then
//! closes by its deadline's rule, whoever closes it.
//!
//! Before: the answer was recorded as long as the proposal was open, and
//! the last late accept made the match.

use std::sync::Arc;

use matchplane_matchmaker::Code;

use super::proposals::{ended, failed, outbox_len, proposal, propose, NOW};
use super::{add_solos, live, mode};
use crate::pool::{settle, AnswerOutcome, PoolStore};

pub async fn answers_at_or_after_accept_by_are_not_recorded(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 2).await;
    propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
    let closed = |same| AnswerOutcome::Closed {
        match_id: "mat_1".into(),
        same,
    };
    assert_eq!(
        store.answer(&m, "t1", true, NOW + 19.9).await.unwrap(),
        AnswerOutcome::Open {
            match_id: "mat_1".into()
        }
    );
    // At the deadline, and after it: refused, not recorded.
    assert_eq!(
        store.answer(&m, "t2", true, NOW + 20.0).await.unwrap(),
        closed(false)
    );
    assert_eq!(
        store.answer(&m, "t2", false, NOW + 22.5).await.unwrap(),
        closed(false)
    );
    // The answer given in time, repeated late, is told it stands.
    assert_eq!(
        store.answer(&m, "t1", true, NOW + 22.5).await.unwrap(),
        closed(true)
    );
    let state = store.proposal(&m, "mat_1").await.unwrap().unwrap();
    assert_eq!(state.accepted(), vec!["t1".to_owned()]);

    // Whoever closes it applies the deadline's rule: the silent fails.
    let settled = settle(store.as_ref(), &m, "mat_1", NOW + 22.5)
        .await
        .unwrap()
        .unwrap();
    assert!(!settled.made);
    assert_eq!(settled.requeued().collect::<Vec<_>>(), vec!["t1"]);
    assert_eq!(
        ended(store.as_ref(), &m, "t2").await,
        failed(Code::AcceptanceTimeout.as_str())
    );
    assert!(live(store.as_ref(), &m, "t1").await);
    assert_eq!(outbox_len(store.as_ref(), &m).await, 0);
}

/// An answer that names its proposal counts only there: one sent for a
/// proposal that closed meanwhile never lands in the ticket's next one
/// (docs/acceptance.md, "Naming the proposal").
pub async fn an_answer_naming_its_proposal_counts_only_there(store: Arc<dyn PoolStore>) {
    let m = mode("named");
    add_solos(store.as_ref(), &m, 3).await;
    propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
    store.answer(&m, "t2", false, NOW).await.unwrap();
    let settled = settle(store.as_ref(), &m, "mat_1", NOW + 1.0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(settled.requeued().collect::<Vec<_>>(), vec!["t1"]);
    propose(store.as_ref(), &m, proposal("mat_2", &["t1", "t3"], &[])).await;

    let named = |ticket: &'static str, accept: bool, id: &'static str| {
        let store = store.clone();
        let m = m.clone();
        async move {
            store
                .answer_named(&m, ticket, accept, NOW + 2.0, Some(id))
                .await
                .unwrap()
        }
    };
    // t1's accept of the closed mat_1 is not an accept of mat_2.
    assert_eq!(
        named("t1", true, "mat_1").await,
        AnswerOutcome::NotThatProposal
    );
    // Nor is a proposal that never was, or one the ticket was never in.
    assert_eq!(
        named("t1", true, "mat_9").await,
        AnswerOutcome::NotThatProposal
    );
    assert_eq!(
        named("t3", true, "mat_1").await,
        AnswerOutcome::NotThatProposal
    );
    let state = store.proposal(&m, "mat_2").await.unwrap().unwrap();
    assert!(state.accepted().is_empty(), "{state:?}");

    // Named right, it counts as any answer, and again.
    let open = AnswerOutcome::Open {
        match_id: "mat_2".into(),
    };
    assert_eq!(named("t1", true, "mat_2").await, open);
    assert_eq!(named("t1", true, "mat_2").await, open);
    let state = store.proposal(&m, "mat_2").await.unwrap().unwrap();
    assert_eq!(state.accepted(), vec!["t1".to_owned()]);
    // The decline given in mat_1, repeated by name after it closed, stands.
    assert_eq!(
        named("t2", false, "mat_1").await,
        AnswerOutcome::Closed {
            match_id: "mat_1".into(),
            same: true
        }
    );
}
