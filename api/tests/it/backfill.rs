//! Backfill requests over the API: open with a roster, read, replace with
//! a newer roster, close, list the match's; every refusal with its fields; one open request
//! per match; `expired` after `ttlSeconds`. PostgreSQL and SQLite.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use chrono::Utc;
use matchplane_store::entities::match_;
use matchplane_store::repos::matches;
use serde_json::{json, Value};

/// A project with mode `duel` (`[2, 2]`, MMR) whose `backfill` is `block`
/// (none when `Null`), and one stored match of it: team 0 `a`, `b`, team 1
/// `c`, `d`. Returns (app, project, key, match id).
async fn setup(backend: Backend, block: Value) -> (TestApp, String, String, String) {
    let mut body = mode("duel");
    if !block.is_null() {
        body["backfill"] = block;
    }
    setup_mode(backend, body).await
}

/// [`setup`] with the mode `body` (named `duel`, `[2, 2]`).
async fn setup_mode(backend: Backend, body: Value) -> (TestApp, String, String, String) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let match_id = format!("mat_{}", ulid::Ulid::new());
    let player = |id: &str, mmr: f64| {
        json!({"playerId": id, "ticketId": format!("tkt_{id}"), "partyId": null,
               "mmr": mmr, "pingMs": null, "waitSeconds": 3.0})
    };
    let teams = json!([
        {"index": 0, "players": [player("a", 1500.0), player("b", 1520.0)], "meanMmr": 1510.0},
        {"index": 1, "players": [player("c", 1490.0), player("d", 1530.0)], "meanMmr": 1510.0}]);
    matches::insert_if_absent(
        &t.db,
        vec![match_::Model {
            id: match_id.clone(),
            project_id: p.clone(),
            game_mode: "duel".into(),
            game_mode_version: 1,
            teams,
            quality: json!({"mmrSpread": 40.0, "teamImbalance": 0.0}),
            created_at: Utc::now(),
            match_shape: Some(json!([2, 2])),
            seats_open: Some(json!([0, 0])),
            region: None,
            status: "made".into(),
            answers: None,
            made_at: None,
            assignment: None,
            attributes: None,
        }],
    )
    .await
    .unwrap();
    (t, p, key, match_id)
}

fn roster(team0: &[&str], team1: &[&str]) -> Value {
    let players =
        |ids: &[&str]| -> Vec<Value> { ids.iter().map(|id| json!({"playerId": id})).collect() };
    json!({"teams": [{"index": 0, "players": players(team0)},
                     {"index": 1, "players": players(team1)}]})
}

fn fields(answer: &crate::common::Answer) -> Vec<(String, String)> {
    answer.body["errors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            (
                e["field"].as_str().unwrap_or_default().to_owned(),
                e["code"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

async fn backfill_round_trip(backend: Backend) {
    let (t, p, key, m) = setup(backend, json!({"enabled": true, "ttlSeconds": 60})).await;
    let base = format!("/v1/projects/{p}/matches/{m}/backfill");
    let opened = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(roster(&["a"], &["c", "d"])),
        )
        .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    assert_eq!(opened.body["status"], "open");
    assert_eq!(opened.body["openSeats"], json!([1, 0]));
    let id = opened.body["backfillId"].as_str().unwrap().to_owned();
    assert!(id.starts_with("bf_"));
    assert_eq!(
        opened.headers[axum::http::header::LOCATION],
        format!("{base}/{id}").as_str()
    );
    assert!(opened.body["expiresAt"].is_string());

    // One open request per match, naming the open one.
    let again = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(roster(&["a"], &["c"])),
        )
        .await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
    assert_eq!(again.code(), "BACKFILL_ALREADY_OPEN");
    assert_eq!(again.body["backfillId"], json!(id));

    let item = format!("{base}/{id}");
    let read = t.call(Method::GET, &item, Some(&key), None).await;
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    assert_eq!(read.body["openSeats"], json!([1, 0]));
    assert_eq!(read.body["fills"], json!([]));

    // A newer roster replaces the seats.
    let put = t
        .call(Method::PUT, &item, Some(&key), Some(roster(&["a"], &["c"])))
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);
    assert_eq!(put.body["openSeats"], json!([1, 1]));
    let read = t.call(Method::GET, &item, Some(&key), None).await;
    assert_eq!(read.body["openSeats"], json!([1, 1]));

    let closed = t.call(Method::DELETE, &item, Some(&key), None).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    assert_eq!(closed.body["status"], "closed");
    let put = t
        .call(Method::PUT, &item, Some(&key), Some(roster(&["a"], &["c"])))
        .await;
    assert_eq!(put.status, StatusCode::CONFLICT, "{}", put.body);
    // Closed, the match may open a new request.
    let reopened = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(roster(&["a"], &["c"])),
        )
        .await;
    assert_eq!(reopened.status, StatusCode::CREATED, "{}", reopened.body);

    // The match's requests, newest first, as each one's own view.
    let listed = t.call(Method::GET, &base, Some(&key), None).await;
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    let ids: Vec<&str> = listed
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["backfillId"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [reopened.body["backfillId"].as_str().unwrap(), &id],
        "{}",
        listed.body
    );
    assert_eq!(listed.body[0]["status"], "open", "{}", listed.body);
    assert_eq!(listed.body[1]["status"], "closed", "{}", listed.body);
    let unknown = format!("/v1/projects/{p}/matches/mat_nope/backfill");
    let unknown = t.call(Method::GET, &unknown, Some(&key), None).await;
    assert_eq!(unknown.status, StatusCode::NOT_FOUND, "{}", unknown.body);
}

