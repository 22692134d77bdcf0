//! A made match's lifecycle from the studio's side (docs/acceptance.md): release
//! within the window (`RELEASE_WINDOW_CLOSED` after it, or on a match not
//! made), the released tickets searching again with their first
//! `queuedAt`, assignment (each player's own data merged over the match's,
//! nobody seeing another's; `ALREADY_ASSIGNED`), the assignment timeout
//! (`unassigned`), and a release during the assignment wait requeueing the
//! players still connected.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use crate::socket::{connect, until, Client};
use axum::http::{Method, StatusCode};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use matchplane_store::pool::{Claim, ClaimOutcome, ModeKey};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

on_both_pools!(
    a_release_frees_the_tickets_with_their_first_queued_at,
    the_release_window_and_matches_not_made,
    an_assignment_tells_each_player_its_own_data_once,
    a_release_during_the_assignment_wait_requeues_the_connected_players,
    the_assignment_timeout_unassigns_and_requeues,
    a_timeout_read_before_its_tickets_are_freed_still_requeues,
    a_made_proposal_reads_matched_only_once_its_row_is_made,
    deleting_the_mode_releases_its_matches_waiting_for_an_assignment,
    a_match_whose_result_was_reported_is_neither_released_nor_unassigned,
    a_released_status_says_why,
    a_release_after_a_proposal_says_requeued_once,
    a_close_during_the_assignment_wait_is_answered,
    a_ping_during_the_assignment_wait_is_answered,
    a_silent_socket_during_the_assignment_wait_is_not_searched_for_again,
    a_broken_frame_during_the_assignment_wait_is_answered_with_a_close,
);

/// `duel` waiting `wait` seconds for its assignment.
fn assigning(wait: u32) -> Value {
    let mut mode = duel("duel");
    mode["assignment"] = json!({ "waitSeconds": wait });
    mode
}

fn unix(at: DateTime<Utc>) -> f64 {
    at.timestamp_micros() as f64 / 1e6
}

/// Claims `tickets` (ticket id, player id, `queuedAt` in Unix seconds) into
/// one match and stores its row made at `created_at` with `status`, as the
/// worker would. Returns the match id.
async fn made(
    t: &TestApp,
    project: &str,
    tickets: &[(String, &str, f64)],
    created_at: DateTime<Utc>,
    status: &str,
) -> String {
    let match_id = format!("mat_{}", ulid::Ulid::new());
    let mode = ModeKey::new(project, "duel");
    let lease = t
        .play
        .pool
        .acquire_lease(&mode, "w", Duration::from_secs(5))
        .await
        .unwrap()
        .unwrap();
    let claim = Claim {
        match_id: match_id.clone(),
        ticket_ids: tickets.iter().map(|(t, _, _)| t.clone()).collect(),
        player_ids: tickets.iter().map(|(_, p, _)| (*p).to_owned()).collect(),
        record_json: "{}".into(),
    };
    let out = t.play.pool.claim(&mode, lease, &claim).await.unwrap();
    assert!(matches!(out, ClaimOutcome::Claimed { .. }), "{out:?}");
    t.play.pool.release_lease(&mode, lease).await.unwrap();
    store_row(t, project, &match_id, tickets, created_at, status).await;
    match_id
}

/// Stores a match row only (no search claimed).
async fn store_row(
    t: &TestApp,
    project: &str,
    match_id: &str,
    tickets: &[(String, &str, f64)],
    created_at: DateTime<Utc>,
    status: &str,
) {
    let teams: Vec<Value> = tickets
        .iter()
        .enumerate()
        .map(|(i, (ticket, player, queued))| {
            json!({"index": i, "meanMmr": 1500.0, "players": [{"playerId": player,
                "ticketId": ticket, "partyId": null, "mmr": 1500.0, "pingMs": null,
                "waitSeconds": unix(created_at) - queued}]})
        })
        .collect();
    let row = matchplane_store::entities::match_::Model {
        id: match_id.to_owned(),
        project_id: project.to_owned(),
        game_mode: "duel".into(),
        game_mode_version: 1,
        teams: json!(teams),
        quality: json!({"mmrSpread": 0.0, "teamImbalance": 0.0}),
        created_at,
        match_shape: None,
        seats_open: None,
        region: None,
        status: status.into(),
        answers: None,
        made_at: None,
        assignment: None,
        attributes: None,
    };
    matchplane_store::repos::matches::insert_if_absent(&t.db, vec![row])
        .await
        .unwrap();
}

