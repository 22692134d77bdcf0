//! A match whose status says released (or unassigned) while the pool
//! still holds its tickets as matched (the process releasing it stopped
//! between the two): a start of one of its tickets finishes the release
//! and searches (docs/acceptance.md, "Releasing a match"), where it was
//! refused `409 TICKET_ALREADY_MATCHED` until the ticket expired. A match
//! still made keeps refusing.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::StatusCode;
use sea_orm::ConnectionTrait;

on_both_pools!(a_released_matchs_ticket_left_matched_searches_again);

async fn a_released_matchs_ticket_left_matched_searches_again(pools: Pools) {
    for status in ["unassigned", "released"] {
        let t = TestApp::new(pools, fast()).await;
        let (p, key) = t.project("free").await;
        t.mode(&p, &key, duel("duel")).await;
        let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        t.claim_alone(&p, "duel", &ticket, "p1").await;
        t.store_match_alone(&p, "duel", &ticket, "p1").await;
        // Made: the ticket is matched for good.
        t.rest_search(&token)
            .await
            .assert_problem(StatusCode::CONFLICT, "TICKET_ALREADY_MATCHED");
        // Its status written, its tickets not freed.
        t.db.execute_unprepared(&format!(
            "UPDATE matches SET status = '{status}' WHERE id = 'mat_1'"
        ))
        .await
        .unwrap();
        let again = t.rest_search(&token).await;
        assert_eq!(
            again.status,
            StatusCode::ACCEPTED,
            "{status}: {}",
            again.body
        );
        let view = t.search_view(&ticket, &token).await;
        assert_eq!(view["status"], "searching", "{status}: {view}");
    }
}
