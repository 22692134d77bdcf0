//! A worker stopped between any two steps loses nothing: a claimed match
//! whose outbox entry was read and never acknowledged is recorded by another
//! consumer once the entry is idle; a delivery taken and never attempted is
//! attempted by another worker once its lock runs out; a cycle dropped
//! mid-way leaves every search either claimed (and in the outbox) or live.

use crate::env::Env;
use crate::receiver::{Receiver, Reply};
use chrono::{Duration as ChronoDuration, Utc};
use matchplane_store::entities::outbox_dead_letter;
use matchplane_store::pool::SearchState;
use matchplane_store::repos::{dead_letters, deliveries, matches};
use matchplane_worker::tick::TickOutcome;
use std::collections::HashSet;
use std::time::Duration;

/// Every dead letter of `project_id`, oldest first.
async fn dead_letters_of(
    db: &sea_orm::DatabaseConnection,
    project_id: &str,
) -> Vec<outbox_dead_letter::Model> {
    use sea_orm::{ColumnTrait, EntityTrait, QueryFilter, QueryOrder};
    outbox_dead_letter::Entity::find()
        .filter(outbox_dead_letter::Column::ProjectId.eq(project_id))
        .order_by_asc(outbox_dead_letter::Column::CreatedAt)
        .order_by_asc(outbox_dead_letter::Column::OutboxId)
        .all(db)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_consumer_killed_after_reading_loses_no_match() {
    let receiver = Receiver::start(vec![], Reply::status(200)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));

    // w1 reads the entry and dies before storing or acknowledging it.
    let read = env
        .pool
        .read_outbox(&env.mode, "w1", 10, Duration::from_secs(60))
        .await
        .unwrap();
    assert_eq!(read.len(), 1);

    // w2 does not take it while it may still be in w1's hands...
    let w2 = env.consumer("w2", Duration::from_millis(300));
    assert_eq!(w2.drain(&env.mode, true, Utc::now(), 10).await.unwrap(), 0);
    // ...and does once it has been idle long enough.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(w2.drain(&env.mode, true, Utc::now(), 10).await.unwrap(), 1);
    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].id, read[0].match_id);
    assert_eq!(env.drain("w3").await, 0, "acknowledged once, recorded once");

    // The delivery is taken by a worker that dies (its lock is never
    // released); another takes it once the lock runs out.
    let now = Utc::now();
    let taken = deliveries::claim_due_fairly(
        &env.db,
        now,
        ChronoDuration::milliseconds(500),
        10,
        &deliveries::ClaimFilter::default(),
    )
    .await
    .unwrap();
    assert_eq!(taken.len(), 1);
    let other = env.deliveries(1.0);
    assert!(other.tick(now, 10).await.unwrap().is_empty(), "locked");
    let later = now + ChronoDuration::seconds(1);
    assert_eq!(other.tick(later, 10).await.unwrap().len(), 1);
    assert_eq!(receiver.received().len(), 1);
}

#[tokio::test]
async fn a_cycle_dropped_midway_leaves_every_search_claimed_or_live() {
    let env = Env::new(None, 1.0).await;
    let mut tickets = Vec::new();
    for i in 0..200 {
        tickets.push(env.add(&format!("p{i}"), 1500.0 + f64::from(i % 7)).await);
    }
    let token = env.lease("w1", Duration::from_secs(5)).await;
    let config = env.config().await;
    // Drop the tick at several points (by timing out) and check the state.
    for budget_ms in [1, 3, 10] {
        let ticker = matchplane_worker::tick::Ticker {
            pool: env.pool.as_ref(),
            db: &env.db,
            claim_concurrency: 4,
            expire_batch: 100,
            ends: None,
            lapses: None,
            period: None,
            carried: None,
        };
        let _ = tokio::time::timeout(
            Duration::from_millis(budget_ms),
            ticker.tick(&env.mode, &config, token, Utc::now()),
        )
        .await;
    }
    // A new worker finishes the job.
    let fresh = {
        env.pool.release_lease(&env.mode, token).await.unwrap();
        env.lease("w2", Duration::from_secs(5)).await
    };
    env.tick(fresh).await;
    env.drain("w2").await;
    let stored = matches::list(&env.db, &env.project_id, None, None, 1000)
        .await
        .unwrap();
    assert_eq!(stored.len(), 100, "every search matched exactly once");
    let mut seen = HashSet::new();
    for row in &stored {
        for team in row.teams.as_array().unwrap() {
            for player in team["players"].as_array().unwrap() {
                assert!(seen.insert(player["ticketId"].as_str().unwrap().to_owned()));
            }
        }
    }
    for ticket in &tickets {
        assert!(seen.contains(ticket));
        assert!(matches!(
            env.pool.search_state(&env.mode, ticket).await.unwrap(),
            Some(SearchState::Ended(_))
        ));
    }
}

#[tokio::test]
async fn an_unreadable_record_does_not_hold_up_the_others() {
    let env = Env::new(None, 1.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    let bad = env.add("x", 1500.0).await;
    let claim = matchplane_store::pool::Claim {
        match_id: "mat_broken".to_owned(),
        ticket_ids: vec![bad],
        player_ids: vec!["x".to_owned()],
        record_json: "not a match".to_owned(),
    };
    env.pool.claim(&env.mode, token, &claim).await.unwrap();
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 2, "both acknowledged");
    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1, "the readable one is stored");
}

#[tokio::test]
async fn an_unreadable_record_is_kept_as_a_dead_letter_before_its_ack() {
    let env = Env::new(None, 1.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    let bad = env.add("x", 1500.0).await;
    let claim = matchplane_store::pool::Claim {
        match_id: "mat_broken".to_owned(),
        ticket_ids: vec![bad],
        player_ids: vec!["x".to_owned()],
        record_json: "not a match".to_owned(),
    };
    let outbox_id = match env.pool.claim(&env.mode, token, &claim).await.unwrap() {
        matchplane_store::pool::ClaimOutcome::Claimed { outbox_id } => outbox_id,
        other => panic!("not claimed: {other:?}"),
    };
    assert_eq!(env.drain("w1").await, 1, "acknowledged");
    let kept = dead_letters_of(&env.db, &env.project_id).await;
    assert_eq!(kept.len(), 1, "kept, not dropped: {kept:?}");
    assert_eq!(kept[0].outbox_id, outbox_id);
    assert_eq!(kept[0].match_id, "mat_broken");
    assert_eq!(kept[0].game_mode, env.mode.mode);
    assert_eq!(kept[0].record, "not a match");
    assert!(!kept[0].error.is_empty());
    // Acknowledged only once kept: nothing is left to read, and a second
    // hand-over of the same entry would keep it once.
    assert_eq!(env.drain("w2").await, 0);
    let again = dead_letters::keep(&env.db, kept.clone()).await.unwrap();
    assert_eq!(again, 0);
    assert_eq!(dead_letters_of(&env.db, &env.project_id).await, kept);
}
