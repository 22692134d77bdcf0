//! Every JSON request body is strict. The walk takes its routes from the
//! generated OpenAPI document, so a new route with a body is covered the
//! day it is registered: each gets (a) an unknown top-level field, (b) a
//! JSON array instead of an object and (c) an empty object (every required
//! field missing), and must answer `400`/`422 VALIDATION_ERROR` naming the
//! fields, with no Rust type name anywhere in the body.

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::{json, Value};

/// Whether `text` names a Rust type, as serde's own messages do.
fn rusty(text: &str, type_names: &[String]) -> Option<String> {
    let primitives = [
        "u8", "u16", "u32", "u64", "usize", "i32", "i64", "f32", "f64",
    ];
    let words: Vec<&str> = text
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .collect();
    if let Some(p) = primitives.iter().find(|p| words.contains(p)) {
        return Some((*p).to_owned());
    }
    for marker in ["struct ", "enum ", "::", "Vec<", "Option<", "String"] {
        if text.contains(marker) {
            return Some(marker.to_owned());
        }
    }
    type_names
        .iter()
        .find(|name| words.contains(&name.as_str()))
        .cloned()
}

/// `required` of a body schema (following one `$ref`).
fn required_of(spec: &Value, schema: &Value) -> Vec<String> {
    let schema = match schema["$ref"].as_str() {
        Some(r) => {
            let name = r.rsplit('/').next().unwrap();
            &spec["components"]["schemas"][name]
        }
        None => schema,
    };
    schema["required"]
        .as_array()
        .map(|r| r.iter().map(|v| v.as_str().unwrap().to_owned()).collect())
        .unwrap_or_default()
}

async fn send(t: &TestApp, method: &Method, path: &str, body: &str) -> crate::common::Answer {
    send_as(t, method, path, body, &format!("Bearer {OPERATOR}")).await
}

/// [`send`] with the `Authorization` header `auth`.
async fn send_as(
    t: &TestApp,
    method: &Method,
    path: &str,
    body: &str,
    auth: &str,
) -> crate::common::Answer {
    let req = Request::builder()
        .method(method.clone())
        .uri(path)
        .header(header::AUTHORIZATION, auth)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_owned()))
        .unwrap();
    t.send(req).await
}

