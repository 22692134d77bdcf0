//! Webhook URL safety at configuration (docs/game-modes.md, `INVALID_WEBHOOK_URL`).

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use serde_json::json;

async fn private_webhooks_are_refused(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    for url in [
        "https://127.0.0.1/hook",
        "https://10.1.2.3/hook",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/hook",
        "https://[fd00::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://100.64.0.1/hook",
        "https://localhost/hook",
        "http://93.184.216.34/hook",
        "http://game.example.com/hook",
    ] {
        let mut body = mode("hooked");
        body["webhook"]["url"] = json!(url);
        let a = t.call(Method::POST, &base, Some(&key), Some(body)).await;
        a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
        assert_eq!(a.body["errors"][0]["field"], "webhook.url", "{url}");
    }
    let mut public = mode("hooked");
    public["webhook"]["url"] = json!("https://93.184.216.34/hook");
    let created = t.call(Method::POST, &base, Some(&key), Some(public)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);

    // The same check guards a replace.
    let mut private = mode("hooked");
    private["webhook"]["url"] = json!("https://192.168.0.10/hook");
    t.call(
        Method::PUT,
        &format!("{base}/hooked"),
        Some(&key),
        Some(private),
    )
    .await
    .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
}

async fn operator_can_allow_private_webhooks(backend: Backend) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let mut body = mode("local");
    body["webhook"]["url"] = json!("http://127.0.0.1:9000/hook");
    let a = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(body),
        )
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
}

/// A name that does not resolve (NXDOMAIN, no network) is accepted at
/// configuration: its deliveries are checked, and fail, until it resolves.
async fn names_that_do_not_resolve_are_accepted(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    for (name, url) in [
        // README's own example, whatever this machine's DNS says of it.
        ("readme", "https://game.example.com/hooks/match"),
        // `.invalid` never resolves (RFC 6761).
        ("nxdomain", "https://hooks.nowhere.invalid/match?token=1"),
    ] {
        let mut body = mode(name);
        body["webhook"]["url"] = json!(url);
        let created = t.call(Method::POST, &base, Some(&key), Some(body)).await;
        assert_eq!(
            created.status,
            StatusCode::CREATED,
            "{url}: {}",
            created.body
        );
        assert_eq!(created.body["webhook"]["url"], url);
    }
}

/// Port 0 is refused as any other bad URL, on a mode's `webhook.url` and
/// on the project's endpoint, whether or not private webhooks are allowed.
async fn port_zero_is_refused(backend: Backend) {
    for allow_private in [false, true] {
        let t = TestApp::with_config(backend, allow_private).await;
        let p = t.project("pro").await;
        let (_, key) = t.key(&p).await;
        for url in [
            "https://example.com:0/",
            "https://93.184.216.34:0/hook",
            "https://127.0.0.1:0/hook",
        ] {
            let mut body = mode("hooked");
            body["webhook"]["url"] = json!(url);
            let modes = format!("/v1/projects/{p}/game-modes");
            let a = t.call(Method::POST, &modes, Some(&key), Some(body)).await;
            a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
            assert_eq!(a.body["errors"][0]["field"], "webhook.url", "{url}");
            let message = a.body["errors"][0]["message"].as_str().unwrap_or("");
            assert!(message.contains("port 0"), "{url}: {message}");

            let endpoint = format!("/v1/projects/{p}/webhook");
            let a = t
                .call(
                    Method::PUT,
                    &endpoint,
                    Some(&key),
                    Some(json!({"url": url})),
                )
                .await;
            a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
            assert_eq!(a.body["errors"][0]["field"], "url", "{url}");
        }
    }
}