/// `queuedAt` of a ticket's status, in Unix seconds.
fn queued_at(status: &Value) -> f64 {
    let text = status["queuedAt"].as_str().expect("queuedAt");
    unix(DateTime::parse_from_rfc3339(text).unwrap().to_utc())
}

async fn release(t: &TestApp, p: &str, key: &str, match_id: &str) -> crate::harness::Answer {
    t.call(
        Method::POST,
        &format!("/v1/projects/{p}/matches/{match_id}/release"),
        Some(key),
        None,
    )
    .await
}

async fn assign(
    t: &TestApp,
    p: &str,
    key: &str,
    match_id: &str,
    body: Value,
) -> crate::harness::Answer {
    t.call(
        Method::POST,
        &format!("/v1/projects/{p}/matches/{match_id}/assignment"),
        Some(key),
        Some(body),
    )
    .await
}

/// Two REST searches `a` and `b`: (ticket, player, queuedAt, token) each.
async fn two_searching(
    t: &TestApp,
    p: &str,
    key: &str,
) -> Vec<(String, &'static str, f64, String)> {
    let mut out = Vec::new();
    for player in ["a", "b"] {
        let (ticket, token) = t.ticket_ok(p, key, solo("duel", player)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        let status = t.status(p, key, &ticket).await.body;
        out.push((ticket, player, queued_at(&status), token));
    }
    out
}

fn seats(searching: &[(String, &'static str, f64, String)]) -> Vec<(String, &'static str, f64)> {
    searching
        .iter()
        .map(|(t, p, q, _)| (t.clone(), *p, *q))
        .collect()
}

async fn a_release_frees_the_tickets_with_their_first_queued_at(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, duel("duel")).await;
    let searching = two_searching(&t, &p, &key).await;
    let match_id = made(&t, &p, &seats(&searching), Utc::now(), "made").await;
    let (a, _, a_queued, a_token) = &searching[0];
    // Spent while made.
    t.rest_search(a_token)
        .await
        .assert_problem(StatusCode::CONFLICT, "TICKET_ALREADY_MATCHED");

    tokio::time::sleep(Duration::from_millis(50)).await;
    let released = release(&t, &p, &key, &match_id).await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    assert_eq!(released.body["status"], "released");
    let status = t.status(&p, &key, a).await.body;
    assert_eq!(status["status"], "released", "{status}");
    // The same release again: the match as it is.
    let again = release(&t, &p, &key, &match_id).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["status"], "released");

    // A new start resumes the first wait.
    let restarted = t.rest_search(a_token).await;
    assert_eq!(restarted.status, StatusCode::ACCEPTED, "{}", restarted.body);
    let status = t.status(&p, &key, a).await.body;
    assert_eq!(status["status"], "searching", "{status}");
    assert!(
        (queued_at(&status) - a_queued).abs() < 0.002,
        "queuedAt kept: {status} vs {a_queued}"
    );
    // Nobody was cooled down: b may take a new ticket at once, too.
    let (_, b_token2) = t.ticket_ok(&p, &key, solo("duel", "b")).await;
    assert_eq!(t.rest_search(&b_token2).await.status, StatusCode::ACCEPTED);

    let list = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(list.body["items"][0]["status"], "released", "{}", list.body);
}

async fn the_release_window_and_matches_not_made(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, duel("duel")).await;
    created_an_hour_ago(&t, &p).await;
    let now = Utc::now();
    let seat = |n: &str| vec![(format!("tkt_{n}"), "x", unix(now) - 5.0)];
    let cases = [
        (chrono::Duration::seconds(115), "made", StatusCode::OK),
        (chrono::Duration::seconds(121), "made", StatusCode::CONFLICT),
        (
            chrono::Duration::seconds(1),
            "proposed",
            StatusCode::CONFLICT,
        ),
        (
            chrono::Duration::seconds(1),
            "cancelled",
            StatusCode::CONFLICT,
        ),
        (
            chrono::Duration::seconds(1),
            "unassigned",
            StatusCode::CONFLICT,
        ),
    ];
    for (i, (age, status, expected)) in cases.iter().enumerate() {
        let match_id = format!("mat_{}", ulid::Ulid::new());
        store_row(&t, &p, &match_id, &seat(&i.to_string()), now - *age, status).await;
        let answer = release(&t, &p, &key, &match_id).await;
        assert_eq!(answer.status, *expected, "{status} {age}: {}", answer.body);
        if *expected == StatusCode::CONFLICT {
            answer.assert_problem(StatusCode::CONFLICT, "RELEASE_WINDOW_CLOSED");
        }
    }
    release(&t, &p, &key, "mat_nope")
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");

    // With `assignment.waitSeconds` 300 the window is five minutes.
    let replaced = t
        .call(
            Method::PUT,
            &format!("/v1/projects/{p}/game-modes/duel"),
            Some(&key),
            Some(assigning(300)),
        )
        .await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
    t.play.cache.modes_written();
    for (age, expected) in [(290, StatusCode::OK), (310, StatusCode::CONFLICT)] {
        let match_id = format!("mat_{}", ulid::Ulid::new());
        let at = now - chrono::Duration::seconds(age);
        store_row(&t, &p, &match_id, &seat(&format!("w{age}")), at, "made").await;
        let answer = release(&t, &p, &key, &match_id).await;
        assert_eq!(answer.status, expected, "{age}: {}", answer.body);
    }
}

