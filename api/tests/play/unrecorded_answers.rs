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
use matchplane_api::play::{connect_redis_with, unix_now, Play, PlaySettings};
use matchplane_store::pool::{ModeKey, RedisPoolConfig, SearchState};
use serde_json::json;
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accept_sent_while_redis_is_down_counts_once_it_is_back() {
    let (worker, mode, tickets, match_id, _guard) = accepted_in_an_outage(20.0).await;
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    let accepted = loop {
        let state = worker.pool.proposal(&mode, &match_id).await.unwrap();
        let accepted = state.map(|s| s.accepted()).unwrap_or_default();
        if accepted.contains(&tickets[0]) || tokio::time::Instant::now() > until {
            break accepted;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(accepted, vec![tickets[0].clone()], "a's accept was lost");
    assert!(unix_now() < worker_deadline(&worker, &mode, &match_id).await);
}

/// Redis is back only after `acceptBy`: a's accept, sent in time, still
/// counts (weighed by the time a sent it), so when the proposal closes by
/// its deadline only b, silent, is held to it; a goes back to the queue.
/// Before, the retry was refused as late and a failed `ACCEPTANCE_TIMEOUT`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accept_sent_in_time_counts_when_redis_is_back_after_the_deadline() {
    let (worker, mode, tickets, _, _guard) = accepted_in_an_outage(2.5).await;
    let until = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let a = worker.pool.search_state(&mode, &tickets[0]).await.unwrap();
        let b = worker.pool.search_state(&mode, &tickets[1]).await.unwrap();
        let a_live = matches!(a, Some(SearchState::Live(_)));
        if a_live && matches!(b, Some(SearchState::Ended(_))) {
            break;
        }
        assert!(tokio::time::Instant::now() < until, "a: {a:?}, b: {b:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// a (over a socket) and b (over REST) proposed to each other with
/// `time_to_answer` seconds to answer; Redis dropped, a's accept sent, and
/// Redis back 3 s later. Returns a pool straight on Redis, the mode, the
/// two tickets, the proposal and what must live while the test reads.
async fn accepted_in_an_outage(time_to_answer: f64) -> (Play, ModeKey, Vec<String>, String, Guard) {
    let (proxy, via) = redis_through_proxy().await;
    let upstream = redis_url();
    let host = upstream["redis://".len()..].split('/').next().unwrap();
    let prefix = format!("mpt_{}", ulid::Ulid::new());
    let (db_url, database) = database(None).await;
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
    let accept_by = unix_now() + time_to_answer;
    let match_id = propose_on(worker.pool.as_ref(), &mode, proposal, accept_by).await;
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
    let back = FaultProxy::start_on(host, proxy.port).await;
    tokio::spawn(async move { while socket.next().await.is_some() {} });
    let tickets = made.into_iter().map(|(ticket, _)| ticket).collect();
    let guard = Guard {
        _proxy: back,
        _database: database,
        prefix,
    };
    (worker, mode, tickets, match_id, guard)
}

/// Keeps Redis's proxy and the database while a test reads; leaves
/// nothing of the test in Redis.
struct Guard {
    _proxy: FaultProxy,
    _database: matchplane_store::test_support::TestDatabase,
    prefix: String,
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = matchplane_store::pool::redis::delete_prefix_blocking(&redis_url(), &self.prefix);
    }
}

/// The proposal's `acceptBy` (Unix seconds).
async fn worker_deadline(worker: &Play, mode: &ModeKey, id: &str) -> f64 {
    let state = worker.pool.proposal(mode, id).await.unwrap().unwrap();
    state.accept_by
}
