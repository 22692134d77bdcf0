//! The routes a console reads beside the others: the stats history (minutes
//! as the worker merges them, added up into buckets), the live pool (the
//! summary the worker stores with each cycle) and simulate (a scenario run
//! in the server).

use crate::common::{mode, Backend, TestApp};
use crate::on_both;
use axum::http::{Method, StatusCode};
use chrono::{DateTime, TimeDelta, Utc};
use matchplane_store::entities::mode_cycle_stat;
use matchplane_store::repos::cycle_stats;
use matchplane_store::repos::stats_history::{self, Figures};
use serde_json::{json, Value};

async fn with_mode(t: &TestApp) -> (String, String) {
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/game-modes"),
            Some(&key),
            Some(mode("duel")),
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    (p, key)
}

fn at_minute(minute: DateTime<Utc>, second: i64) -> DateTime<Utc> {
    minute + TimeDelta::seconds(second)
}

async fn history_merges_minutes_into_buckets(backend: Backend) {
    let t = TestApp::new(backend).await;
    let (p, key) = with_mode(&t).await;
    // Three minutes ago, on a 5-minute boundary's side we know: the buckets
    // are aligned on multiples of bucketSeconds since the epoch.
    let now = Utc::now();
    let m0 = stats_history::minute_of(now - TimeDelta::minutes(10));
    let m1 = m0 + TimeDelta::minutes(1);
    // Minute m0: two cycles; the second one's waits merge into the first's,
    // and so do the candidates each rule turned away (a rule that turned
    // nobody away is not kept).
    let waits_a = [1.0, 3.0];
    let waits_b = [30.0, 30.0];
    let rules = |counts: &[(&str, u32)]| -> std::collections::BTreeMap<String, u32> {
        counts.iter().map(|(r, n)| ((*r).to_owned(), *n)).collect()
    };
    let cycle_a = Figures::of_cycle(10, [(&waits_a[..], Some(20.0))])
        .with_rules(&rules(&[("level", 0), ("same-build", 2)]));
    let cycle_b = Figures::of_cycle(30, [(&waits_b[..], Some(200.0))])
        .with_rules(&rules(&[("level", 1), ("same-build", 3)]));
    stats_history::record(&t.db, &p, "duel", at_minute(m0, 5), &cycle_a)
        .await
        .unwrap();
    stats_history::record(&t.db, &p, "duel", at_minute(m0, 50), &cycle_b)
        .await
        .unwrap();
    // An idle cycle writes no row.
    stats_history::record(
        &t.db,
        &p,
        "duel",
        at_minute(m1, 1),
        &Figures::of_cycle(0, []),
    )
    .await
    .unwrap();
    // Minute m0 + 2: searches, no match.
    stats_history::record(
        &t.db,
        &p,
        "duel",
        at_minute(m0 + TimeDelta::minutes(2), 3),
        &Figures::of_cycle(7, []),
    )
    .await
    .unwrap();

    let from = (m0 - TimeDelta::minutes(1)).to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let path = |bucket: &str| {
        format!(
            "/v1/projects/{p}/game-modes/duel/stats/history?from={}&bucketSeconds={bucket}",
            from.replace('+', "%2B")
        )
    };
    let minutes = t.call(Method::GET, &path("60"), Some(&key), None).await;
    assert_eq!(minutes.status, StatusCode::OK, "{}", minutes.body);
    let buckets = minutes.body["buckets"].as_array().unwrap();
    assert_eq!(
        buckets.len(),
        2,
        "the idle minute has no bucket: {}",
        minutes.body
    );
    let first = &buckets[0];
    assert_eq!(
        first["start"]
            .as_str()
            .unwrap()
            .parse::<DateTime<Utc>>()
            .unwrap(),
        m0
    );
    assert_eq!(first["cycles"], 2);
    assert_eq!(first["searching"], 20);
    assert_eq!(first["searchingMax"], 30);
    assert_eq!(first["matches"], 2);
    assert_eq!(first["matchedPlayers"], 4);
    let p50 = first["waitSeconds"]["p50"].as_f64().unwrap();
    let p99 = first["waitSeconds"]["p99"].as_f64().unwrap();
    assert!((2.0..=3.0).contains(&p50), "{p50}");
    assert!((25.0..=30.0).contains(&p99), "{p99}");
    assert!(first["mmrSpread"]["p90"].as_f64().unwrap() > 150.0);
    assert_eq!(
        first["ruleTurnedAway"],
        json!({"level": 1, "same-build": 5})
    );
    assert_eq!(buckets[1]["matches"], 0);
    assert_eq!(buckets[1]["waitSeconds"], Value::Null);
    assert_eq!(buckets[1]["searching"], 7);
    // No rule turned anyone away: no counts.
    assert!(buckets[1].get("ruleTurnedAway").is_none(), "{}", buckets[1]);

    // A day's bucket adds every minute up.
    let day = t.call(Method::GET, &path("86400"), Some(&key), None).await;
    assert_eq!(day.status, StatusCode::OK, "{}", day.body);
    let total: i64 = day.body["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["cycles"].as_i64().unwrap())
        .sum();
    assert_eq!(total, 3);
    assert_eq!(day.body["bucketSeconds"], 86400);
    let turned_away: Vec<&Value> = day.body["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b.get("ruleTurnedAway"))
        .collect();
    assert_eq!(turned_away, [&json!({"level": 1, "same-build": 5})]);

    // Bad buckets and ranges name their parameter.
    for bad in ["30", "90", "0", "100000"] {
        let answer = t.call(Method::GET, &path(bad), Some(&key), None).await;
        answer.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        assert_eq!(answer.body["errors"][0]["field"], "bucketSeconds");
    }
    let reversed = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/stats/history?from=2026-12-01T10:00:00Z&to=2026-12-01T09:00:00Z"),
            Some(&key),
            None,
        )
        .await;
    reversed.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(reversed.body["errors"][0]["field"], "from");
    let garbled = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/stats/history?from=yesterday"),
            Some(&key),
            None,
        )
        .await;
    garbled.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let unknown = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/nope/stats/history"),
            Some(&key),
            None,
        )
        .await;
    unknown.assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
    // Another tenant's key finds nothing.
    let other = t.project("pro").await;
    let (_, other_key) = t.key(&other).await;
    let foreign = t
        .call(Method::GET, &path("60"), Some(&other_key), None)
        .await;
    foreign.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
}