/// Dates `p`'s mode `duel` an hour back, so that the matches stored
/// minutes ago are its own, not a deleted mode's of the same name
/// (docs/game-modes.md, "Changing a mode").
async fn created_an_hour_ago(t: &TestApp, p: &str) {
    use matchplane_store::entities::game_mode;
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
    let at = Utc::now() - chrono::Duration::hours(1);
    game_mode::Entity::update_many()
        .col_expr(
            game_mode::Column::CreatedAt,
            sea_orm::sea_query::Expr::value(at),
        )
        .filter(game_mode::Column::ProjectId.eq(p))
        .filter(game_mode::Column::Name.eq("duel"))
        .exec(&t.db)
        .await
        .unwrap();
}

/// Waits for the socket's Close frame (within 5 s): its code.
async fn closed(ws: &mut Client) -> u16 {
    match ended(ws).await {
        Ok(code) => code,
        Err(other) => panic!("socket ended without a close: {other}"),
    }
}

/// Waits for the socket to end (within 5 s): its Close frame's code, or
/// how it ended without one.
async fn ended(ws: &mut Client) -> Result<u16, String> {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .expect("a close within 5 s");
        match msg {
            Some(Ok(Message::Close(frame))) => return Ok(frame.map_or(0, |f| u16::from(f.code))),
            Some(Ok(_)) => {}
            other => return Err(format!("{other:?}")),
        }
    }
}

/// Two WebSocket searches `a` and `b` matched in a mode with assignment:
/// (match id, [(ticket, token, socket, queuedAt)]).
async fn matched_sockets(
    t: &TestApp,
    p: &str,
    key: &str,
    addr: std::net::SocketAddr,
) -> (String, Vec<(String, String, Client, f64)>) {
    let mut out = Vec::new();
    for player in ["a", "b"] {
        let (ticket, token) = t.ticket_ok(p, key, solo("duel", player)).await;
        let mut ws = connect(addr, &token).await;
        until(&mut ws, "searching").await;
        let status = t.status(p, key, &ticket).await.body;
        let queued = queued_at(&status);
        out.push((ticket, token, ws, queued));
    }
    let tickets: Vec<(String, &str, f64)> = out
        .iter()
        .zip(["a", "b"])
        .map(|((ticket, _, _, q), player)| (ticket.clone(), player, *q))
        .collect();
    let match_id = made(t, p, &tickets, Utc::now(), "made").await;
    // The sockets' re-read sees the stored match: `matched`, and they stay.
    for (_, _, ws, _) in &mut out {
        let matched = until(ws, "matched").await;
        assert_eq!(matched["match"]["matchId"], match_id.as_str());
    }
    (match_id, out)
}

