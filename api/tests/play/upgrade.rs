//! Live searches across an upgrade (docs/deployment.md, "Upgrading"): a
//! search a WebSocket started under the previous release carries no holder
//! and its ticket's expiry as its deadline. Its ticket's next search (the
//! client reconnecting to an upgraded instance) ends it `SOCKET_LAPSED` and
//! starts, instead of `409 SEARCH_ALREADY_ACTIVE` until the ticket
//! expires; a search this release holds (polled, or a socket's) is still
//! refused.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use crate::ws::{connect, next_json};
use axum::http::StatusCode;
use matchplane_api::play::unix_now;
use matchplane_store::pool::{ModeKey, SearchState};
use matchplane_store::tickets::search_of;

on_both_pools!(a_search_left_unheld_by_the_previous_release_gives_way_to_its_ticket);

async fn a_search_left_unheld_by_the_previous_release_gives_way_to_its_ticket(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let mode = ModeKey::new(&p, "duel");
    let (old, old_token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let ticket = t.play.tickets.get(&p, &old).await.unwrap().unwrap();
    // As the previous release's socket start left it: no holder, and the
    // ticket's expiry (an hour away) as its deadline.
    let search = search_of(&ticket, unix_now() - 60.0);
    t.play
        .pool
        .add_search(&mode, &search, ticket.expires_at, None)
        .await
        .unwrap();

    let mut ws = connect(addr, &old_token).await;
    assert_eq!(next_json(&mut ws).await["type"], "searching");
    let state = t.play.pool.search_state(&mode, &old).await.unwrap();
    let Some(SearchState::Live(live)) = state else {
        panic!("not live: {state:?}")
    };
    assert!(live.socket, "held by the new socket: {live:?}");
    assert!(live.deadline <= unix_now() + 6.0, "a lease: {live:?}");
    // Now held by a socket of this release: another start is refused.
    t.rest_search(&old_token)
        .await
        .assert_problem(StatusCode::CONFLICT, "SEARCH_ALREADY_ACTIVE");

    // A polled search of this release is not taken from its poller.
    let (_, polled_token) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    assert_eq!(
        t.rest_search(&polled_token).await.status,
        StatusCode::ACCEPTED
    );
    t.rest_search(&polled_token)
        .await
        .assert_problem(StatusCode::CONFLICT, "SEARCH_ALREADY_ACTIVE");
}
