//! Acceptance and assignment (proposals, answers, `assigned`) against a
//! small fake of the protocol, since the server does not send them yet:
//! the socket's text answers and the REST fallback's `accept` route.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures::StreamExt;
use matchplane_client::{GameClient, SearchMessage, SearchOptions, Transport};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[derive(Default)]
struct Fake {
    polls: AtomicU32,
    accepted: AtomicU32,
}

async fn socket(mut ws: WebSocket) {
    let send = |v: Value| Message::Text(v.to_string().into());
    let _ = ws
        .send(send(
            json!({"type":"searching","ticketId":"tkt_f","gameMode":"duel","queuedAt":"t"}),
        ))
        .await;
    let _ = ws
        .send(send(json!({"type":"backfill_offer","seat":2})))
        .await;
    let _ = ws
        .send(send(json!({"type":"proposed","matchId":"mat_f","acceptBy":"t+20s","teams":[["ana"],["ben"]]})))
        .await;
    while let Some(Ok(message)) = ws.next().await {
        if let Message::Text(text) = message {
            let answer: Value = serde_json::from_str(text.as_str()).unwrap();
            let reply = if answer["type"] == "accept" {
                vec![
                    json!({"type":"matched","match":{"matchId":"mat_f"}}),
                    json!({"type":"assigned","connection":"203.0.113.7:7777","data":{"map":"dust"}}),
                ]
            } else {
                vec![json!({"type":"failed","code":"MATCH_DECLINED","message":"declined"})]
            };
            for r in reply {
                let _ = ws.send(send(r)).await;
            }
            let _ = ws.send(Message::Close(None)).await;
            return;
        }
    }
}

fn fake() -> Router {
    let state = Arc::new(Fake::default());
    Router::new()
        .route("/v1/search", get(|ws: WebSocketUpgrade| async { ws.on_upgrade(socket) }))
        .route(
            "/v1/searches",
            post(|| async { (StatusCode::ACCEPTED, Json(json!({"ticketId":"tkt_f","status":"searching"}))) }),
        )
        .route(
            "/v1/searches/tkt_f",
            get(|State(s): State<Arc<Fake>>, h: HeaderMap| async move {
                assert_eq!(h["authorization"], "Ticket tok");
                let n = s.polls.fetch_add(1, Ordering::SeqCst);
                let base = json!({"ticketId":"tkt_f","gameMode":"duel","playerId":"ana","expiresAt":"t","queuedAt":"t"});
                let mut body = base.as_object().unwrap().clone();
                let extra = match (n, s.accepted.load(Ordering::SeqCst)) {
                    (0, _) => json!({"status":"searching","waitingReason":{"code":"NO_CANDIDATES"}}),
                    (_, 0) => json!({"status":"proposed","proposal":{"matchId":"mat_f","acceptBy":"t","accepted":[]}}),
                    (_, 1) => {
                        s.accepted.store(2, Ordering::SeqCst);
                        json!({"status":"matched","match":{"matchId":"mat_f"},"assignment":null})
                    }
                    _ => json!({"status":"matched","match":{"matchId":"mat_f"},
                                "assignment":{"connection":"203.0.113.7:7777","data":{"map":"dust"}}}),
                };
                body.extend(extra.as_object().unwrap().clone());
                Json(Value::Object(body))
            }),
        )
        .route(
            "/v1/searches/tkt_f/accept",
            post(|State(s): State<Arc<Fake>>| async move {
                s.accepted.store(1, Ordering::SeqCst);
                Json(json!({"status":"proposed"}))
            }),
        )
        .with_state(state)
}

async fn serve() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, fake()).await });
    base
}

#[tokio::test]
async fn a_proposal_accepted_on_the_socket_ends_assigned() {
    let base = serve().await;
    let mut search = GameClient::new(&base).unwrap().search("tok").await.unwrap();
    let mut seen = Vec::new();
    while let Some(message) = tokio::time::timeout(Duration::from_secs(5), search.next())
        .await
        .unwrap()
    {
        let message = message.unwrap();
        if let SearchMessage::Proposed(p) = &message {
            assert_eq!(p.match_id, "mat_f");
            search.accept().await.unwrap();
        }
        seen.push(message);
    }
    let kinds: Vec<&str> = seen.iter().map(SearchMessage::kind).collect();
    assert_eq!(
        kinds,
        [
            "searching",
            "backfill_offer",
            "proposed",
            "matched",
            "assigned"
        ]
    );
    assert!(matches!(&seen[1], SearchMessage::Unknown(v) if v["seat"] == 2));
    assert_eq!(
        seen[4],
        SearchMessage::Assigned {
            connection: "203.0.113.7:7777".into(),
            data: json!({"map":"dust"})
        }
    );
}

#[tokio::test]
async fn a_proposal_declined_on_the_socket_fails() {
    let base = serve().await;
    let mut search = GameClient::new(&base).unwrap().search("tok").await.unwrap();
    let mut last = None;
    while let Some(message) = search.next().await {
        let message = message.unwrap();
        if matches!(message, SearchMessage::Proposed(_)) {
            search.decline().await.unwrap();
        }
        last = Some(message);
    }
    assert_eq!(last.unwrap().kind(), "failed");
}

#[tokio::test]
async fn the_rest_fallback_accepts_and_waits_for_the_assignment() {
    let base = serve().await;
    let rest = GameClient::new(&base).unwrap().with_options(SearchOptions {
        transport: Transport::Rest,
        poll_interval: Duration::from_millis(500),
    });
    let mut search = rest.search("tok").await.unwrap();
    let mut kinds = Vec::new();
    while let Some(message) = tokio::time::timeout(Duration::from_secs(10), search.next())
        .await
        .unwrap()
    {
        let message = message.unwrap();
        if matches!(message, SearchMessage::Proposed(_)) {
            search.accept().await.unwrap();
        }
        kinds.push(message.kind().to_owned());
    }
    assert_eq!(
        kinds,
        ["searching", "status", "proposed", "matched", "assigned"]
    );
}
