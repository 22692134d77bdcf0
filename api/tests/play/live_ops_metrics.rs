//! The API's live-ops metrics on `GET /metrics` (docs/operations.md,
//! 'Metrics'): every closed label set at 0 (the dependencies' health as
//! the scrape's own check found it) before anything happened, and an open
//! socket, a cancel and a rate-limited request each moving their series.
//! Each test has its own router and so its own recorder: values are exact.

use crate::harness::{duel, fast, solo, Pools, TestApp, OPERATOR};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use futures::StreamExt;
use serde_json::json;
use std::time::Duration;

on_both_pools!(
    every_family_is_at_zero_from_the_start,
    an_open_socket_is_counted_until_it_closes_and_its_cancel_is_an_end,
    a_rate_limited_request_is_counted,
    a_dependency_out_of_reach_reads_0,
);

async fn scrape(t: &TestApp) -> String {
    let a = t.call(Method::GET, "/metrics", None, None).await;
    assert_eq!(a.status, StatusCode::OK);
    a.body.as_str().unwrap_or_default().to_owned()
}

/// The value of the sample `series` (name and labels as rendered).
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap())
}

async fn every_family_is_at_zero_from_the_start(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let text = scrape(&t).await;
    let mut zero = vec![
        r#"matchplane_rate_limited_total{limit="requests"}"#.to_owned(),
        r#"matchplane_rate_limited_total{limit="preview"}"#.to_owned(),
        "matchplane_websocket_connections_open".to_owned(),
        r#"matchplane_match_releases_total{status="released"}"#.to_owned(),
    ];
    for outcome in ["matched", "expired", "cancelled", "failed"] {
        zero.push(format!(
            r#"matchplane_searches_ended_total{{outcome="{outcome}"}}"#
        ));
    }
    for code in matchplane_store::search_ends::FAILURE_CODES {
        zero.push(format!(
            r#"matchplane_searches_failed_total{{code="{code}"}}"#
        ));
    }
    for series in &zero {
        assert_eq!(value(&text, series), Some(0.0), "{series} in {text}");
        let family = series.split('{').next().unwrap_or_default();
        for declared in [format!("# HELP {family} "), format!("# TYPE {family} ")] {
            assert!(text.contains(&declared), "{declared} in {text}");
        }
    }
    for dependency in ["database", "redis"] {
        let series = format!(r#"matchplane_dependency_up{{dependency="{dependency}"}}"#);
        assert_eq!(value(&text, &series), Some(1.0), "{series} in {text}");
    }
    for family in ["process_resident_memory_bytes", "process_threads"] {
        assert!(
            value(&text, family).is_some_and(|v| v > 0.0),
            "{family} in {text}"
        );
    }
    // To the clock tick, not cut to whole seconds: spin until this
    // process's CPU time is well inside a second, then compare.
    let spent = cpu_inside_a_second();
    let text = scrape(&t).await;
    let read = value(&text, "process_cpu_seconds_total").unwrap();
    assert!(
        (read - spent).abs() < 0.2,
        "process_cpu_seconds_total {read}, /proc says {spent} s"
    );
    assert!(text.contains("# TYPE process_cpu_seconds_total "), "{text}");
}

/// This process's CPU seconds (`/proc/self/stat`, 100 ticks a second),
/// after spinning until their fraction is between 0.3 and 0.7.
fn cpu_inside_a_second() -> f64 {
    let ticks = || -> u64 {
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
        // Fields after the command's closing parenthesis; utime and stime
        // are the 14th and 15th of the line.
        let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    };
    let mut x = 0u64;
    loop {
        let now = ticks();
        if (30..70).contains(&(now % 100)) {
            std::hint::black_box(x);
            return now as f64 / 100.0;
        }
        for i in 0..100_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
    }
}

async fn an_open_socket_is_counted_until_it_closes_and_its_cancel_is_an_end(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (_, token) = t.ticket_ok(&p, &key, solo("duel", "p1")).await;
    let (mut ws, _) =
        tokio_tungstenite::connect_async(format!("ws://{addr}/v1/search?ticket={token}"))
            .await
            .expect("websocket upgrade");
    // The search has started once the socket says so: a close before that
    // would end no search at all (nothing to count as cancelled).
    let first = tokio::time::timeout(Duration::from_secs(5), ws.next())
        .await
        .expect("a first message within 5 s");
    assert!(
        first.is_some_and(|m| m.is_ok_and(|m| m.is_text())),
        "no status message"
    );
    let open = "matchplane_websocket_connections_open";
    assert_eq!(value(&scrape(&t).await, open), Some(1.0));
    ws.close(None).await.unwrap();
    // The socket's task ends once it reads the close.
    let cancelled = r#"matchplane_searches_ended_total{outcome="cancelled"}"#;
    for _ in 0..100 {
        let text = scrape(&t).await;
        if value(&text, open) == Some(0.0) && value(&text, cancelled) == Some(1.0) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("not counted off and cancelled: {}", scrape(&t).await);
}

async fn a_rate_limited_request_is_counted(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let op = format!("Bearer {OPERATOR}");
    let tier = t
        .call(Method::PUT, "/v1/tiers/tiny", Some(&op), Some(json!({
            "minCycleDurationSeconds": 5, "minBaseTolerance": 5, "minExpansionMultiplier": 1,
            "maxMatchSize": 16, "maxGameModes": 3, "maxConcurrentSearches": 10, "requestsPerSecond": 2
        })))
        .await;
    assert_eq!(tier.status, StatusCode::CREATED, "{}", tier.body);
    let (p, key) = t.project("tiny").await;
    let path = format!("/v1/projects/{p}/game-modes");
    let mut refused = 0;
    for _ in 0..100 {
        let a = t.call(Method::GET, &path, Some(&key), None).await;
        if a.status == StatusCode::TOO_MANY_REQUESTS {
            refused += 1;
            if refused == 2 {
                break;
            }
        }
    }
    assert_eq!(
        refused, 2,
        "a 2 rps bucket runs dry within 100 quick requests"
    );
    let text = scrape(&t).await;
    assert_eq!(
        value(&text, r#"matchplane_rate_limited_total{limit="requests"}"#),
        Some(2.0),
        "{text}"
    );
    assert_eq!(
        value(&text, r#"matchplane_rate_limited_total{limit="preview"}"#),
        Some(0.0),
        "{text}"
    );
}

async fn a_dependency_out_of_reach_reads_0(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let database = r#"matchplane_dependency_up{dependency="database"}"#;
    let redis = r#"matchplane_dependency_up{dependency="redis"}"#;
    assert_eq!(value(&scrape(&t).await, database), Some(1.0));
    t.db.clone().close().await.unwrap();
    // The scrape checks again; so does `/readyz`.
    let text = scrape(&t).await;
    assert_eq!(value(&text, database), Some(0.0), "{text}");
    assert_eq!(value(&text, redis), Some(1.0), "{text}");
    let ready = t.call(Method::GET, "/readyz", None, None).await;
    assert_eq!(ready.body["database"], "unreachable");
    assert_eq!(value(&scrape(&t).await, database), Some(0.0));
}
