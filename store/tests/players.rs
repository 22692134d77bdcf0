//! Erasing a player (docs/retention.md, "Erasing a player") on PostgreSQL
//! and SQLite: the player's rows go, their id, `data` and `attributes`
//! leave the rows they share, another player's rows and bytes stay, and
//! another project's player of the same id is untouched.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use chrono::Utc;
use matchplane_matchmaker::ratings::Rating;
use matchplane_store::entities::{
    match_, match_ticket, outbox_dead_letter, rating, search_recording, webhook_delivery,
};
use matchplane_store::repos::deliveries::{queue_if_absent, PendingDelivery};
use matchplane_store::repos::recordings::{self, IdHasher, Kind, NewRecording};
use matchplane_store::repos::{
    dead_letters, game_modes, match_tickets, matches, players, projects, ratings,
};
use matchplane_store::test_support::TestDatabase;
use sea_orm::{DatabaseConnection, EntityTrait};
use serde_json::json;

/// Needs escaping in JSON and in `LIKE`; [`MARK`] is part of it.
const ANA: &str = "o\"neilXQ7%_!é";
const MARK: &str = "neilXQ7";
const SECRET: &str = "s3cret-of-ana";
const BO_DATA: &str = r#"{"z": 1,  "a":[1.50,2e3]}"#;

