//! A claim's lock and its attempts (docs/operations.md, "Webhook delivery:
//! one studio never holds up another"), on PostgreSQL and SQLite: the
//! writes of one claim never move its lock back, and an attempt taken back
//! unsent leaves neither a log row nor a count, its delivery due again at
//! once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{DateTime, Duration, Utc};
use matchplane_store::entities::{webhook_attempt, webhook_delivery};
use matchplane_store::repos::deliveries::{self, ClaimFilter, ClaimHeld, PendingDelivery};
use matchplane_store::repos::projects;
use matchplane_store::test_support::TestDatabase;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};

/// Now, in whole seconds (what both databases keep exactly).
fn now() -> DateTime<Utc> {
    DateTime::from_timestamp(Utc::now().timestamp(), 0).unwrap()
}

/// A project with one delivery due at `due`; the delivery's id.
async fn queued(db: &DatabaseConnection, due: DateTime<Utc>) -> (String, String) {
    let project = projects::create(db, "studio", "free", due).await.unwrap();
    let id = format!("dlv_{}", ulid::Ulid::new());
    let pending = PendingDelivery {
        id: id.clone(),
        project_id: project.id.clone(),
        game_mode: "duel".to_owned(),
        match_id: None,
        event_type: "match.made",
        payload: "{}".to_owned(),
    };
    deliveries::queue_if_absent(db, vec![pending.row(due)])
        .await
        .unwrap();
    (project.id, id)
}

async fn row(db: &DatabaseConnection, id: &str) -> webhook_delivery::Model {
    webhook_delivery::Entity::find_by_id(id.to_owned())
        .one(db)
        .await
        .unwrap()
        .unwrap()
}

async fn attempts(db: &DatabaseConnection, id: &str) -> Vec<webhook_attempt::Model> {
    webhook_attempt::Entity::find()
        .filter(webhook_attempt::Column::DeliveryId.eq(id))
        .all(db)
        .await
        .unwrap()
}

/// The one delivery due at `now`, claimed for 30 s; its claim's token.
async fn claim(db: &DatabaseConnection, now: DateTime<Utc>) -> String {
    let taken =
        deliveries::claim_due_fairly(db, now, Duration::seconds(30), 10, &ClaimFilter::default())
            .await
            .unwrap();
    assert_eq!(taken.len(), 1, "{taken:?}");
    taken[0].lock_token.clone().unwrap()
}

/// An attempt's opening log row.
fn opening(log_id: &str, project_id: &str, id: &str, at: DateTime<Utc>) -> webhook_attempt::Model {
    webhook_attempt::Model {
        id: log_id.to_owned(),
        delivery_id: id.to_owned(),
        project_id: project_id.to_owned(),
        attempted_at: at,
        status_code: None,
        latency_ms: 0,
        error: Some(deliveries::ATTEMPT_UNFINISHED.to_owned()),
        response_body: None,
    }
}

async fn a_claims_lock_never_moves_back(postgres: bool) {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let now = now();
    let (project_id, id) = queued(&db, now).await;
    let token = claim(&db, now).await;
    let until = now + Duration::seconds(60);
    let started = opening("att_1", &project_id, &id, now);
    let held = deliveries::start_attempt(&db, started, &token, until, now).await;
    assert_eq!(held.unwrap(), ClaimHeld::Yes);
    assert_eq!(row(&db, &id).await.locked_until, Some(until));
    // A renewal sent before the attempt's start and written after it holds
    // the delivery, and leaves the later end.
    let earlier = now + Duration::seconds(40);
    assert!(deliveries::renew(&db, &id, &token, earlier).await.unwrap());
    assert_eq!(row(&db, &id).await.locked_until, Some(until));
    let later = now + Duration::seconds(90);
    assert!(deliveries::renew(&db, &id, &token, later).await.unwrap());
    assert_eq!(row(&db, &id).await.locked_until, Some(later));
    // Another claim's token extends nothing.
    let far = now + Duration::seconds(500);
    assert!(!deliveries::renew(&db, &id, "other", far).await.unwrap());
    assert_eq!(row(&db, &id).await.locked_until, Some(later));
}

#[tokio::test]
async fn a_claims_lock_never_moves_back_postgres() {
    a_claims_lock_never_moves_back(true).await;
}

#[tokio::test]
async fn a_claims_lock_never_moves_back_sqlite() {
    a_claims_lock_never_moves_back(false).await;
}

async fn an_attempt_taken_back_is_neither_listed_nor_counted(postgres: bool) {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let now = now();
    let (project_id, id) = queued(&db, now).await;
    let token = claim(&db, now).await;
    let until = now + Duration::seconds(30);
    let started = opening("att_1", &project_id, &id, now);
    deliveries::start_attempt(&db, started, &token, until, now)
        .await
        .unwrap();
    assert_eq!(row(&db, &id).await.attempt_count, 1);
    // A redelivery made meanwhile began a new run at the count.
    webhook_delivery::Entity::update_many()
        .col_expr(webhook_delivery::Column::AttemptsBeforeRun, Expr::value(1))
        .filter(webhook_delivery::Column::Id.eq(id.as_str()))
        .exec(&db)
        .await
        .unwrap();

    let back = deliveries::withdraw_attempt(&db, &id, "att_1", &token, now).await;
    assert_eq!(back.unwrap(), ClaimHeld::Yes);
    let given_back = row(&db, &id).await;
    assert_eq!(given_back.attempt_count, 0);
    assert_eq!(given_back.attempts_before_run, 0);
    assert_eq!(given_back.status, deliveries::PENDING);
    assert_eq!(given_back.next_attempt_at, Some(now), "due as before");
    assert_eq!(
        (given_back.locked_until, given_back.lock_token),
        (None, None)
    );
    assert!(attempts(&db, &id).await.is_empty());

    // Due at once: the next claim takes it. Taking the attempt back again,
    // under the old claim, changes nothing.
    let next = claim(&db, now).await;
    let again = deliveries::withdraw_attempt(&db, &id, "att_1", &token, now).await;
    assert_eq!(again.unwrap(), ClaimHeld::Lost);
    let kept = row(&db, &id).await;
    assert_eq!(kept.attempt_count, 0);
    assert_eq!(kept.lock_token.as_deref(), Some(next.as_str()));

    // Taken back after its lock ran out and another claim took the
    // delivery on: the attempt's row and count go, the other claim keeps
    // its lock.
    let started = opening("att_2", &project_id, &id, now);
    deliveries::start_attempt(&db, started, &next, until, now)
        .await
        .unwrap();
    let lapsed = until + Duration::seconds(1);
    let third = claim(&db, lapsed).await;
    let late = deliveries::withdraw_attempt(&db, &id, "att_2", &next, lapsed).await;
    assert_eq!(late.unwrap(), ClaimHeld::Lost);
    let kept = row(&db, &id).await;
    assert_eq!(kept.attempt_count, 0);
    assert_eq!(kept.lock_token.as_deref(), Some(third.as_str()));
    assert_eq!(kept.locked_until, Some(lapsed + Duration::seconds(30)));
    assert!(attempts(&db, &id).await.is_empty());
}

#[tokio::test]
async fn an_attempt_taken_back_is_neither_listed_nor_counted_postgres() {
    an_attempt_taken_back_is_neither_listed_nor_counted(true).await;
}

#[tokio::test]
async fn an_attempt_taken_back_is_neither_listed_nor_counted_sqlite() {
    an_attempt_taken_back_is_neither_listed_nor_counted(false).await;
}
