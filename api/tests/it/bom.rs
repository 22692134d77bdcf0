//! A JSON body may start with a UTF-8 byte order mark (some Windows tools
//! write one): it is skipped, on every kind of body; anywhere else it is
//! still malformed JSON.

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::{json, Value};

const BOM: &[u8] = b"\xEF\xBB\xBF";

fn with_bom(method: Method, path: &str, token: &str, body: &Value) -> Request<Body> {
    let mut bytes = BOM.to_vec();
    bytes.extend(serde_json::to_vec(body).unwrap());
    Request::builder()
        .method(method)
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(bytes))
        .unwrap()
}

async fn a_leading_bom_is_skipped(backend: Backend) {
    let t = TestApp::new(backend).await;
    // A typed body (the operator's project).
    let project = t
        .send(with_bom(
            Method::POST,
            "/v1/projects",
            OPERATOR,
            &json!({"name": "Studio", "tier": "free"}),
        ))
        .await;
    assert_eq!(project.status, StatusCode::CREATED, "{}", project.body);
    let p = project.body["id"].as_str().unwrap().to_owned();
    let (_, key) = t.key(&p).await;
    // A body cleaned before it is parsed (a game mode).
    let created = t
        .send(with_bom(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            &key,
            &mode("bom"),
        ))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["name"], "bom");

    // A BOM alone, or not at the start, is still malformed.
    for bytes in [
        BOM.to_vec(),
        [b" ", BOM, b"{}"].concat(),
        [BOM, BOM, b"{}"].concat(),
    ] {
        let answer = t
            .send(
                Request::builder()
                    .method(Method::POST)
                    .uri("/v1/projects")
                    .header(header::AUTHORIZATION, format!("Bearer {OPERATOR}"))
                    .header(header::CONTENT_TYPE, "application/json")
                    .body(Body::from(bytes))
                    .unwrap(),
            )
            .await;
        answer.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    }
}

on_both!(a_leading_bom_is_skipped);
