//! Acceptance on the worker, against real PostgreSQL and Redis: a cycle
//! holds its groups as proposals and tells the players `proposed`; everyone
//! accepting gives one stored match and one signed `match.made`; a deadline
//! fails the silent and requeues the rest with their wait kept; a mode whose
//! acceptance is turned off lets its open proposals finish by their rules.

use crate::env::{mode_config, verified_body, Env};
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use futures::StreamExt;
use matchplane_store::pool::{Ended, SearchState};
use matchplane_store::repos::{game_modes, matches};
use matchplane_worker::proposals::sweep;
use matchplane_worker::tick::TickOutcome;
use serde_json::{json, Value};
use std::time::Duration;

async fn with_acceptance(env: &Env, url: &str, acceptance: Value) {
    let mut config = mode_config("duel", Some(url), 1.0);
    config["acceptance"] = acceptance;
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
}

fn now() -> f64 {
    Utc::now().timestamp_micros() as f64 / 1e6
}

async fn next(stream: &mut matchplane_store::pool::StatusStream) -> Value {
    let text = tokio::time::timeout(Duration::from_secs(2), stream.next())
        .await
        .expect("a status message")
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn everyone_accepting_makes_one_match_and_one_webhook() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    with_acceptance(&env, &receiver.url(), json!({"timeoutSeconds": 20})).await;
    let a = env.add("a", 1500.0).await;
    let b = env.add("b", 1500.0).await;
    let mut updates = env.pool.subscribe_status(&a).await.unwrap();
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));

    let proposed = next(&mut updates).await;
    assert_eq!(proposed["type"], "proposed", "{proposed}");
    let match_id = proposed["matchId"].as_str().unwrap().to_owned();
    assert_eq!(proposed["teams"], json!([["a"], ["b"]]));
    // `acceptBy` as every view of the proposal says it (rounded to the
    // millisecond).
    let held = env
        .pool
        .proposal(&env.mode, &match_id)
        .await
        .unwrap()
        .unwrap();
    let by = matchplane_matchmaker::timestamp::from_unix_seconds(held.accept_by);
    assert_eq!(proposed["acceptBy"], by.as_str(), "{proposed}");
    // Nothing is stored or sent before everyone accepted.
    assert_eq!(env.drain("w1").await, 0);
    assert_eq!(
        env.tick(token).await.0,
        TickOutcome::Idle,
        "held out of the pool"
    );

    env.pool.answer(&env.mode, &a, true, now()).await.unwrap();
    assert_eq!(
        sweep(env.pool.as_ref(), &env.mode, (now(), f64::INFINITY), None)
            .await
            .unwrap()
            .made,
        0
    );
    env.pool.answer(&env.mode, &b, true, now()).await.unwrap();
    let swept = sweep(env.pool.as_ref(), &env.mode, (now(), f64::INFINITY), None)
        .await
        .unwrap();
    assert_eq!(swept.made, 1);
    assert_eq!(env.drain("w1").await, 1);
    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, match_id, "the proposal's id is the match's");
    let matched = next(&mut updates).await;
    assert_eq!(matched["type"], "matched", "{matched}");
    for ticket in [&a, &b] {
        let state = env.pool.search_state(&env.mode, ticket).await.unwrap();
        assert_eq!(
            state.and_then(SearchState::into_ended),
            Some(Ended::Matched {
                match_id: match_id.clone()
            })
        );
    }
    env.deliveries(1.0).tick(Utc::now(), 10).await.unwrap();
    let received = receiver.received();
    assert_eq!(received.len(), 1, "exactly one match.made");
    assert_eq!(received[0].header("webhook-id"), match_id);
    assert_eq!(verified_body(&env, &received[0])["type"], "match.made");
    // A second sweep and drain find nothing.
    let swept = sweep(env.pool.as_ref(), &env.mode, (now(), f64::INFINITY), None)
        .await
        .unwrap();
    assert_eq!(swept.made + swept.cancelled, 0);
    assert_eq!(env.drain("w1").await, 0);
}

