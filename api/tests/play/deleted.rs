//! A deleted game mode's and a deleted project's live searches end as
//! `failed` with `GAME_MODE_DISABLED` (docs/game-modes.md) at the worker's next sweep
//! (a running worker sweeps every second; here a pass runs right after the
//! delete): their clients are told, and the project's live count goes back
//! to zero.

use crate::harness::{call, duel, fast, solo, Pools, TestApp, OPERATOR};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use futures::StreamExt;
use matchplane_api::play::unix_now;
use matchplane_store::pool::{Ended, ModeKey, Search, SearchState};
use serde_json::Value;
use std::time::Duration;

on_both_pools!(
    deleted_mode_and_project_fail_their_searches,
    a_mode_created_again_keeps_its_searches,
    a_deleted_modes_searches_and_proposals_end_at_the_delete,
    a_deleted_projects_open_proposal_ends_at_the_sweep,
    a_deleted_projects_matched_tickets_fail,
    a_deleted_projects_matched_socket_search_fails,
);

async fn failed_code(t: &TestApp, mode: &ModeKey, ticket: &str) -> Option<String> {
    match t
        .play
        .pool
        .search_state(mode, ticket)
        .await
        .unwrap()
        .and_then(SearchState::into_ended)
    {
        Some(Ended::Failed { code, .. }) => Some(code),
        _ => None,
    }
}

