//! A proposal an API instance closes past its deadline, on a late answer,
//! after that instance saw the pool out of reach: its deadline fell in
//! the outage, so nobody is held to the timeout (docs/acceptance.md), as
//! when the worker's sweep closes it.

use crate::acceptance::proposed_past_its_deadline;
use crate::harness::{solo, Pools};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_api::play::unix_now;
use matchplane_store::pool::ModeKey;

on_both_pools!(a_late_answer_after_an_outage_cools_nobody_down);

/// The instance reached the pool 40 s ago, then its calls failed until
/// just now; `acceptBy` (2.5 s ago) fell in between. b's accept, after
/// the deadline, is refused and closes the proposal: b and c go back to
/// the queue, and neither is cooled down. Before, both were failed
/// `ACCEPTANCE_TIMEOUT` and cooled down for 60 s, though their accepts
/// may have been the ones that failed.
async fn a_late_answer_after_an_outage_cools_nobody_down(pools: Pools) {
    let (t, p, key, (b, b_token), (c, _)) = proposed_past_its_deadline(pools).await;
    let mode = ModeKey::new(&p, "duel");
    let now = unix_now();
    t.play.lapses.reached(&mode, now - 40.0);
    t.play.lapses.failed(&mode);
    t.play.lapses.reached(&mode, now);

    t.call(
        Method::POST,
        &format!("/v1/searches/{b}/accept"),
        Some(&format!("Ticket {b_token}")),
        None,
    )
    .await
    .assert_problem(StatusCode::CONFLICT, "PROPOSAL_CLOSED");
    for ticket in [&b, &c] {
        let s = t.status(&p, &key, ticket).await.body;
        assert_eq!(s["status"], "searching", "{s}");
    }
    // Nobody cooled down: a new ticket of either player passes the
    // cooldown (checked first) and is refused only because the player
    // still searches.
    for player in ["b", "c"] {
        let again = t.ticket(&p, &key, solo("duel", player)).await;
        again.assert_problem(StatusCode::CONFLICT, "PLAYER_ALREADY_SEARCHING");
    }
}
