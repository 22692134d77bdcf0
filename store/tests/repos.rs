//! Repository behaviour on PostgreSQL (`MATCHPLANE_TEST_DATABASE_URL`, a
//! fresh `mp_t_<random>` database) and SQLite (a temp file): project
//! scoping, version compare-and-set, secret rotation, key revocation, a
//! minute's role figures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::{Duration, Utc};
use matchplane_store::repos::{api_keys, game_modes, projects, tiers, StoreError};
use matchplane_store::test_support::TestDatabase;
use serde_json::json;

async fn repositories_are_project_scoped(postgres: bool) {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let db = &db;
    let now = Utc::now();
    assert_eq!(tiers::list(db).await.unwrap().len(), 3);
    let a = projects::create(db, "A", "free", now).await.unwrap();
    let b = projects::create(db, "B", "pro", now).await.unwrap();
    assert!(matches!(
        projects::create(db, "C", "gold", now).await,
        Err(StoreError::UnknownReference("tier"))
    ));

    let config = json!({"name": "duel", "matchShape": [1, 1]});
    let mode = game_modes::create(db, &b.id, "duel", config.clone(), "whsec_old", now)
        .await
        .unwrap();
    assert_eq!(mode.version, 1);
    // Another project cannot see, change or delete it.
    assert!(matches!(
        game_modes::get(db, &a.id, "duel").await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        game_modes::replace(db, &a.id, "duel", json!({}), now).await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        game_modes::delete(db, &a.id, "duel").await,
        Err(StoreError::NotFound)
    ));
    assert!(matches!(
        game_modes::rotate_secret(db, &a.id, "duel", "whsec_x", now).await,
        Err(StoreError::NotFound)
    ));
    assert!(game_modes::list(db, &a.id).await.unwrap().is_empty());
    // The same name may exist in another project, never twice in one.
    game_modes::create(db, &a.id, "duel", config.clone(), "whsec_a", now)
        .await
        .unwrap();
    assert!(matches!(
        game_modes::create(db, &b.id, "duel", config, "whsec_b", now).await,
        Err(StoreError::Conflict)
    ));

    let later = now + Duration::seconds(5);
    let v2 = game_modes::replace(db, &b.id, "duel", json!({"name": "duel", "v": 2}), later)
        .await
        .unwrap();
    assert_eq!(v2.version, 2);
    let history = game_modes::versions(db, &b.id, "duel").await.unwrap();
    assert_eq!(
        history.iter().map(|v| v.version).collect::<Vec<_>>(),
        [1, 2]
    );

    let rotated = game_modes::rotate_secret(db, &b.id, "duel", "whsec_new", later)
        .await
        .unwrap();
    let stored = game_modes::get(db, &b.id, "duel").await.unwrap();
    assert_eq!(stored.webhook_secret, "whsec_new");
    assert_eq!(stored.previous_webhook_secret.as_deref(), Some("whsec_old"));
    assert_eq!(stored.version, 2, "rotation is not a config change");
    assert_eq!(
        stored.previous_secret_expires_at.map(|t| t.timestamp()),
        rotated.previous_secret_expires_at.map(|t| t.timestamp())
    );

    let key = api_keys::create(
        db,
        &b.id,
        api_keys::NewKey {
            name: "k",
            prefix: "mp_sk_abc",
            hash: "00ff",
            scopes: "admin",
        },
        now,
    )
    .await
    .unwrap();
    assert!(matches!(
        api_keys::revoke(db, &a.id, &key.id, now).await,
        Err(StoreError::NotFound)
    ));
    assert!(api_keys::find_active_by_hash(db, "00ff")
        .await
        .unwrap()
        .is_some());
    api_keys::revoke(db, &b.id, &key.id, now).await.unwrap();
    assert!(api_keys::find_active_by_hash(db, "00ff")
        .await
        .unwrap()
        .is_none());

    // Deleting a project takes its rows with it.
    projects::delete(db, &b.id).await.unwrap();
    assert!(game_modes::list(db, &b.id).await.unwrap().is_empty());
    assert!(api_keys::list(db, &b.id).await.unwrap().is_empty());
}

#[tokio::test]
async fn repositories_are_project_scoped_postgres() {
    repositories_are_project_scoped(true).await;
}

#[tokio::test]
async fn repositories_are_project_scoped_sqlite() {
    repositories_are_project_scoped(false).await;
}

