//! A matched ticket whose match cannot be read (a lock held on the
//! `matches` table, as a database that takes the query and answers
//! nothing) reads `MATCH_PENDING` within about a second, on the player's
//! poll and the studio's status (docs/operations.md, "What losing a
//! dependency costs"), instead of waiting for the request's deadline.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::StatusCode;
use sea_orm::{ConnectionTrait, TransactionTrait};
use std::time::{Duration, Instant};

on_both_pools!(a_match_that_cannot_be_read_reads_pending_at_once);

async fn a_match_that_cannot_be_read_reads_pending_at_once(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    // Read once before the lock, so that the key and the mode are cached
    // as a running instance holds them.
    t.status(&p, &key, &ticket).await;
    t.claim_alone(&p, "duel", &ticket, "p1").await;
    let lock = t.db.begin().await.unwrap();
    lock.execute_unprepared("LOCK TABLE matches IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    let started = Instant::now();
    let view = t.search_view(&ticket, &token).await;
    assert_eq!(view["status"], "searching", "{view}");
    assert_eq!(view["waitingReason"]["code"], "MATCH_PENDING", "{view}");
    let studio = t.status(&p, &key, &ticket).await;
    assert_eq!(studio.status, StatusCode::OK, "{}", studio.body);
    assert_eq!(
        studio.body["waitingReason"]["code"], "MATCH_PENDING",
        "{}",
        studio.body
    );
    // A second for each read, with room for a loaded machine; before, each
    // waited for the request's 10 s deadline and answered 503.
    let took = started.elapsed();
    assert!(took < Duration::from_secs(6), "two reads took {took:?}");
    lock.rollback().await.unwrap();
}