async fn every_refusal_names_its_fields(backend: Backend) {
    let (t, p, key, m) = setup(backend, json!({})).await;
    let base = format!("/v1/projects/{p}/matches/{m}/backfill");
    let missing = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/mat_nope/backfill"),
            Some(&key),
            Some(roster(&["a"], &[])),
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    assert_eq!(missing.code(), "NOT_FOUND");

    let full = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(roster(&["a", "b"], &["c", "d"])),
        )
        .await;
    assert_eq!(full.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(full.code(), "NO_OPEN_SEATS");

    let bad = json!({"teams": [
        {"index": 0, "players": [{"playerId": "a"}, {"playerId": "b"}, {"playerId": "x", "mmr": 1500}]},
        {"index": 1, "players": [{"playerId": "a"}, {"playerId": "y"}]},
        {"index": 7, "players": []}]});
    let invalid = t.call(Method::POST, &base, Some(&key), Some(bad)).await;
    assert_eq!(
        invalid.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        invalid.body
    );
    assert_eq!(invalid.code(), "INVALID_ROSTER");
    let got = fields(&invalid);
    for field in [
        "teams[0].players",
        "teams[1].players[0].playerId",
        "teams[1].players[1].mmr",
        "teams[2].index",
    ] {
        assert!(
            got.contains(&(field.to_owned(), "INVALID_ROSTER".to_owned())),
            "{field} in {got:?}"
        );
    }

    // An MMR the mode's range refuses, as a ticket's: no candidate could
    // ever fill such a roster.
    let outside = json!({"teams": [
        {"index": 0, "players": [{"playerId": "a"}]},
        {"index": 1, "players": [{"playerId": "y", "mmr": 99999}]}]});
    let refused = t.call(Method::POST, &base, Some(&key), Some(outside)).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert!(
        fields(&refused).contains(&(
            "teams[1].players[0].mmr".to_owned(),
            "MMR_OUT_OF_RANGE".to_owned()
        )),
        "{}",
        refused.body
    );
}

async fn backfill_off_is_refused(backend: Backend) {
    let (t, p, key, m) = setup(backend, Value::Null).await;
    let answer = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{m}/backfill"),
            Some(&key),
            Some(roster(&["a"], &["c"])),
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(answer.code(), "BACKFILL_NOT_ENABLED");
    assert_eq!(fields(&answer)[0].0, "backfill");
}

/// A disabled mode takes no roster: neither a new request nor a new
/// roster for an open one (docs/backfill.md, "Changing or closing a
/// request"); its open request may still be closed.
async fn a_disabled_mode_takes_no_roster(backend: Backend) {
    let (t, p, key, m) = setup(backend, json!({"enabled": true})).await;
    let base = format!("/v1/projects/{p}/matches/{m}/backfill");
    let opened = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(roster(&["a"], &["c"])),
        )
        .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let item = format!("{base}/{}", opened.body["backfillId"].as_str().unwrap());
    let mut body = mode("duel");
    body["backfill"] = json!({"enabled": true});
    body["enabled"] = json!(false);
    let disabled = t
        .call(
            Method::PUT,
            &format!("/v1/projects/{p}/game-modes/duel"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(disabled.status, StatusCode::OK, "{}", disabled.body);

    let put = t
        .call(Method::PUT, &item, Some(&key), Some(roster(&["a"], &["c"])))
        .await;
    put.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "BACKFILL_NOT_ENABLED");
    assert_eq!(fields(&put)[0].0, "backfill");
    let read = t.call(Method::GET, &item, Some(&key), None).await;
    assert_eq!(read.body["status"], "open", "{}", read.body);
    let closed = t.call(Method::DELETE, &item, Some(&key), None).await;
    assert_eq!(closed.status, StatusCode::OK, "{}", closed.body);
    let again = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(roster(&["a"], &["c"])),
        )
        .await;
    again.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "BACKFILL_NOT_ENABLED");
}