/// A minute's role figures (docs/rules.md, "Role waits") go into the
/// `role_stats` column and merge with the next cycle's of the same minute.
async fn a_minute_keeps_its_role_figures(postgres: bool) {
    use matchplane_matchmaker::role_waits::RoleWaits;
    use matchplane_store::repos::stats_history::{self, Figures};
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let db = &db;
    let now = Utc::now();
    let p = projects::create(db, "A", "free", now).await.unwrap();
    let minute = stats_history::minute_of(now);
    let mut first = RoleWaits::default();
    first.add("tank", 18.0);
    first.add("damage", 165.0);
    let mut second = RoleWaits::default();
    second.add("tank", 19.0);
    for roles in [&first, &second] {
        let figures = Figures::of_cycle(4, []).with_roles(roles);
        stats_history::record(db, &p.id, "roles", minute, &figures)
            .await
            .unwrap();
    }
    // A mode without roles keeps no role figures.
    stats_history::record(db, &p.id, "duel", minute, &Figures::of_cycle(4, []))
        .await
        .unwrap();
    let to = minute + Duration::minutes(1);
    let rows = stats_history::minutes(db, &p.id, "roles", minute, to)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let roles = Figures::of_row(&rows[0]).roles;
    assert_eq!(roles.roles()["tank"].matched, 2);
    assert_eq!(roles.roles()["damage"].matched, 1);
    let mut both = first.clone();
    both.merge(&second);
    assert_eq!(roles, both);
    let plain = stats_history::minutes(db, &p.id, "duel", minute, to)
        .await
        .unwrap();
    assert_eq!(plain.len(), 1);
    assert_eq!(plain[0].role_stats, None);
}

#[tokio::test]
async fn a_minute_keeps_its_role_figures_postgres() {
    a_minute_keeps_its_role_figures(true).await;
}

#[tokio::test]
async fn a_minute_keeps_its_role_figures_sqlite() {
    a_minute_keeps_its_role_figures(false).await;
}

/// A ticket seated again after its match was released (docs/acceptance.md,
/// "Releasing a match") keeps a row in each match, and reads as seated in
/// the match not released or unassigned, whichever id is greater (a
/// backfill may seat it in an older match); when every one is, the latest.
async fn a_ticket_seated_twice_reads_its_current_match(postgres: bool) {
    use matchplane_store::entities::{match_, match_ticket};
    use matchplane_store::repos::{match_tickets, matches};
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let db = &db;
    let now = Utc::now();
    let p = projects::create(db, "A", "free", now).await.unwrap().id;
    let row = |id: &str, status: &str| match_::Model {
        id: id.into(),
        project_id: p.clone(),
        game_mode: "duel".into(),
        game_mode_version: 1,
        teams: json!([]),
        quality: json!({"mmrSpread": 0.0, "teamImbalance": 0.0}),
        created_at: now,
        match_shape: None,
        seats_open: None,
        region: None,
        status: status.into(),
        answers: None,
        made_at: None,
        assignment: None,
        attributes: None,
    };
    let seat = |match_id: &str| match_ticket::Model {
        ticket_id: "tkt_1".into(),
        match_id: match_id.into(),
        project_id: p.clone(),
        game_mode: "duel".into(),
        player_id: "ana".into(),
        token_hash: "h".into(),
        created_at: 1.0,
        expires_at: 2.0,
        data: Some(format!(r#"{{"in": "{match_id}"}}"#)),
    };
    let current = || async {
        match_tickets::get(db, &p, "tkt_1")
            .await
            .unwrap()
            .map(|r| r.match_id)
    };
    assert_eq!(current().await, None);
    // The older match (by id) seats it now; the newer one was released.
    matches::insert_if_absent(db, vec![row("mat_1", "made"), row("mat_2", "released")])
        .await
        .unwrap();
    let inserted = match_tickets::insert_if_absent(db, vec![seat("mat_2"), seat("mat_1")])
        .await
        .unwrap();
    assert_eq!(inserted, 2);
    assert_eq!(
        match_tickets::insert_if_absent(db, vec![seat("mat_1")])
            .await
            .unwrap(),
        0
    );
    assert_eq!(current().await.as_deref(), Some("mat_1"));
    let of_each = match_tickets::of_matches(db, &p, &["mat_1", "mat_2"])
        .await
        .unwrap();
    assert_eq!(
        of_each.len(),
        2,
        "each match keeps its own row, with its data"
    );
    // Every one released or unassigned: the latest.
    matches::insert_if_absent(db, vec![row("mat_3", "unassigned")])
        .await
        .unwrap();
    match_tickets::insert_if_absent(db, vec![seat("mat_3")])
        .await
        .unwrap();
    assert_eq!(current().await.as_deref(), Some("mat_1"));
    let window = Duration::days(2);
    matchplane_store::repos::match_status::release(db, &p, "mat_1", "released", window, now)
        .await
        .unwrap();
    assert_eq!(current().await.as_deref(), Some("mat_3"));
}

#[tokio::test]
async fn a_ticket_seated_twice_reads_its_current_match_postgres() {
    a_ticket_seated_twice_reads_its_current_match(true).await;
}

#[tokio::test]
async fn a_ticket_seated_twice_reads_its_current_match_sqlite() {
    a_ticket_seated_twice_reads_its_current_match(false).await;
}
