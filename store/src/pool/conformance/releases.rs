//! Cases of [`crate::pool::Releases`]: a released match's tickets search
//! again from their first `queuedAt`; the release names its match.

use std::sync::Arc;

use super::{claim_of, lease, mode, solo, FAR};
use crate::pool::{ClaimOutcome, Ended, PoolStore, ReleasedTicket, SearchState};

fn released(ticket: &str, queued_at: f64) -> ReleasedTicket {
    ReleasedTicket {
        ticket_id: ticket.to_owned(),
        queued_at,
    }
}

pub async fn a_released_matchs_tickets_search_again_from_their_first_queued_at(
    store: Arc<dyn PoolStore>,
) {
    let m = mode("release");
    for (t, p) in [("t1", "p1"), ("t2", "p2"), ("t3", "p3")] {
        store.add_search(&m, &solo(t, p), FAR, None).await.unwrap();
    }
    let token = lease(store.as_ref(), &m).await;
    let claimed = store
        .claim(&m, token, &claim_of("mat_1", &["t1", "t2"]))
        .await
        .unwrap();
    assert!(matches!(claimed, ClaimOutcome::Claimed { .. }));
    // Spent until released.
    let again = store.add_search(&m, &solo("t1", "p1"), FAR, None).await;
    assert!(again.is_err(), "{again:?}");

    // t3 was never in the match: left out, as a ticket of no record.
    let first = 1_764_400_000.25;
    let tickets = [
        released("t1", first),
        released("t2", first + 1.0),
        released("t3", first),
        released("t9", first),
    ];
    let freed = store
        .release_tickets(&m, "mat_1", &tickets, 1_764_500_000.0)
        .await
        .unwrap();
    assert_eq!(freed, ["t1", "t2"]);
    // Another match's release frees nothing of this one.
    let other = store
        .release_tickets(&m, "mat_2", &tickets, 1_764_500_000.0)
        .await
        .unwrap();
    assert!(other.is_empty());
    let state = store.search_state(&m, "t1").await.unwrap();
    let Some(SearchState::Ended(ended)) = state else {
        panic!("{state:?}")
    };
    assert_eq!(
        ended.how,
        Ended::Released {
            match_id: "mat_1".into()
        }
    );
    assert_eq!(ended.queued_at, Some(first));
    // The same release again: the same answer, nothing changed.
    let twice = store
        .release_tickets(&m, "mat_1", &tickets, 1_764_500_001.0)
        .await
        .unwrap();
    assert_eq!(twice, ["t1", "t2"]);

    // A new search resumes the first wait, whatever `queuedAt` it brings.
    store
        .add_search(&m, &solo("t1", "p1"), FAR, None)
        .await
        .unwrap();
    let t1 = store
        .snapshot(&m)
        .await
        .unwrap()
        .into_iter()
        .find(|s| s.ticket_id.as_str() == "t1")
        .unwrap();
    assert_eq!(t1.queued_at, first);
    // Searching again: no longer released, a release leaves it alone.
    let later = store
        .release_tickets(&m, "mat_1", &tickets[..1], 1_764_500_002.0)
        .await
        .unwrap();
    assert!(later.is_empty());
    assert!(matches!(
        store.search_state(&m, "t1").await.unwrap(),
        Some(SearchState::Live(_))
    ));
}