async fn a_request_expires_after_its_ttl(backend: Backend) {
    let (t, p, key, m) = setup(backend, json!({"ttlSeconds": 5})).await;
    let base = format!("/v1/projects/{p}/matches/{m}/backfill");
    let opened = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(roster(&["a"], &["c"])),
        )
        .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let id = opened.body["backfillId"].as_str().unwrap().to_owned();
    // Age the request as the clock would (the route reads the wall clock).
    use sea_orm::{ConnectionTrait, Statement};
    let past = (Utc::now() - chrono::Duration::seconds(1)).to_rfc3339();
    t.db.execute(Statement::from_sql_and_values(
        t.db.get_database_backend(),
        match t.db.get_database_backend() {
            sea_orm::DatabaseBackend::Postgres => {
                "UPDATE backfills SET expires_at = $1::timestamptz WHERE id = $2"
            }
            _ => "UPDATE backfills SET expires_at = $1 WHERE id = $2",
        },
        [past.into(), id.clone().into()],
    ))
    .await
    .unwrap();
    let read = t
        .call(Method::GET, &format!("{base}/{id}"), Some(&key), None)
        .await;
    assert_eq!(read.body["status"], "expired", "{}", read.body);
    let closed = t
        .call(Method::DELETE, &format!("{base}/{id}"), Some(&key), None)
        .await;
    assert_eq!(closed.status, StatusCode::CONFLICT);
    // An expired request does not hold the match.
    let next = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(roster(&["a"], &["c"])),
        )
        .await;
    assert_eq!(next.status, StatusCode::CREATED, "{}", next.body);
}

/// A retried open (`Idempotency-Key`, docs/backfill.md) gets the first answer, not
/// `BACKFILL_ALREADY_OPEN`; without the key a second open is refused.
async fn a_retried_open_gets_the_first_answer(backend: Backend) {
    let (t, p, key, m) = setup(backend, json!({"enabled": true, "ttlSeconds": 60})).await;
    let base = format!("/v1/projects/{p}/matches/{m}/backfill");
    let send = || {
        let req = axum::http::Request::builder()
            .method(Method::POST)
            .uri(&base)
            .header(axum::http::header::AUTHORIZATION, format!("Bearer {key}"))
            .header(axum::http::header::CONTENT_TYPE, "application/json")
            .header("idempotency-key", "leave-p4")
            .body(axum::body::Body::from(
                roster(&["a"], &["c", "d"]).to_string(),
            ))
            .unwrap();
        t.send(req)
    };
    let first = send().await;
    assert_eq!(first.status, StatusCode::CREATED, "{}", first.body);
    let again = send().await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    assert_eq!(again.body["backfillId"], first.body["backfillId"]);
    let plain = t
        .call(
            Method::POST,
            &base,
            Some(&key),
            Some(roster(&["a"], &["c", "d"])),
        )
        .await;
    assert_eq!(plain.code(), "BACKFILL_ALREADY_OPEN", "{}", plain.body);
}

/// A value of a JSON type no attribute reads is refused as a ticket's is
/// (`422` at the value, the index of a set's entry), beside every other
/// failure of the request: its other values and its roster's seats.
async fn a_wrongly_typed_value_is_listed_with_every_other_failure(backend: Backend) {
    let mut body = mode("duel");
    body["backfill"] = json!({});
    body["attributes"] = json!({
        "build": {"type": "string"},
        "maps": {"type": "stringSet", "values": ["dust", "inferno"]}
    });
    body["rules"] = json!([
        {"name": "same-build", "type": "equal", "attribute": "build"},
        {"name": "map", "type": "intersect", "attribute": "maps"}
    ]);
    let (t, p, key, m) = setup_mode(backend, body).await;
    let request = json!({
        "attributes": {"maps": ["dust", 7], "nope": "x"},
        "teams": [
            {"index": 0, "players": [{"playerId": "a", "attributes": {"build": true}}]},
            {"index": 7, "players": []}]});
    let refused = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{m}/backfill"),
            Some(&key),
            Some(request),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let got = fields(&refused);
    for (field, code) in [
        ("attributes.maps[1]", "VALIDATION_ERROR"),
        ("attributes.nope", "VALIDATION_ERROR"),
        ("teams[0].players[0].attributes.build", "VALIDATION_ERROR"),
        ("teams[1].index", "INVALID_ROSTER"),
    ] {
        assert!(
            got.contains(&(field.to_owned(), code.to_owned())),
            "{field} {code} in {got:?}"
        );
    }
}

