//! Acceptance from the client's and the studio's side: a proposed ticket's
//! status, answers over REST, the studio's routes and the WebSocket
//! (idempotent; `PROPOSAL_CLOSED`, `NOT_PROPOSED`), a party member's decline
//! dropping the whole party and nobody else, `DECLINE_COOLDOWN` for the one
//! responsible only (tickets and searches), and a closed socket counting as
//! a decline.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use crate::socket::{connect, until};
use axum::http::{Method, StatusCode};
use futures::{SinkExt, StreamExt};
use matchplane_store::pool::{Claim, ClaimOutcome, ModeKey, PoolStore, ProposalClaim};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

on_both_pools!(
    a_party_members_decline_drops_the_whole_party_and_cools_down_only_them,
    answers_over_the_websocket_and_a_closed_socket_counts_as_a_decline,
    an_accept_after_the_deadline_is_refused_even_before_any_sweep,
    a_cooldown_after_a_timeout_does_not_say_the_player_declined,
    a_socket_says_the_proposal_messages_it_never_heard,
    an_accepted_proposal_not_stored_yet_says_match_pending_on_the_socket,
);

/// The `DECLINE_COOLDOWN` detail holds in every case that cools a player
/// down (docs/acceptance.md): it does not say "declined" alone.
fn assert_cooldown_detail(answer: &crate::harness::Answer) {
    answer.assert_problem(StatusCode::CONFLICT, "DECLINE_COOLDOWN");
    let detail = answer.body["detail"].as_str().unwrap();
    assert!(
        !detail.contains("the player declined a match")
            && detail.contains("declined, stayed silent or left"),
        "{detail}"
    );
}

/// `duel` with acceptance: 20 s to answer, a 60 s cooldown.
pub(crate) fn accepting() -> Value {
    let mut mode = duel("duel");
    mode["acceptance"] = json!({"timeoutSeconds": 20, "declineCooldownSeconds": 60});
    mode
}

/// Holds `tickets` (of `players`, in `parties`) as one proposal, as the
/// worker's cycle would, answerable for 20 s.
pub(crate) async fn propose(
    t: &TestApp,
    project: &str,
    tickets: &[&str],
    players: &[&str],
    parties: &[&str],
) -> String {
    let accept_by = matchplane_api::play::unix_now() + 20.0;
    propose_until(t, project, tickets, players, parties, accept_by).await
}

/// [`propose`] with its deadline at `accept_by` (Unix seconds).
pub(crate) async fn propose_until(
    t: &TestApp,
    project: &str,
    tickets: &[&str],
    players: &[&str],
    parties: &[&str],
    accept_by: f64,
) -> String {
    let mode = ModeKey::new(project, "duel");
    propose_on(
        t.play.pool.as_ref(),
        &mode,
        (tickets, players, parties),
        accept_by,
    )
    .await
}

/// Holds `tickets` (of `players`, in `parties`) as one proposal of `mode`
/// in `pool`, as the worker's cycle would, answerable until `accept_by`.
pub(crate) async fn propose_on(
    pool: &dyn PoolStore,
    mode: &ModeKey,
    (tickets, players, parties): (&[&str], &[&str], &[&str]),
    accept_by: f64,
) -> String {
    let lease = pool
        .acquire_lease(mode, "w", Duration::from_secs(5))
        .await
        .unwrap()
        .unwrap();
    let match_id = format!("mat_{}", ulid::Ulid::new());
    let proposal = ProposalClaim {
        claim: Claim {
            match_id: match_id.clone(),
            ticket_ids: tickets.iter().map(|s| (*s).to_owned()).collect(),
            player_ids: players.iter().map(|s| (*s).to_owned()).collect(),
            // Only what the views read of a proposal's body.
            record_json: r#"{"attributes":{"maps":["dust"]}}"#.into(),
        },
        parties: parties.iter().map(|s| (*s).to_owned()).collect(),
        accept_by,
        cooldown_seconds: 60.0,
    };
    let out = pool.propose_many(mode, lease, &[proposal]).await.unwrap();
    assert!(matches!(out[0], ClaimOutcome::Claimed { .. }), "{out:?}");
    pool.release_lease(mode, lease).await.unwrap();
    match_id
}

fn party(player: &str) -> Value {
    json!({"gameMode": "duel", "playerId": player, "attributes": {"mmr": 1500},
        "party": {"id": "pa", "members": ["a1", "a2"]}})
}

