//! A player whose match was released, or timed out waiting for its
//! assignment, searches again with the same token (docs/acceptance.md,
//! "Releasing a match") and brings its ticket's `data` to its next match:
//! the next match's views (the studio's match, list and ticket status, the
//! player's own poll and `matched` message) carry it as the first match's
//! do (docs/searching.md, "The match"). Before, the second match's
//! `match_tickets` rows were never stored (keyed by ticket alone, the
//! first match's row held the key), so only its webhook carried the data.

use crate::harness::{Pools, TestApp};
use crate::on_both_pools;
use crate::socket::until;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

on_both_pools!(
    a_released_player_brings_its_data_to_the_next_match,
    an_unassigned_player_brings_its_data_to_the_next_match,
);

/// `rel`, a 1v1 MMR mode running a cycle every half second; `assignment`
/// added when given.
fn rel(assignment: Option<Value>) -> Value {
    let mut mode = json!({
        "name": "rel", "enabled": true, "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": 0.5,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                      "baseTolerance": 5, "expansionMultiplier": 2},
        "webhook": {"url": "https://93.184.216.34/hook", "enabled": true}
    });
    if let Some(assignment) = assignment {
        mode["assignment"] = assignment;
    }
    mode
}

/// Tickets of `ana` (loadout `a`) and `bo` (loadout `b`): (ticket, token).
async fn two_tickets(t: &TestApp, p: &str, key: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (player, loadout) in [("ana", "a"), ("bo", "b")] {
        out.push(
            t.ticket_ok(
                p,
                key,
                json!({"gameMode": "rel", "playerId": player,
                    "attributes": {"mmr": 1500, "data": {"loadout": loadout}}}),
            )
            .await,
        );
    }
    out
}

/// The loadouts of every player entry in `teams`, sorted.
fn loadouts(teams: &Value) -> Vec<Value> {
    let mut out: Vec<Value> = teams
        .as_array()
        .unwrap_or_else(|| panic!("teams: {teams}"))
        .iter()
        .flat_map(|team| team["players"].as_array().unwrap().iter())
        .map(|player| player["data"]["loadout"].clone())
        .collect();
    out.sort_by_key(Value::to_string);
    out
}

/// Every view of match `match_id` carries both players' data: the studio's
/// match, the mode's list and each ticket's status, and each player's own
/// poll its own.
async fn views_carry_the_data(
    t: &TestApp,
    p: &str,
    key: &str,
    match_id: &str,
    seats: &[(String, String)],
) {
    let both = vec![json!("a"), json!("b")];
    let one = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{match_id}"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(one.status, StatusCode::OK, "{}", one.body);
    assert_eq!(loadouts(&one.body["teams"]), both, "{}", one.body);
    let list = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches?gameMode=rel"),
            Some(key),
            None,
        )
        .await;
    let listed = list.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["matchId"] == match_id)
        .unwrap_or_else(|| panic!("{match_id} listed: {}", list.body));
    assert_eq!(loadouts(&listed["teams"]), both, "{listed}");
    for ((ticket, token), loadout) in seats.iter().zip(["a", "b"]) {
        let studio = t.status(p, key, ticket).await.body;
        assert_eq!(studio["match"]["matchId"], match_id, "{studio}");
        assert_eq!(loadouts(&studio["match"]["teams"]), both, "{studio}");
        let own = t.search_view(ticket, token).await;
        assert_eq!(own["match"]["matchId"], match_id, "{own}");
        assert_eq!(
            own["match"]["player"]["data"],
            json!({"loadout": loadout}),
            "{own}"
        );
    }
}

async fn a_released_player_brings_its_data_to_the_next_match(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, rel(None)).await;
    let worker = t.start_worker(crate::harness::quick_worker());
    let seats = two_tickets(&t, &p, &key).await;
    for (_, token) in &seats {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    let first = t.poll_until(&seats, |v| v["status"] == "matched").await;
    let m1 = first[0]["match"]["matchId"].as_str().unwrap().to_owned();
    views_carry_the_data(&t, &p, &key, &m1, &seats).await;

    let released = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{m1}/release"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(released.body["status"], "released", "{}", released.body);
    for (_, token) in &seats {
        let again = t.rest_search(token).await;
        assert_eq!(again.status, StatusCode::ACCEPTED, "{}", again.body);
    }
    let second = t
        .poll_until(&seats, |v| {
            v["status"] == "matched" && v["match"]["matchId"] != m1.as_str()
        })
        .await;
    worker.stop().await;
    let m2 = second[0]["match"]["matchId"].as_str().unwrap().to_owned();
    views_carry_the_data(&t, &p, &key, &m2, &seats).await;
    // The first match keeps its players' data too.
    let one = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{m1}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        loadouts(&one.body["teams"]),
        [json!("a"), json!("b")],
        "{}",
        one.body
    );
}

async fn an_unassigned_player_brings_its_data_to_the_next_match(pools: Pools) {
    let t = TestApp::new(pools, crate::harness::fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, rel(Some(json!({"waitSeconds": 1})))).await;
    let seats = two_tickets(&t, &p, &key).await;
    let mut sockets = Vec::new();
    for (_, token) in &seats {
        let (mut ws, _) =
            tokio_tungstenite::connect_async(format!("ws://{addr}/v1/search?ticket={token}"))
                .await
                .expect("websocket upgrade");
        until(&mut ws, "searching").await;
        sockets.push(ws);
    }
    let worker = t.start_worker(crate::harness::quick_worker());
    let mut m1 = None;
    for (ws, loadout) in sockets.iter_mut().zip(["a", "b"]) {
        let matched = until(ws, "matched").await;
        assert_eq!(
            matched["match"]["player"]["data"],
            json!({"loadout": loadout}),
            "{matched}"
        );
        m1 = Some(matched["match"]["matchId"].clone());
    }
    // Nobody assigns it: timed out, requeued, matched again; the second
    // match assigned at once, before it times out too.
    let mut m2 = None;
    for (ws, loadout) in sockets.iter_mut().zip(["a", "b"]) {
        until(ws, "assignment_timeout").await;
        until(ws, "requeued").await;
        let matched = until(ws, "matched").await;
        assert_ne!(Some(&matched["match"]["matchId"]), m1.as_ref(), "{matched}");
        assert_eq!(
            matched["match"]["player"]["data"],
            json!({"loadout": loadout}),
            "{matched}"
        );
        let id = matched["match"]["matchId"].as_str().unwrap().to_owned();
        if m2.is_none() {
            let assigned = t
                .call(
                    Method::POST,
                    &format!("/v1/projects/{p}/matches/{id}/assignment"),
                    Some(&key),
                    Some(json!({"connection": "203.0.113.7:7777"})),
                )
                .await;
            assert_eq!(assigned.status, StatusCode::CREATED, "{}", assigned.body);
        }
        assert_eq!(m2.get_or_insert(id.clone()), &id);
    }
    worker.stop().await;
    views_carry_the_data(&t, &p, &key, &m2.unwrap(), &seats).await;
}