async fn an_assignment_tells_each_player_its_own_data_once(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(60)).await;
    let (match_id, mut sockets) = matched_sockets(&t, &p, &key, addr).await;
    let a = sockets[0].0.clone();
    // Waiting: matched, `assignment: null`.
    let status = t.status(&p, &key, &a).await.body;
    assert_eq!(status["status"], "matched", "{status}");
    assert_eq!(status["assignment"], Value::Null, "{status}");
    assert!(status.as_object().unwrap().contains_key("assignment"));

    // Every broken rule at once.
    let bad = assign(
        &t,
        &p,
        &key,
        &match_id,
        json!({"connection": "x".repeat(513), "players": {"zed": {"data": {}}}}),
    )
    .await;
    bad.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let fields: Vec<&str> = bad.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["connection", "players.zed"], "{}", bad.body);

    let body = json!({"connection": "203.0.113.7:7777", "data": {"map": "dust", "token": "shared"},
        "players": {"a": {"data": {"token": "for-a", "seat": 1}}, "b": {"data": {"token": "for-b"}}}});
    let stored = assign(&t, &p, &key, &match_id, body.clone()).await;
    assert_eq!(stored.status, StatusCode::CREATED, "{}", stored.body);
    // The match carries the assignment: it is what `Location` names.
    assert_eq!(
        stored.headers[axum::http::header::LOCATION],
        format!("/v1/projects/{p}/matches/{match_id}").as_str()
    );
    let seen_a = until(&mut sockets[0].2, "assigned").await;
    let seen_b = until(&mut sockets[1].2, "assigned").await;
    assert_eq!(seen_a["connection"], "203.0.113.7:7777");
    assert_eq!(
        seen_a["data"],
        json!({"map": "dust", "token": "for-a", "seat": 1})
    );
    assert_eq!(seen_b["data"], json!({"map": "dust", "token": "for-b"}));
    assert!(!seen_b.to_string().contains("for-a"), "{seen_b}");
    assert_eq!(closed(&mut sockets[0].2).await, 1000);
    assert_eq!(closed(&mut sockets[1].2).await, 1000);
    let status = t.status(&p, &key, &a).await.body;
    assert_eq!(status["assignment"]["data"]["token"], "for-a", "{status}");

    assign(&t, &p, &key, &match_id, body)
        .await
        .assert_problem(StatusCode::CONFLICT, "ALREADY_ASSIGNED");
}

async fn a_release_during_the_assignment_wait_requeues_the_connected_players(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(60)).await;
    let (match_id, mut sockets) = matched_sockets(&t, &p, &key, addr).await;
    // b leaves the wait; a stays connected.
    let (b, b_token, b_ws, b_queued) = sockets.pop().unwrap();
    drop(b_ws);
    let released = release(&t, &p, &key, &match_id).await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    let (a, _, a_ws, a_queued) = &mut sockets[0];
    until(a_ws, "requeued").await;
    let status = t.status(&p, &key, a).await.body;
    assert_eq!(status["status"], "searching", "{status}");
    assert!((queued_at(&status) - *a_queued).abs() < 0.002, "{status}");
    let status = t.status(&p, &key, &b).await.body;
    assert_eq!(status["status"], "released", "{status}");
    // b comes back with a new socket: its search resumes its first wait,
    // and the socket's `searching` says so (docs/searching.md).
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut b_ws = connect(addr, &b_token).await;
    let hello = until(&mut b_ws, "searching").await;
    assert!((queued_at(&hello) - b_queued).abs() < 0.002, "{hello}");
    let status = t.status(&p, &key, &b).await.body;
    assert!((queued_at(&status) - b_queued).abs() < 0.002, "{status}");
}