/// Rows of `project` naming `ana` (or `bo` beside them) in every table an
/// erasure reads.
async fn seed(db: &DatabaseConnection, project: &str, mode_id: &str, hash: &IdHasher) {
    let now = Utc::now();
    let value = Rating {
        rating: 1500.0,
        deviation: 350.0,
        volatility: 0.06,
    };
    for player in [ANA, "bo"] {
        ratings::put(db, project, mode_id, player, value, now)
            .await
            .unwrap();
    }
    let match_id = format!("mat_{}", ulid::Ulid::new());
    let entry = |player: &str, data: serde_json::Value, attributes: serde_json::Value| {
        json!({"playerId": player, "ticketId": format!("tkt_{}", ulid::Ulid::new()), "mmr": 1500.0,
            "data": data, "attributes": attributes})
    };
    let teams = json!([
        {"index": 0, "players": [entry(ANA, json!({"note": SECRET}), json!({"level": 3}))]},
        {"index": 1, "players": [entry("bo", json!({"z": 1}), json!({"friends": [ANA]}))]}
    ]);
    let row = match_::Model {
        id: match_id.clone(),
        project_id: project.to_owned(),
        game_mode: "duel".to_owned(),
        game_mode_version: 1,
        teams,
        quality: json!({}),
        created_at: now,
        match_shape: None,
        seats_open: None,
        region: None,
        status: "made".to_owned(),
        answers: Some(json!({ANA: "accepted", "bo": "accepted"})),
        made_at: None,
        assignment: None,
        attributes: None,
    };
    matches::insert_if_absent(db, vec![row]).await.unwrap();
    let ticket = |player: &str, data: &str| match_ticket::Model {
        ticket_id: format!("tkt_{}_{}", ulid::Ulid::new(), player.len()),
        match_id: match_id.clone(),
        project_id: project.to_owned(),
        game_mode: "duel".to_owned(),
        player_id: player.to_owned(),
        token_hash: "h".to_owned(),
        created_at: 0.0,
        expires_at: 1.0,
        data: Some(data.to_owned()),
    };
    let secret_data = format!(r#"{{"note":"{SECRET}"}}"#);
    match_tickets::insert_if_absent(db, vec![ticket(ANA, &secret_data), ticket("bo", BO_DATA)])
        .await
        .unwrap();
    let payload = format!(
        r#"{{"type":"match.made","players":[{{"playerId":{},"data":{secret_data}}},{{"playerId":"bo","data":{BO_DATA}}}]}}"#,
        json!(ANA)
    );
    let delivery = PendingDelivery {
        id: format!("dlv_{}", ulid::Ulid::new()),
        project_id: project.to_owned(),
        game_mode: "duel".to_owned(),
        match_id: Some(match_id.clone()),
        event_type: "match.made",
        payload: payload.clone(),
    };
    queue_if_absent(db, vec![delivery.row(now)]).await.unwrap();
    let letter = outbox_dead_letter::Model {
        project_id: project.to_owned(),
        game_mode: "duel".to_owned(),
        outbox_id: format!("1-{}", ulid::Ulid::new().0 % 1000),
        match_id,
        record: payload,
        error: "unreadable".to_owned(),
        created_at: now,
    };
    dead_letters::keep(db, vec![letter]).await.unwrap();
    let (ana_hash, bo_hash) = (hash.hash(project, ANA), hash.hash(project, "bo"));
    let recorded = |player_hash: &str, members: Option<String>| NewRecording {
        party_members: members,
        ..NewRecording::event(project, "duel", Kind::Start, player_hash.to_owned(), 1)
    };
    let members = Some(json!([ana_hash, bo_hash]).to_string());
    // A row recorded before the upgrade: Ana under the previous release's
    // hash, the same in every project.
    let earlier = hash.earlier_hash(ANA);
    recordings::insert_batch(
        db,
        &[
            recorded(&ana_hash, None),
            recorded(&bo_hash, members),
            recorded(&earlier, None),
        ],
    )
    .await
    .unwrap();
}

/// Debug text of every row of `project` in the tables an erasure changes.
async fn rows_of(db: &DatabaseConnection, project: &str) -> Vec<String> {
    let mut out = Vec::new();
    macro_rules! all {
        ($entity:ty) => {
            for row in <$entity>::find().all(db).await.unwrap() {
                if row.project_id == project {
                    out.push(format!("{row:?}"));
                }
            }
        };
    }
    all!(match_::Entity);
    all!(match_ticket::Entity);
    all!(rating::Entity);
    all!(webhook_delivery::Entity);
    all!(outbox_dead_letter::Entity);
    all!(search_recording::Entity);
    out
}

async fn erasing_leaves_nothing_of_the_player_and_all_of_the_others(postgres: bool) {
    let (db, _database) = TestDatabase::migrated(postgres).await;
    let db = &db;
    let now = Utc::now();
    let hash = IdHasher::new(b"key").unwrap();
    let (mut modes, mut mode_ids) = (Vec::new(), Vec::new());
    for name in ["A", "B"] {
        let project = projects::create(db, name, "pro", now).await.unwrap();
        let mode = game_modes::create(db, &project.id, "duel", json!({}), "whsec", now)
            .await
            .unwrap();
        seed(db, &project.id, &mode.id, &hash).await;
        modes.push(project.id);
        mode_ids.push(mode.id);
    }
    let (a, b) = (&modes[0], &modes[1]);
    let b_before = rows_of(db, b).await;
    let ana_hash = hash.hash(a, ANA);
    let hashes = [ana_hash.clone(), hash.earlier_hash(ANA)];

    let erased = players::erase(db, a, ANA, &hashes).await.unwrap();
    assert_eq!(
        erased,
        players::Erased {
            ratings_deleted: 1,
            match_tickets_deleted: 1,
            matches_redacted: 1,
            backfills_redacted: 0,
            deliveries_redacted: 1,
            dead_letters_redacted: 1,
            recorded_events_deleted: 2,
        }
    );
    let after = rows_of(db, a).await;
    for needle in [MARK, SECRET, hashes[0].as_str(), hashes[1].as_str()] {
        let left: Vec<&String> = after.iter().filter(|r| r.contains(needle)).collect();
        assert!(left.is_empty(), "{needle} is still in {left:#?}");
    }
    // Bo's rating, ticket, entry and data, as they were.
    assert!(ratings::get(db, &mode_ids[0], "bo")
        .await
        .unwrap()
        .is_some());
    let tickets = match_ticket::Entity::find().all(db).await.unwrap();
    let bo = tickets
        .iter()
        .find(|t| t.project_id == *a && t.player_id == "bo");
    assert_eq!(bo.and_then(|t| t.data.as_deref()), Some(BO_DATA));
    let deliveries = webhook_delivery::Entity::find().all(db).await.unwrap();
    let payload = &deliveries
        .iter()
        .find(|d| d.project_id == *a)
        .unwrap()
        .payload;
    assert!(
        payload.contains(&format!(r#""playerId":"bo","data":{BO_DATA}"#)),
        "{payload}"
    );
    assert!(payload.contains(r#""playerId":"erased-"#), "{payload}");
    // The other project's Ana is untouched.
    assert_eq!(rows_of(db, b).await, b_before);

    let again = players::erase(db, a, ANA, &hashes).await.unwrap();
    assert_eq!(again, players::Erased::default());
}

#[tokio::test]
async fn erasing_a_player_on_postgres() {
    erasing_leaves_nothing_of_the_player_and_all_of_the_others(true).await;
}

#[tokio::test]
async fn erasing_a_player_on_sqlite() {
    erasing_leaves_nothing_of_the_player_and_all_of_the_others(false).await;
}
