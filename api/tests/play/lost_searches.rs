//! A search its pool lost with the pool's data while its ticket stayed
//! (a Redis Cluster master that lost its slots' data; an in-process pool
//! that started empty): the REST poll and the studio's ticket status say
//! `expired` with `reason` `SEARCH_LOST`, as the socket is told
//! (docs/searching.md, "Statuses"); a ticket that never searched still
//! reads `created`, and a search between states (a claimed match being
//! stored, a proposal) is never taken for lost.

use crate::harness::{call, duel, fast, solo, Instance, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_store::pool::{Claim, MemoryPoolStore, ModeKey, ProposalClaim};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

on_both_pools!(
    a_rest_search_the_pool_lost_reads_search_lost,
    a_search_between_states_is_never_taken_for_lost,
);

/// The REST poll of `ticket` with `token` through `app`.
async fn poll(app: &axum::Router, ticket: &str, token: &str) -> Value {
    let auth = format!("Ticket {token}");
    let a = call(
        app,
        Method::GET,
        &format!("/v1/searches/{ticket}"),
        Some(&auth),
        None,
    )
    .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.body
}

/// The studio's status of `ticket` through `app`.
async fn studio(app: &axum::Router, project: &str, key: &str, ticket: &str) -> Value {
    let path = format!("/v1/projects/{project}/tickets/{ticket}");
    let a = call(app, Method::GET, &path, Some(key), None).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    a.body
}

/// The API after `project`'s mode `mode` lost its pool's data while the
/// tickets stayed: on Redis, every key of the mode's slot deleted (what a
/// Cluster master without persistence loses on a restart), read by another
/// instance; in memory, an instance over the same tickets and an empty
/// pool (the pool of a restarted process).
async fn after_pool_loss(t: &TestApp, project: &str, mode: &str) -> Instance {
    let play = match t.pools {
        Pools::Redis => {
            let slot = format!("{}:{{{project}/{mode}}}", t.prefix);
            let url = crate::harness::redis_url();
            let deleted = tokio::task::spawn_blocking(move || {
                matchplane_store::pool::redis::delete_prefix_blocking(&url, &slot).unwrap()
            })
            .await
            .unwrap();
            assert!(deleted > 0, "the mode's keys were there");
            Arc::new(TestApp::play_on(t.pools, &t.prefix, fast()).await)
        }
        Pools::Memory => Arc::new(matchplane_api::play::Play::new(
            Arc::new(MemoryPoolStore::new()),
            t.play.tickets.clone(),
            fast(),
        )),
    };
    Instance::over(&t.db, play)
}

/// A REST search, then its mode's pool loses its data: the poll and the
/// studio's status answer `expired` with `reason` `SEARCH_LOST` (not
/// `created` until the ticket expires), and the ticket may search again;
/// a ticket that never searched still reads `created`.
async fn a_rest_search_the_pool_lost_reads_search_lost(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", "ana")).await;
    let (unused, unused_token) = t.ticket_ok(&p, &key, solo("duel", "bo")).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    assert_eq!(poll(&t.app, &ticket, &token).await["status"], "searching");

    let api = after_pool_loss(&t, &p, "duel").await;
    for view in [
        poll(&api.app, &ticket, &token).await,
        studio(&api.app, &p, &key, &ticket).await,
    ] {
        assert_eq!(view["status"], "expired", "{view}");
        assert_eq!(view["reason"], "SEARCH_LOST", "{view}");
    }
    for view in [
        poll(&api.app, &unused, &unused_token).await,
        studio(&api.app, &p, &key, &unused).await,
    ] {
        assert_eq!(view["status"], "created", "never searched: {view}");
        assert!(view.get("reason").is_none(), "{view}");
    }
    // A ticket the store no longer holds (or never held): the studio's
    // read says it may have been lost, as the player's 401 does.
    let path = format!("/v1/projects/{p}/tickets/tkt_01HGONE00000000000000000000");
    let gone = call(&api.app, Method::GET, &path, Some(&key), None).await;
    assert_eq!(gone.status, StatusCode::NOT_FOUND, "{}", gone.body);
    let detail = gone.body["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("lost with the matchmaking store's data"),
        "{detail}"
    );
    if pools == Pools::Redis {
        // The ticket is still valid: it searches again. (The memory ticket
        // store adds to the pool it was built over, which this test keeps.)
        assert_eq!(api.rest_search(&token).await.status, StatusCode::ACCEPTED);
        assert_eq!(poll(&api.app, &ticket, &token).await["status"], "searching");
    }
}

/// Neither a claimed match being stored (`MATCH_PENDING`), nor a proposed
/// search, nor a ticket the studio cancelled before it searched, reads
/// `SEARCH_LOST`.
async fn a_search_between_states_is_never_taken_for_lost(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let mode = ModeKey::new(&p, "duel");
    let mut seats = Vec::new();
    for player in ["ana", "bo", "cy"] {
        let (ticket, token) = t.ticket_ok(&p, &key, solo("duel", player)).await;
        assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
        seats.push((ticket, token));
    }
    let lease = t
        .play
        .pool
        .acquire_lease(&mode, "w", Duration::from_secs(5))
        .await
        .unwrap()
        .unwrap();
    // Claimed, its match not stored.
    let claim = Claim {
        match_id: "mat_1".into(),
        ticket_ids: vec![seats[0].0.clone()],
        player_ids: vec!["ana".into()],
        record_json: "{}".into(),
    };
    t.play.pool.claim(&mode, lease, &claim).await.unwrap();
    // Proposed, the proposal open.
    let proposal = ProposalClaim {
        claim: Claim {
            match_id: "mat_2".into(),
            ticket_ids: vec![seats[1].0.clone(), seats[2].0.clone()],
            player_ids: vec!["bo".into(), "cy".into()],
            record_json: "{}".into(),
        },
        parties: vec![seats[1].0.clone(), seats[2].0.clone()],
        accept_by: matchplane_api::play::unix_now() + 60.0,
        cooldown_seconds: 0.0,
    };
    t.play
        .pool
        .propose_many(&mode, lease, &[proposal])
        .await
        .unwrap();
    let pending = poll(&t.app, &seats[0].0, &seats[0].1).await;
    assert_eq!(pending["status"], "searching", "{pending}");
    assert_eq!(
        pending["waitingReason"]["code"], "MATCH_PENDING",
        "{pending}"
    );
    let studio_view = studio(&t.app, &p, &key, &seats[0].0).await;
    assert_eq!(studio_view["waitingReason"]["code"], "MATCH_PENDING");
    for (ticket, token) in &seats[1..] {
        let view = poll(&t.app, ticket, token).await;
        assert_ne!(view["status"], "expired", "{view}");
    }
    // Cancelled by the studio before it searched: revoked (`cancelled`),
    // not taken for a search lost with the pool's data.
    let (unused, _) = t.ticket_ok(&p, &key, solo("duel", "dee")).await;
    let path = format!("/v1/projects/{p}/tickets/{unused}");
    let cancelled = t.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(cancelled.status, StatusCode::OK, "{}", cancelled.body);
    assert_eq!(cancelled.body["status"], "cancelled", "{}", cancelled.body);
}
