//! Cases of [`crate::pool::StatusBus`]: every subscriber, and only while
//! it listens.

use std::sync::Arc;

use super::next_status;
use crate::pool::PoolStore;

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
    // On a cluster a message published on another node reaches this one
    // over the cluster bus, later: the `{}` sent before this subscription
    // may still arrive first. Nothing else may.
    let mut next = next_status(&mut again).await;
    if next.as_deref() == Some("{}") {
        next = next_status(&mut again).await;
    }
    assert_eq!(next.as_deref(), Some(r#"{"type":"cancelled"}"#));
}
