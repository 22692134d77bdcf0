//! The recorder's settings: idle series leave, dead letters count per mode.

use super::*;
use metrics_exporter_prometheus::PrometheusBuilder;

#[test]
fn series_without_updates_leave_the_output() {
    let recorder = builder(Duration::from_millis(50)).unwrap().build_recorder();
    let handle = recorder.handle();
    let (gone, live) = (
        ModeKey::new("prj_1", "deleted"),
        ModeKey::new("prj_1", "live"),
    );
    metrics::with_local_recorder(&recorder, || {
        cycle(&gone, Duration::from_millis(5), 10, 10);
        cycle(&live, Duration::from_millis(5), 10, 10);
    });
    assert!(handle.render().contains("mode=\"deleted\""));
    std::thread::sleep(Duration::from_millis(120));
    metrics::with_local_recorder(&recorder, || {
        cycle(&live, Duration::from_millis(5), 12, 12);
    });
    let text = handle.render();
    assert!(!text.contains("mode=\"deleted\""), "{text}");
    assert!(text.contains("mode=\"live\""), "{text}");
}

#[test]
fn dead_letters_are_counted_per_mode() {
    let recorder = PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let mode = ModeKey::new("prj_1", "duel");
    metrics::with_local_recorder(&recorder, || {
        dead_lettered(&mode, 2);
        dead_lettered(&mode, 1);
    });
    let text = handle.render();
    assert!(
        text.contains(r#"matchplane_outbox_dead_letters_total{project="prj_1",mode="duel"} 3"#),
        "{text}"
    );
}

#[test]
fn every_way_a_search_is_matched_counts_as_an_end() {
    let recorder = build_recorder().unwrap();
    let handle = recorder.handle();
    let mode = ModeKey::new("prj_1", "duel");
    metrics::with_local_recorder(&recorder, || {
        // A claimed 1v1, and a backfill fill of two seats.
        matched(&mode, [1.0, 2.0].into_iter());
        backfilled(&mode, 2, Some(3.0));
    });
    let text = handle.render();
    assert!(
        text.contains(r#"matchplane_searches_ended_total{outcome="matched"} 4"#),
        "{text}"
    );
}

/// The retention pruning's `table` label is a closed set: every table's
/// series reads 0 from the start, not absent until its first prune.
#[test]
fn every_retention_table_is_at_zero_from_the_start() {
    let recorder = build_recorder().unwrap();
    let text = recorder.handle().render();
    for table in [
        "matches",
        "match_tickets",
        "backfills",
        "backfill_fills",
        "webhook_deliveries",
        "webhook_attempts",
        "rating_results",
        "mode_stats_minutes",
        "search_recordings",
    ] {
        let series = format!(r#"{RETENTION_PRUNED}{{table="{table}"}} 0"#);
        assert!(
            text.lines().any(|line| line == series),
            "{series} in {text}"
        );
    }
}

/// Pruned search recording rows move their own series.
#[test]
fn pruned_recordings_are_counted_under_their_table() {
    let recorder = build_recorder().unwrap();
    let handle = recorder.handle();
    metrics::with_local_recorder(&recorder, || {
        retention_recordings(3, Duration::from_millis(2));
        retention_recordings(0, Duration::from_millis(1));
        retention_recordings(2, Duration::from_millis(2));
    });
    let text = handle.render();
    let series = format!(r#"{RETENTION_PRUNED}{{table="search_recordings"}} 5"#);
    assert!(
        text.lines().any(|line| line == series),
        "{series} in {text}"
    );
    let batches = format!("{RETENTION_BATCH}_count 3");
    assert!(
        text.lines().any(|line| line == batches),
        "{batches} in {text}"
    );
}

/// One `GET path` to `addr` over plain HTTP/1.1: the status line and body.
async fn get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: worker\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.unwrap();
    let status = answer.lines().next().unwrap_or_default().to_owned();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

/// The Helm chart's worker liveness probe (`/healthz` on the metrics
/// port) is answered `200` by the metrics server itself, which holds no
/// store: an outage of Redis or PostgreSQL cannot fail it.
#[tokio::test]
async fn the_metrics_listener_answers_the_liveness_probe() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let handle = build_recorder().unwrap().handle();
    let stop = tokio_util::sync::CancellationToken::new();
    let stopped = stop.clone();
    let server = tokio::spawn(serve(listener, handle, None, async move {
        stopped.cancelled().await;
    }));
    let (status, body) = get(addr, "/healthz").await;
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert_eq!(body, r#"{"status":"ok"}"#);
    let (status, body) = get(addr, "/metrics").await;
    assert_eq!(status, "HTTP/1.1 200 OK", "{body}");
    assert!(
        body.contains("# TYPE matchplane_cycles_total counter"),
        "{body}"
    );
    let (status, _) = get(addr, "/nothing").await;
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    stop.cancel();
    server.await.unwrap().unwrap();
}

#[test]
fn a_modes_counted_families_read_0_from_its_first_cycle() {
    let recorder = build_recorder().unwrap();
    let handle = recorder.handle();
    let mode = ModeKey::new("prj_1", "duel");
    metrics::with_local_recorder(&recorder, || {
        cycle(&mode, Duration::from_millis(5), 0, 0);
    });
    let text = handle.render();
    let labels = r#"project="prj_1",mode="duel""#;
    let mut series: Vec<String> = [
        MATCHES,
        DEAD_LETTERS,
        PROPOSALS,
        BACKFILL_FILLS,
        BACKFILL_SEATS,
        BACKFILLS_OPEN,
    ]
    .iter()
    .map(|family| format!("{family}{{{labels}}} 0"))
    .collect();
    series.extend(
        ["made", "cancelled"].map(|o| format!(r#"{PROPOSALS_CLOSED}{{{labels},outcome="{o}"}} 0"#)),
    );
    series.extend(
        ["accepted", "declined", "timed_out"]
            .map(|a| format!(r#"{PROPOSAL_ANSWERS}{{{labels},answer="{a}"}} 0"#)),
    );
    series.push(format!(r#"{RELEASES}{{{labels},status="unassigned"}} 0"#));
    for one in &series {
        assert!(text.lines().any(|l| l == one), "{one} in {text}");
    }
}