async fn history_is_pruned_past_fourteen_days_in_batches(backend: Backend) {
    let t = TestApp::new(backend).await;
    let (p, _) = with_mode(&t).await;
    let now = Utc::now();
    let old = stats_history::minute_of(now - TimeDelta::days(15));
    for i in 0..5 {
        stats_history::record(
            &t.db,
            &p,
            "duel",
            old + TimeDelta::minutes(i),
            &Figures::of_cycle(3, []),
        )
        .await
        .unwrap();
    }
    stats_history::record(&t.db, &p, "duel", now, &Figures::of_cycle(3, []))
        .await
        .unwrap();
    let cutoff = now - TimeDelta::days(stats_history::RETENTION_DAYS);
    assert_eq!(stats_history::prune(&t.db, cutoff, 2).await.unwrap(), 2);
    assert_eq!(stats_history::prune(&t.db, cutoff, 2).await.unwrap(), 2);
    assert_eq!(stats_history::prune(&t.db, cutoff, 2).await.unwrap(), 1);
    assert_eq!(stats_history::prune(&t.db, cutoff, 2).await.unwrap(), 0);
    let kept = stats_history::minutes(
        &t.db,
        &p,
        "duel",
        now - TimeDelta::days(30),
        now + TimeDelta::minutes(1),
    )
    .await
    .unwrap();
    assert_eq!(kept.len(), 1);
}

async fn pool_serves_the_last_cycles_summary(backend: Backend) {
    let t = TestApp::new(backend).await;
    let (p, key) = with_mode(&t).await;
    let path = format!("/v1/projects/{p}/game-modes/duel/pool");
    let before = t.call(Method::GET, &path, Some(&key), None).await;
    assert_eq!(before.status, StatusCode::OK, "{}", before.body);
    assert_eq!(before.body["searching"], 0);
    assert_eq!(before.body["at"], Value::Null);
    assert_eq!(before.body["mmr"], Value::Null);

    let summary = json!({"searching": 12, "candidates": 11, "matched": 4,
        "waitingReasons": {"NO_CANDIDATES_IN_RANGE": 6, "PARTY_INCOMPLETE": 2},
        "mmr": {"start": 1400.0, "width": 25.0, "counts": [3, 9]}, "latencyMs": null});
    cycle_stats::put(
        &t.db,
        mode_cycle_stat::Model {
            project_id: p.clone(),
            game_mode: "duel".into(),
            pool_size: 12,
            candidates: 11,
            matches: 1,
            duration_ms: 1.0,
            ran_at: Utc::now(),
            pool_summary: Some(summary.to_string()),
            period_seconds: None,
        },
    )
    .await
    .unwrap();
    let after = t.call(Method::GET, &path, Some(&key), None).await;
    assert_eq!(after.status, StatusCode::OK, "{}", after.body);
    assert_eq!(after.body["searching"], 12);
    assert_eq!(after.body["matched"], 4);
    assert_eq!(after.body["waitingReasons"]["NO_CANDIDATES_IN_RANGE"], 6);
    assert_eq!(after.body["mmr"]["counts"], json!([3, 9]));
    assert_eq!(after.body["latencyMs"], Value::Null);
    assert!(after.body["at"].is_string());
    let unknown = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/nope/pool"),
            Some(&key),
            None,
        )
        .await;
    unknown.assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
}

