//! A worker SIGKILLed between the last accept of a proposal and its
//! webhook (issue 18, a case from other matchmakers' bug trackers):
//! `matchplane api` and `matchplane worker` as separate processes on real
//! PostgreSQL and Redis, a mode with `acceptance`, two players who search
//! over REST and accept. Twice:
//!
//! 1. the worker is killed while the `match.made` delivery is in flight
//!    (the receiver holds the first request); the next worker sends it
//!    again with the same `webhook-id`;
//! 2. the worker is killed right after the last accept, before it stored
//!    the match; the next one stores it and sends its webhook.
//!
//! Each match is made once, `match.made` arrives at least once and always
//! under one `webhook-id`, and both players end `matched` with its id.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{json, Value};
use std::time::{Duration, Instant};
use support::{redis_url, Deployment, Hook};

/// Polls `ticket`'s REST search (keeping it alive) until its status is
/// `want`; returns that status.
async fn until_status(
    d: &Deployment,
    ticket: &str,
    token: &str,
    want: &str,
    within: Duration,
) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let s = d.status(ticket, token).await.body;
        if s["status"] == want {
            return s;
        }
        assert!(Instant::now() < deadline, "{ticket} never {want}: {s}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Two players search and are proposed; returns their `(ticket, token)`
/// and the proposal's match id.
async fn proposed_pair(d: &Deployment, round: usize) -> ([(String, String); 2], String) {
    let mut pair = Vec::new();
    for side in ["a", "b"] {
        let (ticket, token) = d.ticket("duel", &format!("{side}{round}"), 1500.0).await;
        let a = d.rest_search(&token).await;
        assert_eq!(a.status, 202, "{}", a.body);
        pair.push((ticket, token));
    }
    let mut match_id = String::new();
    for (ticket, token) in &pair {
        let s = until_status(d, ticket, token, "proposed", Duration::from_secs(30)).await;
        match_id = s["proposal"]["matchId"].as_str().unwrap().to_owned();
    }
    ([pair[0].clone(), pair[1].clone()], match_id)
}

async fn accept_both(d: &Deployment, pair: &[(String, String); 2]) {
    for (ticket, token) in pair {
        let (status, body) = d
            .api
            .call(
                reqwest::Method::POST,
                &format!("/v1/searches/{ticket}/accept"),
                &format!("Ticket {token}"),
                None,
            )
            .await;
        assert_eq!(status, 200, "{body}");
    }
}

/// Every delivery of one match: `match.made`, one `webhook-id`.
fn one_event(got: &[Hook], match_id: &str) {
    assert!(!got.is_empty(), "no match.made for {match_id}");
    for hook in got {
        assert_eq!(hook.body["type"], "match.made", "{}", hook.body);
        assert_eq!(hook.id, got[0].id, "one webhook-id per match: {got:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_killed_between_the_last_accept_and_the_webhook_sends_it_once_under_one_id() {
    let redis = redis_url();
    let d = Deployment::start("crash", &redis, 0, &[]).await;
    let worker = d.worker(1);
    // The first delivery is held long enough to kill the worker mid-attempt.
    d.receiver.hold_next(Duration::from_secs(20));
    d.mode(
        json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
                "algorithm": {"type": "fifo"},
                "acceptance": {"timeoutSeconds": 60}}),
    )
    .await;

    // 1. Killed while the webhook is in flight.
    let (pair, first) = proposed_pair(&d, 1).await;
    accept_both(&d, &pair).await;
    let got = d.hooks_of(&first, 1, Duration::from_secs(30)).await;
    assert_eq!(
        got.len(),
        1,
        "the first attempt never came; see {}",
        d.dir.display()
    );
    worker.kill();
    let worker = d.worker(2);
    // Sent again once the killed attempt's claim lapses (30 s).
    let got = d.hooks_of(&first, 2, Duration::from_secs(60)).await;
    assert!(
        got.len() >= 2,
        "never sent again: {got:?}; see {}",
        d.dir.display()
    );
    one_event(&got, &first);
    for (ticket, token) in &pair {
        let s = until_status(&d, ticket, token, "matched", Duration::from_secs(10)).await;
        assert_eq!(s["match"]["matchId"], first.as_str(), "{s}");
    }

    // 2. Killed right after the last accept, before the match is stored.
    let (pair, second) = proposed_pair(&d, 2).await;
    accept_both(&d, &pair).await;
    worker.kill();
    let _worker = d.worker(3);
    let got = d.hooks_of(&second, 1, Duration::from_secs(60)).await;
    one_event(&got, &second);
    for (ticket, token) in &pair {
        let s = until_status(&d, ticket, token, "matched", Duration::from_secs(10)).await;
        assert_eq!(s["match"]["matchId"], second.as_str(), "{s}");
    }
    // Nothing else arrives: one event per match, never a second id.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let all = d.receiver.got();
    let ids: std::collections::BTreeSet<&str> = all.iter().map(|h| h.id.as_str()).collect();
    assert_eq!(ids.len(), 2, "one webhook-id per match: {all:?}");
}
