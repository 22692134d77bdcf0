//! The WebSocket search: messages, ping measurement, statuses from another
//! process, cancel by the studio, and a closed socket ending the search.

use crate::harness::{duel, fast, solo, Pools, TestApp};
use crate::on_both_pools;
use crate::socket::{close_code, connect, next_json, searching_duel, until, Searching};
use axum::http::StatusCode;
use futures::{SinkExt, StreamExt};
use matchplane_store::pool::{Ended, ModeKey, SearchState};
use matchplane_store::tickets::StatusMessage;
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::Message;

on_both_pools!(
    pong_delay_shows_in_ping_ms,
    a_status_published_elsewhere_reaches_the_socket,
    the_studios_cancel_reaches_the_socket_and_closing_ends_the_search,
    a_refused_websocket_start_is_a_problem,
    every_ending_closes_with_1000,
    a_socket_that_never_pongs_expires,
    a_socket_whose_ticket_runs_out_is_told_why,
    a_search_lost_with_redis_data_says_so,
    a_lost_search_whose_match_was_stored_is_told_matched,
    an_oversized_client_message_ends_the_search,
    a_frame_that_breaks_the_protocol_is_answered_with_a_close,
    a_rest_poll_leaves_a_socket_search_to_its_socket,
    a_socket_search_whose_instance_crashed_lapses,
    a_start_that_reads_its_ticket_first_marks_the_socket_and_the_pending,
);

/// A player's view of a match `match_id` seating `ticket` (what the worker
/// publishes), for a `matched` message published by hand.
fn player_view(match_id: &str, ticket: &str) -> Value {
    json!({"matchId": match_id, "gameMode": "duel", "createdAt": "2026-12-01T10:00:00.000Z",
        "teams": [["p1"], ["p2"]],
        "player": {"playerId": "p1", "ticketId": ticket, "team": 0, "partyId": null,
            "mmr": 1500.0, "latencyMs": null, "waitSeconds": 1.0},
        "region": null, "quality": {"mmrSpread": 0.0, "teamImbalance": 0.0}})
}

