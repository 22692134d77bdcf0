//! Cases of a proposal closed by a member's search ending (a cancel, a
//! failure by the service), and the races other matchmakers' users
//! reported (an accept against a cancel, two answers at once).

use std::sync::Arc;

use matchplane_matchmaker::Code;

use super::proposals::{ended, failed, outbox_len, proposal, propose, NOW};
use super::{add_solos, live, mode};
use crate::pool::closed::CancelledProposal;
use crate::pool::{
    settle, AnswerOutcome, EndOutcome, EndResult, Ended, PoolStore, SERVER_STOPPING,
};

const MATCH_DECLINED: &str = Code::MatchDeclined.as_str();

pub async fn a_cancel_during_a_proposal_counts_as_a_decline(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 2).await;
    propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
    store.answer(&m, "t2", true, NOW).await.unwrap();
    assert_eq!(
        store
            .end_search(&m, "t1", &EndOutcome::Cancelled)
            .await
            .unwrap(),
        EndResult::Ended
    );
    let settled = settle(store.as_ref(), &m, "mat_1", NOW + 1.0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(settled.requeued().collect::<Vec<_>>(), vec!["t2"]);
    assert_eq!(
        ended(store.as_ref(), &m, "t1").await,
        Some(Ended::Cancelled)
    );
    assert!(store
        .cooldown_of(&m, "p1", NOW + 1.0)
        .await
        .unwrap()
        .is_some());
    assert!(live(store.as_ref(), &m, "t2").await);
}

pub async fn a_search_failed_by_the_service_cools_nobody_down(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 2).await;
    propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
    let disabled = EndOutcome::Failed {
        code: "GAME_MODE_DISABLED".into(),
        message: "disabled".into(),
    };
    store.end_search(&m, "t1", &disabled).await.unwrap();
    let settled = settle(store.as_ref(), &m, "mat_1", NOW + 1.0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(settled.requeued().collect::<Vec<_>>(), vec!["t2"]);
    assert!(store
        .cooldown_of(&m, "p1", NOW + 1.0)
        .await
        .unwrap()
        .is_none());
}

/// A member's search ended by its API instance stopping (docs/acceptance.md,
/// "How a proposal ends"): the proposal closes as for a search failed by
/// the service, even after that member accepted: nobody is cooled down,
/// the other member is requeued, and the stopped one may search again.
pub async fn a_search_ended_by_a_stopping_server_cools_nobody_down(store: Arc<dyn PoolStore>) {
    for accepted in [true, false] {
        let m = mode(if accepted { "accepted" } else { "silent" });
        add_solos(store.as_ref(), &m, 2).await;
        propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
        store.answer(&m, "t1", true, NOW).await.unwrap();
        if accepted {
            store.answer(&m, "t2", true, NOW).await.unwrap();
        }
        let stopping = EndOutcome::CancelledFor {
            reason: SERVER_STOPPING.into(),
        };
        let result = store.end_search(&m, "t2", &stopping).await.unwrap();
        assert_eq!(result, EndResult::Ended);
        let settled = settle(store.as_ref(), &m, "mat_1", NOW + 1.0)
            .await
            .unwrap()
            .unwrap();
        assert!(!settled.made);
        assert_eq!(settled.requeued().collect::<Vec<_>>(), vec!["t1"]);
        assert_eq!(settled.failed().count(), 0);
        assert_eq!(
            ended(store.as_ref(), &m, "t2").await,
            Some(Ended::Cancelled)
        );
        for player in ["p1", "p2"] {
            let cooled = store.cooldown_of(&m, player, NOW + 1.0).await.unwrap();
            assert_eq!(cooled, None, "{player} (t2 accepted: {accepted})");
        }
        assert!(live(store.as_ref(), &m, "t1").await);
    }
}

