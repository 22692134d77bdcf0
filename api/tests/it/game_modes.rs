//! Game modes: lifecycle, versions and history, secrets, validation
//! against the project's tier, name conflicts and the mode quota.

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::json;

async fn lifecycle_versions_and_secrets(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");

    let created = t
        .call(Method::POST, &base, Some(&key), Some(mode("ranked")))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert_eq!(created.body["version"], 1);
    let secret = created.body["webhook"]["secret"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        secret.starts_with("whsec_") && secret.len() == 50,
        "{secret}"
    );
    assert!(created.body["createdAt"].is_string());

    let got = t
        .call(Method::GET, &format!("{base}/ranked"), Some(&key), None)
        .await;
    assert_eq!(got.status, StatusCode::OK);
    assert_ne!(
        got.body["webhook"]["secret"],
        secret.as_str(),
        "masked outside create/rotate"
    );
    assert!(!got.body.to_string().contains(&secret));
    let listed = t.call(Method::GET, &base, Some(&key), None).await;
    assert!(!listed.body.to_string().contains(&secret));
    assert_eq!(listed.body.as_array().unwrap().len(), 1);

    // PUT the GET answer back with a change: server-set fields are ignored.
    let mut body = got.body.clone();
    body["matchmakingCycleDurationSeconds"] = json!(7);
    let replaced = t
        .call(
            Method::PUT,
            &format!("{base}/ranked"),
            Some(&key),
            Some(body.clone()),
        )
        .await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
    assert_eq!(replaced.body["version"], 2);
    assert_eq!(replaced.body["matchmakingCycleDurationSeconds"], 7.0);
    // The same body again (of the current version) is no change; of the
    // version before, a 412 (see if_match.rs).
    body["version"] = json!(2);
    let same = t
        .call(
            Method::PUT,
            &format!("{base}/ranked"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(same.body["version"], 2);

    let history = t
        .call(
            Method::GET,
            &format!("{base}/ranked/versions"),
            Some(&key),
            None,
        )
        .await;
    let versions: Vec<i64> = history
        .body
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(versions, [1, 2]);
    assert_eq!(
        history.body[0]["config"]["matchmakingCycleDurationSeconds"],
        5.0
    );

    let rotated = t
        .call(
            Method::POST,
            &format!("{base}/ranked/webhook/rotate-secret"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(rotated.status, StatusCode::OK);
    let new_secret = rotated.body["webhook"]["secret"].as_str().unwrap();
    assert!(new_secret.starts_with("whsec_"));
    assert_ne!(new_secret, secret);

    // A renaming PUT is refused; a PUT creating a mode under another
    // name is told the name it must have, not that it renames anything.
    let mut renamed = mode("other");
    renamed["name"] = json!("other");
    let refused = t
        .call(
            Method::PUT,
            &format!("{base}/ranked"),
            Some(&key),
            Some(renamed.clone()),
        )
        .await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let message = refused.body["errors"][0]["message"].as_str().unwrap();
    assert!(message.contains("cannot be renamed"), "{message}");
    let refused = t
        .call(
            Method::PUT,
            &format!("{base}/brand-new"),
            Some(&key),
            Some(renamed),
        )
        .await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let message = refused.body["errors"][0]["message"].as_str().unwrap();
    assert!(
        !message.contains("renamed") && message.contains("must be named brand-new"),
        "{message}"
    );

    let deleted = t
        .call(Method::DELETE, &format!("{base}/ranked"), Some(&key), None)
        .await;
    assert_eq!(deleted.status, StatusCode::NO_CONTENT);
    t.call(Method::GET, &format!("{base}/ranked"), Some(&key), None)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
    // PUT is create-or-replace: a deleted mode comes back as version 1.
    let again = t
        .call(
            Method::PUT,
            &format!("{base}/ranked"),
            Some(&key),
            Some(mode("ranked")),
        )
        .await;
    assert_eq!(again.status, StatusCode::CREATED, "{}", again.body);
    assert_eq!(again.body["version"], 1);
}

async fn tier_floors_and_tier_changes(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");

    let mut fast = mode("fast");
    fast["matchShape"] = json!([10, 10]);
    fast["matchmakingCycleDurationSeconds"] = json!(1);
    fast["algorithm"]["baseTolerance"] = json!(1);
    fast["parties"]["maxSize"] = json!(11);
    let refused = t
        .call(Method::POST, &base, Some(&key), Some(fast.clone()))
        .await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let codes = refused.error_codes();
    for code in [
        "MATCH_SIZE_LIMIT_EXCEEDED",
        "CYCLE_DURATION_BELOW_TIER_FLOOR",
        "TOLERANCE_BELOW_TIER_FLOOR",
        "PARTY_SIZE_EXCEEDS_SHAPE",
    ] {
        assert!(
            codes.iter().any(|c| c == code),
            "{code} missing from {codes:?}"
        );
    }

    // One failure alone answers its own code.
    for (field, value, code) in [
        (
            "matchmakingCycleDurationSeconds",
            json!(2),
            "CYCLE_DURATION_BELOW_TIER_FLOOR",
        ),
        ("matchShape", json!([9, 9]), "MATCH_SIZE_LIMIT_EXCEEDED"),
    ] {
        let mut body = mode("one");
        body[field] = value;
        t.call(Method::POST, &base, Some(&key), Some(body))
            .await
            .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, code);
    }
    let mut low = mode("one");
    low["algorithm"]["baseTolerance"] = json!(2);
    t.call(Method::POST, &base, Some(&key), Some(low))
        .await
        .assert_problem(
            StatusCode::UNPROCESSABLE_ENTITY,
            "TOLERANCE_BELOW_TIER_FLOOR",
        );

    // The operator raises the project's minimum expansion floor through its tier.
    let custom = t
        .call(Method::PUT, "/v1/tiers/strict", Some(crate::common::OPERATOR), Some(json!({
            "minCycleDurationSeconds": 5, "minBaseTolerance": 5, "minExpansionMultiplier": 3,
            "maxMatchSize": 16, "maxGameModes": 3, "maxConcurrentSearches": 100, "requestsPerSecond": 100
        })))
        .await;
    assert_eq!(custom.status, StatusCode::CREATED, "{}", custom.body);
    let strict = t.project("strict").await;
    let (_, strict_key) = t.key(&strict).await;
    t.call(
        Method::POST,
        &format!("/v1/projects/{strict}/game-modes"),
        Some(&strict_key),
        Some(mode("m")),
    )
    .await
    .assert_problem(
        StatusCode::UNPROCESSABLE_ENTITY,
        "EXPANSION_BELOW_TIER_FLOOR",
    );

    // Moving the project to enterprise makes the same config valid.
    let moved = t
        .call(
            Method::PATCH,
            &format!("/v1/projects/{p}"),
            Some(crate::common::OPERATOR),
            Some(json!({"tier": "enterprise"})),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    fast["parties"]["maxSize"] = json!(2);
    let accepted = t.call(Method::POST, &base, Some(&key), Some(fast)).await;
    assert_eq!(accepted.status, StatusCode::CREATED, "{}", accepted.body);

    // Back on free, whose floors the mode is below: its config sent again
    // unchanged (a GET's answer) changes nothing and is answered so; a
    // change is checked against the tier as it is now.
    let moved = t
        .call(
            Method::PATCH,
            &format!("/v1/projects/{p}"),
            Some(crate::common::OPERATOR),
            Some(json!({"tier": "free"})),
        )
        .await;
    assert_eq!(moved.status, StatusCode::OK, "{}", moved.body);
    let path = format!("{base}/fast");
    let read = t.call(Method::GET, &path, Some(&key), None).await;
    let again = t
        .call(Method::PUT, &path, Some(&key), Some(read.body.clone()))
        .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["version"], read.body["version"]);
    let mut changed = read.body.clone();
    changed["ticketTtlSeconds"] = json!(300);
    t.call(Method::PUT, &path, Some(&key), Some(changed))
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
}

async fn conflict_and_quota(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    let a = t
        .call(Method::POST, &base, Some(&key), Some(mode("a")))
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    t.call(Method::POST, &base, Some(&key), Some(mode("a")))
        .await
        .assert_problem(StatusCode::CONFLICT, "CONFLICT");
    for name in ["b", "c"] {
        let a = t
            .call(Method::POST, &base, Some(&key), Some(mode(name)))
            .await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    }
    t.call(Method::POST, &base, Some(&key), Some(mode("d")))
        .await
        .assert_problem(StatusCode::TOO_MANY_REQUESTS, "QUOTA_EXCEEDED");
    // Both at once: every failure listed.
    let both = t
        .call(Method::POST, &base, Some(&key), Some(mode("a")))
        .await;
    both.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(both.error_codes(), ["CONFLICT", "QUOTA_EXCEEDED"]);
    let listed = t.call(Method::GET, &base, Some(&key), None).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 3);

    // Ten creates at once on a new project of the same tier: three made,
    // the rest refused; before, each counted before any other inserted.
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    let at_once = futures::future::join_all((0..10).map(|i| {
        t.call(
            Method::POST,
            &base,
            Some(&key),
            Some(mode(&format!("race{i}"))),
        )
    }))
    .await;
    let made = at_once
        .iter()
        .filter(|a| a.status == StatusCode::CREATED)
        .count();
    assert_eq!(
        made,
        3,
        "{:?}",
        at_once.iter().map(|a| a.status).collect::<Vec<_>>()
    );
    for refused in at_once.iter().filter(|a| a.status != StatusCode::CREATED) {
        refused.assert_problem(StatusCode::TOO_MANY_REQUESTS, "QUOTA_EXCEEDED");
    }
    let listed = t.call(Method::GET, &base, Some(&key), None).await;
    assert_eq!(listed.body.as_array().unwrap().len(), 3);
}

/// `"webhook": {}` (or any webhook with neither `url` nor
/// `useProjectEndpoint`) is refused on `webhook.url`, never dropped; a mode
/// without a webhook shows no `webhook.secret` and has none to rotate
/// (docs/game-modes.md, "Validation"). Before: `{}` was dropped, the create
/// answer showed `"webhook": {"secret": …}` and a rotation minted a secret.
async fn an_empty_webhook_is_refused_and_a_mode_without_one_has_no_secret(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");

    for webhook in [json!({}), json!({"enabled": true})] {
        let mut body = mode("bi1");
        body["webhook"] = webhook.clone();
        let refused = t.call(Method::POST, &base, Some(&key), Some(body)).await;
        refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
        assert_eq!(
            refused.body["errors"][0]["field"], "webhook.url",
            "{webhook}: {}",
            refused.body
        );
    }

    let mut bare = mode("bi1");
    bare.as_object_mut().unwrap().remove("webhook");
    let created = t
        .call(Method::POST, &base, Some(&key), Some(bare.clone()))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    assert!(created.body.get("webhook").is_none(), "{}", created.body);
    let path = format!("{base}/bi1");
    let got = t.call(Method::GET, &path, Some(&key), None).await;
    assert!(got.body.get("webhook").is_none(), "{}", got.body);

    // The GET answer sent back is no change.
    let same = t
        .call(Method::PUT, &path, Some(&key), Some(got.body.clone()))
        .await;
    assert_eq!(same.status, StatusCode::OK, "{}", same.body);
    assert_eq!(same.body["version"], 1, "{}", same.body);
    // An empty webhook sent on a replace is refused as on a create, and so
    // is one holding only server-set fields (the create answer of before,
    // or a GET answer whose `url` line was deleted).
    for webhook in [
        json!({}),
        json!({"secret": "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}),
        json!({"secret": "whsec_********", "status": {}}),
    ] {
        let mut empty = got.body.clone();
        empty["webhook"] = webhook;
        t.call(Method::PUT, &path, Some(&key), Some(empty))
            .await
            .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
    }

    let rotated = t
        .call(
            Method::POST,
            &format!("{path}/webhook/rotate-secret"),
            Some(&key),
            None,
        )
        .await;
    rotated.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(
        rotated.body["errors"][0]["field"], "webhook",
        "{}",
        rotated.body
    );
    assert!(
        !rotated.body.to_string().contains("whsec_"),
        "{}",
        rotated.body
    );

    // Given a webhook later, the PUT's answer shows its secret, once;
    // the same PUT again masks it; a rotation shows the new one.
    let mut hooked = got.body.clone();
    hooked["webhook"] = json!({"url": "https://93.184.216.34/hooks/match"});
    let replaced = t
        .call(Method::PUT, &path, Some(&key), Some(hooked.clone()))
        .await;
    assert_eq!(replaced.status, StatusCode::OK, "{}", replaced.body);
    let first = replaced.body["webhook"]["secret"].as_str().unwrap_or("");
    assert!(first.starts_with("whsec_"), "{}", replaced.body);
    assert!(!first.contains('*'), "{}", replaced.body);
    let mut again = replaced.body.clone();
    again["webhook"]["url"] = json!("https://93.184.216.35/hooks/match");
    let again = t.call(Method::PUT, &path, Some(&key), Some(again)).await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_ne!(
        again.body["webhook"]["secret"],
        json!(first),
        "{}",
        again.body
    );
    // Its answer with the `url` line deleted does not delete the webhook.
    let mut no_url = again.body.clone();
    no_url["webhook"].as_object_mut().unwrap().remove("url");
    t.call(Method::PUT, &path, Some(&key), Some(no_url))
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
    let kept = t.call(Method::GET, &path, Some(&key), None).await;
    assert_eq!(
        kept.body["webhook"]["url"], "https://93.184.216.35/hooks/match",
        "{}",
        kept.body
    );
    let rotated = t
        .call(
            Method::POST,
            &format!("{path}/webhook/rotate-secret"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(rotated.status, StatusCode::OK, "{}", rotated.body);
    assert!(
        rotated.body["webhook"]["secret"]
            .as_str()
            .unwrap()
            .starts_with("whsec_"),
        "{}",
        rotated.body
    );
}

/// Every optional block or list of a mode given as `null` reads as left
/// out, lists and `parties` as the other blocks (docs/game-modes.md,
/// "Fields"); a field with a value of its own (`enabled`) still refuses
/// `null`. Before: `"attributes": null` was taken, `"rules": null`,
/// `"relaxations": null` and `"parties": null` refused with `400`.
async fn a_null_optional_block_reads_as_left_out(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    let mut body = mode("nulls");
    for field in ["rules", "relaxations", "parties", "attributes", "bots"] {
        body[field] = serde_json::Value::Null;
    }
    let created = t
        .call(Method::POST, &base, Some(&key), Some(body.clone()))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    for field in ["rules", "relaxations", "attributes", "bots"] {
        assert!(
            created.body.get(field).is_none(),
            "{field}: {}",
            created.body
        );
    }
    assert_eq!(created.body["parties"]["maxSize"], 1, "{}", created.body);
    body["enabled"] = serde_json::Value::Null;
    let refused = t
        .call(
            Method::PUT,
            &format!("{base}/nulls"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.body);
}

on_both!(
    lifecycle_versions_and_secrets,
    tier_floors_and_tier_changes,
    conflict_and_quota,
    an_empty_webhook_is_refused_and_a_mode_without_one_has_no_secret,
    a_null_optional_block_reads_as_left_out
);
