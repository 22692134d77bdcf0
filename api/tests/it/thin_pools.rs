//! The thin-pool blocks through the API: a royale and a free-for-all are
//! accepted and answered as written; relaxations, bots and maxTolerance
//! round-trip; every failure is listed with its field; the tier's
//! `maxMatchSize` counts `teams × max`.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::json;

async fn flexible_shapes_and_thin_blocks(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");

    let mut royale = mode("royale");
    royale["matchShape"] = json!({"teams": 20, "teamSize": {"min": 1, "max": 3}});
    royale["parties"] = json!({"allowParties": true, "maxSize": 3});
    let created = t.call(Method::POST, &base, Some(&key), Some(royale)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(
        created.body["matchShape"],
        json!({"teams": 20, "teamSize": {"min": 1, "max": 3}})
    );

    let mut ffa = mode("ffa");
    ffa["matchShape"] = json!({"teams": 8, "teamSize": {"min": 1, "max": 1}, "minTeams": 4});
    ffa["parties"] = json!({"allowParties": false});
    let created = t.call(Method::POST, &base, Some(&key), Some(ffa)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    let mut thin = mode("thin");
    thin["matchShape"] = json!([5, 5]);
    thin["relaxations"] = json!([{"afterSeconds": 20, "matchShape": [4, 4]},
                                 {"afterSeconds": 40, "matchShape": [3, 3]}]);
    thin["bots"] = json!({"fillAfterSeconds": 60, "minHumans": 2, "replaceable": true});
    thin["algorithm"]["maxTolerance"] = json!(25);
    let created = t.call(Method::POST, &base, Some(&key), Some(thin)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let got = t
        .call(Method::GET, &format!("{base}/thin"), Some(&key), None)
        .await;
    assert_eq!(got.body["relaxations"][1]["matchShape"], json!([3, 3]));
    assert_eq!(got.body["bots"]["minHumans"], 2);
    assert_eq!(got.body["algorithm"]["maxTolerance"], 25.0);

    // Every failure at once, each field named.
    let mut bad = mode("bad");
    bad["matchShape"] = json!([5, 5]);
    bad["relaxations"] = json!([{"afterSeconds": 20, "matchShape": [6, 4]},
                                {"afterSeconds": 10, "matchShape": [3]}]);
    bad["bots"] = json!({"fillAfterSeconds": 5, "minHumans": 0});
    bad["algorithm"]["maxTolerance"] = json!(2);
    let refused = t.call(Method::POST, &base, Some(&key), Some(bad)).await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let fields: Vec<&str> = refused.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    for field in [
        "relaxations[0].matchShape[0]",
        "relaxations[1].afterSeconds",
        "relaxations[1].matchShape",
        "bots.fillAfterSeconds",
        "bots.minHumans",
        "algorithm.maxTolerance",
    ] {
        assert!(fields.contains(&field), "{field} missing: {}", refused.body);
    }
}

async fn max_match_size_counts_teams_times_max(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let mut royale = mode("royale");
    // 20 × 3 = 60 seats: above the free tier's 16.
    royale["matchShape"] = json!({"teams": 20, "teamSize": {"min": 1, "max": 3}});
    royale["parties"] = json!({"allowParties": true, "maxSize": 3, "keepTogether": false});
    let refused = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(royale),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.body
    );
    let mut codes = refused.error_codes();
    codes.sort();
    assert_eq!(
        codes,
        ["MATCH_SIZE_LIMIT_EXCEEDED", "VALIDATION_ERROR"],
        "{}",
        refused.body
    );
}

on_both!(
    flexible_shapes_and_thin_blocks,
    max_match_size_counts_teams_times_max
);
