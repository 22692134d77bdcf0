//! Every answer of `GET …/game-modes/{name}` can be sent back with `PUT`
//! (docs/config-as-code.md, "Create or update with `PUT`"): a config is at
//! most 60 KiB as stored, which leaves the 64 KiB body limit room for the
//! members the server adds to it.

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::http::{Method, StatusCode};
use matchplane_matchmaker::GameModeConfig;
use serde_json::{json, Value};

/// The largest config, in bytes of its compact JSON as stored (60 KiB).
const MAX_CONFIG_BYTES: usize = 61_440;

/// The request body limit (64 KiB).
const MAX_BODY_BYTES: usize = 65_536;

/// The config as stored: its compact JSON, defaults filled in.
fn stored(body: &Value) -> Value {
    let config: GameModeConfig = serde_json::from_value(body.clone()).unwrap();
    serde_json::to_value(config).unwrap()
}

fn size(value: &Value) -> usize {
    serde_json::to_vec(value).unwrap().len()
}

/// A valid config of mode `name`, as stored, of exactly `bytes` bytes:
/// declared attributes with long value lists, then the webhook URL's path
/// for the last bytes.
fn config_of_size(name: &str, bytes: usize) -> Value {
    let mut body = mode(name);
    let mut attributes = serde_json::Map::new();
    'fill: for i in 0..16 {
        attributes.insert(format!("a{i:02}"), json!({"type": "string", "values": []}));
        for j in 0..64 {
            let value = format!("v{i:02}{j:02}{}", "x".repeat(59));
            attributes[&format!("a{i:02}")]["values"]
                .as_array_mut()
                .unwrap()
                .push(json!(value));
            body["attributes"] = Value::Object(attributes.clone());
            if size(&stored(&body)) + 200 > bytes {
                attributes[&format!("a{i:02}")]["values"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
                break 'fill;
            }
        }
    }
    body["attributes"] = Value::Object(attributes);
    let short = size(&stored(&body));
    let url = body["webhook"]["url"].as_str().unwrap().to_owned();
    body["webhook"]["url"] = json!(format!("{url}/{}", "p".repeat(bytes - short - 1)));
    let body = stored(&body);
    assert_eq!(size(&body), bytes);
    body
}

async fn every_get_answer_can_be_put_back(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    // The longest key name there is, in 4-byte characters: the hold names it.
    let holder = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/keys"),
            Some(OPERATOR),
            Some(json!({"name": "\u{1D11E}".repeat(100)})),
        )
        .await;
    assert_eq!(holder.status, StatusCode::CREATED, "{}", holder.body);
    let key = holder.body["key"].as_str().unwrap().to_owned();
    let base = format!("/v1/projects/{p}/game-modes");

    for (name, bytes) in [
        ("over", MAX_CONFIG_BYTES + 1),
        ("near-the-body-limit", MAX_BODY_BYTES - 100),
    ] {
        let put = t
            .call(
                Method::PUT,
                &format!("{base}/{name}"),
                Some(&key),
                Some(config_of_size(name, bytes)),
            )
            .await;
        put.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        assert_eq!(put.body["errors"][0]["field"], "$", "{}", put.body);
        let message = put.body["errors"][0]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("the config is {bytes} bytes"))
                && message.contains("at most 61440"),
            "{message}"
        );
    }

    // The largest config accepted, with every server-set member at its
    // largest: a hold by the longest key name, a failing webhook with a
    // long error, the largest version.
    let url = format!("{base}/largest");
    let created = t
        .call(
            Method::PUT,
            &url,
            Some(&key),
            Some(config_of_size("largest", MAX_CONFIG_BYTES)),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let held = t
        .call(Method::POST, &format!("{url}/hold"), Some(&key), None)
        .await;
    assert_eq!(held.status, StatusCode::OK, "{}", held.body);
    matchplane_store::repos::webhook_health::record_failure(
        &t.db,
        &p,
        "largest",
        chrono::Utc::now(),
        &"\"".repeat(5_000),
    )
    .await
    .unwrap();
    {
        use matchplane_store::entities::game_mode;
        use sea_orm::{ColumnTrait, EntityTrait, QueryFilter};
        game_mode::Entity::update_many()
            .col_expr(
                game_mode::Column::Version,
                sea_orm::sea_query::Expr::value(i64::MAX),
            )
            .filter(game_mode::Column::ProjectId.eq(p.as_str()))
            .filter(game_mode::Column::Name.eq("largest"))
            .exec(&t.db)
            .await
            .unwrap();
    }
    let got = t.call(Method::GET, &url, Some(&key), None).await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.body);
    assert_eq!(got.body["version"], i64::MAX);
    assert!(got.body["hold"].is_object(), "{}", got.body["hold"]);
    assert_eq!(got.body["webhook"]["status"]["failing"], true);
    // A long error is shown cut at 300 characters.
    let shown = got.body["webhook"]["status"]["lastError"].as_str().unwrap();
    assert_eq!(shown.chars().count(), 300, "{shown}");
    assert!(shown.ends_with("\"…"), "{shown}");
    let answered = size(&got.body);
    assert!(answered <= MAX_BODY_BYTES, "{answered}");

    let again = t
        .call(Method::PUT, &url, Some(&key), Some(got.body.clone()))
        .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["version"], i64::MAX, "unchanged: no new version");
}

on_both!(every_get_answer_can_be_put_back);