/// A role queue's mode (`[2, 2]`, one tank and one dps a team) whose
/// `maps` an `intersect` rule reads, and `extra` rules beside it.
fn role_mode(extra: Value) -> Value {
    let mut body = mode("duel");
    body["backfill"] = json!({});
    body["attributes"] = json!({
        "maps": {"type": "stringSet", "values": ["dust", "inferno"]},
        "roles": {"type": "stringSet", "values": ["tank", "healer", "dps"]}
    });
    let mut rules = vec![json!({"name": "map", "type": "intersect", "attribute": "maps"})];
    rules.extend(extra.as_array().cloned().unwrap_or_default());
    body["rules"] = json!(rules);
    body["composition"] = json!({"attribute": "roles", "perTeam": {"tank": 1, "dps": 1}});
    body
}

/// A roster of `a` (tank) on team 0 and `c` (tank), `d` (dps) on team 1,
/// with the request's `attributes` and `a`'s own.
fn role_roster(attributes: Value, a: Value) -> Value {
    json!({"attributes": attributes, "teams": [
        {"index": 0, "players": [{"playerId": "a", "role": "tank", "attributes": a}]},
        {"index": 1, "players": [{"playerId": "c", "role": "tank"},
                                 {"playerId": "d", "role": "dps"}]}]})
}

/// The composition's attribute, which no rule reads, is refused in a
/// request's `attributes` and in a roster entry's (docs/rules.md, "Backfill
/// by role"): the open seats follow the roster's `role`s, so the value
/// would be shown and change nothing. A rule reading it makes it a value
/// like any other.
async fn the_compositions_attribute_is_refused_when_no_rule_reads_it(backend: Backend) {
    let (t, p, key, m) = setup_mode(backend, role_mode(json!([]))).await;
    let base = format!("/v1/projects/{p}/matches/{m}/backfill");
    let post = |body: Value| t.call(Method::POST, &base, Some(&key), Some(body));
    let refused = post(role_roster(
        json!({"maps": ["inferno"], "roles": ["tank"]}),
        json!({"roles": ["dps"]}),
    ))
    .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    assert_eq!(
        fields(&refused),
        [
            ("attributes.roles".to_owned(), "VALIDATION_ERROR".to_owned()),
            (
                "teams[0].players[0].attributes.roles".to_owned(),
                "VALIDATION_ERROR".to_owned()
            ),
        ],
        "{}",
        refused.body
    );
    let messages = refused.body["errors"].to_string();
    assert!(
        messages.contains("open seats follow its roster"),
        "{messages}"
    );
    assert!(messages.contains("give `role` instead"), "{messages}");
    // A value of no attribute's type is refused the same way, once.
    let refused = post(role_roster(json!({"roles": [1, 2]}), json!({}))).await;
    assert_eq!(
        fields(&refused),
        [("attributes.roles".to_owned(), "VALIDATION_ERROR".to_owned())],
        "{}",
        refused.body
    );

    // Without it, the request opens; a PUT sending it is refused too.
    let opened = post(role_roster(json!({"maps": ["inferno"]}), json!({}))).await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
    let id = opened.body["backfillId"].as_str().unwrap().to_owned();
    let put = t
        .call(
            Method::PUT,
            &format!("{base}/{id}"),
            Some(&key),
            Some(role_roster(json!({"roles": ["tank"]}), json!({}))),
        )
        .await;
    assert_eq!(
        fields(&put),
        [("attributes.roles".to_owned(), "VALIDATION_ERROR".to_owned())],
        "{}",
        put.body
    );

    // Read by a rule, it is a value the fills use: accepted.
    let rule = json!([{"name": "same-roles", "type": "intersect", "attribute": "roles"}]);
    let (t, p, key, m) = setup_mode(backend, role_mode(rule)).await;
    let opened = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/matches/{m}/backfill"),
            Some(&key),
            Some(role_roster(
                json!({"roles": ["tank"]}),
                json!({"roles": ["tank"]}),
            )),
        )
        .await;
    assert_eq!(opened.status, StatusCode::CREATED, "{}", opened.body);
}

on_both!(
    the_compositions_attribute_is_refused_when_no_rule_reads_it,
    a_wrongly_typed_value_is_listed_with_every_other_failure,
    a_retried_open_gets_the_first_answer,
    backfill_round_trip,
    every_refusal_names_its_fields,
    backfill_off_is_refused,
    a_disabled_mode_takes_no_roster,
    a_request_expires_after_its_ttl,
);