/// A reported result says the match was played: the studio's release
/// answers `409 RELEASE_WINDOW_CLOSED` and the assignment timeout leaves
/// it made, its ratings applied and its players matched
/// (docs/acceptance.md, "Releasing a match").
async fn a_match_whose_result_was_reported_is_neither_released_nor_unassigned(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    let mut body = assigning(30);
    body["ratings"] = json!({ "enabled": true });
    t.mode(&p, &key, body).await;
    let (match_id, sockets) = matched_sockets(&t, &p, &key, addr).await;
    let reported = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes/duel/results"),
            Some(&key),
            Some(json!({"matchId": match_id, "teams": [
                {"players": ["a"], "place": 1}, {"players": ["b"], "place": 2}]})),
        )
        .await;
    assert_eq!(reported.status, StatusCode::OK, "{}", reported.body);

    let refused = release(&t, &p, &key, &match_id).await;
    refused.assert_problem(StatusCode::CONFLICT, "RELEASE_WINDOW_CLOSED");
    let detail = refused.body["detail"].as_str().unwrap();
    assert!(detail.contains("result was reported"), "{detail}");
    let mode = ModeKey::new(&p, "duel");
    let config = matchplane_worker::modes::refresh(&t.db, &mode, None)
        .await
        .unwrap()
        .unwrap();
    let late = Utc::now() + chrono::Duration::seconds(31);
    let none =
        matchplane_worker::assignment::time_out(t.play.pool.as_ref(), &t.db, &mode, &config, late)
            .await
            .unwrap();
    assert_eq!(none, 0);
    // Nor does an idle mode wake for it.
    let waiting = matchplane_store::repos::match_status::first_unassigned_made_at(
        &t.db,
        &p,
        ("duel", Some(config.id.as_str())),
        Utc::now() - chrono::Duration::days(1),
    )
    .await
    .unwrap();
    assert_eq!(waiting, None);
    let view = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{match_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(view.body["status"], "made", "{}", view.body);
    for (ticket, _, _, _) in &sockets {
        let status = t.status(&p, &key, ticket).await.body;
        assert_eq!(status["status"], "matched", "{status}");
    }
    let rating = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/ratings/a"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(rating.body["games"], 1, "{}", rating.body);
}

async fn the_assignment_timeout_unassigns_and_requeues(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(30)).await;
    let (match_id, mut sockets) = matched_sockets(&t, &p, &key, addr).await;
    let mode = ModeKey::new(&p, "duel");
    let config = matchplane_worker::modes::ModeConfig {
        config: serde_json::from_value(assigning(30)).unwrap(),
        version: 1,
        id: String::new(),
        created_at: chrono::DateTime::UNIX_EPOCH,
    };
    // Not due yet: nothing happens.
    let early = Utc::now() + chrono::Duration::seconds(20);
    let none =
        matchplane_worker::assignment::time_out(t.play.pool.as_ref(), &t.db, &mode, &config, early)
            .await
            .unwrap();
    assert_eq!(none, 0);
    let late = Utc::now() + chrono::Duration::seconds(31);
    let one =
        matchplane_worker::assignment::time_out(t.play.pool.as_ref(), &t.db, &mode, &config, late)
            .await
            .unwrap();
    assert_eq!(one, 1);
    for (ticket, _, ws, queued) in &mut sockets {
        until(ws, "assignment_timeout").await;
        until(ws, "requeued").await;
        let status = t.status(&p, &key, ticket).await.body;
        assert_eq!(status["status"], "searching", "{status}");
        assert!((queued_at(&status) - *queued).abs() < 0.002, "{status}");
    }
    let view = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{match_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(view.body["status"], "unassigned", "{}", view.body);
    // Acts as a release: too late to release or assign now.
    release(&t, &p, &key, &match_id)
        .await
        .assert_problem(StatusCode::CONFLICT, "RELEASE_WINDOW_CLOSED");
    let late_assign = assign(&t, &p, &key, &match_id, json!({"connection": "h:1"})).await;
    late_assign.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
}

/// The assignment timeout stores `unassigned` first and frees the tickets
/// in the pool after: a socket whose re-read sees the status in between
/// (here, a worker that stopped between the two steps) is requeued with
/// its first `queuedAt`, not closed as a ticket still matched.
async fn a_timeout_read_before_its_tickets_are_freed_still_requeues(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(30)).await;
    let (match_id, mut sockets) = matched_sockets(&t, &p, &key, addr).await;
    let late = Utc::now() + chrono::Duration::seconds(31);
    let outcome = matchplane_store::repos::match_status::release(
        &t.db,
        &p,
        &match_id,
        matchplane_store::repos::match_status::UNASSIGNED,
        chrono::Duration::days(2),
        late,
    )
    .await
    .unwrap();
    assert!(
        matches!(
            outcome,
            matchplane_store::repos::match_status::ReleaseOutcome::Released(_)
        ),
        "{outcome:?}"
    );
    for (ticket, _, ws, queued) in &mut sockets {
        until(ws, "assignment_timeout").await;
        until(ws, "requeued").await;
        let status = t.status(&p, &key, ticket).await.body;
        assert_eq!(status["status"], "searching", "{status}");
        assert!((queued_at(&status) - *queued).abs() < 0.002, "{status}");
    }
}

