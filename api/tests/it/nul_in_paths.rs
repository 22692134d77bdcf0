//! A NUL (`%00`) in a path's mode name or player id is answered as any
//! other control character there (docs/retention.md, "Erasing a player";
//! docs/error-codes.md, `GAME_MODE_NOT_FOUND`), on every documented route
//! that takes one, taken from the OpenAPI document; a NUL anywhere else in
//! a path stays `404 NOT_FOUND` (errors.rs).

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

/// The example of an operation's JSON body, `{}` without one.
fn body_example(doc: &Value, op: &Value) -> Value {
    let schema = &op["requestBody"]["content"]["application/json"]["schema"];
    let Some(reference) = schema["$ref"].as_str() else {
        return json!({});
    };
    let name = reference.rsplit('/').next().unwrap();
    doc["components"]["schemas"][name]["example"].clone()
}

/// What an answer is, its echo of the path aside: status, code, fields.
fn gist(answer: &crate::common::Answer) -> Value {
    let fields: Vec<Value> = answer.body["errors"]
        .as_array()
        .map(|e| e.iter().map(|e| e["field"].clone()).collect())
        .unwrap_or_default();
    json!([answer.status.as_u16(), answer.body["code"], fields])
}

on_both!(a_nul_in_a_mode_name_or_player_id_is_any_control_character);

async fn a_nul_in_a_mode_name_or_player_id_is_any_control_character(backend: Backend) {
    let doc = serde_json::to_value(matchplane_api::openapi()).unwrap();
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let mut duel = mode("duel");
    duel["ratings"] = json!({"enabled": true});
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(duel),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    // The two the probe found.
    let erase = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{p}/players/%00"),
            Some(&key),
            None,
        )
        .await;
    erase.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(
        erase.body["errors"][0]["field"], "playerId",
        "{}",
        erase.body
    );
    let read = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/%00"),
            Some(&key),
            None,
        )
        .await;
    read.assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");

    let mut checked = 0;
    for (route, item) in doc["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let Ok(method) = Method::from_bytes(method.to_uppercase().as_bytes()) else {
                continue;
            };
            let body = op["requestBody"]
                .is_object()
                .then(|| body_example(&doc, op));
            for param in ["{name}", "{playerId}"] {
                if !route.contains(param) {
                    continue;
                }
                let mut answers = Vec::new();
                for control in ["%07", "%00"] {
                    let or = |usual| if param == usual { control } else { "" };
                    let path = route
                        .replace("{projectId}", &p)
                        .replace("{name}", &format!("duel{}", or("{name}")))
                        .replace("{playerId}", &format!("p1{}", or("{playerId}")));
                    let answer = t
                        .call(method.clone(), &path, Some(&key), body.clone())
                        .await;
                    assert_ne!(answer.status, StatusCode::INTERNAL_SERVER_ERROR, "{path}");
                    answers.push(gist(&answer));
                }
                assert_eq!(answers[1], answers[0], "{method} {route}, NUL in {param}");
                // A player id no ticket could carry is refused on every
                // route that takes one, reading and ending alike.
                if param == "{playerId}" {
                    assert_eq!(answers[0][0], 422, "{method} {route}: {}", answers[0]);
                    assert!(
                        answers[0][2]
                            .as_array()
                            .is_some_and(|f| f.contains(&json!("playerId"))),
                        "{method} {route}: {}",
                        answers[0]
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "only {checked} routes checked");
}
