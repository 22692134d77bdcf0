//! Role queues against a real `matchplane dev` (docs/rules.md, "Role
//! waits"): once players were matched in a role, a player waiting in a
//! mode with `composition` sees `role_waits` in its `status`, over the
//! socket and over REST.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use futures::StreamExt;
use matchplane_client::{BackendClient, NewTicket, Search, SearchMessage};
use serde_json::{json, Value};
use std::time::Duration;

/// Two against two, each team one tank and one damage.
fn role_mode(name: &str) -> Value {
    let mut mode = common::duel(name, "http://127.0.0.1:9/hook");
    mode["matchShape"] = json!([2, 2]);
    mode["attributes"] =
        json!({"roles": {"type": "stringSet", "values": ["tank", "damage", "support"]}});
    mode["composition"] = json!({"attribute": "roles", "perTeam": {"tank": 1, "damage": 1}});
    mode
}

async fn player(backend: &BackendClient, mode: &str, player: &str, role: &str) -> String {
    let ticket = NewTicket {
        game_mode: mode.into(),
        player_id: player.into(),
        attributes: Some(json!({"mmr": 1500, "roles": [role]})),
        party: None,
    };
    backend.create_ticket(&ticket).await.unwrap().token
}

/// Messages of `search` until one `stop` holds for, the search ends, or 30 s pass.
async fn until(mut search: Search, stop: impl Fn(&SearchMessage) -> bool) -> Vec<SearchMessage> {
    let mut seen = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while let Ok(Some(message)) = tokio::time::timeout_at(deadline, search.next()).await {
        let message = message.unwrap();
        let done = stop(&message) || message.ends_search();
        seen.push(message);
        if done {
            break;
        }
    }
    seen
}

/// A `status` with a tank median.
fn tank_wait(message: &SearchMessage) -> bool {
    matches!(message, SearchMessage::Status(s)
        if s.role_waits.as_ref().is_some_and(|w| w.contains_key("tank")))
}

#[tokio::test]
async fn a_waiting_players_status_carries_role_waits_on_both_transports() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    backend
        .put_game_mode("sdk-roles", &role_mode("sdk-roles"))
        .await
        .unwrap();
    let (socket, rest) = common::clients(&dev);
    // One match: two tanks and two damage players.
    let mut matched = Vec::new();
    for (id, role) in [
        ("t1", "tank"),
        ("t2", "tank"),
        ("d1", "damage"),
        ("d2", "damage"),
    ] {
        let token = player(&backend, "sdk-roles", id, role).await;
        let search = socket.search(&token).await.unwrap();
        matched.push(until(search, |m| m.kind() == "matched"));
    }
    for seen in futures::future::join_all(matched).await {
        assert_eq!(common::kinds(&seen).last(), Some(&"matched"), "{seen:?}");
    }

    // Two tanks who cannot be matched (no damage player left) wait; each
    // sees the tank median once its server reads it (at most 10 s old).
    let w1 = socket
        .search(&player(&backend, "sdk-roles", "w1", "tank").await)
        .await
        .unwrap();
    let w2 = rest
        .search(&player(&backend, "sdk-roles", "w2", "tank").await)
        .await
        .unwrap();
    let (s, r) = tokio::join!(until(w1, tank_wait), until(w2, tank_wait));
    for (seen, transport) in [(s, "socket"), (r, "REST")] {
        let Some(SearchMessage::Status(last)) = seen.last().filter(|m| tank_wait(m)) else {
            panic!("{transport}: no status with role_waits.tank in {seen:?}");
        };
        let roles: Vec<&String> = last.role_waits.iter().flat_map(|w| w.keys()).collect();
        assert_eq!(roles, ["tank"], "{transport}: {last:?}");
    }
}

/// A lone duel player over REST: the waiting reason stays the same, the
/// wait grows, and each poll that sees a new whole second of it says so
/// (README's "waiting N s"), as the socket's status messages do with each
/// ping.
#[tokio::test]
async fn over_rest_the_wait_in_status_messages_keeps_counting() {
    let dev = common::Dev::start();
    let backend = BackendClient::new(&dev.base, &dev.project, &dev.key).unwrap();
    let mode = common::duel("sdk-alone", "http://127.0.0.1:9/hook");
    backend.put_game_mode("sdk-alone", &mode).await.unwrap();
    let ticket = NewTicket {
        game_mode: "sdk-alone".into(),
        player_id: "ana".into(),
        attributes: Some(json!({"mmr": 1500})),
        party: None,
    };
    let token = backend.create_ticket(&ticket).await.unwrap().token;
    let (_, rest) = common::clients(&dev);
    let mut search = rest.search(&token).await.unwrap();
    let mut waits = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while let Ok(Some(message)) = tokio::time::timeout_at(deadline, search.next()).await {
        if let SearchMessage::Status(s) = message.unwrap() {
            waits.push(s.wait_seconds);
        }
    }
    assert!(
        waits.len() >= 4 && waits.last().is_some_and(|w| *w >= 3.5),
        "statuses' waits: {waits:?}"
    );
    assert!(waits.windows(2).all(|w| w[0] <= w[1]), "{waits:?}");
}