/// A proposal everyone accepted has left the pool (its searches ended
/// `matched` there), but its row still says `proposed` until the record
/// consumer makes it: until then the ticket reads `searching` with
/// `MATCH_PENDING`, so nobody is told `matched` while an assignment of the
/// match would still be refused as not made (docs/searching.md, '"Matched"
/// means stored'). Before: `matched` at once, and the studio's assignment
/// answered 422 "proposed, not made".
async fn a_made_proposal_reads_matched_only_once_its_row_is_made(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(60)).await;
    let searching = two_searching(&t, &p, &key).await;
    let match_id = made(&t, &p, &seats(&searching), Utc::now(), "proposed").await;
    for (ticket, ..) in &searching {
        let s = t.status(&p, &key, ticket).await.body;
        assert_eq!(s["status"], "searching", "{s}");
        assert_eq!(s["waitingReason"]["code"], "MATCH_PENDING", "{s}");
    }
    let db = &t.db;
    sea_orm::ConnectionTrait::execute_unprepared(
        db,
        &format!("UPDATE matches SET status = 'made' WHERE id = '{match_id}'"),
    )
    .await
    .unwrap();
    for (ticket, ..) in &searching {
        let s = t.status(&p, &key, ticket).await.body;
        assert_eq!(s["status"], "matched", "{s}");
    }
    let a = assign(
        &t,
        &p,
        &key,
        &match_id,
        json!({"connection": "10.0.0.1:7777"}),
    )
    .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
}

/// A deleted mode's matches waiting for their assignment are released with
/// it (docs/game-modes.md, on a deleted mode): no worker would time them
/// out any more, their sockets would wait on for ever, and a mode created
/// again under the name would time them out and pull their players in.
async fn deleting_the_mode_releases_its_matches_waiting_for_an_assignment(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(60)).await;
    let (match_id, mut sockets) = matched_sockets(&t, &p, &key, addr).await;
    let deleted = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/game-modes/duel"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
    let got = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{match_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(got.body["status"], "released", "{}", got.body);
    // Each waiting socket closes (1000, or the connection already gone
    // when the client's Pong is flushed): its search cannot start again in
    // a deleted mode. Before, it stayed open with nothing to wait for.
    for (_, _, ws, _) in &mut sockets {
        if let Ok(code) = ended(ws).await {
            assert_eq!(code, 1000);
        }
    }
}