async fn a_party_members_decline_drops_the_whole_party_and_cools_down_only_them(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let (a1, a1_token) = t.ticket_ok(&p, &key, party("a1")).await;
    let (a2, a2_token) = t.ticket_ok(&p, &key, party("a2")).await;
    let (b, b_token) = t.ticket_ok(&p, &key, solo("duel", "b")).await;
    let (c, c_token) = t.ticket_ok(&p, &key, solo("duel", "c")).await;
    let (d, d_token) = t.ticket_ok(&p, &key, solo("duel", "d")).await;
    for token in [&a1_token, &a2_token, &b_token, &c_token, &d_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    // The cycle before the proposal left b a reason to wait.
    left_waiting(&t, &p, &b).await;
    let match_id = propose(
        &t,
        &p,
        &[&a1, &a2, &b, &c],
        &["a1", "a2", "b", "c"],
        &["pa", "pa", &b, &c],
    )
    .await;

    let b_auth = format!("Ticket {b_token}");
    let polled = t
        .call(
            Method::GET,
            &format!("/v1/searches/{b}"),
            Some(&b_auth),
            None,
        )
        .await;
    assert_eq!(polled.body["status"], "proposed", "{}", polled.body);
    // It waits for answers now, not for players.
    for stale in ["waitingReason", "found", "needed"] {
        assert!(polled.body[stale].is_null(), "{}", polled.body);
    }
    assert_eq!(polled.body["proposal"]["matchId"], match_id.as_str());
    assert_eq!(polled.body["proposal"]["accepted"], json!([]));
    // What every player agreed on, as the proposed message says it.
    assert_eq!(
        polled.body["proposal"]["attributes"],
        json!({"maps": ["dust"]}),
        "{}",
        polled.body
    );
    let by = polled.body["proposal"]["acceptBy"].clone();

    let accept = format!("/v1/searches/{b}/accept");
    for _ in 0..2 {
        let a = t.call(Method::POST, &accept, Some(&b_auth), None).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        assert_eq!(a.body["proposal"]["accepted"], json!([b.clone()]));
        assert_eq!(
            a.body["proposal"]["acceptBy"], by,
            "an accept never moves the deadline"
        );
    }
    // Another client's token cannot answer for b.
    let a = t
        .call(
            Method::POST,
            &accept,
            Some(&format!("Ticket {c_token}")),
            None,
        )
        .await;
    a.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");

    // The studio declines for a1: the proposal is cancelled at once.
    let a = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets/{a1}/decline"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.body["status"], "failed");
    assert_eq!(a.body["error"]["code"], "MATCH_DECLINED");
    let a2_status = t.status(&p, &key, &a2).await.body;
    assert_eq!(
        a2_status["error"]["code"], "PARTY_MEMBER_DECLINED",
        "{a2_status}"
    );
    for other in [&b, &c] {
        let s = t.status(&p, &key, other).await.body;
        assert_eq!(s["status"], "searching", "requeued: {s}");
    }
    assert_eq!(t.status(&p, &key, &d).await.body["status"], "searching");

    // After the close: the same answer is told the state, another is refused.
    let a = t.call(Method::POST, &accept, Some(&b_auth), None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let a = t
        .call(
            Method::POST,
            &format!("/v1/searches/{b}/decline"),
            Some(&b_auth),
            None,
        )
        .await;
    a.assert_problem(StatusCode::CONFLICT, "PROPOSAL_CLOSED");
    let a = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets/{c}/accept"),
            Some(&key),
            None,
        )
        .await;
    a.assert_problem(StatusCode::CONFLICT, "PROPOSAL_CLOSED");
    let a = t
        .call(
            Method::POST,
            &format!("/v1/searches/{d}/accept"),
            Some(&format!("Ticket {d_token}")),
            None,
        )
        .await;
    a.assert_problem(StatusCode::CONFLICT, "NOT_PROPOSED");

    // Only a1 is cooled down: on a new ticket and on its old one.
    let again = t.ticket(&p, &key, solo("duel", "a1")).await;
    again.assert_problem(StatusCode::CONFLICT, "DECLINE_COOLDOWN");
    let wait = again.body["retryAfterSeconds"].as_u64().unwrap();
    assert!((59..=60).contains(&wait), "{}", again.body);
    t.rest_search(&a1_token)
        .await
        .assert_problem(StatusCode::CONFLICT, "DECLINE_COOLDOWN");
    let a2_again = t.rest_search(&a2_token).await;
    assert_eq!(a2_again.status, StatusCode::ACCEPTED, "{}", a2_again.body);
}

/// The reason a cycle leaves a duel's `ticket` waiting for: one more player.
async fn left_waiting(t: &TestApp, project: &str, ticket: &str) {
    t.play
        .pool
        .set_waiting_reasons(
            &ModeKey::new(project, "duel"),
            &[(
                ticket.to_owned(),
                r#"{"code":"NOT_ENOUGH_PLAYERS","found":1,"needed":2}"#.to_owned(),
            )],
        )
        .await
        .unwrap();
}

async fn answers_over_the_websocket_and_a_closed_socket_counts_as_a_decline(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let (a, a_token) = t.ticket_ok(&p, &key, solo("duel", "a")).await;
    let (b, b_token) = t.ticket_ok(&p, &key, solo("duel", "b")).await;
    let mut wa = connect(addr, &a_token).await;
    let mut wb = connect(addr, &b_token).await;
    until(&mut wa, "searching").await;
    until(&mut wb, "searching").await;
    // The worker publishes `proposed`; the socket passes it on.
    let match_id = propose(&t, &p, &[&a, &b], &["a", "b"], &[&a, &b]).await;
    let proposed = matchplane_store::tickets::StatusMessage::Proposed {
        match_id: match_id.clone(),
        accept_by: "2026-12-01T00:00:20.000Z".into(),
        accept_in_seconds: 20.0,
        teams: vec![vec!["a".into()], vec!["b".into()]],
        attributes: Default::default(),
    };
    matchplane_store::tickets::publish(t.play.pool.as_ref(), &a, &proposed).await;
    assert_eq!(
        until(&mut wa, "proposed").await["matchId"],
        match_id.as_str()
    );
    // Proposed, it waits for answers: a waiting reason the cycle left is no
    // `status` to say (a tick is 100 ms here).
    left_waiting(&t, &p, &a).await;
    let deadline = tokio::time::Instant::now() + Duration::from_millis(600);
    while let Ok(Some(Ok(msg))) = tokio::time::timeout_at(deadline, wa.next()).await {
        if let Message::Text(text) = msg {
            let msg = crate::harness::search_message(&text);
            assert_ne!(msg["type"], "status", "{msg}");
        }
    }

    wa.send(Message::Text(r#"{"type":"accept"}"#.into()))
        .await
        .unwrap();
    let mut accepted = false;
    for _ in 0..50 {
        let s = t.status(&p, &key, &a).await.body;
        if s["proposal"]["accepted"] == json!([a.clone()]) {
            accepted = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(accepted, "the socket's accept was recorded");

    // b closes its socket: that is its decline; a goes back to the pool.
    wb.close(None).await.unwrap();
    until(&mut wa, "requeued").await;
    let s = t.status(&p, &key, &b).await.body;
    assert_eq!(s["status"], "cancelled", "{s}");
    assert_eq!(t.status(&p, &key, &a).await.body["status"], "searching");
    let again = t.ticket(&p, &key, solo("duel", "b")).await;
    assert_cooldown_detail(&again);
}

/// A duel mode with acceptance and no worker, b and c proposed to each
/// other with `acceptBy` 2.5 s ago: the app, project, key and both
/// tickets with their tokens.
pub(crate) async fn proposed_past_its_deadline(
    pools: Pools,
) -> (TestApp, String, String, (String, String), (String, String)) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let (b, b_token) = t.ticket_ok(&p, &key, solo("duel", "b")).await;
    let (c, c_token) = t.ticket_ok(&p, &key, solo("duel", "c")).await;
    for token in [&b_token, &c_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    let late = matchplane_api::play::unix_now() - 2.5;
    propose_until(&t, &p, &[&b, &c], &["b", "c"], &[&b, &c], late).await;
    (t, p, key, (b, b_token), (c, c_token))
}

/// With no worker sweeping (all stopped), accepts 2.5 s after `acceptBy`
/// are `409 PROPOSAL_CLOSED`, never a match: the instance that refuses the
/// first closes the proposal by the deadline's rule (both were silent in
/// time, so both fail `ACCEPTANCE_TIMEOUT`). Before: the late accepts were
/// recorded, and the last one made the match.
async fn an_accept_after_the_deadline_is_refused_even_before_any_sweep(pools: Pools) {
    let (t, p, key, (b, b_token), (c, _)) = proposed_past_its_deadline(pools).await;

    let a = t
        .call(
            Method::POST,
            &format!("/v1/searches/{b}/accept"),
            Some(&format!("Ticket {b_token}")),
            None,
        )
        .await;
    a.assert_problem(StatusCode::CONFLICT, "PROPOSAL_CLOSED");
    let a = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets/{c}/accept"),
            Some(&key),
            None,
        )
        .await;
    a.assert_problem(StatusCode::CONFLICT, "PROPOSAL_CLOSED");
    for ticket in [&b, &c] {
        let s = t.status(&p, &key, ticket).await.body;
        assert_eq!(s["status"], "failed", "{s}");
        assert_eq!(s["error"]["code"], "ACCEPTANCE_TIMEOUT", "{s}");
    }
}

/// A player cooled down for staying silent past `acceptBy`
/// (`ACCEPTANCE_TIMEOUT`) is not told it declined. Before: "the player
/// declined a match of this mode and may search again in 60 s".
async fn a_cooldown_after_a_timeout_does_not_say_the_player_declined(pools: Pools) {
    let (t, p, key, (b, b_token), (c, _)) = proposed_past_its_deadline(pools).await;
    // The late accept closes the proposal by the deadline's rule.
    t.call(
        Method::POST,
        &format!("/v1/searches/{b}/accept"),
        Some(&format!("Ticket {b_token}")),
        None,
    )
    .await
    .assert_problem(StatusCode::CONFLICT, "PROPOSAL_CLOSED");
    let s = t.status(&p, &key, &c).await.body;
    assert_eq!(s["error"]["code"], "ACCEPTANCE_TIMEOUT", "{s}");

    let again = t.ticket(&p, &key, solo("duel", "c")).await;
    assert_cooldown_detail(&again);
    let wait = again.body["retryAfterSeconds"].as_u64().unwrap();
    assert!((59..=60).contains(&wait), "{}", again.body);
}

/// A `proposed` or `requeued` the status subscription never brought (one
/// published while its connection was being replaced: pub/sub keeps no
/// message for a subscriber that was away) is said by the socket all the
/// same, at its next check, once (docs/acceptance.md). Before, the player
/// never saw the proposal, stayed silent through it and was failed
/// `ACCEPTANCE_TIMEOUT` and cooled down.
async fn a_socket_says_the_proposal_messages_it_never_heard(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let (a, a_token) = t.ticket_ok(&p, &key, solo("duel", "a")).await;
    let (b, b_token) = t.ticket_ok(&p, &key, solo("duel", "b")).await;
    let mut wa = connect(addr, &a_token).await;
    until(&mut wa, "searching").await;
    assert_eq!(t.rest_search(&b_token).await.status, StatusCode::ACCEPTED);

    // Held as a proposal, nothing published.
    let match_id = propose(&t, &p, &[&a, &b], &["a", "b"], &[&a, &b]).await;
    let proposed = until(&mut wa, "proposed").await;
    assert_eq!(proposed["matchId"], match_id.as_str(), "{proposed}");
    assert!(
        proposed["acceptInSeconds"].as_f64().unwrap() > 15.0,
        "{proposed}"
    );

    // b declines, nothing published: a is requeued, told once.
    let mode = ModeKey::new(&p, "duel");
    let now = matchplane_api::play::unix_now();
    t.play.pool.answer(&mode, &b, false, now).await.unwrap();
    let settled = matchplane_store::pool::settle(t.play.pool.as_ref(), &mode, &match_id, now);
    assert!(
        settled.await.unwrap().is_some(),
        "the decline closes the proposal"
    );
    until(&mut wa, "requeued").await;
    let deadline = tokio::time::Instant::now() + Duration::from_millis(600);
    while let Ok(Some(Ok(msg))) = tokio::time::timeout_at(deadline, wa.next()).await {
        if let Message::Text(text) = msg {
            let msg = crate::harness::search_message(&text);
            assert!(
                msg["type"] != "requeued" && msg["type"] != "proposed",
                "{msg}"
            );
        }
    }
}

/// Everyone accepted, and the match is not stored yet (no worker here; a
/// database out of reach, in service): the socket says `MATCH_PENDING`,
/// as the REST status does and as a socket does in a mode without
/// acceptance (docs/searching.md). Before, the socket stayed silent until
/// `matched`, taking itself to be still in the proposal.
async fn an_accepted_proposal_not_stored_yet_says_match_pending_on_the_socket(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, accepting()).await;
    let (a, a_token) = t.ticket_ok(&p, &key, solo("duel", "a")).await;
    let (b, b_token) = t.ticket_ok(&p, &key, solo("duel", "b")).await;
    let mut wa = connect(addr, &a_token).await;
    let mut wb = connect(addr, &b_token).await;
    until(&mut wa, "searching").await;
    until(&mut wb, "searching").await;
    let match_id = propose(&t, &p, &[&a, &b], &["a", "b"], &[&a, &b]).await;
    assert_eq!(
        until(&mut wa, "proposed").await["matchId"],
        match_id.as_str()
    );
    until(&mut wb, "proposed").await;
    for ws in [&mut wa, &mut wb] {
        ws.send(Message::Text(r#"{"type":"accept"}"#.into()))
            .await
            .unwrap();
    }
    let status = t.status(&p, &key, &a).await.body;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let Ok(Some(Ok(msg))) = tokio::time::timeout_at(deadline, wa.next()).await else {
            panic!("no MATCH_PENDING on the socket within 5 s (REST read {status})");
        };
        if let Message::Text(text) = msg {
            let msg = crate::harness::search_message(&text);
            if msg["type"] == "status" && msg["waitingReason"]["code"] == "MATCH_PENDING" {
                break;
            }
        }
    }
    let status = t.status(&p, &key, &a).await.body;
    assert_eq!(status["waitingReason"]["code"], "MATCH_PENDING", "{status}");
}
