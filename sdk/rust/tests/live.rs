//! The SDK against a real `matchplane dev`: the backend client, both
//! search transports, problems, and the webhooks it verifies.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use axum::body::Bytes;
use axum::http::HeaderMap;
use futures::StreamExt;
use matchplane_client::{
    verify_webhook, BackendClient, GameClient, NewTicket, Search, SearchMessage, SearchOptions,
    Transport, WebhookError,
};
use serde_json::{json, Value};
use std::time::Duration;
use tokio::sync::mpsc;

/// A webhook receiver on a free port: every request's headers and raw body.
async fn receiver() -> (String, mpsc::UnboundedReceiver<(HeaderMap, Bytes)>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: HeaderMap, body: Bytes| {
            let tx = tx.clone();
            async move {
                let _ = tx.send((headers, body));
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

fn ticket(mode: &str, player: &str) -> NewTicket {
    NewTicket {
        game_mode: mode.into(),
        player_id: player.into(),
        attributes: Some(json!({"mmr": 1500})),
        party: None,
    }
}

/// Every message until the search ends (or 30 s pass).
async fn all(mut search: Search) -> Vec<SearchMessage> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while let Ok(Some(message)) = tokio::time::timeout_at(deadline, search.next()).await {
        seen.push(message.unwrap());
    }
    seen
}

#[tokio::test]
async fn two_players_match_over_both_transports_and_the_webhook_verifies() {
    let dev = common::Dev::start();
    let (hook, mut hooks) = receiver().await;
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    let mode = backend
        .put_game_mode("sdk-duel", &common::duel("sdk-duel", &hook))
        .await
        .unwrap();
    let secret = mode["webhook"]["secret"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with("whsec_") && !secret.contains('*'),
        "{mode}"
    );

    let ana = backend
        .create_ticket(&ticket("sdk-duel", "ana"))
        .await
        .unwrap();
    let ben = backend
        .create_ticket(&ticket("sdk-duel", "ben"))
        .await
        .unwrap();
    let game = GameClient::new(&dev.base).unwrap();
    let rest = game.clone().with_options(SearchOptions {
        transport: Transport::Rest,
        poll_interval: Duration::from_millis(500),
        ..Default::default()
    });
    let over_socket = game.search(&ana.token).await.unwrap();
    assert_eq!(over_socket.transport(), Transport::WebSocket);
    let over_rest = rest.search(&ben.token).await.unwrap();
    assert_eq!(over_rest.transport(), Transport::Rest);
    assert_eq!(
        over_rest.ticket_id().as_deref(),
        Some(ben.ticket_id.as_str())
    );
    let (a, b) = tokio::join!(all(over_socket), all(over_rest));
    for seen in [&a, &b] {
        assert_eq!(common::kinds(seen).first(), Some(&"searching"), "{seen:?}");
        assert_eq!(common::kinds(seen).last(), Some(&"matched"), "{seen:?}");
    }
    let (SearchMessage::Matched { match_: ma }, SearchMessage::Matched { match_: mb }) =
        (a.last().unwrap(), b.last().unwrap())
    else {
        unreachable!()
    };
    assert_eq!(ma["matchId"], mb["matchId"]);
    let match_id = ma["matchId"].as_str().unwrap();

    // The studio's views of the same match.
    assert_eq!(
        backend.ticket(&ana.ticket_id).await.unwrap().status,
        "matched"
    );
    assert_eq!(
        backend.get_match(match_id).await.unwrap()["matchId"],
        match_id
    );
    let applied = backend
        .report_result(
            "sdk-duel",
            &json!({"matchId": match_id,
            "teams": [{"place": 1, "players": ["ana"]}, {"place": 2, "players": ["ben"]}]}),
        )
        .await;
    // Ratings are off in this mode: the server says so with a problem.
    if let Err(e) = &applied {
        assert!(e.code().is_some(), "{e}");
    }

    // The match.made webhook, verified from its raw bytes.
    let (headers, body) = tokio::time::timeout(Duration::from_secs(20), hooks.recv())
        .await
        .unwrap()
        .unwrap();
    let event: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(event["type"], "match.made");
    assert_eq!(event["matchId"], match_id);
    verify_webhook(&secret, &headers, &body).unwrap();
    let mut tampered = body.to_vec();
    tampered[0] = b' ';
    assert_eq!(
        verify_webhook(&secret, &headers, &tampered),
        Err(WebhookError::Signature)
    );
    let other = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    assert_eq!(
        verify_webhook(other, &headers, &body),
        Err(WebhookError::Signature)
    );

    // After a rotation both secrets sign, and either verifies.
    let rotated = backend.rotate_webhook_secret("sdk-duel").await.unwrap();
    let new_secret = rotated["webhook"]["secret"].as_str().unwrap().to_owned();
    assert_ne!(new_secret, secret);
    let cy = backend
        .create_ticket(&ticket("sdk-duel", "cy"))
        .await
        .unwrap();
    let di = backend
        .create_ticket(&ticket("sdk-duel", "di"))
        .await
        .unwrap();
    let (c, d) = tokio::join!(game.search(&cy.token), game.search(&di.token));
    let (c, d) = tokio::join!(all(c.unwrap()), all(d.unwrap()));
    assert_eq!(common::kinds(&c).last(), Some(&"matched"), "{c:?}");
    assert_eq!(common::kinds(&d).last(), Some(&"matched"), "{d:?}");
    let (headers, body) = tokio::time::timeout(Duration::from_secs(20), hooks.recv())
        .await
        .unwrap()
        .unwrap();
    let signatures = headers["webhook-signature"].to_str().unwrap();
    assert_eq!(signatures.split(' ').count(), 2, "{signatures}");
    verify_webhook(&secret, &headers, &body).unwrap();
    verify_webhook(&new_secret, &headers, &body).unwrap();
}

#[tokio::test]
async fn problems_are_typed_and_cancel_works_on_both_transports() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    let missing = backend
        .create_ticket(&ticket("nope", "ana"))
        .await
        .unwrap_err();
    assert_eq!(missing.code(), Some("GAME_MODE_NOT_FOUND"));
    assert_eq!(missing.problem().unwrap().status, 404);
    let mut bad = common::duel("sdk-bad", "http://127.0.0.1:9/hook");
    bad["matchShape"] = json!([]);
    let invalid = backend.put_game_mode("sdk-bad", &bad).await.unwrap_err();
    let problem = invalid.problem().unwrap();
    assert_eq!(problem.code, "VALIDATION_ERROR");
    assert!(
        problem.errors.iter().any(|e| e.field == "matchShape"),
        "{problem:?}"
    );

    backend
        .put_game_mode(
            "sdk-solo",
            &common::duel("sdk-solo", "http://127.0.0.1:9/hook"),
        )
        .await
        .unwrap();
    let no_mmr = NewTicket {
        attributes: None,
        ..ticket("sdk-solo", "ana")
    };
    assert_eq!(
        backend.create_ticket(&no_mmr).await.unwrap_err().code(),
        Some("MMR_REQUIRED")
    );

    let game = GameClient::new(&dev.base).unwrap();
    let unknown = game
        .search("prj_x.sdk-solo.tkt_x.nope")
        .await
        .err()
        .unwrap();
    assert_eq!(unknown.code(), Some("TICKET_INVALID"), "{unknown}");

    // Over the socket: cancel once `searching` named the ticket.
    let ana = backend
        .create_ticket(&ticket("sdk-solo", "ana"))
        .await
        .unwrap();
    let mut search = game.search(&ana.token).await.unwrap();
    assert_eq!(search.next().await.unwrap().unwrap().kind(), "searching");
    search.cancel().await.unwrap();
    let rest_of = all(search).await;
    assert_eq!(
        common::kinds(&rest_of).last(),
        Some(&"cancelled"),
        "{rest_of:?}"
    );

    // Over REST; the same ticket may search again after a cancel.
    let rest = game.with_options(SearchOptions {
        transport: Transport::Rest,
        ..SearchOptions::default()
    });
    let search = rest.search(&ana.token).await.unwrap();
    search.cancel().await.unwrap();
    let seen = all(search).await;
    assert_eq!(common::kinds(&seen).last(), Some(&"cancelled"), "{seen:?}");
    assert_eq!(
        backend.ticket(&ana.ticket_id).await.unwrap().status,
        "cancelled"
    );

    // Dropping a REST search ends it, as dropping a socket's does (left to
    // lapse it would wait 30 s in the pool, where it could be matched).
    let mut search = rest.search(&ana.token).await.unwrap();
    assert_eq!(search.next().await.unwrap().unwrap().kind(), "searching");
    assert_eq!(
        backend.ticket(&ana.ticket_id).await.unwrap().status,
        "searching"
    );
    drop(search);
    let mut status = String::new();
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        status = backend.ticket(&ana.ticket_id).await.unwrap().status;
        if status == "cancelled" {
            break;
        }
    }
    assert_eq!(status, "cancelled");
}

