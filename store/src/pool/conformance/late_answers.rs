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
