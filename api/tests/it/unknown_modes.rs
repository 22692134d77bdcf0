//! Every documented route on a game mode (`…/game-modes/{name}…`), taken
//! from the OpenAPI document rather than a hand-kept list, answers an
//! unknown mode with `404 GAME_MODE_NOT_FOUND` naming it, the code a ticket
//! for an unknown mode gets; the document says so. The one route that
//! creates an absent mode (`PUT …/game-modes/{name}`, 201) is left out.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

fn doc() -> Value {
    serde_json::to_value(matchplane_api::openapi()).unwrap()
}

/// The example of an operation's JSON body, `{}` without one.
fn body_example(doc: &Value, op: &Value) -> Value {
    let schema = &op["requestBody"]["content"]["application/json"]["schema"];
    let Some(reference) = schema["$ref"].as_str() else {
        return json!({});
    };
    let name = reference.rsplit('/').next().unwrap();
    doc["components"]["schemas"][name]["example"].clone()
}

on_both!(every_mode_route_answers_game_mode_not_found);

async fn every_mode_route_answers_game_mode_not_found(backend: Backend) {
    let doc = doc();
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

    let mut checked = 0;
    for (route, item) in doc["paths"].as_object().unwrap() {
        if !route.contains("/game-modes/{name}") {
            continue;
        }
        for (method, op) in item.as_object().unwrap() {
            if op["responses"]["201"].is_object() {
                continue;
            }
            let Ok(method) = Method::from_bytes(method.to_uppercase().as_bytes()) else {
                continue;
            };
            let described = op["responses"]["404"]["description"]
                .as_str()
                .unwrap_or_default();
            assert!(
                described.contains("GAME_MODE_NOT_FOUND"),
                "{method} {route}: 404 is documented as {described:?}"
            );
            let path = route
                .replace("{projectId}", &p)
                .replace("{name}", "nope")
                .replace("{playerId}", "p1");
            let body = op["requestBody"]
                .is_object()
                .then(|| body_example(&doc, op));
            let answer = t.call(method.clone(), &path, Some(&key), body).await;
            assert_eq!(
                answer.status,
                StatusCode::NOT_FOUND,
                "{method} {route}: {}",
                answer.body
            );
            answer.assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
            let detail = answer.body["detail"].as_str().unwrap_or_default();
            assert!(detail.contains("\"nope\""), "{method} {route}: {detail}");
            checked += 1;
        }
    }
    assert!(checked >= 15, "only {checked} mode routes checked");
}

on_both!(a_name_no_mode_can_have_is_not_echoed_whole);

/// A ticket or a path naming a mode of 10 000 characters is told no mode
/// can have that name, with only its start echoed.
async fn a_name_no_mode_can_have_is_not_echoed_whole(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let long = "g".repeat(10_000);
    let ticket = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(json!({"gameMode": long, "playerId": "p1"})),
        )
        .await;
    let path = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/{long}/versions"),
            Some(&key),
            None,
        )
        .await;
    for answer in [ticket, path] {
        answer.assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
        let detail = answer.body["detail"].as_str().unwrap_or_default();
        assert!(detail.len() < 300, "{} bytes: {detail}", detail.len());
        assert!(
            detail.contains("no game mode can have this name"),
            "{detail}"
        );
    }
}

on_both!(a_path_segment_that_is_not_utf8_is_told_so);

/// A path segment that is not UTF-8 once percent-decoded names nothing that
/// can exist, and the answer says so instead of denying the project.
async fn a_path_segment_that_is_not_utf8_is_told_so(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let answer = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/%FF%FE"),
            Some(&key),
            None,
        )
        .await;
    answer.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    let detail = answer.body["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("not UTF-8"), "{detail}");
}
