//! Live searches across an upgrade (docs/deployment.md, "Upgrading"): a
//! search a WebSocket started under the previous release carries no holder
//! and its ticket's expiry as its deadline. Its ticket's next search (the
//! client reconnecting to an upgraded instance) ends it `SOCKET_LAPSED` and
//! starts, instead of `409 SEARCH_ALREADY_ACTIVE` until the ticket
//! expires; a search this release holds (polled, or a socket's) is still
//! refused. When the API starts, such searches get a socket's lease, so
//! that one whose client never comes back is not matched until its ticket
//! expires.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use crate::socket::{connect, next_json};
use axum::http::StatusCode;
use matchplane_api::play::unix_now;
use matchplane_store::pool::{ModeKey, SearchState};
use matchplane_store::tickets::search_of;

on_both_pools!(
    a_search_left_unheld_by_the_previous_release_gives_way_to_its_ticket,
    searches_left_unheld_lapse_with_a_socket_lease_from_the_start,
);

/// Adds `ticket_id`'s search as the previous release's socket start left
/// it: no holder, and the ticket's expiry (an hour away) as its deadline.
async fn add_unheld(t: &TestApp, mode: &ModeKey, project: &str, ticket_id: &str) {
    let ticket = t
        .play
        .tickets
        .get(project, ticket_id)
        .await
        .unwrap()
        .unwrap();
    let search = search_of(&ticket, unix_now() - 60.0);
    t.play
        .pool
        .add_search(mode, &search, ticket.expires_at, None)
        .await
        .unwrap();
}

async fn a_search_left_unheld_by_the_previous_release_gives_way_to_its_ticket(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let mode = ModeKey::new(&p, "duel");
    let (old, old_token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    add_unheld(&t, &mode, &p, &old).await;

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

async fn searches_left_unheld_lapse_with_a_socket_lease_from_the_start(pools: Pools) {
    use matchplane_api::play::start::{start_with_token, Via};
    use matchplane_api::play::unheld::lapse_unheld;
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let mode = ModeKey::new(&p, "duel");
    let (unheld, _) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    add_unheld(&t, &mode, &p, &unheld).await;
    let (polled, polled_token) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    let (socket, socket_token) = t.ticket_ok(&p, &key, solo("duel", "p3")).await;
    start_with_token(&t.play, &t.db, &polled_token, Via::Rest)
        .await
        .unwrap();
    start_with_token(&t.play, &t.db, &socket_token, Via::WebSocket)
        .await
        .unwrap();
    let deadline = |ticket: String| {
        let pool = t.play.pool.clone();
        let mode = mode.clone();
        async move { pool.deadline(&mode, &ticket).await.unwrap().unwrap() }
    };
    let (polled_before, socket_before) = (
        deadline(polled.clone()).await,
        deadline(socket.clone()).await,
    );

    let now = unix_now();
    assert_eq!(lapse_unheld(&t.play, now).await.unwrap(), 1);
    // A socket's lease (5 s here) from now; the held two as they were.
    assert_eq!(deadline(unheld.clone()).await, now + 5.0);
    assert_eq!(deadline(polled).await, polled_before);
    assert_eq!(deadline(socket).await, socket_before);
    // Run again, it finds nothing.
    assert_eq!(lapse_unheld(&t.play, now).await.unwrap(), 0);
    // When the lease lapses, the sweep ends it.
    t.sweep(now + 6.0).await;
    let state = t.play.pool.search_state(&mode, &unheld).await.unwrap();
    assert!(matches!(state, Some(SearchState::Ended(_))), "{state:?}");
}