/// A refusal names an address the studio wrote, never one a name resolved
/// to (docs/webhooks.md, "Which URLs are accepted"): the test event's
/// answer and the attempt log of a mode whose host name resolves to
/// loopback say so without the address.
async fn a_refused_name_does_not_say_what_it_resolves_to(backend: Backend) {
    use matchplane_store::entities::game_mode;
    use sea_orm::{ActiveModelTrait, ColumnTrait, EntityTrait, QueryFilter, Set};
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");

    // An address written in the URL is named.
    let mut body = mode("hooked");
    body["webhook"]["url"] = json!("https://10.1.2.3/hook");
    let refused = t.call(Method::POST, &base, Some(&key), Some(body)).await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
    assert_eq!(
        refused.body["errors"][0]["message"],
        "the host is a non-public address (10.1.2.3)"
    );

    // A name that resolves inside at delivery (as DNS may change after the
    // mode was written): stored here as it would be by a write that found
    // the name unresolved.
    let mut body = mode("hooked");
    body["webhook"]["url"] = json!("https://93.184.216.34/hook");
    let created = t.call(Method::POST, &base, Some(&key), Some(body)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let row = game_mode::Entity::find()
        .filter(game_mode::Column::ProjectId.eq(p.as_str()))
        .filter(game_mode::Column::Name.eq("hooked"))
        .one(&t.db)
        .await
        .unwrap()
        .unwrap();
    let mut config = row.config.clone();
    config["webhook"]["url"] = json!("https://localhost:9/hook");
    let mut active: game_mode::ActiveModel = row.into();
    active.config = Set(config);
    active.update(&t.db).await.unwrap();

    let tested = t
        .call(
            Method::POST,
            &format!("{base}/hooked/webhook/test"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(tested.status, StatusCode::OK, "{}", tested.body);
    assert_eq!(tested.body["delivered"], false);
    let said = tested.body["error"].as_str().unwrap_or_default().to_owned();
    assert_eq!(
        said,
        "refused: the host `localhost` resolves to a non-public address"
    );
    let logged = t
        .call(
            Method::GET,
            &format!("{base}/hooked/deliveries?eventType=webhook.test"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(logged.status, StatusCode::OK, "{}", logged.body);
    assert_eq!(logged.body[0]["attempts"][0]["error"], said.as_str());
    for shown in [&tested.body, &logged.body] {
        let text = shown.to_string();
        assert!(
            !text.contains("127.0.0.1") && !text.contains("::1"),
            "{text}"
        );
    }
}

on_both!(
    a_url_with_a_blank_is_refused_but_one_stored_before_the_rule_is_kept,
    a_refused_name_does_not_say_what_it_resolves_to,
    private_webhooks_are_refused,
    port_zero_is_refused,
    names_that_do_not_resolve_are_accepted,
    operator_can_allow_private_webhooks
);

/// A webhook URL with a space or a line break is refused (the parser would
/// call another URL than the one shown), but a mode whose URL was stored
/// with one before that rule can still change its other fields, as the
/// project endpoint can: refusing the stored URL would block every change.
async fn a_url_with_a_blank_is_refused_but_one_stored_before_the_rule_is_kept(backend: Backend) {
    let t = TestApp::with_config(backend, true).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    let mut body = mode("hooked");
    body["webhook"]["url"] = json!("http://127.0.0.1:9000/a b");
    t.call(Method::POST, &base, Some(&key), Some(body.clone()))
        .await
        .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
    // Stored so by a release before the rule.
    let mut first = body.clone();
    first["webhook"]["url"] = json!("http://127.0.0.1:9000/ab");
    let created = t.call(Method::POST, &base, Some(&key), Some(first)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let stored = serde_json::to_value(
        serde_json::from_value::<matchplane_matchmaker::GameModeConfig>(body.clone()).unwrap(),
    )
    .unwrap();
    matchplane_store::repos::game_modes::replace(&t.db, &p, "hooked", stored, chrono::Utc::now())
        .await
        .unwrap();
    body["matchmakingCycleDurationSeconds"] = json!(7);
    let changed = t
        .call(
            Method::PUT,
            &format!("{base}/hooked"),
            Some(&key),
            Some(body.clone()),
        )
        .await;
    assert_eq!(changed.status, StatusCode::OK, "{}", changed.body);
    // Another URL with a blank is still refused.
    body["webhook"]["url"] = json!("http://127.0.0.1:9000/a\r\nb");
    t.call(
        Method::PUT,
        &format!("{base}/hooked"),
        Some(&key),
        Some(body),
    )
    .await
    .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "INVALID_WEBHOOK_URL");
}

/// The mode view and its stats show whether the webhook is failing (the
/// worker writes it after every attempt); a GET's body sent back as a PUT
/// is accepted with its `status`.
async fn the_mode_shows_a_failing_webhook(backend: Backend) {
    use matchplane_store::repos::webhook_health;
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    let created = t
        .call(Method::POST, &base, Some(&key), Some(mode("hooked")))
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let url = format!("{base}/hooked");
    let shown = t.call(Method::GET, &url, Some(&key), None).await;
    assert_eq!(shown.body["webhook"]["status"]["failing"], false);
    assert_eq!(shown.body["webhook"]["status"]["consecutiveFailures"], 0);

    let first = chrono::Utc::now() - chrono::Duration::seconds(30);
    for (i, error) in ["HTTP 503", "timed out"].into_iter().enumerate() {
        let at = first + chrono::Duration::seconds(10 * i as i64);
        webhook_health::record_failure(&t.db, &p, "hooked", at, error)
            .await
            .unwrap();
    }
    let shown = t.call(Method::GET, &url, Some(&key), None).await;
    let status = &shown.body["webhook"]["status"];
    assert_eq!(status["failing"], true, "{}", shown.body);
    assert_eq!(status["consecutiveFailures"], 2);
    assert_eq!(status["lastError"], "timed out");
    let since: chrono::DateTime<chrono::Utc> = status["since"].as_str().unwrap().parse().unwrap();
    assert_eq!(since.timestamp(), first.timestamp());
    let stats = t
        .call(Method::GET, &format!("{url}/stats"), Some(&key), None)
        .await;
    assert_eq!(
        stats.body["webhookStatus"]["failing"], true,
        "{}",
        stats.body
    );
    assert_eq!(stats.body["webhookStatus"]["consecutiveFailures"], 2);

    // Sent back as is, `status` is ignored like the other server-set fields.
    let put = t
        .call(Method::PUT, &url, Some(&key), Some(shown.body.clone()))
        .await;
    assert_eq!(put.status, StatusCode::OK, "{}", put.body);

    webhook_health::record_success(&t.db, &p, "hooked", chrono::Utc::now())
        .await
        .unwrap();
    let shown = t.call(Method::GET, &url, Some(&key), None).await;
    let status = &shown.body["webhook"]["status"];
    assert_eq!(status["failing"], false);
    assert_eq!(status["since"], serde_json::Value::Null);
    assert_eq!(status["consecutiveFailures"], 0);
    assert!(status["lastSuccessAt"].is_string());
    let stats = t
        .call(Method::GET, &format!("{url}/stats"), Some(&key), None)
        .await;
    assert_eq!(stats.body["webhookStatus"]["failing"], false);
}

/// The modes list shows each mode's own webhook status, as its GET does
/// (the console's list of modes reads it there).
async fn the_modes_list_shows_each_webhooks_status(backend: Backend) {
    use matchplane_store::repos::webhook_health;
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");
    for name in ["failing", "quiet"] {
        let created = t
            .call(Method::POST, &base, Some(&key), Some(mode(name)))
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    }
    webhook_health::record_failure(&t.db, &p, "failing", chrono::Utc::now(), "HTTP 503")
        .await
        .unwrap();
    let list = t.call(Method::GET, &base, Some(&key), None).await;
    assert_eq!(list.status, StatusCode::OK, "{}", list.body);
    let status_of = |name: &str| {
        list.body
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["name"] == name)
            .map(|m| m["webhook"]["status"].clone())
            .unwrap()
    };
    let failing = status_of("failing");
    assert_eq!(failing["failing"], true, "{}", list.body);
    assert_eq!(failing["lastError"], "HTTP 503");
    assert_eq!(failing["consecutiveFailures"], 1);
    let quiet = status_of("quiet");
    assert_eq!(quiet["failing"], false, "{}", list.body);
    assert_eq!(quiet["consecutiveFailures"], 0);
    let one = t
        .call(Method::GET, &format!("{base}/failing"), Some(&key), None)
        .await;
    assert_eq!(one.body["webhook"]["status"], failing);
}

on_both!(
    the_mode_shows_a_failing_webhook,
    the_modes_list_shows_each_webhooks_status
);