fn scenario(arrivals: usize) -> Value {
    let arrivals: Vec<Value> = (0..arrivals)
        .map(|i| json!({"at": i as f64 * 0.01, "playerId": format!("p{i}"), "mmr": 1500 + (i % 200)}))
        .collect();
    json!({
        "gameMode": {
            "name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 50, "expansionMultiplier": 2},
            "teamAssignment": "balanced",
            "parties": {"allowParties": false, "maxSize": 1, "keepTogether": true},
            "ticketTtlSeconds": 600
        },
        "tier": "pro", "seed": 7, "until": 30, "arrivals": arrivals
    })
}

async fn simulate_runs_a_scenario_in_the_server(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let path = format!("/v1/projects/{p}/simulate");
    // Bigger than other routes' 64 KiB bodies.
    let body = scenario(2000);
    assert!(body.to_string().len() > 64 * 1024);
    let report = t.call(Method::POST, &path, Some(&key), Some(body)).await;
    assert_eq!(report.status, StatusCode::OK, "{}", report.body);
    assert_eq!(report.body["stats"]["matchedPlayers"], 2000);
    assert_eq!(report.body["stats"]["matches"], 1000);
    assert!(report.body["stats"]["waitSeconds"]["p90"].is_number());
    assert!(report.body["matches"][0]["teams"].is_array());

    // Arrivals as CSV text.
    let mut csv = scenario(0);
    csv["arrivalsCsvText"] =
        json!("at,playerId,mmr,pingMs,partyId,partyMembers\n0,a,1500,,,\n0,b,1510,,,\n");
    let from_csv = t.call(Method::POST, &path, Some(&key), Some(csv)).await;
    assert_eq!(from_csv.status, StatusCode::OK, "{}", from_csv.body);
    assert_eq!(from_csv.body["stats"]["matches"], 1);

    // An inline cancel may name a player of the CSV text; a misspelt one
    // is said, not dropped (docs/simulate.md, "Inline events").
    let mut cancelled = scenario(0);
    cancelled["arrivals"] = json!([{"at": 0.5, "cancel": "b"}]);
    cancelled["arrivalsCsvText"] =
        json!("at,playerId,mmr,pingMs,partyId,partyMembers\n0,a,1500,,,\n0,b,1510,,,\n");
    let run = t
        .call(Method::POST, &path, Some(&key), Some(cancelled.clone()))
        .await;
    assert_eq!(run.status, StatusCode::OK, "{}", run.body);
    cancelled["arrivals"] = json!([{"at": 0.5, "cancel": "bb"}]);
    let refused = t
        .call(Method::POST, &path, Some(&key), Some(cancelled))
        .await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert!(
        refused.body["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"bb\"")),
        "{}",
        refused.body
    );

    // A row that cannot be read is named by this route's field.
    let mut unreadable = scenario(0);
    unreadable["arrivalsCsvText"] = json!("at,playerId,mmr\n0,a,high\n");
    let refused = t
        .call(Method::POST, &path, Some(&key), Some(unreadable))
        .await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(refused.body["errors"][0]["field"], "arrivalsCsvText[0].mmr");

    // A second mode in `compare`: both run on the same arrivals, answered
    // as the command prints them.
    let mut compared = scenario(2);
    compared["compare"] = compared["gameMode"].clone();
    compared["compare"]["matchShape"] = json!([2, 2]);
    let both = t
        .call(Method::POST, &path, Some(&key), Some(compared))
        .await;
    assert_eq!(both.status, StatusCode::OK, "{}", both.body);
    assert_eq!(both.body["a"]["stats"]["matches"], 1, "{}", both.body);
    assert_eq!(both.body["b"]["stats"]["matches"], 0, "{}", both.body);
    assert_eq!(
        both.body["diff"]["matches"],
        json!([1.0, 0.0]),
        "{}",
        both.body
    );

    // A file path means nothing here; an invalid mode lists its fields.
    let mut file = scenario(2);
    file["arrivalsCsv"] = json!("arrivals.csv");
    let refused = t.call(Method::POST, &path, Some(&key), Some(file)).await;
    refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(refused.body["errors"][0]["field"], "arrivalsCsv");
    let mut bad = scenario(2);
    bad["gameMode"]["matchmakingCycleDurationSeconds"] = json!(0);
    bad["until"] = json!(-1);
    let invalid = t.call(Method::POST, &path, Some(&key), Some(bad)).await;
    assert_eq!(
        invalid.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        invalid.body
    );
    let fields: Vec<&str> = invalid.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert!(fields.contains(&"until"), "{fields:?}");
    assert!(
        fields.iter().any(|f| f.starts_with("gameMode.")),
        "{fields:?}"
    );

    // Shape errors of the scenario and of its mode are all named at once,
    // by their paths, in the API's words: no serde text, no Rust type.
    let mut shapes = scenario(2);
    shapes["until"] = json!("soon");
    shapes["gameMode"]["matchShape"] = json!("two teams");
    shapes["arrivals"][0]["mmr"] = json!([1500]);
    let shaped = t.call(Method::POST, &path, Some(&key), Some(shapes)).await;
    shaped.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    let errors: Vec<(String, String)> = shaped.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["field"].as_str().unwrap().to_owned(),
                e["message"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert!(
        errors.contains(&(
            "until".into(),
            "expected a number, got the string \"soon\"".into()
        )),
        "{errors:?}"
    );
    assert!(
        errors.contains(&(
            "arrivals[0].mmr".into(),
            "expected a number, got an array".into()
        )),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|(field, message)| field == "gameMode.matchShape"
                && message.ends_with("got the string \"two teams\"")),
        "{errors:?}"
    );
    for (_, message) in &errors {
        assert!(
            !message.contains("line ") && !message.contains("struct "),
            "{message}"
        );
    }

    // Nothing live was touched: no match stored, no cycle figures.
    let matches = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(matches.body["items"], json!([]));
    // Another tenant's path is not found; no key is unauthorized.
    let other = t.project("pro").await;
    let (_, other_key) = t.key(&other).await;
    let foreign = t
        .call(Method::POST, &path, Some(&other_key), Some(scenario(2)))
        .await;
    foreign.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    let anonymous = t.call(Method::POST, &path, None, Some(scenario(2))).await;
    anonymous.assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
}