async fn deleted_mode_and_project_fail_their_searches(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    t.mode(&p, &key, duel("other")).await;
    let (in_duel, duel_token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let (in_other, other_token) = t.ticket_ok(&p, &key, solo("other", "p2")).await;
    let (also_other, also_token) = t.ticket_ok(&p, &key, solo("other", "p3")).await;
    // Sweeps below run at this time: the REST searches' deadlines (a second
    // on) are not due then, whatever this test's pace.
    let before = unix_now();
    for token in [&duel_token, &other_token, &also_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    assert_eq!(t.play.pool.count_live(&p).await.unwrap(), 3);
    let pool = t.other_process_pool().await;
    let mut duel_client = pool.subscribe_status(&in_duel).await.unwrap();
    let mut other_client = pool.subscribe_status(&in_other).await.unwrap();

    // The mode goes: its search fails, its client is told, the other mode's
    // searches stay.
    let a = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/game-modes/duel"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(a.status, StatusCode::NO_CONTENT, "{}", a.body);
    t.sweep(before).await;
    let duel = ModeKey::new(&p, "duel");
    assert_eq!(
        failed_code(&t, &duel, &in_duel).await.as_deref(),
        Some("GAME_MODE_DISABLED")
    );
    let told = tokio::time::timeout(Duration::from_secs(5), duel_client.next())
        .await
        .expect("the client is told")
        .unwrap();
    let told: Value = serde_json::from_str(&told).unwrap();
    assert_eq!(told["type"], "failed", "{told}");
    assert_eq!(told["code"], "GAME_MODE_DISABLED", "{told}");
    let a = t.status(&p, &key, &in_duel).await;
    assert_eq!(a.body["status"], "failed", "{}", a.body);
    assert_eq!(a.body["error"]["code"], "GAME_MODE_DISABLED");
    assert_eq!(t.play.pool.count_live(&p).await.unwrap(), 2);
    assert_eq!(
        t.play.pool.modes_with_searches(&p).await.unwrap(),
        ["other"]
    );

    // The project goes: every search left fails and the count is zero.
    delete_project(&t, &p).await;
    t.sweep(before).await;
    let other = ModeKey::new(&p, "other");
    for ticket in [&in_other, &also_other] {
        assert_eq!(
            failed_code(&t, &other, ticket).await.as_deref(),
            Some("GAME_MODE_DISABLED")
        );
    }
    let told = tokio::time::timeout(Duration::from_secs(5), other_client.next())
        .await
        .expect("the client is told")
        .unwrap();
    let told: Value = serde_json::from_str(&told).unwrap();
    assert_eq!(told["code"], "GAME_MODE_DISABLED", "{told}");
    assert_eq!(t.play.pool.count_live(&p).await.unwrap(), 0);
    assert!(t
        .play
        .pool
        .modes_with_searches(&p)
        .await
        .unwrap()
        .is_empty());
    assert!(t.play.pool.snapshot(&other).await.unwrap().is_empty());

    // A start accepted just after, from another replica's stale config
    // cache, is failed by the next sweep.
    let now = unix_now();
    let late = Search::solo("tkt_late", "p9", 1500.0, now);
    t.play
        .pool
        .add_search(&other, &late, now + 60.0, None)
        .await
        .unwrap();
    assert_eq!(t.play.pool.count_live(&p).await.unwrap(), 1);
    t.sweep(now).await;
    assert_eq!(
        failed_code(&t, &other, "tkt_late").await.as_deref(),
        Some("GAME_MODE_DISABLED")
    );
    assert_eq!(t.play.pool.count_live(&p).await.unwrap(), 0);
}

/// A mode deleted and created again under its name, here or on another
/// instance: the new mode's searches are not failed by the sweep (the
/// mode has a row again).
async fn a_mode_created_again_keeps_its_searches(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let other = t.other_instance().await;
    let path = format!("/v1/projects/{p}/game-modes/duel");
    for recreate_elsewhere in [false, true] {
        t.mode(&p, &key, duel("duel")).await;
        let a = t.call(Method::DELETE, &path, Some(&key), None).await;
        assert_eq!(a.status, StatusCode::NO_CONTENT, "{}", a.body);
        if recreate_elsewhere {
            let modes = format!("/v1/projects/{p}/game-modes");
            let a = call(
                &other.app,
                Method::POST,
                &modes,
                Some(&key),
                Some(duel("duel")),
            )
            .await;
            assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        } else {
            t.mode(&p, &key, duel("duel")).await;
        }
        let player = if recreate_elsewhere { "p2" } else { "p1" };
        let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        t.sweep(unix_now()).await;
        let state = t
            .play
            .pool
            .search_state(&ModeKey::new(&p, "duel"), &ticket)
            .await
            .unwrap();
        assert!(
            matches!(state, Some(SearchState::Live(_))),
            "recreated elsewhere: {recreate_elsewhere}: {state:?}"
        );
        let a = t.call(Method::DELETE, &path, Some(&key), None).await;
        assert_eq!(a.status, StatusCode::NO_CONTENT, "{}", a.body);
    }
}

/// A delete answered 404 (no such mode; a name of any length) leaves
/// nothing in Redis: refused requests write no state.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_mode_s_delete_writes_nothing() {
    let t = TestApp::new(Pools::Redis, fast()).await;
    let (p, key) = t.project("free").await;
    let (url, prefix) = (crate::harness::redis_url(), t.prefix.clone());
    let clear = move || {
        let (url, prefix) = (url.clone(), prefix.clone());
        tokio::task::spawn_blocking(move || {
            matchplane_store::pool::redis::delete_prefix_blocking(&url, &prefix).unwrap()
        })
    };
    clear().await.unwrap();
    let long = "m".repeat(6_000);
    for i in 0..50 {
        let name = if i == 0 {
            long.clone()
        } else {
            format!("nope{i}")
        };
        let a = t
            .call(
                Method::DELETE,
                &format!("/v1/projects/{p}/game-modes/{name}"),
                Some(&key),
                None,
            )
            .await;
        a.assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
    }
    assert_eq!(clear().await.unwrap(), 0, "keys written by 404 deletes");
}

/// A mode deleted with a proposal open (one member accepted) and a search
/// waiting: the delete itself ends them all `failed` `GAME_MODE_DISABLED`
/// (no sweep runs here), nobody is cooled down, and the mode created again
/// under the name starts empty, without the deleted mode's cooldowns.
async fn a_deleted_modes_searches_and_proposals_end_at_the_delete(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, crate::acceptance::accepting()).await;
    let mut tickets = Vec::new();
    for player in ["a", "b", "c"] {
        let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        tickets.push(ticket);
    }
    let (a, b, c) = (&tickets[0], &tickets[1], &tickets[2]);
    crate::acceptance::propose(&t, &p, &[a, b], &["a", "b"], &[a, b]).await;
    let duel = ModeKey::new(&p, "duel");
    t.play
        .pool
        .answer(&duel, a, true, unix_now())
        .await
        .unwrap();
    let mut b_client = t.play.pool.subscribe_status(b).await.unwrap();
    // d declined an earlier proposal: cooled down in this mode.
    let (d, d_token) = t.ticket_ok(&p, &key, solo("duel", "d")).await;
    let (e, e_token) = t.ticket_ok(&p, &key, solo("duel", "e")).await;
    for token in [&d_token, &e_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    crate::acceptance::propose(&t, &p, &[&d, &e], &["d", "e"], &[&d, &e]).await;
    let declined = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets/{d}/decline"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(declined.status, StatusCode::OK, "{}", declined.body);
    t.ticket(&p, &key, solo("duel", "d"))
        .await
        .assert_problem(StatusCode::CONFLICT, "DECLINE_COOLDOWN");

    let path = format!("/v1/projects/{p}/game-modes/duel");
    let d = t.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(d.status, StatusCode::NO_CONTENT, "{}", d.body);
    for ticket in [a, b, c] {
        assert_eq!(
            failed_code(&t, &duel, ticket).await.as_deref(),
            Some("GAME_MODE_DISABLED"),
            "{ticket}"
        );
    }
    assert_eq!(t.play.pool.proposal_of(&duel, a).await.unwrap(), None);
    let told = tokio::time::timeout(Duration::from_secs(5), b_client.next())
        .await
        .expect("the client is told")
        .unwrap();
    let told: Value = serde_json::from_str(&told).unwrap();
    assert_eq!(told["code"], "GAME_MODE_DISABLED", "{told}");
    for player in ["a", "b", "c"] {
        let cooled = t.play.pool.cooldown_of(&duel, player, unix_now()).await;
        assert_eq!(cooled.unwrap(), None, "{player} is not cooled down");
    }

    // Created again: empty (d's cooldown gone too), and every player may
    // search at once.
    t.mode(&p, &key, crate::acceptance::accepting()).await;
    assert!(t.play.pool.snapshot(&duel).await.unwrap().is_empty());
    assert_eq!(t.play.pool.count_live(&p).await.unwrap(), 0);
    for player in ["a", "b", "c", "d", "e"] {
        let (_, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    }
}

/// A project deleted while its mode's only searches are in an open
/// proposal (the pool's snapshot is empty): the sweep cancels the proposal,
/// its searches fail `GAME_MODE_DISABLED`, nobody is cooled down.
async fn a_deleted_projects_open_proposal_ends_at_the_sweep(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    t.mode(&p, &key, crate::acceptance::accepting()).await;
    let mut tickets = Vec::new();
    for player in ["a", "b"] {
        let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        tickets.push(ticket);
    }
    let (a, b) = (&tickets[0], &tickets[1]);
    crate::acceptance::propose(&t, &p, &[a, b], &["a", "b"], &[a, b]).await;
    let before = unix_now();
    delete_project(&t, &p).await;
    t.sweep(before).await;
    let duel = ModeKey::new(&p, "duel");
    assert_eq!(t.play.pool.proposal_of(&duel, a).await.unwrap(), None);
    for (ticket, player) in [(a, "a"), (b, "b")] {
        assert_eq!(
            failed_code(&t, &duel, ticket).await.as_deref(),
            Some("GAME_MODE_DISABLED"),
            "{ticket}"
        );
        let cooled = t.play.pool.cooldown_of(&duel, player, unix_now()).await;
        assert_eq!(cooled.unwrap(), None, "{player} is not cooled down");
    }
    assert_eq!(t.play.pool.count_live(&p).await.unwrap(), 0);
}

/// A ticket matched before its project was deleted, its match stored (and
/// gone with the project) or claimed and never to be stored, reads
/// `failed` `GAME_MODE_DISABLED` as the project's live searches end
/// (docs/searching.md, '"Matched" means stored'), not `MATCH_PENDING`
/// until it expires. While the project exists, a match not stored yet
/// still reads `MATCH_PENDING`.
async fn a_deleted_projects_matched_tickets_fail(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    t.mode(&p, &key, duel("other")).await;
    let (stored, stored_token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let (pending, pending_token) = t.ticket_ok(&p, &key, solo("other", "p2")).await;
    for token in [&stored_token, &pending_token] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    t.claim_alone(&p, "duel", &stored, "p1").await;
    t.store_match_alone(&p, "duel", &stored, "p1").await;
    t.claim_alone(&p, "other", &pending, "p2").await;
    let view = t.search_view(&stored, &stored_token).await;
    assert_eq!(view["status"], "matched", "{view}");
    let view = t.search_view(&pending, &pending_token).await;
    assert_eq!(view["status"], "searching", "{view}");
    assert_eq!(view["waitingReason"]["code"], "MATCH_PENDING", "{view}");

    delete_project(&t, &p).await;
    t.sweep(unix_now()).await;
    for (ticket, token) in [(&stored, &stored_token), (&pending, &pending_token)] {
        let view = t.search_view(ticket, token).await;
        assert_eq!(view["status"], "failed", "{view}");
        assert_eq!(view["error"]["code"], "GAME_MODE_DISABLED", "{view}");
        assert_eq!(
            view["error"]["message"], "the project was deleted",
            "{view}"
        );
        assert!(view.get("waitingReason").is_none(), "{view}");
    }
}

/// The same over a WebSocket: a search claimed into a match that is not
/// stored yet is told `MATCH_PENDING`; its project deleted, it is told
/// `failed` `GAME_MODE_DISABLED` (a final message) at the socket's next
/// check, instead of waiting for its ticket to expire.
async fn a_deleted_projects_matched_socket_search_fails(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let mut ws = crate::socket::connect(addr, &token).await;
    let hello = crate::socket::next_json(&mut ws).await;
    assert_eq!(hello["type"], "searching", "{hello}");
    t.claim_alone(&p, "duel", &ticket, "p1").await;
    let pending = first_message(&mut ws, |m| m["waitingReason"]["code"] == "MATCH_PENDING").await;
    assert_eq!(pending["type"], "status", "{pending}");
    delete_project(&t, &p).await;
    let told = first_message(&mut ws, |m| m["type"] != "status").await;
    assert_eq!(told["type"], "failed", "{told}");
    assert_eq!(told["code"], "GAME_MODE_DISABLED", "{told}");
    assert_eq!(told["message"], "the project was deleted", "{told}");
}

/// The first message `wanted` takes, within 10 s (a socket also gets a
/// Ping every second, so one message's timeout alone never runs out).
async fn first_message(ws: &mut crate::socket::Client, wanted: impl Fn(&Value) -> bool) -> Value {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let msg = crate::socket::next_json(ws).await;
            if wanted(&msg) {
                return msg;
            }
        }
    })
    .await
    .expect("the message within 10 s")
}

/// Deletes project `p` with the operator token (`204`).
async fn delete_project(t: &TestApp, p: &str) {
    let deleted = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}"),
            Some(&format!("Bearer {OPERATOR}")),
            None,
        )
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT, "{}", deleted.body);
}
