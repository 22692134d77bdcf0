//! Two rotations within 24 hours: a real match's webhook is signed with all
//! three secrets, each verifying on its own, and each secret stops signing
//! when its own 24 hours are over.

use crate::env::Env;
use crate::receiver::{Receiver, Reply};
use crate::verify::verify;
use chrono::{Duration as Days, Utc};
use matchplane_store::repos::game_modes;
use matchplane_webhook::generate_secret;
use matchplane_worker::modes::webhook_target;
use matchplane_worker::tick::TickOutcome;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::time::Duration;

#[tokio::test]
async fn two_rotations_in_a_day_sign_with_three_secrets() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    let now = Utc::now();
    let second = generate_secret(&mut StdRng::seed_from_u64(8));
    let third = generate_secret(&mut StdRng::seed_from_u64(9));
    // The first rotation 23 hours ago, the second one hour ago.
    game_modes::rotate_secret(
        &env.db,
        &env.project_id,
        "duel",
        &second,
        now - Days::hours(23),
    )
    .await
    .unwrap();
    game_modes::rotate_secret(
        &env.db,
        &env.project_id,
        "duel",
        &third,
        now - Days::hours(1),
    )
    .await
    .unwrap();

    env.add("ana", 1500.0).await;
    env.add("ben", 1510.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);
    let attempted = env.deliveries(1.0).tick(Utc::now(), 10).await.unwrap();
    assert_eq!(attempted.len(), 1);
    let received = receiver.received();
    let request = &received[0];
    let signatures = request.header("webhook-signature");
    assert_eq!(signatures.split(' ').count(), 3, "{signatures}");
    for secret in [&third, &second, &env.secret] {
        // Each secret alone verifies: give the verifier one signature at a time.
        let alone = signatures
            .split(' ')
            .filter(|s| {
                verify(
                    secret,
                    &request.header("webhook-id"),
                    &request.header("webhook-timestamp"),
                    s,
                    &request.body,
                    Utc::now().timestamp(),
                    300,
                )
                .is_ok()
            })
            .count();
        assert_eq!(alone, 1, "exactly one signature is by each secret");
    }

    // The first secret's day ends 24 h after its rotation, the second's 24 h
    // after its own.
    let signing = |at| {
        let db = env.db.clone();
        let project = env.project_id.clone();
        async move {
            webhook_target(&db, &project, "duel", at)
                .await
                .unwrap()
                .unwrap()
                .1
        }
    };
    assert_eq!(
        signing(now).await,
        [third.clone(), second.clone(), env.secret.clone()]
    );
    assert_eq!(
        signing(now + Days::hours(2)).await,
        [third.clone(), second.clone()]
    );
    assert_eq!(signing(now + Days::hours(23)).await, [third]);
}
