//! Role waits (docs/rules.md, "Role waits"): a cycle's claimed matches
//! count, per role seat, their players and waits into the minute; with
//! acceptance, a proposal counts them once, when it is made.

use crate::env::{mode_config, Env};
use crate::receiver::{Receiver, Reply};
use chrono::{TimeDelta, Utc};
use matchplane_matchmaker::role_waits::RoleWaits;
use matchplane_store::pool::Search;
use matchplane_store::repos::game_modes;
use matchplane_store::repos::stats_history::{self, Figures};
use matchplane_worker::proposals::sweep;
use matchplane_worker::tick::TickOutcome;
use serde_json::{json, Value};
use std::time::Duration;

fn now() -> f64 {
    Utc::now().timestamp_micros() as f64 / 1e6
}

/// `duel` as a `[2, 2]` mode with one tank and one damage seat per team,
/// its webhook to `url`, with `acceptance` if any.
async fn role_mode(env: &Env, url: &str, acceptance: Option<Value>) {
    let mut config = mode_config("duel", Some(url), 1.0);
    config["matchShape"] = json!([2, 2]);
    config["attributes"] = json!({"roles": {"type": "stringSet", "values": ["tank", "damage"]}});
    config["composition"] = json!({"attribute": "roles", "perTeam": {"tank": 1, "damage": 1}});
    if let Some(acceptance) = acceptance {
        config["acceptance"] = acceptance;
    }
    game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
        .await
        .unwrap();
}

/// Two tanks queued 18 s ago and two damage players 165 s ago (inside the
/// wait histogram's (15, 20] and (150, 180] buckets); their tickets.
async fn add_players(env: &Env) -> Vec<String> {
    let mut tickets = Vec::new();
    for (player, role, ago) in [
        ("t1", "tank", 18.0),
        ("t2", "tank", 18.0),
        ("d1", "damage", 165.0),
        ("d2", "damage", 165.0),
    ] {
        let ticket = format!("tkt_{player}_{}", ulid::Ulid::new());
        let mut search = Search::solo(ticket.clone(), player, 1500.0, now() - ago);
        search.attributes =
            std::sync::Arc::new(serde_json::from_value(json!({ "roles": [role] })).unwrap());
        env.add_search(&search).await;
        tickets.push(ticket);
    }
    tickets
}

/// The role figures of the mode's minutes around now.
async fn minute_roles(env: &Env) -> RoleWaits {
    let rows = stats_history::minutes(
        &env.db,
        &env.project_id,
        "duel",
        Utc::now() - TimeDelta::minutes(5),
        Utc::now() + TimeDelta::minutes(5),
    )
    .await
    .unwrap();
    rows.iter()
        .fold(Figures::default(), |mut all, row| {
            all.merge(&Figures::of_row(row));
            all
        })
        .roles
}

/// Asserts two tanks at about 18 s and two damage players at about 165 s.
fn assert_counted(roles: &RoleWaits) {
    let names: Vec<&str> = roles.roles().keys().map(String::as_str).collect();
    assert_eq!(names, ["damage", "tank"], "{roles:?}");
    let tank = &roles.roles()["tank"];
    let damage = &roles.roles()["damage"];
    assert_eq!((tank.matched, damage.matched), (2, 2), "{roles:?}");
    assert_eq!((tank.waits.total(), damage.waits.total()), (2, 2));
    let p50 = tank.wait_quantile(0.5).unwrap();
    assert!((15.0..=20.0).contains(&p50), "{p50}");
    let p50 = damage.wait_quantile(0.5).unwrap();
    assert!((150.0..=180.0).contains(&p50), "{p50}");
}

#[tokio::test]
async fn a_claimed_match_counts_its_players_by_role_seat() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    role_mode(&env, &receiver.url(), None).await;
    add_players(&env).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    let (outcome, _) = env.tick(token).await;
    assert_eq!(outcome, TickOutcome::Matched(1));
    assert_counted(&minute_roles(&env).await);
}

#[tokio::test]
async fn a_proposal_counts_its_players_once_when_made() {
    let receiver = Receiver::start(vec![], Reply::status(204)).await;
    let env = Env::new(Some(&receiver.url()), 1.0).await;
    role_mode(&env, &receiver.url(), Some(json!({"timeoutSeconds": 20}))).await;
    let tickets = add_players(&env).await;
    let token = env.lease("w1", Duration::from_secs(5)).await;
    env.tick(token).await;
    // Proposed only: nobody is counted yet.
    assert!(minute_roles(&env).await.is_empty());
    for ticket in &tickets {
        env.pool
            .answer(&env.mode, ticket, true, now())
            .await
            .unwrap();
    }
    sweep(env.pool.as_ref(), &env.mode, (now(), f64::INFINITY), None)
        .await
        .unwrap();
    env.drain("c1").await;
    assert_counted(&minute_roles(&env).await);
    // Handed over again, counted once.
    env.drain("c1").await;
    assert_counted(&minute_roles(&env).await);
}
