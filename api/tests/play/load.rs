//! Many concurrent WebSocket searches matched by a real in-process worker:
//! every `matched` message, and every status read afterwards, carries the
//! whole match, however the socket learnt of it (the worker's publish, or
//! the socket's own re-read of the search when the publish came late).

use crate::harness::{Pools, TestApp};
use crate::on_both_pools;
use futures::StreamExt;
use matchplane_worker::{run_worker, WorkerConfig};
use serde_json::{json, Value};
use std::time::Duration;
use tokio_tungstenite::tungstenite::Message;
use tokio_util::sync::CancellationToken;

on_both_pools!(every_matched_message_carries_the_match_under_load);

/// Concurrent searches: enough for the worker's recording to lag behind
/// the sockets' re-reads of their searches.
const SEARCHES: usize = 400;

/// What the socket of `player` saw: its `matched` message.
async fn search_until_matched(addr: std::net::SocketAddr, token: String) -> Value {
    let (mut ws, _) =
        tokio_tungstenite::connect_async(format!("ws://{addr}/v1/search?ticket={token}"))
            .await
            .expect("websocket upgrade");
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(15), ws.next())
            .await
            .expect("a message within 15 s")
            .expect("socket open")
            .expect("no error");
        if let Message::Text(text) = msg {
            let msg = crate::harness::search_message(&text);
            assert_ne!(msg["type"], "failed", "{msg}");
            assert_ne!(msg["type"], "expired", "{msg}");
            if msg["type"] == "matched" {
                let _ = ws.close(None).await;
                return msg;
            }
        }
    }
}

/// `problems` of one player's view of its match (empty when whole).
fn check_player_view(player: &str, view: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if !view["matchId"]
        .as_str()
        .is_some_and(|m| m.starts_with("mat_"))
    {
        problems.push("no matchId".to_owned());
    }
    let teams = view["teams"].as_array();
    let ids_only = teams.is_some_and(|t| {
        t.len() == 2
            && t.iter().all(|team| {
                team.as_array()
                    .is_some_and(|p| p.len() == 2 && p.iter().all(Value::is_string))
            })
    });
    if !ids_only {
        problems.push("teams are not two teams of two player ids".to_owned());
    }
    let own = &view["player"];
    let team = own["team"].as_u64().map(|t| t as usize);
    let seated = team
        .and_then(|t| teams?.get(t)?.as_array())
        .is_some_and(|members| members.iter().any(|m| m == player));
    if !seated {
        problems.push("the player's own entry does not seat it in its team".to_owned());
    }
    if own["playerId"] != player {
        problems.push("the own entry names another player".to_owned());
    }
    for key in ["mmr", "latencyMs"] {
        if own.get(key).is_none() {
            problems.push(format!("no player.{key}"));
        }
    }
    if view.get("region").is_none() {
        problems.push("no region".to_owned());
    }
    if !view["quality"]["mmrSpread"].is_number() || !view["quality"]["teamImbalance"].is_number() {
        problems.push("no quality".to_owned());
    }
    problems
}

async fn every_matched_message_carries_the_match_under_load(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(
        &p,
        &key,
        json!({"name": "quads", "enabled": true, "matchShape": [2, 2],
            "matchmakingCycleDurationSeconds": 0.5, "algorithm": {"type": "fifo"},
            "ticketTtlSeconds": 600}),
    )
    .await;
    let shutdown = CancellationToken::new();
    let worker = tokio::spawn(run_worker(
        WorkerConfig {
            reconcile_interval: Duration::from_millis(100),
            ..WorkerConfig::default()
        },
        t.play.pool.clone(),
        t.play.tickets.clone(),
        t.db.clone(),
        shutdown.clone(),
    ));
    let mut tickets = Vec::with_capacity(SEARCHES);
    for i in 0..SEARCHES {
        let player = format!("p{i}");
        let (ticket, token) = t
            .ticket_ok(&p, &key, json!({"gameMode": "quads", "playerId": player}))
            .await;
        tickets.push((player, ticket, token));
    }
    let sockets: Vec<_> = tickets
        .iter()
        .map(|(_, _, token)| tokio::spawn(search_until_matched(addr, token.clone())))
        .collect();
    let mut bare = 0;
    let mut problems = Vec::new();
    for ((player, _, _), socket) in tickets.iter().zip(sockets) {
        let msg = socket.await.expect("socket task");
        if msg["match"]["teams"].is_null() {
            bare += 1;
        }
        for problem in check_player_view(player, &msg["match"]) {
            problems.push(format!("{player}: {problem}: {msg}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{bare} of {SEARCHES} matched messages without teams; {} problems, first: {:?}",
        problems.len(),
        problems.first()
    );
    // The statuses read afterwards carry the match too: the REST client's
    // view is the player's, the studio's the whole match.
    for (player, ticket, token) in tickets.iter().step_by(37) {
        let rest = t
            .call(
                axum::http::Method::GET,
                &format!("/v1/searches/{ticket}"),
                Some(&format!("Ticket {token}")),
                None,
            )
            .await;
        assert_eq!(rest.body["status"], "matched", "{}", rest.body);
        assert!(
            check_player_view(player, &rest.body["match"]).is_empty(),
            "{}",
            rest.body
        );
        let studio = t.status(&p, &key, ticket).await.body;
        assert_eq!(studio["status"], "matched", "{studio}");
        let seated: Vec<&str> = studio["match"]["teams"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|team| team["players"].as_array().unwrap())
            .map(|p| p["playerId"].as_str().unwrap())
            .collect();
        assert_eq!(seated.len(), 4, "{studio}");
        assert!(seated.contains(&player.as_str()), "{studio}");
        assert!(studio["match"]["quality"].is_object(), "{studio}");
        // An ended search keeps when it started and how long it waited.
        assert!(studio["queuedAt"].is_string(), "{studio}");
        assert!(
            studio["waitSeconds"].as_f64().is_some_and(|w| w >= 0.0),
            "{studio}"
        );
    }
    shutdown.cancel();
    let _ = worker.await;
}