fn assert_refused(
    answer: &crate::common::Answer,
    what: &str,
    type_names: &[String],
) -> Vec<String> {
    assert!(
        answer.status == StatusCode::BAD_REQUEST
            || answer.status == StatusCode::UNPROCESSABLE_ENTITY,
        "{what}: {} {}",
        answer.status,
        answer.body
    );
    assert_eq!(answer.code(), "VALIDATION_ERROR", "{what}: {}", answer.body);
    let text = answer.body.to_string();
    if let Some(found) = rusty(&text, type_names) {
        panic!("{what}: names the Rust type `{found}`: {text}");
    }
    let fields: Vec<String> = answer.body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no errors: {}", answer.body))
        .iter()
        .map(|e| e["field"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        !fields.is_empty(),
        "{what}: no field named: {}",
        answer.body
    );
    fields
}

async fn every_json_body_is_strict(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let mut rated = mode("duel");
    rated["ratings"] = json!({"enabled": true});
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(OPERATOR),
            Some(rated),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    let spec = serde_json::to_value(matchplane_api::openapi()).unwrap();
    let type_names: Vec<String> = spec["components"]["schemas"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .chain(
            // The Rust names behind the documented ones.
            [
                "CreateTicket",
                "StartSearch",
                "CreateKey",
                "CreateProject",
                "UpdateProject",
                "TierBody",
                "GameModeConfig",
                "MatchReport",
                "TeamResult",
                "RatingImport",
                "Attributes",
                "PartyBody",
            ]
            .map(String::from),
        )
        .collect();
    let mut walked = Vec::new();
    for (template, item) in spec["paths"].as_object().unwrap() {
        for (verb, op) in item.as_object().unwrap() {
            let Some(content) = op["requestBody"]["content"]["application/json"].as_object() else {
                continue;
            };
            let method = Method::from_bytes(verb.to_uppercase().as_bytes()).unwrap();
            let path = template
                .replace("{projectId}", &p)
                .replace("{playerId}", "ana")
                .replace("{tier}", "pro")
                .replace(
                    "{name}",
                    if template.starts_with("/v1/tiers") {
                        "pro"
                    } else {
                        "duel"
                    },
                );
            let what = format!("{} {template}", method);
            walked.push(what.clone());

            let unknown = send(&t, &method, &path, r#"{"zzNotAField": 1}"#).await;
            let fields = assert_refused(&unknown, &format!("{what} unknown field"), &type_names);
            assert!(
                fields.iter().any(|f| f == "zzNotAField"),
                "{what}: the unknown field is not named: {}",
                unknown.body
            );
            // Refused, so documented as closed: a generated client
            // neither sends an unknown field nor is told it may. The
            // scenario of a simulation is documented as free-form text
            // (docs/simulate.md), not field by field.
            let schema = match content["schema"]["$ref"].as_str() {
                Some(r) => &spec["components"]["schemas"][r.rsplit('/').next().unwrap()],
                None => &content["schema"],
            };
            if !template.ends_with("/simulate") {
                assert_eq!(
                    schema["additionalProperties"],
                    json!(false),
                    "{what}: unknown fields are refused but the schema leaves them open"
                );
            }

            let array = send(&t, &method, &path, "[]").await;
            assert_eq!(
                array.status,
                StatusCode::BAD_REQUEST,
                "{what}: {}",
                array.body
            );
            assert_eq!(
                assert_refused(&array, &format!("{what} array"), &type_names),
                ["$"]
            );

            let required = required_of(&spec, &content["schema"]);
            if !required.is_empty() {
                let empty = send(&t, &method, &path, "{}").await;
                let fields = assert_refused(&empty, &format!("{what} missing"), &type_names);
                for field in &required {
                    assert!(
                        fields.contains(field),
                        "{what}: missing `{field}` is not named: {}",
                        empty.body
                    );
                }
            }
        }
    }
    // The walk really went through the body routes (a sanity floor).
    for route in [
        "POST /v1/projects/{projectId}/tickets",
        "POST /v1/searches",
        "POST /v1/projects/{projectId}/keys",
        "POST /v1/projects/{projectId}/game-modes",
        "PUT /v1/projects/{projectId}/game-modes/{name}",
        "POST /v1/projects/{projectId}/game-modes/{name}/results",
    ] {
        assert!(
            walked.iter().any(|w| w == route),
            "{route} not walked: {walked:?}"
        );
    }
}

/// A route that takes no body refuses one rather than dropping it: every
/// `POST`, `PUT`, `PATCH` and `DELETE` of the OpenAPI document without a
/// request body answers `400 VALIDATION_ERROR` at `$` to `{"x": 1}`, and
/// takes none (or `{}`) as before.
async fn a_route_without_a_body_refuses_one(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(OPERATOR),
            Some(mode("duel")),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    // A ticket, for the routes a ticket's own token opens.
    let ticket = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(OPERATOR),
            Some(json!({"gameMode": "duel", "playerId": "ana", "attributes": {"mmr": 1500}})),
        )
        .await;
    assert_eq!(ticket.status, StatusCode::CREATED, "{}", ticket.body);
    let ticket_id = ticket.body["ticketId"].as_str().unwrap().to_owned();
    let token = ticket.body["token"].as_str().unwrap().to_owned();
    let spec = serde_json::to_value(matchplane_api::openapi()).unwrap();
    let mut walked = Vec::new();
    for (template, item) in spec["paths"].as_object().unwrap() {
        for (verb, op) in item.as_object().unwrap() {
            if !["post", "put", "patch", "delete"].contains(&verb.as_str())
                || !op["requestBody"].is_null()
            {
                continue;
            }
            let method = Method::from_bytes(verb.to_uppercase().as_bytes()).unwrap();
            let path = template
                .replace("{projectId}", &p)
                .replace("{name}", "duel")
                .replace("{ticketId}", &ticket_id)
                .replace("{matchId}", "mat_nope")
                .replace("{backfillId}", "bf_nope")
                .replace("{keyId}", "key_nope")
                .replace("{partyId}", "pa")
                .replace("{playerId}", "ana");
            // Required query parameters, so the body is what is judged.
            let query: Vec<String> = op["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|q| q["in"] == "query" && q["required"] == true)
                .map(|q| format!("{}=duel", q["name"].as_str().unwrap()))
                .collect();
            let path = if query.is_empty() {
                path
            } else {
                format!("{path}?{}", query.join("&"))
            };
            let what = format!("{method} {template}");
            let auth = if template.starts_with("/v1/searches") {
                format!("Ticket {token}")
            } else {
                format!("Bearer {OPERATOR}")
            };
            let refused = send_as(&t, &method, &path, r#"{"x": 1}"#, &auth).await;
            assert_eq!(
                refused.status,
                StatusCode::BAD_REQUEST,
                "{what}: {}",
                refused.body
            );
            assert_eq!(
                refused.code(),
                "VALIDATION_ERROR",
                "{what}: {}",
                refused.body
            );
            assert_eq!(
                refused.body["errors"][0]["field"], "$",
                "{what}: {}",
                refused.body
            );
            let empty = send_as(&t, &method, &path, "{}", &auth).await;
            assert_ne!(
                empty.status,
                StatusCode::BAD_REQUEST,
                "{what}: {}",
                empty.body
            );
            walked.push(what);
        }
    }
    for route in [
        "POST /v1/searches/{ticketId}/accept",
        "POST /v1/projects/{projectId}/matches/{matchId}/release",
        "DELETE /v1/projects/{projectId}/tickets/{ticketId}",
    ] {
        assert!(
            walked.iter().any(|w| w == route),
            "{route} not walked: {walked:?}"
        );
    }
}

/// Nested objects are strict too, and every type error of a body is listed
/// at once.
async fn nested_typos_and_all_type_errors(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(mode("duel")),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let tickets = format!("/v1/projects/{p}/tickets");
    for (body, field) in [
        (
            json!({"gameMode": "duel", "playerId": "a", "attributes": {"MMR": 1500}}),
            "attributes.MMR",
        ),
        (
            json!({"gameMode": "duel", "playerId": "a", "atributes": {"mmr": 1500}}),
            "atributes",
        ),
        // `latencies` and `data` are attributes now: a malformed one is
        // refused on its field.
        (
            json!({"gameMode": "duel", "playerId": "a", "attributes": {"mmr": 1, "latencies": {"EU": 20}}}),
            "attributes.latencies.EU",
        ),
        (
            json!({"gameMode": "duel", "playerId": "a", "attributes": {"mmr": 1, "data": [1]}}),
            "attributes.data",
        ),
        (
            json!({"gameMode": "duel", "playerId": "a", "attributes": {"mmr": 1, "lag": 3}}),
            "attributes.lag",
        ),
        (
            json!({"gameMode": "duel", "playerId": "a", "attributes": {"mmr": 1},
            "party": {"id": "x", "members": ["a"], "leader": "a"}}),
            "party.leader",
        ),
    ] {
        let answer = t.call(Method::POST, &tickets, Some(&key), Some(body)).await;
        assert_eq!(answer.code(), "VALIDATION_ERROR", "{}", answer.body);
        assert_eq!(answer.body["errors"][0]["field"], field, "{}", answer.body);
    }

    // A key given twice is refused too, not silently the last one, at
    // every depth of the body (the route reads it in one pass, its types
    // refusing the second key themselves).
    for (text, field) in [
        (r#""attributes": {"mmr": 1, "mmr": 2}"#, "attributes.mmr"),
        (
            r#""gameMode": "duel", "attributes": {"mmr": 1}"#,
            "gameMode",
        ),
        (
            r#""attributes": {"mmr": 1}, "attributes": {"mmr": 1}"#,
            "attributes",
        ),
        (
            r#""attributes": {"mmr": 1, "latencies": {}, "latencies": {}}"#,
            "attributes.latencies",
        ),
        (
            r#""attributes": {"mmr": 1, "latencies": {"eu": 1, "eu": 2}}"#,
            "attributes.latencies.eu",
        ),
        (
            r#""attributes": {"mmr": 1, "data": {}, "data": {}}"#,
            "attributes.data",
        ),
        (
            r#""attributes": {"mmr": 1, "data": {"x": 1, "x": 2}}"#,
            "attributes.data.x",
        ),
        (
            r#""attributes": {"mmr": 1, "data": {"a": [{"b": 1, "b": 2}]}}"#,
            "attributes.data.a[0].b",
        ),
        (
            r#""attributes": {"mmr": 1, "lag": 1, "lag": 2}"#,
            "attributes.lag",
        ),
        (
            r#""attributes": {"mmr": 1, "lag": {"k": 1, "k": 2}}"#,
            "attributes.lag.k",
        ),
        (
            r#""attributes": {"mmr": 1, "lag": ["a", {"k": 1, "k": 2}]}"#,
            "attributes.lag[1].k",
        ),
        (
            r#""attributes": {"mmr": 1, "lag": [{"k": 1, "k": 2}]}"#,
            "attributes.lag[0].k",
        ),
        (
            r#""attributes": {"mmr": 1}, "party": {"id": "x", "id": "y", "members": ["a"]}"#,
            "party.id",
        ),
    ] {
        let twice = t
            .send(
                Request::builder()
                    .method(Method::POST)
                    .uri(&tickets)
                    .header(header::AUTHORIZATION, format!("Bearer {key}"))
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from(format!(
                        r#"{{"gameMode": "duel", "playerId": "a", {text}}}"#
                    )))
                    .unwrap(),
            )
            .await;
        twice.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
        assert_eq!(twice.body["errors"][0]["field"], field, "{}", twice.body);
    }

    let modes = format!("/v1/projects/{p}/game-modes");
    for (algorithm, field) in [
        (json!({"type": "fifo", "minMmr": 0}), "algorithm.minMmr"),
        (
            json!({"type": "ping", "maxDelta": 50, "baseTolerance": 5}),
            "algorithm.baseTolerance",
        ),
        (
            json!({"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5,
            "expansionMultiplier": 2, "maxDelta": 1}),
            "algorithm.maxDelta",
        ),
    ] {
        let mut body = mode("typo");
        body["algorithm"] = algorithm;
        let answer = t.call(Method::POST, &modes, Some(&key), Some(body)).await;
        assert_eq!(answer.code(), "VALIDATION_ERROR", "{}", answer.body);
        assert_eq!(answer.body["errors"][0]["field"], field, "{}", answer.body);
    }

    // Wrong types inside `algorithm` do not hide the rest of a game mode.
    let mut body = mode("typo");
    body["algorithm"] = json!({"type": "mmr", "minMmr": "0", "maxMmr": 3000,
        "baseTolerance": [5], "expansionMultiplier": 2});
    body["matchShape"] = json!("2v2");
    body["parties"] = json!({"maxSize": 2, "keepTogther": true});
    let answer = t.call(Method::POST, &modes, Some(&key), Some(body)).await;
    let mut fields: Vec<&str> = answer.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "algorithm.baseTolerance",
            "algorithm.minMmr",
            "matchShape",
            "parties.keepTogther"
        ],
        "{}",
        answer.body
    );
    // A value none of a union's forms takes says what the forms are.
    let mut body = mode("typo");
    body["parties"] = json!({"allowParties": true, "maxSize": 2, "mmr": "median"});
    let answer = t.call(Method::POST, &modes, Some(&key), Some(body)).await;
    answer.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert_eq!(
        answer.body["errors"][0]["field"], "parties.mmr",
        "{}",
        answer.body
    );
    assert_eq!(
        answer.body["errors"][0]["message"],
        r#"expected "mean", "max" or {"blend": b} with b from 0 to 1"#,
        "{}",
        answer.body
    );
    let mut body = mode("typo");
    body["algorithm"] = json!({"type": "elo"});
    let answer = t.call(Method::POST, &modes, Some(&key), Some(body)).await;
    assert_eq!(
        answer.body["errors"][0]["field"], "algorithm.type",
        "{}",
        answer.body
    );

    let answer = t
        .call(
            Method::POST,
            &tickets,
            Some(&key),
            Some(
                json!({"gameMode": 7, "playerId": ["a"], "attributes": {"mmr": "high"},
                "party": {"id": 1, "members": "a"}}),
            ),
        )
        .await;
    answer.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    let mut fields: Vec<&str> = answer.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    fields.sort_unstable();
    assert_eq!(
        fields,
        [
            "attributes.mmr",
            "gameMode",
            "party.id",
            "party.members",
            "playerId"
        ],
        "{}",
        answer.body
    );
    assert!(!answer.body.to_string().contains("CreateTicket"));
}

/// A whole number written with a zero fraction (`824.0`) is taken where an
/// integer is read, as JSON Schema's `integer` admits it, in every body
/// (a game mode, nested blocks and arrays included; a tier; a ticket);
/// a fraction that is not zero is still refused, naming the field.
async fn whole_numbers_with_a_zero_fraction_are_integers(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let mut body = mode("floats");
    body["matchShape"] = json!([2.0, 2.0]);
    body["matchmakingCycleDurationSeconds"] = json!(5.0);
    body["ticketTtlSeconds"] = json!(600.0);
    body["parties"]["maxSize"] = json!(2.0);
    body["backfill"] = json!({"enabled": true, "ttlSeconds": 824.0});
    let modes = format!("/v1/projects/{p}/game-modes");
    let a = t
        .call(Method::POST, &modes, Some(&key), Some(body.clone()))
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    assert_eq!(a.body["matchShape"], json!([2, 2]), "{}", a.body);
    assert_eq!(a.body["ticketTtlSeconds"], json!(600), "{}", a.body);
    assert_eq!(a.body["backfill"]["ttlSeconds"], json!(824), "{}", a.body);

    body["name"] = json!("halves");
    body["ticketTtlSeconds"] = json!(600.5);
    body["backfill"]["ttlSeconds"] = json!(824.0);
    let a = t.call(Method::POST, &modes, Some(&key), Some(body)).await;
    a.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    let fields: Vec<&str> = a.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["ticketTtlSeconds"], "{}", a.body);

    let tier = json!({"minCycleDurationSeconds": 1, "minBaseTolerance": 1,
        "minExpansionMultiplier": 1, "maxMatchSize": 100.0, "maxGameModes": 50.0,
        "maxConcurrentSearches": 100000.0, "requestsPerSecond": 824.0});
    let a = t
        .call(Method::PUT, "/v1/tiers/floaty", Some(OPERATOR), Some(tier))
        .await;
    assert!(a.status.is_success(), "{}", a.body);
    assert_eq!(a.body["requestsPerSecond"], json!(824), "{}", a.body);

    let ticket = json!({"gameMode": "floats", "playerId": "ana",
        "attributes": {"mmr": 1500.0, "data": {"kept": 1.50}}});
    let a = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(ticket),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
}

/// A simulation's scenario names every shape error in one 422
/// (docs/errors.md): an unknown top-level field and a CSV field of the
/// wrong type come with the modes' and the scenario's own errors, where
/// they were answered alone with a 400 before.
async fn a_scenarios_unknown_fields_come_with_its_other_errors(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let body = json!({
        "bogus": 1,
        "arrivalsCsvText": 7,
        "gameMode": {"name": "s", "matchShape": "x", "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"}},
        "until": "x"
    });
    let answer = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/simulate"),
            Some(OPERATOR),
            Some(body),
        )
        .await;
    assert_eq!(
        answer.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        answer.body
    );
    let fields: Vec<&str> = answer.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    for field in ["bogus", "arrivalsCsvText", "gameMode.matchShape", "until"] {
        assert!(
            fields.contains(&field),
            "{field} not named: {}",
            answer.body
        );
    }
}

on_both!(
    a_scenarios_unknown_fields_come_with_its_other_errors,
    every_json_body_is_strict,
    a_route_without_a_body_refuses_one,
    nested_typos_and_all_type_errors,
    whole_numbers_with_a_zero_fraction_are_integers
);