/// A `released` status says why (docs/searching.md, "Statuses"): `reason`
/// `ASSIGNMENT_TIMEOUT` when nobody assigned the match in time (also read
/// before the timeout freed the tickets), `MATCH_RELEASED` when the studio
/// released it; so a REST client tells the two apart, as a socket does by
/// its `assignment_timeout` message. Before, neither carried a reason.
async fn a_released_status_says_why(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(15)).await;
    let mode = ModeKey::new(&p, "duel");
    let reasons = |views: &[Value]| -> Vec<(Value, Value)> {
        views
            .iter()
            .map(|v| (v["status"].clone(), v["reason"].clone()))
            .collect()
    };
    let timed_out = (json!("released"), json!("ASSIGNMENT_TIMEOUT"));
    let released = (json!("released"), json!("MATCH_RELEASED"));

    // Unassigned, its tickets not freed yet: read from the stored match.
    let searching = two_searching(&t, &p, &key).await;
    let polls: Vec<(String, String)> = searching
        .iter()
        .map(|(ticket, _, _, token)| (ticket.clone(), token.clone()))
        .collect();
    let match_id = made(&t, &p, &seats(&searching), Utc::now(), "made").await;
    let matched = t.search_view(&polls[0].0, &polls[0].1).await;
    assert_eq!(matched["assignment"], Value::Null, "{matched}");
    let late = Utc::now() + chrono::Duration::seconds(16);
    matchplane_store::repos::match_status::release(
        &t.db,
        &p,
        &match_id,
        matchplane_store::repos::match_status::UNASSIGNED,
        chrono::Duration::days(2),
        late,
    )
    .await
    .unwrap();
    let views = [
        t.search_view(&polls[0].0, &polls[0].1).await,
        t.status(&p, &key, &polls[1].0).await.body,
    ];
    assert_eq!(reasons(&views), [timed_out.clone(), timed_out.clone()]);
    // Freed as the timeout frees them: the same.
    let told = matchplane_store::tickets::StatusMessage::AssignmentTimeout;
    matchplane_store::released::release_match::<matchplane_worker::WorkerError>(
        &t.db,
        t.play.pool.as_ref(),
        &mode,
        &match_id,
        (matchplane_store::repos::match_status::UNASSIGNED, &told),
        chrono::Duration::days(2),
        late,
    )
    .await
    .unwrap();
    let views = [
        t.search_view(&polls[0].0, &polls[0].1).await,
        t.search_view(&polls[1].0, &polls[1].1).await,
    ];
    assert_eq!(reasons(&views), [timed_out.clone(), timed_out]);

    // The same tickets again, released by the studio.
    for (_, token) in &polls {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    let again: Vec<(String, &'static str, f64)> = seats(&searching);
    let second = made(&t, &p, &again, Utc::now(), "made").await;
    let answer = release(&t, &p, &key, &second).await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
    let views = [
        t.search_view(&polls[0].0, &polls[0].1).await,
        t.status(&p, &key, &polls[1].0).await.body,
    ];
    assert_eq!(reasons(&views), [released.clone(), released]);
}

/// A match made from a proposal and then released says `requeued` once
/// (docs/acceptance.md, "Releasing a match"). Before, the socket still
/// took itself for in the proposal it had been told of, and its next
/// re-read said `requeued` a second time.
async fn a_release_after_a_proposal_says_requeued_once(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    let mut mode = assigning(60);
    mode["acceptance"] = json!({"timeoutSeconds": 20, "declineCooldownSeconds": 60});
    t.mode(&p, &key, mode).await;
    let mut sockets = Vec::new();
    let mut seats = Vec::new();
    for player in ["a", "b"] {
        let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        let mut ws = connect(addr, &token).await;
        until(&mut ws, "searching").await;
        let queued = queued_at(&t.status(&p, &key, &ticket).await.body);
        seats.push((ticket, player, queued));
        sockets.push(ws);
    }
    let tickets: Vec<&str> = seats.iter().map(|(t, _, _)| t.as_str()).collect();
    let match_id = crate::acceptance::propose(&t, &p, &tickets, &["a", "b"], &tickets).await;
    for ws in &mut sockets {
        until(ws, "proposed").await;
    }
    // Both accept; the proposal closes made and its row is stored, as the
    // worker does.
    let pool_mode = ModeKey::new(&p, "duel");
    let now = matchplane_api::play::unix_now();
    for ticket in &tickets {
        t.play
            .pool
            .answer(&pool_mode, ticket, true, now)
            .await
            .unwrap();
    }
    let settled = matchplane_store::pool::settle(t.play.pool.as_ref(), &pool_mode, &match_id, now);
    assert!(settled.await.unwrap().is_some(), "both accepted: made");
    store_row(&t, &p, &match_id, &seats, Utc::now(), "made").await;
    for ws in &mut sockets {
        until(ws, "matched").await;
    }
    let released = release(&t, &p, &key, &match_id).await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    for ws in &mut sockets {
        until(ws, "requeued").await;
    }
    // Several re-reads later, nobody was told again.
    let deadline = tokio::time::Instant::now() + Duration::from_millis(1500);
    for ws in &mut sockets {
        while let Ok(Some(Ok(msg))) = tokio::time::timeout_at(deadline, ws.next()).await {
            if let Message::Text(text) = msg {
                let msg = crate::harness::search_message(&text);
                assert_ne!(msg["type"], "requeued", "requeued twice");
            }
        }
    }
}

/// A client closing its socket while its match waits for the assignment
/// gets the Close answered (docs/searching.md, "Closing"), and the match
/// stands. Before, the socket was dropped: the client saw 1006.
async fn a_close_during_the_assignment_wait_is_answered(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(60)).await;
    let (match_id, mut sockets) = matched_sockets(&t, &p, &key, addr).await;
    let (a, _, ws, _) = &mut sockets[0];
    futures::SinkExt::send(ws, Message::Close(None))
        .await
        .unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Text(_))) => {}
                other => return other,
            }
        }
    })
    .await
    .expect("an answer within 5 s");
    assert!(
        matches!(answer, Some(Ok(Message::Close(_)))),
        "the Close was not answered: {answer:?}"
    );
    let status = t.status(&p, &key, a).await.body;
    assert_eq!(status["status"], "matched", "{status}");
    assert_eq!(status["match"]["matchId"], match_id.as_str(), "{status}");
}

