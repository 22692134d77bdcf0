//! An accept sent over the socket while Redis is out of reach is tried
//! again at each check, so an outage that ends before `acceptBy` loses
//! no answer (docs/acceptance.md, "Naming the proposal"). Before, it was
//! dropped with a log line: the player had accepted in time, yet the
//! proposal waited for them until its deadline (a fault probe saw socket
//! accepts lost this way in a Redis stall).

use crate::acceptance::propose_on;
use crate::fault_proxy::FaultProxy;
use crate::harness::{duel, redis_url, search_message, solo};
use crate::outages::{app_waiting, database, redis_through_proxy, send, studio};
use axum::http::{Method, StatusCode};
use futures::{SinkExt, StreamExt};
use matchplane_api::play::{connect_redis_with, unix_now, PlaySettings};
use matchplane_store::pool::{ModeKey, RedisPoolConfig};
use serde_json::json;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accept_sent_while_redis_is_down_counts_once_it_is_back() {
    let (proxy, via) = redis_through_proxy().await;
    let upstream = redis_url();
    let host = upstream["redis://".len()..].split('/').next().unwrap();
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let (db_url, _database) = database(None).await;
    let settings = PlaySettings {
        rest_poll_timeout: Duration::from_secs(30),
        ping_interval: Duration::from_millis(200),
        pong_timeout: Duration::from_secs(30),
        socket_lease: Duration::from_secs(60),
    };
    let deadline = Duration::from_secs(10);
    let wait = Duration::from_secs(1);
    let app = app_waiting(&db_url, &via, &prefix, deadline, settings.clone(), wait).await;
    let (project, key) = studio(&app).await;
    let mut mode = duel("accepting");
    mode["acceptance"] = json!({"timeoutSeconds": 20, "declineCooldownSeconds": 60});
    let modes = format!("/v1/projects/{project}/game-modes");
    let made = send(&app, Method::POST, &modes, Some(&key), Some(mode)).await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = app.clone();
    tokio::spawn(async move { axum::serve(listener, served).await });

    // a searches over a socket, b over REST.
    let tickets = format!("/v1/projects/{project}/tickets");
    let mut made = Vec::new();
    for player in ["a", "b"] {
        let body = Some(solo("accepting", player));
        let ticket = send(&app, Method::POST, &tickets, Some(&key), body).await;
        assert_eq!(ticket.status, StatusCode::CREATED, "{}", ticket.body);
        let token = ticket.body["token"].as_str().unwrap().to_owned();
        made.push((ticket.body["ticketId"].as_str().unwrap().to_owned(), token));
    }
    let url = format!("ws://{addr}/v1/search?ticket={}", made[0].1);
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let body = Some(json!({ "ticket": made[1].1 }));
    let b = send(&app, Method::POST, "/v1/searches", None, body).await;
    assert!(b.status.is_success(), "{}", b.body);

    // The worker's cycle proposes a and b, straight on Redis.
    let mut direct = RedisPoolConfig::new(&upstream);
    direct.prefix.clone_from(&prefix);
    let worker = connect_redis_with(direct, settings).await.unwrap();
    let mode = ModeKey::new(&project, "accepting");
    let tickets = [made[0].0.as_str(), made[1].0.as_str()];
    let proposal = (&tickets[..], &["a", "b"][..], &tickets[..]);
    let match_id = propose_on(worker.pool.as_ref(), &mode, proposal, unix_now() + 20.0).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let next = tokio::time::timeout_at(deadline, socket.next()).await;
        let Ok(Some(Ok(Message::Text(text)))) = next else {
            assert!(next.is_ok(), "no proposed within 10 s");
            continue;
        };
        if search_message(&text)["type"] == "proposed" {
            break;
        }
    }

    // Redis goes away; a accepts (naming no proposal: the socket names the
    // one it said); Redis is back 3 s later.
    proxy.drop_all();
    let accept = r#"{"type":"accept"}"#;
    socket.send(Message::Text(accept.into())).await.unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let _back = FaultProxy::start_on(host, proxy.port).await;
    let reader = tokio::spawn(async move { while socket.next().await.is_some() {} });

    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    let accepted = loop {
        let state = worker.pool.proposal(&mode, &match_id).await.unwrap();
        let accepted = state.map(|s| s.accepted()).unwrap_or_default();
        if accepted.contains(&made[0].0) || tokio::time::Instant::now() > until {
            break accepted;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(accepted, vec![made[0].0.clone()], "a's accept was lost");
    assert!(unix_now() < worker_deadline(&worker, &mode, &match_id).await);
    reader.abort();
    let _ = matchplane_store::pool::redis::delete_prefix_blocking(&upstream, &prefix);
}

/// The proposal's `acceptBy` (Unix seconds).
async fn worker_deadline(worker: &matchplane_api::play::Play, mode: &ModeKey, id: &str) -> f64 {
    let state = worker.pool.proposal(mode, id).await.unwrap().unwrap();
    state.accept_by
}
