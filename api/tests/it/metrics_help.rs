//! `GET /metrics` as a Prometheus parser reads it: every metric family
//! (the API's and, in `matchplane dev`, the worker's) has `# HELP` and
//! `# TYPE`, once (also a family both count, as the search ends), and
//! every sample belongs to a declared family.

use crate::common::{Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use matchplane_api::{router, ApiConfig, AppState};
use matchplane_store::pool::ModeKey;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;
use tower::ServiceExt;

/// The families of a text exposition: name → (has HELP, TYPE), and the
/// family of every sample. Panics on a line it cannot read.
/// Declared families: name → (has HELP, its TYPE).
type Declared = BTreeMap<String, (bool, Option<String>)>;

fn families(text: &str) -> (Declared, BTreeSet<String>) {
    let mut declared = Declared::new();
    let mut sampled = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').expect("HELP text");
            assert!(!help.trim().is_empty(), "empty HELP: {line}");
            let seen = &mut declared.entry(name.to_owned()).or_default().0;
            assert!(!*seen, "a second HELP for {name} in {text}");
            *seen = true;
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE kind");
            assert!(
                ["counter", "gauge", "histogram", "summary", "untyped"].contains(&kind),
                "{line}"
            );
            let seen = &mut declared.entry(name.to_owned()).or_default().1;
            assert!(seen.is_none(), "a second TYPE for {name} in {text}");
            *seen = Some(kind.to_owned());
        } else {
            assert!(!line.starts_with('#'), "unknown comment: {line}");
            let name = line
                .split(['{', ' '])
                .next()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| panic!("unreadable sample: {line}"));
            let value = line.rsplit(' ').next().unwrap();
            assert!(
                value.parse::<f64>().is_ok() || ["+Inf", "-Inf", "NaN"].contains(&value),
                "{line}"
            );
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| {
                    let base = name.strip_suffix(suffix)?;
                    declared.get(base).map(|_| base.to_owned())
                })
                .unwrap_or_else(|| name.to_owned());
            sampled.insert(family);
        }
    }
    (declared, sampled)
}

async fn every_metric_family_has_help_and_type(backend: Backend) {
    let t = TestApp::new(backend).await;
    // The worker's metrics, as `matchplane dev` appends them.
    let recorder = matchplane_worker::metrics::build_recorder().unwrap();
    let worker = recorder.handle();
    let mode = ModeKey::new("prj_1", "duel");
    metrics::with_local_recorder(&recorder, || {
        use matchplane_worker::metrics as m;
        m::cycle(&mode, Duration::from_millis(3), 4, 4);
        m::matched(&mode, [1.5, 2.0].into_iter());
        m::attempt(Some(200), Duration::from_millis(8), Some("succeeded"));
        m::attempt(None, Duration::from_millis(8), None);
        m::dead_lettered(&mode, 1);
        m::searches_ended(matchplane_store::search_ends::EXPIRED, 2);
    });
    let state = AppState::new(
        t.db.clone(),
        ApiConfig {
            operator_token: Some(OPERATOR.to_owned()),
            operator_token_previous: None,
            allow_private_webhooks: false,
            recording_key: None,
        },
    )
    .with_worker_metrics(worker);
    let app = router(state);
    for path in ["/healthz", "/v1/nothing", "/v1/tiers"] {
        app.clone()
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
    }
    let response = app
        .oneshot(Request::get("/metrics").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    let (declared, sampled) = families(&text);
    for family in [
        "matchplane_http_requests_total",
        "matchplane_http_request_duration_seconds",
        "matchplane_cycle_duration_seconds",
        "matchplane_pool_size",
        "matchplane_cycle_candidates",
        "matchplane_matches_total",
        "matchplane_search_wait_seconds",
        "matchplane_webhook_deliveries_total",
        "matchplane_webhook_attempts_total",
        "matchplane_webhook_attempt_latency_seconds",
        "matchplane_outbox_dead_letters_total",
        "matchplane_searches_ended_total",
        "matchplane_searches_failed_total",
        "matchplane_webhook_backlog",
        "matchplane_rate_limited_total",
        "matchplane_websocket_connections_open",
        "matchplane_dependency_up",
        "process_resident_memory_bytes",
    ] {
        assert!(sampled.contains(family), "{family} not in {text}");
    }
    // Both processes count the search ends: one series, summed.
    assert!(
        text.lines()
            .any(|l| l == r#"matchplane_searches_ended_total{outcome="expired"} 2"#),
        "{text}"
    );
    for family in &sampled {
        match declared.get(family) {
            Some((true, Some(_))) => {}
            other => panic!("{family}: HELP and TYPE expected, got {other:?} in {text}"),
        }
    }
}

on_both!(every_metric_family_has_help_and_type);
