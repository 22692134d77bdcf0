//! A `proposed` or `requeued` that reaches a socket late, after a check
//! of the pool already told the client of a newer proposal (the status
//! subscription can deliver a message held up in a Redis outage after the
//! socket read the pool), is not said again (docs/acceptance.md, "Naming
//! the proposal"). Before, a fault probe saw a socket say `proposed` B,
//! then the late `requeued` of the proposal before it, then `proposed` B
//! again: a client took B to be over.

use crate::acceptance::{accepting, propose};
use crate::harness::{fast, search_message, solo, Pools, TestApp};
use crate::on_both_pools;
use crate::socket::{connect, until, Client};
use axum::http::StatusCode;
use futures::StreamExt;
use matchplane_store::pool::{settle, ModeKey};
use matchplane_store::tickets::StatusMessage;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

on_both_pools!(a_late_message_of_an_older_proposal_is_not_said);

async fn a_late_message_of_an_older_proposal_is_not_said(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let mode = ModeKey::new(&p, "duel");
    let (a, a_token) = t.ticket_ok(&p, &key, solo("duel", "a")).await;
    let (b, b_token) = t.ticket_ok(&p, &key, solo("duel", "b")).await;
    let (c, c_token) = t.ticket_ok(&p, &key, solo("duel", "c")).await;
    let mut wa = connect(addr, &a_token).await;
    until(&mut wa, "searching").await;
    for token in [&b_token, &c_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }

    // Proposal `first` (a, b): b declines. Nothing is published, so the
    // socket's checks of the pool say both, the `requeued` naming it.
    let first = propose(&t, &p, &[&a, &b], &["a", "b"], &[&a, &b]).await;
    assert_eq!(until(&mut wa, "proposed").await["matchId"], first.as_str());
    let now = matchplane_api::play::unix_now();
    t.play.pool.answer(&mode, &b, false, now).await.unwrap();
    let closed = settle(t.play.pool.as_ref(), &mode, &first, now)
        .await
        .unwrap();
    assert!(closed.is_some(), "the decline closes the proposal");
    assert_eq!(until(&mut wa, "requeued").await["matchId"], first.as_str());

    // Its `proposed` arrives late, with no newer proposal said: old news.
    let late_proposed = StatusMessage::Proposed {
        match_id: first.clone(),
        accept_by: "2026-12-01T10:00:20.000Z".into(),
        accept_in_seconds: 0.0,
        teams: vec![vec!["a".into()], vec!["b".into()]],
        attributes: Default::default(),
    };
    late(&t, &a, &mut wa, &[&late_proposed]).await;

    // Proposal `second` (a, c), said by a check.
    let second = propose(&t, &p, &[&a, &c], &["a", "c"], &[&a, &c]).await;
    assert_eq!(until(&mut wa, "proposed").await["matchId"], second.as_str());

    // The first proposal's messages arrive late over the subscription.
    let late_requeued = StatusMessage::Requeued {
        match_id: Some(first.clone()),
    };
    late(&t, &a, &mut wa, &[&late_proposed, &late_requeued]).await;

    // The second proposal's own `requeued` is said, once.
    t.play.pool.answer(&mode, &c, false, now).await.unwrap();
    let closed = settle(t.play.pool.as_ref(), &mode, &second, now)
        .await
        .unwrap();
    assert!(closed.is_some(), "the decline closes the proposal");
    let requeued = StatusMessage::Requeued {
        match_id: Some(second.clone()),
    };
    t.play
        .pool
        .publish_status(&a, &requeued.to_json())
        .await
        .unwrap();
    let said = said_within(&mut wa, Duration::from_millis(1500)).await;
    let told: Vec<_> = said.iter().filter(|m| m["type"] == "requeued").collect();
    assert_eq!(told.len(), 1, "{said:?}");
    assert_eq!(told[0]["matchId"], second.as_str());
    assert!(said.iter().all(|m| m["type"] != "proposed"), "{said:?}");
}

/// Publishes `messages` to `ticket`'s subscription, as if held up in an
/// outage, and checks that its socket `ws` says none of them.
async fn late(t: &TestApp, ticket: &str, ws: &mut Client, messages: &[&StatusMessage]) {
    for message in messages {
        let json = message.to_json();
        t.play.pool.publish_status(ticket, &json).await.unwrap();
    }
    let said = said_within(ws, Duration::from_millis(1500)).await;
    assert!(
        said.iter()
            .all(|m| m["type"] != "proposed" && m["type"] != "requeued"),
        "late messages were said: {said:?}"
    );
}

/// Every message the socket says within `window` (pings aside).
async fn said_within(ws: &mut Client, window: Duration) -> Vec<serde_json::Value> {
    let deadline = tokio::time::Instant::now() + window;
    let mut said = Vec::new();
    while let Ok(Some(Ok(msg))) = tokio::time::timeout_at(deadline, ws.next()).await {
        if let Message::Text(text) = msg {
            let msg = search_message(&text);
            if msg["type"] != "ping" {
                said.push(msg);
            }
        }
    }
    said
}
