//! Proposals lost with the pool's data (docs/acceptance.md, "When a
//! proposal is lost"): rows still `proposed` well past their deadline whose
//! proposal the pool no longer holds are marked `cancelled`; a held one is
//! left alone, and a made record that arrives later still marks its row
//! `made`. Before, such a row said `proposed` forever.

use crate::env::{mode_config, Env};
use chrono::{Duration as Delta, Utc};
use matchplane_store::repos::{game_modes, match_status, matches};
use matchplane_worker::lost_proposals::reconcile;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_proposal_the_pool_lost_is_cancelled_once_past_its_deadline() {
    let env = Env::new(None, 1.0).await;
    let mut config = mode_config("duel", None, 1.0);
    config["acceptance"] = json!({"timeoutSeconds": 20});
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    env.tick(token).await;
    let project = env.mode.project_id.clone();
    let rows = matches::list(&env.db, &project, None, None, 10)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let held = rows[0].clone();
    assert_eq!(held.status, "proposed");

    // Two rows whose proposals the pool never held: as if lost with its data.
    let lost: Vec<String> = (0..2)
        .map(|_| format!("mat_{}", ulid::Ulid::new()))
        .collect();
    let rows = lost
        .iter()
        .map(|id| {
            let mut row = held.clone();
            row.id = id.clone();
            row
        })
        .collect();
    match_status::store_proposed(&env.db, rows).await.unwrap();
    let mode = env.config().await;

    // Within the grace past their deadline: nothing is marked.
    let soon = Utc::now() + Delta::minutes(5);
    let marked = reconcile(env.pool.as_ref(), &env.db, &env.mode, &mode, soon).await;
    assert_eq!(marked.unwrap(), 0);

    // Past it: the lost rows are cancelled, their answers as stored; the
    // proposal the pool holds stays proposed.
    let later = Utc::now() + Delta::minutes(11);
    let marked = reconcile(env.pool.as_ref(), &env.db, &env.mode, &mode, later).await;
    assert_eq!(marked.unwrap(), 2);
    let status = |id: String| {
        let db = env.db.clone();
        let project = project.clone();
        async move { matches::get(&db, &project, &id).await.unwrap() }
    };
    for id in &lost {
        let row = status(id.clone()).await;
        assert_eq!(row.status, "cancelled", "{id}");
        assert_eq!(row.answers, held.answers);
    }
    assert_eq!(status(held.id.clone()).await.status, "proposed");
    let marked = reconcile(env.pool.as_ref(), &env.db, &env.mode, &mode, later).await;
    assert_eq!(marked.unwrap(), 0, "each row is marked once");

    // A made record that waited out the grace in the outbox still counts.
    let made = match_status::mark_made(&env.db, &lost[..1], Utc::now()).await;
    assert_eq!(made.unwrap().len(), 1);
    assert_eq!(status(lost[0].clone()).await.status, "made");
}
