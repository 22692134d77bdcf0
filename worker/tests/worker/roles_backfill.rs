//! The automatic backfill of a role-queue bot match (docs/rules.md,
//! "Backfill by role"): a replaceable bot's seat is open in its role, so
//! the next cycle fills it with a player who listed that role, not with one
//! who waited longer for another.

use crate::env::{mode_config, Env};
use crate::receiver::{Receiver, Reply};
use chrono::Utc;
use matchplane_store::pool::Search;
use matchplane_store::repos::game_modes;
use matchplane_worker::tick::TickOutcome;
use serde_json::json;
use std::time::Duration;

fn now() -> f64 {
    Utc::now().timestamp_micros() as f64 / 1e6
}

async fn add(env: &Env, player: &str, role: &str, ago: f64) -> String {
    let ticket = format!("tkt_{player}_{}", ulid::Ulid::new());
    let mut search = Search::solo(ticket.clone(), player, 1500.0, now() - ago);
    search.attributes =
        std::sync::Arc::new(serde_json::from_value(json!({ "roles": [role] })).unwrap());
    env.add_search(&search).await;
    ticket
}

#[tokio::test]
async fn a_replaceable_bots_role_seat_is_filled_by_that_role() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    let mut config = mode_config("duel", Some(&receiver.url()), 1.0);
    config["matchShape"] = json!([2, 2]);
    config["attributes"] = json!({"roles": {"type": "stringSet", "values": ["tank", "damage"]}});
    config["composition"] = json!({"attribute": "roles", "perTeam": {"tank": 1, "damage": 1}});
    config["bots"] = json!({"fillAfterSeconds": 10, "minHumans": 2, "replaceable": true});
    config["backfill"] = json!({"enabled": true, "auto": true, "ttlSeconds": 120});
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
    // Two tanks and a damage player: one damage seat goes to a bot.
    add(&env, "t1", "tank", 30.0).await;
    add(&env, "t2", "tank", 30.0).await;
    add(&env, "d1", "damage", 30.0).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));
    assert_eq!(env.drain("w1").await, 1);
    let open = env.pool.open_backfills(&env.mode).await.unwrap();
    assert_eq!(open.len(), 1, "{open:?}");
    let bot_team = open[0].open_seats.iter().position(|s| *s == 1).unwrap();
    assert_eq!(open[0].open_roles[bot_team]["damage"], 1, "{open:?}");
    assert_eq!(open[0].open_roles[bot_team]["tank"], 0, "{open:?}");

    // A tank who waited longer is not taken; the damage player is.
    let tank = add(&env, "t3", "tank", 20.0).await;
    let damage = add(&env, "d2", "damage", 1.0).await;
    let (_, report) = env.tick(token).await;
    assert_eq!((report.fills, report.seats_filled), (1, 1));
    assert!(env
        .pool
        .search_state(&env.mode, &damage)
        .await
        .unwrap()
        .is_some_and(|s| s.into_ended().is_some()));
    assert!(env
        .pool
        .search_state(&env.mode, &tank)
        .await
        .unwrap()
        .is_some_and(|s| s.into_ended().is_none()));
    let live = env
        .pool
        .backfill(&env.mode, &open[0].backfill_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(live.backfill.open_roles[bot_team]["damage"], 0);
}