async fn pong_delay_shows_in_ping_ms(pools: Pools) {
    let Searching {
        t,
        p,
        key,
        ticket,
        mut ws,
        ..
    } = searching_duel(pools, fast()).await;
    // Answer each ping 40 ms late: tungstenite queues the pong when it reads
    // the ping and sends it at the next flush.
    let delay = 40.0;
    let mut pings = 0;
    while pings < 7 {
        let msg = tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Message::Ping(_) = msg {
            tokio::time::sleep(Duration::from_millis(delay as u64)).await;
            ws.flush().await.unwrap();
            pings += 1;
        }
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mode = ModeKey::new(&p, "duel");
    let Some(SearchState::Live(live)) = t.play.pool.search_state(&mode, &ticket).await.unwrap()
    else {
        panic!("search not live");
    };
    let ping = live.search.ping_ms.expect("pingMs measured");
    // At least the delay; the margin above it is the loaded machine's own
    // (a CI run of every suite at once on two cores measured 48 ms).
    assert!(
        (delay..delay + 30.0).contains(&ping),
        "pingMs {ping} for a {delay} ms delay"
    );
    let status = t.status(&p, &key, &ticket).await;
    assert!(
        (delay..delay + 8.0).contains(&status.body["pingMs"].as_f64().unwrap()),
        "{}",
        status.body
    );
    // The socket reported it too.
    let reported = until(&mut ws, "status").await;
    assert!(
        reported["pingMs"].is_number() || reported["pingMs"].is_null(),
        "{reported}"
    );
}

async fn a_status_published_elsewhere_reaches_the_socket(pools: Pools) {
    let Searching {
        t, ticket, mut ws, ..
    } = searching_duel(pools, fast()).await;
    // Another process (the worker) publishes the match on its own handle.
    let worker = t.other_process_pool().await;
    let matched = StatusMessage::Matched {
        match_: matchplane_matchmaker::RawJson::of(&player_view("mat_9", &ticket)).unwrap(),
    };
    worker
        .publish_status(&ticket, &matched.to_json())
        .await
        .unwrap();
    let msg = until(&mut ws, "matched").await;
    assert_eq!(msg["match"]["matchId"], "mat_9", "{msg}");
    // Then the server closes, normally (1000), not without a code (1005).
    loop {
        match tokio::time::timeout(Duration::from_secs(5), ws.next())
            .await
            .unwrap()
        {
            Some(Ok(Message::Close(frame))) => {
                let code = frame.map(|f| u16::from(f.code));
                assert_eq!(code, Some(1000));
                break;
            }
            // A reset instead of a close frame is the transport's doing
            // (the server waits for our Close to avoid it); no code to check.
            None | Some(Err(_)) => break,
            Some(Ok(_)) => {}
        }
    }
}

async fn the_studios_cancel_reaches_the_socket_and_closing_ends_the_search(pools: Pools) {
    let Searching {
        t,
        addr,
        p,
        key,
        ticket,
        token,
        mut ws,
    } = searching_duel(pools, fast()).await;
    let a = t
        .call(
            axum::http::Method::DELETE,
            &format!("/v1/projects/{p}/tickets/{ticket}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(a.body["status"], "cancelled");
    until(&mut ws, "cancelled").await;

    // Search again on a new socket, then close it: the search ends.
    let mut ws = connect(addr, &token).await;
    assert_eq!(next_json(&mut ws).await["type"], "searching");
    ws.close(None).await.unwrap();
    let mode = ModeKey::new(&p, "duel");
    for _ in 0..50 {
        if let Some(Ended::Cancelled) = t
            .play
            .pool
            .search_state(&mode, &ticket)
            .await
            .unwrap()
            .and_then(SearchState::into_ended)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("a closed socket did not end its search");
}

async fn a_refused_websocket_start_is_a_problem(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (_, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let _ws = connect(addr, &token).await;
    for (token, status) in [
        (token.as_str(), StatusCode::CONFLICT),
        ("nope", StatusCode::UNAUTHORIZED),
    ] {
        let err = tokio_tungstenite::connect_async(format!("ws://{addr}/v1/search?ticket={token}"))
            .await
            .expect_err("refused");
        match err {
            tokio_tungstenite::tungstenite::Error::Http(response) => {
                assert_eq!(response.status().as_u16(), status.as_u16())
            }
            other => panic!("expected an HTTP refusal, got {other}"),
        }
    }
}

/// Every way a search's socket ends gets a Close frame with 1000: after
/// the final message (here `cancelled` by the studio, `matched` from the
/// worker), and in answer to the client's own Close, which cancels.
async fn every_ending_closes_with_1000(pools: Pools) {
    let Searching {
        t,
        addr,
        p,
        key,
        ticket,
        token,
        mut ws,
    } = searching_duel(pools, fast()).await;
    let path = format!("/v1/projects/{p}/tickets/{ticket}");
    t.call(axum::http::Method::DELETE, &path, Some(&key), None)
        .await;
    until(&mut ws, "cancelled").await;
    assert_eq!(close_code(&mut ws).await, 1000);

    let mut ws = connect(addr, &token).await;
    assert_eq!(next_json(&mut ws).await["type"], "searching");
    let matched = StatusMessage::Matched {
        match_: matchplane_matchmaker::RawJson::of(&player_view("mat_9", &ticket)).unwrap(),
    };
    t.other_process_pool()
        .await
        .publish_status(&ticket, &matched.to_json())
        .await
        .unwrap();
    until(&mut ws, "matched").await;
    assert_eq!(close_code(&mut ws).await, 1000);

    // The client closes: answered with 1000, and the search is cancelled.
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    let mut ws = connect(addr, &token).await;
    assert_eq!(next_json(&mut ws).await["type"], "searching");
    ws.close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: "bye".into(),
    }))
    .await
    .unwrap();
    assert_eq!(close_code(&mut ws).await, 1000);
    let status = t.status(&p, &key, &ticket).await.body;
    assert_eq!(status["status"], "cancelled", "{status}");
    assert!(status["queuedAt"].is_string(), "{status}");
    assert!(status["waitSeconds"].is_number(), "{status}");
}

/// A socket's search the worker's sweep ends when its ticket runs out is
/// told why, as its status says: `{"type":"expired","reason":"TICKET_TTL"}`.
async fn a_socket_whose_ticket_runs_out_is_told_why(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    let mut mode = duel("duel");
    mode["ticketTtlSeconds"] = json!(1);
    t.mode(&p, &key, mode).await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let mut ws = connect(addr, &token).await;
    assert_eq!(next_json(&mut ws).await["type"], "searching");
    let expired = until(&mut ws, "expired").await;
    assert_eq!(expired["reason"], "TICKET_TTL", "{expired}");
    let status = t.status(&p, &key, &ticket).await.body;
    assert_eq!(status["reason"], "TICKET_TTL", "{status}");
    worker.stop().await;
}

/// A client that never answers a Ping (here: one that stops reading, so
/// its WebSocket library sends no Pong) is ended `expired`, reason
/// `PONG_TIMEOUT`, after the pong timeout: the player may search again and
/// the project's quota is free.
async fn a_socket_that_never_pongs_expires(pools: Pools) {
    let settings = fast();
    let timeout = settings.pong_timeout;
    let Searching {
        t,
        addr,
        p,
        key,
        ticket,
        mut ws,
        ..
    } = searching_duel(pools, settings).await;
    // Not reading: the pings pile up unanswered.
    tokio::time::sleep(timeout + Duration::from_millis(800)).await;
    let status = t.status(&p, &key, &ticket).await.body;
    assert_eq!(status["status"], "expired", "{status}");
    assert_eq!(status["reason"], "PONG_TIMEOUT", "{status}");
    assert!(status["queuedAt"].is_string(), "{status}");
    let waited = status["waitSeconds"].as_f64().unwrap();
    assert!(waited >= timeout.as_secs_f64(), "{status}");
    assert_eq!(t.play.pool.count_live(&p).await.unwrap(), 0);
    // The client is told, then the socket closes normally.
    let expired = until(&mut ws, "expired").await;
    assert_eq!(expired["reason"], "PONG_TIMEOUT", "{expired}");
    assert_eq!(close_code(&mut ws).await, 1000);
    // The player is free: a new ticket searches at once.
    let (_, again) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let mut ws = connect(addr, &again).await;
    assert_eq!(next_json(&mut ws).await["type"], "searching");
}

/// Redis loses its data under a search (a restart without persistence):
/// the socket is told `expired` with `reason` `SEARCH_LOST`, and the
/// ticket's REST status answers `401 TICKET_INVALID` with a detail saying
/// the search may have been lost and a new ticket is needed.
async fn a_search_lost_with_redis_data_says_so(pools: Pools) {
    if pools == Pools::Memory {
        // In memory the pool dies with the process only.
        return;
    }
    let Searching {
        t,
        ticket,
        token,
        mut ws,
        ..
    } = searching_duel(pools, fast()).await;
    let (url, prefix) = (crate::harness::redis_url(), t.prefix.clone());
    tokio::task::spawn_blocking(move || {
        matchplane_store::pool::redis::delete_prefix_blocking(&url, &prefix).unwrap()
    })
    .await
    .unwrap();
    let lost = until(&mut ws, "expired").await;
    assert_eq!(lost["reason"], "SEARCH_LOST", "{lost}");
    let status = t
        .call(
            axum::http::Method::GET,
            &format!("/v1/searches/{ticket}"),
            Some(&format!("Ticket {token}")),
            None,
        )
        .await;
    status.assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
    let detail = status.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("lost") && detail.contains("new ticket"),
        "{detail}"
    );
}

/// Redis loses its data under an open socket whose match the worker had
/// stored but whose `matched` publish never arrived: the socket's own
/// re-read finds the stored match by the ticket and says `matched` with
/// it, not `SEARCH_LOST`.
async fn a_lost_search_whose_match_was_stored_is_told_matched(pools: Pools) {
    if pools == Pools::Memory {
        // In memory the pool dies with the process only.
        return;
    }
    let Searching {
        t,
        p,
        ticket,
        mut ws,
        ..
    } = searching_duel(pools, fast()).await;
    // Stored as the recorder stores it (the match and its ticket's row),
    // with no status published.
    t.store_match_alone(&p, "duel", &ticket, "p1").await;
    let record = t.play.tickets.get(&p, &ticket).await.unwrap().unwrap();
    matchplane_store::repos::match_tickets::insert_if_absent(
        &t.db,
        vec![matchplane_store::entities::match_ticket::Model {
            ticket_id: ticket.clone(),
            match_id: "mat_1".into(),
            project_id: p.clone(),
            game_mode: "duel".into(),
            player_id: "p1".into(),
            token_hash: record.token_hash,
            created_at: record.created_at,
            expires_at: record.expires_at,
            data: None,
        }],
    )
    .await
    .unwrap();
    let (url, prefix) = (crate::harness::redis_url(), t.prefix.clone());
    tokio::task::spawn_blocking(move || {
        matchplane_store::pool::redis::delete_prefix_blocking(&url, &prefix).unwrap()
    })
    .await
    .unwrap();
    let matched = until(&mut ws, "matched").await;
    assert_eq!(matched["match"]["matchId"], "mat_1", "{matched}");
    assert_eq!(
        matched["match"]["player"]["ticketId"],
        ticket.as_str(),
        "{matched}"
    );
}

/// A client message over the 16 KiB limit ends the connection and cancels
/// the search (nothing left in the pool for a client that broke the
/// protocol); one just under the limit is an ordinary unknown answer.
async fn an_oversized_client_message_ends_the_search(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let mode = ModeKey::new(&p, "duel");
    let mut ws = connect(addr, &token).await;
    assert_eq!(next_json(&mut ws).await["type"], "searching");
    ws.send(Message::text("x".repeat(16 * 1024 - 64)))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let state = t.play.pool.search_state(&mode, &ticket).await.unwrap();
    assert!(
        matches!(state, Some(SearchState::Live(_))),
        "a message under the limit keeps the search: {state:?}"
    );
    ws.send(Message::text("x".repeat(17 * 1024))).await.unwrap();
    // It says why: 1009 (message too big), not a bare disconnection.
    assert_eq!(close_code(&mut ws).await, 1009);
    for _ in 0..50 {
        if let Some(Ended::Cancelled) = t
            .play
            .pool
            .search_state(&mode, &ticket)
            .await
            .unwrap()
            .and_then(SearchState::into_ended)
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("an oversized message did not end its search");
}

/// A text frame that is not UTF-8 ends the search cancelled and is
/// answered with a Close 1007, not a dropped connection the client would
/// read as 1006 and search again on (docs/searching.md, "Closing").
/// Before: the connection was dropped without a Close frame.
async fn a_frame_that_breaks_the_protocol_is_answered_with_a_close(pools: Pools) {
    use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};
    use tokio_tungstenite::tungstenite::protocol::frame::Frame;
    let Searching {
        t,
        p,
        ticket,
        mut ws,
        ..
    } = searching_duel(pools, fast()).await;
    let bad = Frame::message(vec![0xff, 0xfe], OpCode::Data(Data::Text), true);
    ws.send(Message::Frame(bad)).await.unwrap();
    assert_eq!(close_code(&mut ws).await, 1007);
    let mode = ModeKey::new(&p, "duel");
    let state = t.play.pool.search_state(&mode, &ticket).await.unwrap();
    assert!(
        matches!(
            state.and_then(SearchState::into_ended),
            Some(Ended::Cancelled)
        ),
        "the search was not ended"
    );
}

/// A REST poll of a search its socket holds (a client that also polls its
/// status) answers its status and leaves the search's life to the socket:
/// the search is not ended when the poll timeout (1 s here) passes without
/// another poll, and the socket's renewals keep it past its own 1 s lease.
async fn a_rest_poll_leaves_a_socket_search_to_its_socket(pools: Pools) {
    let Searching {
        t,
        p,
        ticket,
        token,
        ws: _ws,
        ..
    } = searching_duel(pools, crate::harness::short_lease()).await;
    let path = format!("/v1/searches/{ticket}");
    let auth = format!("Ticket {token}");
    let polled = t
        .call(axum::http::Method::GET, &path, Some(&auth), None)
        .await;
    assert_eq!(polled.body["status"], "searching", "{}", polled.body);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    t.sweep(matchplane_api::play::unix_now()).await;
    let state = t
        .play
        .pool
        .search_state(&ModeKey::new(&p, "duel"), &ticket)
        .await
        .unwrap();
    assert!(matches!(state, Some(SearchState::Live(_))), "{state:?}");
}

/// A socket's search whose API instance stops renewing it (a crash: the
/// search started, then nothing holds it) lives only as long as its socket
/// lease (1 s here): a poll after that reads it
/// `expired` `SOCKET_LAPSED`, and so does the sweep's end.
async fn a_socket_search_whose_instance_crashed_lapses(pools: Pools) {
    use matchplane_api::play::start::{start_with_token, Via};
    let t = TestApp::new(pools, crate::harness::short_lease()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (polled, polled_token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let (swept, swept_token) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    for token in [&polled_token, &swept_token] {
        start_with_token(&t.play, &t.db, token, Via::WebSocket)
            .await
            .unwrap();
    }
    let mode = ModeKey::new(&p, "duel");
    let Some(SearchState::Live(live)) = t.play.pool.search_state(&mode, &polled).await.unwrap()
    else {
        panic!("not live")
    };
    assert!(live.socket);
    let now = matchplane_api::play::unix_now();
    assert!(
        live.deadline <= now + 1.0,
        "a lease, not the ticket's expiry: {live:?}"
    );
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let auth = format!("Ticket {polled_token}");
    let path = format!("/v1/searches/{polled}");
    let a = t
        .call(axum::http::Method::GET, &path, Some(&auth), None)
        .await;
    assert_eq!(a.body["status"], "expired", "{}", a.body);
    assert_eq!(a.body["reason"], "SOCKET_LAPSED", "{}", a.body);
    assert!(t.sweep(matchplane_api::play::unix_now()).await.expired >= 1);
    let status = t.status(&p, &key, &swept).await.body;
    assert_eq!(status["status"], "expired", "{status}");
    assert_eq!(status["reason"], "SOCKET_LAPSED", "{status}");
}

/// A start that reads its ticket first (here: a mode with a decline
/// cooldown, whose start checks the player's) is the same start as the
/// others: a socket's search is marked as its socket's, and the started
/// ticket leaves the project's pending tickets.
async fn a_start_that_reads_its_ticket_first_marks_the_socket_and_the_pending(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    let mut mode = duel("duel");
    mode["acceptance"] = json!({"timeoutSeconds": 20, "declineCooldownSeconds": 60});
    t.mode(&p, &key, mode).await;
    let (socket, socket_token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let (_, rest_token) = t.ticket_ok(&p, &key, solo("duel", "p2")).await;
    let now = matchplane_api::play::unix_now();
    assert_eq!(t.play.tickets.pending(&p, now).await.unwrap(), 2);
    let mut ws = connect(addr, &socket_token).await;
    assert_eq!(next_json(&mut ws).await["type"], "searching");
    assert_eq!(
        t.rest_search(&rest_token).await.status,
        StatusCode::ACCEPTED
    );
    let state = t
        .play
        .pool
        .search_state(&ModeKey::new(&p, "duel"), &socket)
        .await
        .unwrap();
    assert!(
        matches!(&state, Some(SearchState::Live(live)) if live.socket),
        "{state:?}"
    );
    let now = matchplane_api::play::unix_now();
    assert_eq!(t.play.tickets.pending(&p, now).await.unwrap(), 0);
}