/// A party member's search ended by its API instance stopping drops
/// nobody: its party-mate and the other player go back to the pool, and
/// the closing record answers `none` for it (nobody declined).
pub async fn a_stopping_server_drops_nobodys_party(store: Arc<dyn PoolStore>) {
    let m = mode("party");
    add_solos(store.as_ref(), &m, 3).await;
    let p = proposal("mat_1", &["t1", "t2", "t3"], &["pa", "pa", "t3"]);
    propose(store.as_ref(), &m, p).await;
    store.answer(&m, "t1", true, NOW).await.unwrap();
    let stopping = EndOutcome::CancelledFor {
        reason: SERVER_STOPPING.into(),
    };
    store.end_search(&m, "t1", &stopping).await.unwrap();
    let settled = settle(store.as_ref(), &m, "mat_1", NOW + 1.0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(settled.requeued().collect::<Vec<_>>(), vec!["t2", "t3"]);
    assert_eq!(settled.failed().count(), 0);
    assert!(live(store.as_ref(), &m, "t2").await && live(store.as_ref(), &m, "t3").await);
    for player in ["p1", "p2", "p3"] {
        let cooled = store.cooldown_of(&m, player, NOW + 1.0).await.unwrap();
        assert_eq!(cooled, None, "{player}");
    }
    let entries = store
        .read_outbox(&m, "c", 100, std::time::Duration::from_secs(60))
        .await
        .unwrap();
    let closed = CancelledProposal::parse(&entries[0].record_json).unwrap();
    assert_eq!(closed.answers["t1"], "none");
}

/// An accept (and its settle) racing a cancel of the other member: exactly
/// one outcome, every time.
pub async fn an_accept_racing_a_cancel_has_exactly_one_outcome(store: Arc<dyn PoolStore>) {
    for round in 0..20 {
        let m = mode(&format!("race{round}"));
        add_solos(store.as_ref(), &m, 2).await;
        propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
        store.answer(&m, "t1", true, NOW).await.unwrap();
        let (a, b) = (store.clone(), store.clone());
        let (ma, mb) = (m.clone(), m.clone());
        let accept = tokio::spawn(async move {
            a.answer(&ma, "t2", true, NOW).await.unwrap();
            settle(a.as_ref(), &ma, "mat_1", NOW + 1.0).await.unwrap()
        });
        let cancel = tokio::spawn(async move {
            let end = b
                .end_search(&mb, "t2", &EndOutcome::Cancelled)
                .await
                .unwrap();
            (
                end,
                settle(b.as_ref(), &mb, "mat_1", NOW + 1.0).await.unwrap(),
            )
        });
        let accepted = accept.await.unwrap();
        let (end, cancelled) = cancel.await.unwrap();
        let settled: Vec<_> = [accepted, cancelled].into_iter().flatten().collect();
        assert_eq!(settled.len(), 1, "round {round}: one closing");
        let made = outbox_len(store.as_ref(), &m).await == 1;
        assert_eq!(settled[0].made, made);
        if made {
            assert!(matches!(end, EndResult::Matched { .. }), "{end:?}");
            assert!(!live(store.as_ref(), &m, "t1").await);
        } else {
            assert_eq!(end, EndResult::Ended);
            assert!(live(store.as_ref(), &m, "t1").await, "t1 is requeued");
            assert_eq!(
                ended(store.as_ref(), &m, "t2").await,
                Some(Ended::Cancelled)
            );
        }
    }
}

/// Two clients answering the same ticket at once (accept and decline): the
/// proposal closes once, by the answer that landed.
pub async fn two_answers_of_one_ticket_at_once_close_it_once(store: Arc<dyn PoolStore>) {
    for round in 0..20 {
        let m = mode(&format!("twice{round}"));
        add_solos(store.as_ref(), &m, 2).await;
        propose(store.as_ref(), &m, proposal("mat_1", &["t1", "t2"], &[])).await;
        store.answer(&m, "t1", true, NOW).await.unwrap();
        let run = |accept: bool| {
            let (s, m) = (store.clone(), m.clone());
            tokio::spawn(async move {
                let answer = s.answer(&m, "t2", accept, NOW).await.unwrap();
                (
                    answer,
                    settle(s.as_ref(), &m, "mat_1", NOW + 1.0).await.unwrap(),
                )
            })
        };
        let (yes, no) = (run(true), run(false));
        let (yes, no) = (yes.await.unwrap(), no.await.unwrap());
        let settled: Vec<_> = [yes.1, no.1].into_iter().flatten().collect();
        assert_eq!(settled.len(), 1, "round {round}: one closing");
        let made = outbox_len(store.as_ref(), &m).await == 1;
        assert_eq!(settled[0].made, made);
        if made {
            // The accept closed it before the decline landed.
            assert!(matches!(no.0, AnswerOutcome::Closed { same: false, .. }));
        } else {
            assert_eq!(
                ended(store.as_ref(), &m, "t2").await,
                failed(MATCH_DECLINED)
            );
            assert!(live(store.as_ref(), &m, "t1").await);
        }
    }
}

/// A proposal `mat_1` of `t1` (`p1`) and `t2` (`p2`) open now by the wall
/// clock, which the add compares cooldowns with.
async fn proposed_now(store: &dyn PoolStore, m: &crate::pool::ModeKey) -> f64 {
    let now = crate::pool::wall_clock();
    add_solos(store, m, 2).await;
    let mut claim = proposal("mat_1", &["t1", "t2"], &[]);
    claim.accept_by = now + 20.0;
    propose(store, m, claim).await;
    now
}

/// A member's search ended (a cancel, a closed socket) while its proposal
/// is still closing: a start of that ticket or of another of its player's
/// is refused until the close, then by the cooldown the close wrote, in
/// the add itself, so no start slips in between (docs/acceptance.md).
pub async fn a_start_while_a_leaving_members_proposal_closes_is_refused(store: Arc<dyn PoolStore>) {
    use crate::pool::AddSearchError;
    let m = mode("ranked");
    let now = proposed_now(store.as_ref(), &m).await;
    store
        .end_search(&m, "t1", &EndOutcome::Cancelled)
        .await
        .unwrap();
    let again = store
        .add_search(&m, &super::solo("t1", "p1"), super::FAR, None)
        .await;
    assert!(
        matches!(again, Err(AddSearchError::SearchAlreadyActive)),
        "{again:?}"
    );
    let spare = store
        .add_search(&m, &super::solo("t9", "p1"), super::FAR, None)
        .await;
    assert!(
        matches!(spare, Err(AddSearchError::PlayerAlreadySearching { ref ticket_id, .. }) if ticket_id == "t1"),
        "{spare:?}"
    );
    let settled = settle(store.as_ref(), &m, "mat_1", now + 1.0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(settled.requeued().collect::<Vec<_>>(), vec!["t2"]);
    let cooled = store
        .add_search(&m, &super::solo("t9", "p1"), super::FAR, None)
        .await;
    assert!(
        matches!(cooled, Err(AddSearchError::DeclineCooldown { retry_after_seconds }) if retry_after_seconds > 50),
        "{cooled:?}"
    );
    assert!(live(store.as_ref(), &m, "t2").await);
}

/// Two members declining at once: the first decline ends the proposal,
/// the second is refused as closed and not recorded, so that member is
/// requeued, not failed nor cooled down (docs/acceptance.md, "Naming the
/// proposal").
pub async fn two_declines_at_once_record_only_the_first(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    let now = proposed_now(store.as_ref(), &m).await;
    let first = store.answer(&m, "t1", false, now).await.unwrap();
    assert!(matches!(first, AnswerOutcome::Open { .. }), "{first:?}");
    let second = store.answer(&m, "t2", false, now).await.unwrap();
    assert!(
        matches!(second, AnswerOutcome::Closed { same: false, .. }),
        "{second:?}"
    );
    settle(store.as_ref(), &m, "mat_1", now + 1.0)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        ended(store.as_ref(), &m, "t1").await,
        failed(MATCH_DECLINED)
    );
    assert!(live(store.as_ref(), &m, "t2").await);
    assert!(store
        .cooldown_of(&m, "p2", now + 1.0)
        .await
        .unwrap()
        .is_none());
}