/// A client's heartbeat `ping` is answered during the assignment wait as
/// while searching (docs/searching.md), and the wait goes on.
async fn a_ping_during_the_assignment_wait_is_answered(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(60)).await;
    let (match_id, mut sockets) = matched_sockets(&t, &p, &key, addr).await;
    let (a, _, ws, _) = &mut sockets[0];
    futures::SinkExt::send(ws, Message::Text(r#"{"type":"ping"}"#.into()))
        .await
        .unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match ws.next().await {
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                other => return other,
            }
        }
    })
    .await
    .expect("an answer within 5 s");
    assert!(
        matches!(&answer, Some(Ok(Message::Text(t))) if t.as_str() == r#"{"type":"pong"}"#),
        "the ping was not answered: {answer:?}"
    );
    let status = t.status(&p, &key, a).await.body;
    assert_eq!(status["status"], "matched", "{status}");
    assert_eq!(status["match"]["matchId"], match_id.as_str(), "{status}");
}

/// A socket silent for the pong timeout during the assignment wait is
/// taken for dead (docs/searching.md): the wait ends with a Close 1000,
/// the match stands, and a release afterwards leaves its ticket
/// `released`, not searching again for a client that is gone. Before: the
/// wait sent Pings but never counted Pongs, so a dead client kept its
/// seat through the wait and was searched for (and matched) again at the
/// release.
async fn a_silent_socket_during_the_assignment_wait_is_not_searched_for_again(pools: Pools) {
    let settings = fast();
    let timeout = settings.pong_timeout;
    let t = TestApp::new(pools, settings).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(60)).await;
    let (match_id, mut sockets) = matched_sockets(&t, &p, &key, addr).await;
    // Neither socket is read: no Pong answers the server's Pings.
    tokio::time::sleep(timeout + Duration::from_millis(1500)).await;
    let status = t.status(&p, &key, &sockets[0].0).await.body;
    assert_eq!(status["status"], "matched", "the match stands: {status}");
    let released = release(&t, &p, &key, &match_id).await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (ticket, _, ws, _) in &mut sockets {
        let status = t.status(&p, &key, ticket).await.body;
        assert_eq!(status["status"], "released", "{status}");
        // Closed with 1000; a client whose unread Pings are answered as it
        // reads may meet the closed connection before the Close frame.
        let end = ended(ws).await;
        assert!(end.as_ref().map_or(true, |code| *code == 1000), "{end:?}");
    }
}

/// A frame that breaks the protocol during the assignment wait (text that
/// is not UTF-8) is answered with the Close that says so (1007), as while
/// searching (docs/searching.md, "Closing"); it ends only the wait: the
/// match stands, and a release afterwards leaves that player `released`
/// while the other, still connected, is `requeued`. Before: the socket
/// was dropped without a Close, which a client reads as 1006 and answers
/// by searching again.
async fn a_broken_frame_during_the_assignment_wait_is_answered_with_a_close(pools: Pools) {
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, assigning(60)).await;
    let (match_id, mut sockets) = matched_sockets(&t, &p, &key, addr).await;
    let bad = Frame::message(vec![0xff, 0xfe], OpCode::Data(Data::Text), true);
    futures::SinkExt::send(&mut sockets[0].2, Message::Frame(bad))
        .await
        .unwrap();
    assert_eq!(crate::socket::close_code(&mut sockets[0].2).await, 1007);
    let status = t.status(&p, &key, &sockets[0].0).await.body;
    assert_eq!(status["status"], "matched", "the match stands: {status}");
    let released = release(&t, &p, &key, &match_id).await;
    assert_eq!(released.status, StatusCode::OK, "{}", released.body);
    let requeued = until(&mut sockets[1].2, "requeued").await;
    assert_eq!(requeued["matchId"], match_id.as_str(), "{requeued}");
    let status = t.status(&p, &key, &sockets[0].0).await.body;
    assert_eq!(status["status"], "released", "{status}");
}
