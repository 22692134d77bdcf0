//! A proposal an API instance closes past its deadline, on a late answer,
//! after that instance saw the pool out of reach: its deadline fell in
//! the outage, so nobody is held to the timeout (docs/acceptance.md), as
//! when the worker's sweep closes it.

use crate::acceptance::{accepting, propose, proposed_past_its_deadline};
use crate::harness::{fast, solo, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_api::play::unix_now;
use matchplane_store::pool::ModeKey;
use serde_json::json;

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

on_both_pools!(an_answer_naming_a_closed_proposal_leaves_the_next_one_alone);

/// a was proposed with b, b declined, and a was proposed again with c. An
/// accept that names the first proposal (sent before a heard of the
/// second) is `409 PROPOSAL_CLOSED` and leaves the second unanswered;
/// named right, it counts (docs/acceptance.md, "Naming the proposal").
async fn an_answer_naming_a_closed_proposal_leaves_the_next_one_alone(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let mut searching = Vec::new();
    for player in ["a", "b", "c"] {
        let (id, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        searching.push((id, format!("Ticket {token}")));
    }
    let [(a, a_auth), (b, b_auth), (c, _)] = &searching[..] else {
        unreachable!()
    };
    let first = propose(&t, &p, &[a, b], &["a", "b"], &[a, b]).await;
    let declined = t
        .call(
            Method::POST,
            &format!("/v1/searches/{b}/decline"),
            Some(b_auth),
            None,
        )
        .await;
    assert_eq!(declined.status, StatusCode::OK, "{}", declined.body);
    let second = propose(&t, &p, &[a, c], &["a", "c"], &[a, c]).await;

    let accept = |named: &str| format!("/v1/searches/{a}/accept?matchId={named}");
    t.call(Method::POST, &accept(&first), Some(a_auth), None)
        .await
        .assert_problem(StatusCode::CONFLICT, "PROPOSAL_CLOSED");
    let s = t.status(&p, &key, a).await.body;
    assert_eq!(s["proposal"]["matchId"], second.as_str(), "{s}");
    assert_eq!(s["proposal"]["accepted"], json!([]), "{s}");
    let bad = t
        .call(Method::POST, &accept("match-1"), Some(a_auth), None)
        .await;
    bad.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(bad.body["errors"][0]["field"], "matchId", "{}", bad.body);

    let named = t
        .call(Method::POST, &accept(&second), Some(a_auth), None)
        .await;
    assert_eq!(named.status, StatusCode::OK, "{}", named.body);
    assert_eq!(
        named.body["proposal"]["accepted"],
        json!([a]),
        "{}",
        named.body
    );
    // The studio's route takes the same name.
    let studio = format!("/v1/projects/{p}/tickets/{c}/accept?matchId={first}");
    let refused = t.call(Method::POST, &studio, Some(&key), None).await;
    refused.assert_problem(StatusCode::CONFLICT, "PROPOSAL_CLOSED");
}