/// The console's page and every module it loads, followed from the page's
/// script through each `import … from "./…"`, are served with a
/// JavaScript type and the page's policy, to anyone (the pages hold no
/// credential): a module missing here leaves the console blank.
async fn the_console_and_every_module_it_imports_are_served(backend: Backend) {
    let t = TestApp::new(backend).await;
    let page = t.call(Method::GET, "/console/", None, None).await;
    assert_eq!(page.status, StatusCode::OK);
    let csp = &page.headers["content-security-policy"];
    let html = page.body.as_str().unwrap().to_owned();
    let mut queue: Vec<String> = html
        .split("src=\"/console/")
        .skip(1)
        .filter_map(|rest| rest.split('"').next().map(str::to_owned))
        .collect();
    assert_eq!(queue, ["app.js"], "{html}");
    let mut seen: Vec<String> = Vec::new();
    while let Some(name) = queue.pop() {
        if seen.contains(&name) {
            continue;
        }
        let module = t
            .call(Method::GET, &format!("/console/{name}"), None, None)
            .await;
        assert_eq!(module.status, StatusCode::OK, "{name}");
        assert_eq!(
            module.headers["content-type"], "text/javascript; charset=utf-8",
            "{name}"
        );
        assert_eq!(&module.headers["content-security-policy"], csp, "{name}");
        let text = module.body.as_str().unwrap_or_default().to_owned();
        queue.extend(
            text.split("from \"./")
                .skip(1)
                .filter_map(|rest| rest.split('"').next().map(str::to_owned)),
        );
        seen.push(name);
    }
    assert!(seen.len() > 5, "the console's modules: {seen:?}");
    let missing = t.call(Method::GET, "/console/nothing.js", None, None).await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
}

on_both!(
    the_console_and_every_module_it_imports_are_served,
    history_merges_minutes_into_buckets,
    history_is_pruned_past_fourteen_days_in_batches,
    pool_serves_the_last_cycles_summary,
    simulate_runs_a_scenario_in_the_server,
);

/// Every form says a failed request through `formFailure` (api.js), the
/// one place that reads a problem's `errors`: every problem body sends it,
/// `[]` when the failure is not about a field, and forms that tested it
/// themselves showed "0 problems to fix:" and no message for a 404
/// (docs/console.md, "Accessibility and screens").
#[test]
fn only_the_shared_form_failure_reads_a_problems_errors() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("console");
    let mut readers = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.ends_with(".js") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, line) in text.lines().enumerate() {
            let shared = name == "api.js"
                && line.contains("const errors = Array.isArray(error.body.errors)");
            if line.contains("body.errors") && !shared {
                readers.push(format!("{name}:{}: {}", i + 1, line.trim()));
            }
        }
    }
    assert!(
        readers.is_empty(),
        "read a problem's errors through formFailure (api.js):\n{}",
        readers.join("\n")
    );
}
