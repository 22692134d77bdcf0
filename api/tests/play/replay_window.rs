//! A replay of a wide window with little traffic (docs/tuning.md, "Replay
//! in the server"): the empty stretches cost nothing, and the reports are
//! written as `simulate` writes them (seconds to the millisecond, no
//! spread for a match without MMRs).

use crate::harness::{call, fast, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use chrono::{SecondsFormat, TimeDelta, Utc};
use matchplane_store::repos::recordings::{self, Kind, NewRecording};
use serde_json::{json, Value};

on_both_pools!(a_month_with_a_few_searches_replays_quickly_and_rounded);
on_both_pools!(a_window_into_the_future_ends_now);

/// Whether `v` is written with at most three decimals.
fn to_the_millisecond(v: &Value) -> bool {
    v.as_f64()
        .is_none_or(|x| ((x * 1000.0).round() / 1000.0).to_string() == x.to_string())
}

async fn a_month_with_a_few_searches_replays_quickly_and_rounded(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    let mut mode = crate::harness::duel("duel");
    mode["matchmakingCycleDurationSeconds"] = json!(1);
    mode["recording"] = json!({"enabled": true, "retentionDays": 30});
    // FIFO, its searches without MMR: its matches have no MMR spread.
    mode["algorithm"] = json!({"type": "fifo"});
    t.mode(&p, &key, mode.clone()).await;

    // 46 starts in pairs, a few bursts over 30 days, at odd milliseconds.
    let from = (Utc::now() - TimeDelta::days(31)).timestamp() * 1000;
    let to = from + 30 * 86_400_000;
    let rows: Vec<NewRecording> = (0..46)
        .map(|i: i64| {
            let at_ms = from + (i / 10) * 600_000_003 + (i % 10) * 1_856 + 7;
            NewRecording::event(&p, "duel", Kind::Start, format!("{i:032x}"), at_ms)
        })
        .collect();
    recordings::insert_batch(&t.db, &rows).await.unwrap();

    let mut proposed = mode.clone();
    proposed["matchmakingCycleDurationSeconds"] = json!(2);
    let instant = |ms: i64| {
        chrono::DateTime::from_timestamp_millis(ms)
            .unwrap()
            .to_rfc3339_opts(SecondsFormat::Secs, true)
    };
    let replay = call(
        &t.app,
        Method::POST,
        &format!(
            "/v1/projects/{p}/game-modes/duel/replay?from={}&to={}",
            instant(from),
            instant(to)
        ),
        Some(&key),
        Some(proposed),
    )
    .await;
    assert_eq!(replay.status, StatusCode::OK, "{}", replay.body);
    let body = &replay.body;
    assert_eq!(body["arrivals"], 46, "{body}");
    for side in ["a", "b"] {
        assert_eq!(body[side]["stats"]["matches"], 23, "{side}: {body}");
        let stats = &body[side]["stats"];
        for p in ["p50", "p90", "p99", "max"] {
            for waits in ["waitSeconds", "waitSecondsAll"] {
                assert!(
                    to_the_millisecond(&stats[waits][p]),
                    "{side} {waits}: {stats}"
                );
            }
        }
        for m in body[side]["matches"].as_array().unwrap() {
            assert!(to_the_millisecond(&m["at"]), "{side}: {m}");
        }
    }
    for pair in body["diff"].as_object().unwrap().values() {
        assert!(
            to_the_millisecond(&pair[0]) && to_the_millisecond(&pair[1]),
            "{body}"
        );
    }
    for side in ["a", "b"] {
        let m = &body[side]["matches"][0];
        assert_eq!(m["meanMmr"], json!([null, null]), "{m}");
        assert!(
            m["mmrSpread"].is_null() && m["teamImbalance"].is_null(),
            "{m}"
        );
        assert!(body[side]["stats"]["mmrSpread"]["p50"].is_null(), "{body}");
    }
}

/// A window whose `to` is after now ends now: a search still waiting waits
/// until now in the replay, not until the window's far end.
async fn a_window_into_the_future_ends_now(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("pro").await;
    let mut mode = crate::harness::duel("duel");
    mode["recording"] = json!({"enabled": true, "retentionDays": 30});
    mode["algorithm"] = json!({"type": "fifo"});
    t.mode(&p, &key, mode.clone()).await;
    // One start half an hour ago, alone: it never matches.
    let at_ms = (Utc::now() - TimeDelta::minutes(30)).timestamp_millis();
    let row = NewRecording::event(&p, "duel", Kind::Start, format!("{:032x}", 1), at_ms);
    recordings::insert_batch(&t.db, &[row]).await.unwrap();
    let from = (Utc::now() - TimeDelta::hours(1)).to_rfc3339_opts(SecondsFormat::Secs, true);
    let replay = call(
        &t.app,
        Method::POST,
        &format!("/v1/projects/{p}/game-modes/duel/replay?from={from}&to=9999-01-01T00:00:00Z"),
        Some(&key),
        Some(mode),
    )
    .await;
    assert_eq!(replay.status, StatusCode::OK, "{}", replay.body);
    let longest = replay.body["a"]["stats"]["waitSecondsAll"]["max"]
        .as_f64()
        .unwrap();
    assert!((1700.0..1900.0).contains(&longest), "{}", replay.body);
}