/// A deadline that passed while the worker could not reach its store (an
/// answer sent in time may never have arrived) makes nobody responsible:
/// the silent player goes back to the pool like the one who accepted,
/// nobody cooled down (docs/acceptance.md). Before, the silent one failed
/// `ACCEPTANCE_TIMEOUT` and was cooled down.
#[tokio::test]
async fn a_deadline_that_passed_in_an_outage_of_the_store_cools_nobody_down() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    with_acceptance(
        &env,
        &receiver.url(),
        json!({"timeoutSeconds": 1, "declineCooldownSeconds": 30}),
    )
    .await;
    let a = env.add_waited("a", 1500.0, 30.0).await;
    let b = env.add("b", 1500.0).await;
    let mut a_updates = env.pool.subscribe_status(&a).await.unwrap();
    let mut b_updates = env.pool.subscribe_status(&b).await.unwrap();
    let token = env.lease("w1", Duration::from_secs(5)).await;
    env.tick(token).await;
    assert_eq!(next(&mut a_updates).await["type"], "proposed");
    assert_eq!(next(&mut b_updates).await["type"], "proposed");
    env.pool.answer(&env.mode, &a, true, now()).await.unwrap();
    // The worker last reached the pool now, then its calls failed for
    // 20 s: the deadline (in 1 s) fell in the outage.
    let lapses = matchplane_worker::lapse_grace::LapseGrace::default();
    let start = now();
    lapses.reached(&env.mode, start);
    lapses.failed(&env.mode);
    let later = start + 20.0;
    let swept = sweep(env.pool.as_ref(), &env.mode, (later, later), Some(&lapses))
        .await
        .unwrap();
    assert_eq!(swept.cancelled, 1);
    assert_eq!(next(&mut a_updates).await["type"], "requeued");
    assert_eq!(next(&mut b_updates).await["type"], "requeued");
    for (ticket, player) in [(&a, "a"), (&b, "b")] {
        assert!(matches!(
            env.pool.search_state(&env.mode, ticket).await.unwrap(),
            Some(SearchState::Live(_))
        ));
        let cooled = env
            .pool
            .cooldown_of(&env.mode, player, later)
            .await
            .unwrap();
        assert!(cooled.is_none(), "{player} cooled down");
    }
}

#[tokio::test]
async fn the_deadline_fails_the_silent_and_requeues_the_rest_with_their_wait() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    with_acceptance(
        &env,
        &receiver.url(),
        json!({"timeoutSeconds": 1, "declineCooldownSeconds": 30}),
    )
    .await;
    let a = env.add_waited("a", 1500.0, 30.0).await;
    let b = env.add("b", 1500.0).await;
    let mut a_updates = env.pool.subscribe_status(&a).await.unwrap();
    let mut b_updates = env.pool.subscribe_status(&b).await.unwrap();
    let token = env.lease("w1", Duration::from_secs(5)).await;
    env.tick(token).await;
    assert_eq!(next(&mut a_updates).await["type"], "proposed");
    assert_eq!(next(&mut b_updates).await["type"], "proposed");
    let queued = match env.pool.search_state(&env.mode, &a).await.unwrap() {
        Some(SearchState::Live(live)) => live.search.queued_at,
        other => panic!("{other:?}"),
    };
    env.pool.answer(&env.mode, &a, true, now()).await.unwrap();

    // Before the deadline nothing closes; at it, the silent one fails.
    let early = sweep(env.pool.as_ref(), &env.mode, (now(), now()), None)
        .await
        .unwrap();
    assert_eq!(early.cancelled, 0);
    let swept = sweep(
        env.pool.as_ref(),
        &env.mode,
        (now() + 1.1, now() + 1.1),
        None,
    )
    .await
    .unwrap();
    assert_eq!(swept.cancelled, 1);
    assert_eq!(next(&mut a_updates).await["type"], "requeued");
    let failed = next(&mut b_updates).await;
    assert_eq!(failed["type"], "failed");
    assert_eq!(failed["code"], "ACCEPTANCE_TIMEOUT");
    assert!(env
        .pool
        .cooldown_of(&env.mode, "b", now())
        .await
        .unwrap()
        .is_some());
    assert!(env
        .pool
        .cooldown_of(&env.mode, "a", now())
        .await
        .unwrap()
        .is_none());
    // a is back with its first queuedAt, and is proposed again with c.
    env.add("c", 1500.0).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    match env.pool.search_state(&env.mode, &a).await.unwrap() {
        Some(SearchState::Live(live)) => assert_eq!(live.search.queued_at, queued),
        other => panic!("{other:?}"),
    }
    assert!(env.pool.proposal_of(&env.mode, &a).await.unwrap().is_some());
}

