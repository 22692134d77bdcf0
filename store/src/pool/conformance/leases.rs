//! Cases of [`crate::pool::Leases`]: fencing tokens that only grow, and
//! claims refused under a stale one.

use std::sync::Arc;
use std::time::Duration;

use super::{add_solos, claim_of, mode};
use crate::pool::{ClaimOutcome, PoolStore};

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

/// Tokens of two epochs (two worker starts) never meet, and one of them
/// renews, releases or claims nothing under the other's lease.
pub async fn tokens_of_two_epochs_never_meet(store: Arc<dyn PoolStore>) {
    let m = mode("ranked");
    add_solos(store.as_ref(), &m, 2).await;
    let short = Duration::from_millis(200);
    let a = store
        .acquire_lease_in_epoch(&m, "worker-a", 7, short)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(a >> 32, 7, "a token carries its epoch: {a}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let long = Duration::from_secs(30);
    let b = store
        .acquire_lease_in_epoch(&m, "worker-b", 8, long)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(b >> 32, 8);
    assert_ne!(a & 0xffff_ffff, 0);
    assert!(!store.renew_lease(&m, a, long).await.unwrap());
    let late = store
        .claim(&m, a, &claim_of("mat_a", &["t1", "t2"]))
        .await
        .unwrap();
    assert_eq!(late, ClaimOutcome::LeaseLost);
    assert!(store.renew_lease(&m, b, long).await.unwrap());
    assert!(store.release_lease(&m, b).await.unwrap());
}