/// The server ends a socket that sends no Pong for 10 s (`PONG_TIMEOUT`): a
/// lone player's search stays open past that, with its ping measured.
#[tokio::test]
async fn the_socket_answers_pings_past_the_pong_timeout() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    backend
        .put_game_mode(
            "sdk-ping",
            &common::duel("sdk-ping", "http://127.0.0.1:9/hook"),
        )
        .await
        .unwrap();
    let ana = backend
        .create_ticket(&ticket("sdk-ping", "ana"))
        .await
        .unwrap();
    let mut search = GameClient::new(&dev.base)
        .unwrap()
        .search(&ana.token)
        .await
        .unwrap();
    let mut seen = Vec::new();
    let until = tokio::time::Instant::now() + Duration::from_secs(13);
    while let Ok(Some(message)) = tokio::time::timeout_at(until, search.next()).await {
        seen.push(message.unwrap());
    }
    assert!(!seen.iter().any(SearchMessage::ends_search), "{seen:?}");
    assert!(
        seen.iter()
            .any(|m| matches!(m, SearchMessage::Status(s) if s.ping_ms.is_some())),
        "{seen:?}"
    );
    search.cancel().await.unwrap();
    assert_eq!(common::kinds(&all(search).await).last(), Some(&"cancelled"));
}