#[tokio::test]
async fn turning_acceptance_off_lets_open_proposals_finish_by_their_rules() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    with_acceptance(&env, &receiver.url(), json!({"timeoutSeconds": 20})).await;
    let a = env.add("a", 1500.0).await;
    let b = env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    env.tick(token).await;
    let match_id = env.pool.proposal_of(&env.mode, &a).await.unwrap().unwrap();

    game_modes::replace(
        &env.db,
        &env.project_id,
        "duel",
        mode_config("duel", Some(&receiver.url()), 1.0),
        Utc::now(),
    )
    .await
    .unwrap();
    // New groups are matched at once; the proposal still waits for b.
    env.add("c", 1500.0).await;
    env.add("d", 1500.0).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);
    env.pool.answer(&env.mode, &a, true, now()).await.unwrap();
    let swept = sweep(env.pool.as_ref(), &env.mode, (now(), f64::INFINITY), None)
        .await
        .unwrap();
    assert_eq!(swept.made, 0, "b has not answered");
    env.pool.answer(&env.mode, &b, true, now()).await.unwrap();
    let swept = sweep(env.pool.as_ref(), &env.mode, (now(), f64::INFINITY), None)
        .await
        .unwrap();
    assert_eq!(swept.made, 1);
    assert_eq!(env.drain("w1").await, 1);
    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert!(stored.iter().any(|m| m.id == match_id));
}

