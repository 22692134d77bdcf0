//! Erasing a player (docs/retention.md, "Erasing a player"): after `DELETE
//! /v1/projects/{projectId}/players/{playerId}` nothing in any table of the
//! database names the player, holds their ticket's `data` or their
//! recording hash, while the other player of their match keeps their
//! rating, their entry and their `data` byte for byte; a second erasure
//! changes nothing.

use crate::harness::{duel, fast, quick_worker, Pools, TestApp, RECORDING_KEY};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use matchplane_store::entities::search_recording;
use matchplane_store::repos::deliveries;
use matchplane_store::repos::recordings::{self, IdHasher, Kind, NewRecording};
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    Statement,
};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A player id that needs escaping in JSON (`"`), in `LIKE` (`%`, `_`,
/// `!`) and in a URL, with a non-ASCII letter.
const ANA: &str = "o\"neilXQ7%_!é";
/// [`ANA`] as a path segment.
const ANA_PATH: &str = "o%22neilXQ7%25_%21%C3%A9";
/// A part of [`ANA`] that no row would hold by chance.
const MARK: &str = "neilXQ7";
/// In Ana's ticket `data` only.
const SECRET: &str = "s3cret-of-ana";
/// Bo's ticket `data`, in a spelling any re-serialisation would change.
const BO_DATA: &str = r#"{"z": 1,  "a":[1.50,2e3]}"#;

on_both_pools!(an_erased_player_is_nowhere_in_the_database);
on_both_pools!(the_cancel_of_an_erased_search_is_not_recorded_after_the_erasure);

async fn an_erased_player_is_nowhere_in_the_database(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    let mut mode = duel("duel");
    mode["matchmakingCycleDurationSeconds"] = json!(0.5);
    mode["ratings"] = json!({"enabled": true});
    mode["recording"] = json!({"enabled": true, "retentionDays": 7});
    mode["webhook"] = json!({"url": "https://93.184.216.34/hook", "enabled": true});
    mode["attributes"] = json!({"friends": {"type": "playerSet", "default": []}});
    t.mode(&p, &key, mode).await;
    let worker = t.start_worker(quick_worker());

    let ana_body = format!(
        r#"{{"gameMode": "duel", "playerId": {}, "attributes": {{"mmr": 1500, "data": {{"note": "{SECRET}"}}}}}}"#,
        json!(ANA)
    );
    let ana = t
        .ticket_ok(&p, &key, serde_json::from_str(&ana_body).unwrap())
        .await;
    // Bo's friends list names Ana: her id in another player's values.
    let bo_body = format!(
        r#"{{"gameMode": "duel", "playerId": "bo", "attributes": {{"mmr": 1500, "friends": [{}], "data": {BO_DATA}}}}}"#,
        json!(ANA)
    );
    let tickets = format!("/v1/projects/{p}/tickets");
    let (status, text) = t.raw(Method::POST, &tickets, &key, Some(bo_body)).await;
    assert_eq!(status, StatusCode::CREATED, "{text}");
    let created: Value = serde_json::from_str(&text).unwrap();
    let bo = (
        created["ticketId"].as_str().unwrap().to_owned(),
        created["token"].as_str().unwrap().to_owned(),
    );
    for (_, token) in [&ana, &bo] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
    }
    let views = t
        .poll_until(&[ana.clone(), bo.clone()], |v| v["status"] == "matched")
        .await;
    let match_id = views[0]["match"]["matchId"].as_str().unwrap().to_owned();
    let results = format!("/v1/projects/{p}/game-modes/duel/results");
    let report = json!({"matchId": match_id, "teams": [{"players": [ANA], "place": 1}, {"players": ["bo"], "place": 2}]});
    let reported = t
        .call(Method::POST, &results, Some(&key), Some(report))
        .await;
    assert_eq!(reported.status, StatusCode::OK, "{}", reported.body);

    let hasher = IdHasher::new(RECORDING_KEY.as_bytes()).unwrap();
    let hash = hasher.hash(&p, ANA);
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let recorded = search_recording::Entity::find()
            .filter(search_recording::Column::PlayerHash.eq(hash.as_str()))
            .count(&t.db)
            .await
            .unwrap();
        let delivered = deliveries::of_match(&t.db, &p, &match_id).await.unwrap();
        if recorded > 0 && !delivered.is_empty() {
            break;
        }
        assert!(Instant::now() < until, "no recording or delivery yet");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    worker.stop().await;
    // Ana's search recorded before an upgrade, under the previous
    // release's hash of her id.
    let earlier = hasher.earlier_hash(ANA);
    let row = NewRecording::event(&p, "duel", Kind::Start, earlier.clone(), 1);
    recordings::insert_batch(&t.db, &[row]).await.unwrap();

    // Before: Ana is in the matches, tickets, ratings, deliveries and
    // recordings (so the scan below can fail).
    let before = tables_holding(&t.db, &[MARK, SECRET, &hash, &earlier]).await;
    for table in [
        "matches",
        "match_tickets",
        "ratings",
        "webhook_deliveries",
        "search_recordings",
    ] {
        assert!(
            before.iter().any(|(tb, _)| tb == table),
            "{table} not in {before:?}"
        );
    }

    let path = format!("/v1/projects/{p}/players/{ANA_PATH}");
    let erased = t.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(erased.status, StatusCode::OK, "{}", erased.body);
    let e = &erased.body;
    assert_eq!(e["ratingsDeleted"], 1, "{e}");
    assert_eq!(e["matchTicketsDeleted"], 1, "{e}");
    assert_eq!(e["matchesRedacted"], 1, "{e}");
    assert!(e["deliveriesRedacted"].as_u64().unwrap() >= 1, "{e}");
    // Her rows under both hashes.
    assert!(e["recordedEventsDeleted"].as_u64().unwrap() >= 2, "{e}");
    assert_eq!(e["cancelled"], json!([]), "{e}");

    let after = tables_holding(&t.db, &[MARK, SECRET, &hash, &earlier]).await;
    assert!(after.is_empty(), "the erased player is still in {after:?}");

    // Bo keeps his rating, his entry and his data as sent.
    let bo_rating = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/ratings/bo"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(bo_rating.body["games"], 1, "{}", bo_rating.body);
    let delivery = deliveries::of_match(&t.db, &p, &match_id).await.unwrap();
    let payload = &delivery[0].0.payload;
    assert!(
        payload.contains(&format!(r#""data":{BO_DATA}"#)),
        "{payload}"
    );
    assert!(payload.contains(r#""playerId":"bo""#), "{payload}");
    assert!(payload.contains(r#""playerId":"erased-"#), "{payload}");
    let seen = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches/{match_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(seen.status, StatusCode::OK, "{}", seen.body);
    let text = seen.body.to_string();
    assert!(
        text.contains("\"bo\"") && text.contains("erased-"),
        "{text}"
    );

    // Again: nothing more to do.
    let again = t.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    for (field, count) in again.body.as_object().unwrap() {
        if field != "cancelled" {
            assert_eq!(count, 0, "{field}: {}", again.body);
        }
    }

    // A player id no ticket could carry is refused by name.
    let bad = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/players/%20"),
            Some(&key),
            None,
        )
        .await;
    bad.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
}

/// Erasing a player who is searching ends the search, whose cancel is
/// queued for the recording: it is not stored once the erasure has
/// deleted the player's recorded events.
async fn the_cancel_of_an_erased_search_is_not_recorded_after_the_erasure(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("enterprise").await;
    let mut mode = duel("duel");
    mode["recording"] = json!({"enabled": true, "retentionDays": 7});
    t.mode(&p, &key, mode).await;
    let ticket = json!({"gameMode": "duel", "playerId": "cy", "attributes": {"mmr": 1500}});
    let (ticket_id, token) = t.ticket_ok(&p, &key, ticket).await;
    assert_eq!(t.rest_search(&token).await.status, StatusCode::ACCEPTED);
    let hash = IdHasher::new(RECORDING_KEY.as_bytes())
        .unwrap()
        .hash(&p, "cy");
    let recorded = || async {
        search_recording::Entity::find()
            .filter(search_recording::Column::PlayerHash.eq(hash.as_str()))
            .count(&t.db)
            .await
            .unwrap()
    };
    let until = Instant::now() + Duration::from_secs(10);
    while recorded().await == 0 {
        assert!(Instant::now() < until, "the start is not recorded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let path = format!("/v1/projects/{p}/players/cy");
    let erased = t.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(erased.status, StatusCode::OK, "{}", erased.body);
    assert_eq!(
        erased.body["cancelled"],
        json!([ticket_id]),
        "{}",
        erased.body
    );
    assert_eq!(erased.body["recordedEventsDeleted"], 1, "{}", erased.body);
    // Several of the writer's flushes later, nothing of cy's is stored.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(recorded().await, 0);
}

/// Every `(table, needle)` of the database's tables whose rows' text holds
/// one of `needles`.
async fn tables_holding(db: &DatabaseConnection, needles: &[&str]) -> Vec<(String, String)> {
    let backend = db.get_database_backend();
    let tables = db
        .query_all(Statement::from_string(
            backend,
            "SELECT table_name::text AS name FROM information_schema.tables \
             WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY 1",
        ))
        .await
        .unwrap();
    let mut found = Vec::new();
    for row in tables {
        let table: String = row.try_get("", "name").unwrap();
        for needle in needles {
            let sql =
                format!("SELECT COUNT(*) AS n FROM \"{table}\" x WHERE strpos(x::text, $1) > 0");
            let n: i64 = db
                .query_one(Statement::from_sql_and_values(
                    backend,
                    sql,
                    [(*needle).into()],
                ))
                .await
                .unwrap()
                .unwrap()
                .try_get("", "n")
                .unwrap();
            if n > 0 {
                found.push((table.clone(), (*needle).to_owned()));
            }
        }
    }
    found
}