/// A worker killed with a proposal open leaves it to the next one, which
/// ends it at its deadline by the same rules (the silent fail, nobody else
/// is touched). The cycle is long, so only the proposal sweep can end it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_workers_proposal_is_ended_by_the_next_one() {
    use tokio_util::sync::CancellationToken;
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 30.0).await;
    let mut config = mode_config("duel", Some(&receiver.url()), 30.0);
    config["acceptance"] = json!({"timeoutSeconds": 2});
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    let a = env.add("a", 1500.0).await;
    let b = env.add("b", 1500.0).await;
    let spawn = |name: &str| {
        let config = env.worker_config(name);
        let stop = CancellationToken::new();
        let task = env.spawn_worker(config, &stop);
        (task, stop)
    };
    let (one, _one_stop) = spawn("one");
    let mut proposed = None;
    for _ in 0..100 {
        proposed = env.pool.proposal_of(&env.mode, &a).await.unwrap();
        if proposed.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let match_id = proposed.expect("the first worker proposed the match");
    let accept_by = env
        .pool
        .proposal(&env.mode, &match_id)
        .await
        .unwrap()
        .unwrap()
        .accept_by;
    env.pool.answer(&env.mode, &a, true, now()).await.unwrap();
    one.abort();
    let (two, two_stop) = spawn("two");
    let mut closed_at = None;
    for _ in 0..200 {
        if env
            .pool
            .proposal(&env.mode, &match_id)
            .await
            .unwrap()
            .is_none()
        {
            closed_at = Some(now());
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let closed_at = closed_at.expect("the second worker ended the proposal");
    assert!(closed_at >= accept_by, "never before its deadline");
    println!(
        "proposal ended {:.3} s after acceptBy",
        closed_at - accept_by
    );
    let b_state = env.pool.search_state(&env.mode, &b).await.unwrap();
    assert!(
        matches!(
            b_state.and_then(SearchState::into_ended),
            Some(Ended::Failed { ref code, .. }) if code == "ACCEPTANCE_TIMEOUT"
        ),
        "b stayed silent"
    );
    match env.pool.search_state(&env.mode, &a).await.unwrap() {
        Some(SearchState::Live(_)) => {}
        other => panic!("a accepted and is requeued: {other:?}"),
    }
    two_stop.cancel();
    let _ = two.await;
}

/// A proposal's row is stored `proposed` before its players are told, and
/// the record consumer stores how it ended: `cancelled` with each ticket's
/// answer (a closing applied by any process queues its record), or `made`.
#[tokio::test]
async fn a_proposals_row_follows_it_from_proposed_to_cancelled_or_made() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    with_acceptance(&env, &receiver.url(), json!({"timeoutSeconds": 20})).await;
    let a = env.add("a", 1500.0).await;
    let b = env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    env.tick(token).await;
    let rows = matches::list(&env.db, &env.mode.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, "proposed");
    assert_eq!(
        rows[0].answers,
        Some(json!({a.clone(): "none", b.clone(): "none"}))
    );
    let first = rows[0].id.clone();

    // b declines; the closing (here the sweep's) queues its record.
    env.pool.answer(&env.mode, &a, true, now()).await.unwrap();
    env.pool.answer(&env.mode, &b, false, now()).await.unwrap();
    sweep(env.pool.as_ref(), &env.mode, (now(), f64::INFINITY), None)
        .await
        .unwrap();
    env.drain("c1").await;
    let row = matches::get(&env.db, &env.mode.project_id, &first)
        .await
        .unwrap();
    assert_eq!(row.status, "cancelled");
    assert_eq!(
        row.answers,
        Some(json!({a.clone(): "accepted", b.clone(): "declined"}))
    );
    // Handed over twice, stored once: nothing changes.
    env.drain("c1").await;

    // a, requeued, and c accept: made.
    let c = env.add("c", 1500.0).await;
    env.tick(token).await;
    let second = env.pool.proposal_of(&env.mode, &a).await.unwrap().unwrap();
    for ticket in [&a, &c] {
        env.pool
            .answer(&env.mode, ticket, true, now())
            .await
            .unwrap();
    }
    sweep(env.pool.as_ref(), &env.mode, (now(), f64::INFINITY), None)
        .await
        .unwrap();
    env.drain("c1").await;
    let row = matches::get(&env.db, &env.mode.project_id, &second)
        .await
        .unwrap();
    assert_eq!(row.status, "made");
    assert!(row.made_at.is_some());
    let minutes = matchplane_store::repos::stats_history::minutes(
        &env.db,
        &env.mode.project_id,
        &env.mode.mode,
        Utc::now() - chrono::Duration::minutes(5),
        Utc::now() + chrono::Duration::minutes(5),
    )
    .await
    .unwrap();
    let (proposals, declines, made): (i64, i64, i64) = minutes.iter().fold((0, 0, 0), |acc, m| {
        (acc.0 + m.proposals, acc.1 + m.declines, acc.2 + m.matches)
    });
    assert_eq!((proposals, declines, made), (2, 1, 1));
}

/// A proposal whose row its cycle could not store (the database out of
/// reach then) is stored when its made record is: made, with its answers,
/// counted as every made proposal (docs/acceptance.md). Before: it was
/// stored as a match made without a proposal, without answers, and left
/// out of the lifecycle figures.
#[tokio::test]
async fn a_proposal_whose_row_was_not_stored_is_made_with_its_answers() {
    use matchplane_store::entities::match_;
    use matchplane_store::repos::match_status;
    use sea_orm::EntityTrait;
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    with_acceptance(&env, &receiver.url(), json!({"timeoutSeconds": 20})).await;
    let a = env.add("a", 1500.0).await;
    let b = env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    // The row the cycle stored, taken away: as if it had not been stored.
    let held = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(held.len(), 1);
    match_::Entity::delete_by_id(held[0].id.clone())
        .exec(&env.db)
        .await
        .unwrap();
    env.pool.answer(&env.mode, &a, true, now()).await.unwrap();
    env.pool.answer(&env.mode, &b, true, now()).await.unwrap();
    sweep(env.pool.as_ref(), &env.mode, (now(), f64::INFINITY), None)
        .await
        .unwrap();
    let consumer = matchplane_worker::record::OutboxConsumer {
        proposals_of: Some(env.config().await.version),
        ..env.consumer("w1", Duration::from_secs(60))
    };
    assert_eq!(
        consumer
            .drain(&env.mode, true, Utc::now(), 10)
            .await
            .unwrap(),
        1
    );
    let row = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap()
        .remove(0);
    assert_eq!(row.status, match_status::MADE);
    assert!(row.made_at.is_some(), "{row:?}");
    assert_eq!(
        match_status::shown_answers(&row),
        Some(json!({ a.as_str(): "accepted", b.as_str(): "accepted" })),
        "{row:?}"
    );
}
