//! Retention (docs/game-modes.md#tier-limits, docs/deployment.md#scaling): each tier's `retentionDays` (seeded, validated,
//! shown), and the worker's pruning of what is older, which never keeps the
//! API waiting: a large prune runs while the API lists matches, reads one
//! and generates tickets, every request answers, and each within a generous
//! multiple of the same requests' latency measured just before, in the same
//! test. Exactly the rows past their project's retention go.

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::http::{Method, StatusCode};
use matchplane_worker::retention::{Pruner, RetentionConfig};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

async fn tiers_carry_retention_days(backend: Backend) {
    let t = TestApp::new(backend).await;
    for (tier, days) in [("free", 30), ("pro", 90), ("enterprise", 365)] {
        let shown = t
            .call(
                Method::GET,
                &format!("/v1/tiers/{tier}"),
                Some(OPERATOR),
                None,
            )
            .await;
        assert_eq!(shown.body["retentionDays"], days, "{}", shown.body);
    }
    let tier = json!({
        "minCycleDurationSeconds": 1, "minBaseTolerance": 0, "minExpansionMultiplier": 1,
        "maxMatchSize": 16, "maxGameModes": 3, "maxConcurrentSearches": 100,
        "requestsPerSecond": 1000
    });
    // A new tier without the field gets 90 days; written again without it,
    // it keeps what it has.
    let put = t
        .call(
            Method::PUT,
            "/v1/tiers/studio",
            Some(OPERATOR),
            Some(tier.clone()),
        )
        .await;
    assert_eq!(put.body["retentionDays"], 90, "{}", put.body);
    let mut seven = tier.clone();
    seven["retentionDays"] = json!(7);
    let put = t
        .call(Method::PUT, "/v1/tiers/studio", Some(OPERATOR), Some(seven))
        .await;
    assert_eq!(put.body["retentionDays"], 7, "{}", put.body);
    let kept = t
        .call(
            Method::PUT,
            "/v1/tiers/studio",
            Some(OPERATOR),
            Some(tier.clone()),
        )
        .await;
    assert_eq!(kept.body["retentionDays"], 7, "{}", kept.body);
    // Out of range: 422; not a whole number at all: 400. Both name it.
    for (bad, status) in [
        (json!(0), StatusCode::UNPROCESSABLE_ENTITY),
        (json!(3651), StatusCode::UNPROCESSABLE_ENTITY),
        (json!(-1), StatusCode::BAD_REQUEST),
        (json!("30"), StatusCode::BAD_REQUEST),
    ] {
        let mut body = tier.clone();
        body["retentionDays"] = bad.clone();
        let refused = t
            .call(Method::PUT, "/v1/tiers/studio", Some(OPERATOR), Some(body))
            .await;
        assert_eq!(refused.status, status, "{bad}: {}", refused.body);
        assert_eq!(
            refused.body["errors"][0]["field"], "retentionDays",
            "{bad}: {}",
            refused.body
        );
    }
    let mut longest = tier;
    longest["retentionDays"] = json!(3650);
    let put = t
        .call(
            Method::PUT,
            "/v1/tiers/studio",
            Some(OPERATOR),
            Some(longest),
        )
        .await;
    assert_eq!(put.body["retentionDays"], 3650, "{}", put.body);
}

on_both!(tiers_carry_retention_days);

/// The `teams` of every seeded match, as the worker writes them.
const TEAMS: &str = r#"[{"index":0,"players":[{"playerId":"a","ticketId":"tkt_a","partyId":null,"mmr":1500.0,"pingMs":null,"waitSeconds":4.0}],"meanMmr":1500.0},{"index":1,"players":[{"playerId":"b","ticketId":"tkt_b","partyId":null,"mmr":1510.0,"pingMs":null,"waitSeconds":8.0}],"meanMmr":1510.0}]"#;

/// Seeds rows with multi-row `INSERT … SELECT` statements over a series
/// `i = 1..=n`, on either database.
struct Seeder<'a> {
    db: &'a DatabaseConnection,
    backend: Backend,
}

impl Seeder<'_> {
    /// A timestamp `days` days and `i` seconds before now, in the column
    /// format of the backend (SQLite: the RFC 3339 text sqlx writes).
    fn ago(&self, days: u32) -> String {
        match self.backend {
            Backend::Postgres => {
                format!("now() - interval '{days} days' - i * interval '1 second'")
            }
            Backend::Sqlite => format!(
                "strftime('%Y-%m-%dT%H:%M:%f+00:00', 'now', '-{days} days', '-' || i || ' seconds')"
            ),
        }
    }

    /// A JSON literal.
    fn json(&self, text: &str) -> String {
        match self.backend {
            Backend::Postgres => format!("'{text}'::jsonb"),
            Backend::Sqlite => format!("'{text}'"),
        }
    }

    /// `INSERT INTO table (columns) SELECT values FROM 1..=n`.
    async fn insert(&self, table: &str, columns: &str, values: &str, n: u64) {
        let sql = match self.backend {
            Backend::Postgres => format!(
                "INSERT INTO {table} ({columns}) SELECT {values} FROM generate_series(1, {n}) AS s(i)"
            ),
            Backend::Sqlite => format!(
                "WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < {n}) \
                 INSERT INTO {table} ({columns}) SELECT {values} FROM s"
            ),
        };
        self.db
            .execute(Statement::from_string(self.db.get_database_backend(), sql))
            .await
            .unwrap_or_else(|e| panic!("seeding {table}: {e}"));
    }

    /// `n` matches of `project` named `mat_{tag}_<i>`, each `days` days old
    /// (and `i` seconds), each with two seated tickets, one delivery and
    /// one attempt; the first `children` also with a backfill request, a
    /// fill and an applied rating result.
    async fn matches(
        &self,
        project: &str,
        mode_id: &str,
        tag: &str,
        days: u32,
        n: u64,
        children: u64,
    ) {
        let at = self.ago(days);
        let (teams, quality) = (
            self.json(TEAMS),
            self.json(r#"{"mmrSpread":10.0,"teamImbalance":10.0}"#),
        );
        self.insert(
            "matches",
            "id, project_id, game_mode, game_mode_version, teams, quality, created_at",
            &format!("'mat_{tag}_' || i, '{project}', 'duel', 1, {teams}, {quality}, {at}"),
            n,
        )
        .await;
        for seat in ["a", "b"] {
            self.insert(
                "match_tickets",
                "ticket_id, match_id, project_id, game_mode, player_id, token_hash, created_at, expires_at",
                &format!(
                    "'tkt_{tag}_{seat}_' || i, 'mat_{tag}_' || i, '{project}', 'duel', '{seat}', 'hash', 0, 0"
                ),
                n,
            )
            .await;
        }
        self.insert(
            "webhook_deliveries",
            "id, project_id, game_mode, match_id, event_type, payload, status, attempt_count, \
             attempts_before_run, created_at, updated_at",
            &format!(
                "'dlv_{tag}_' || i, '{project}', 'duel', 'mat_{tag}_' || i, 'match.made', '{{}}', \
                 'succeeded', 1, 0, {at}, {at}"
            ),
            n,
        )
        .await;
        self.insert(
            "webhook_attempts",
            "id, delivery_id, project_id, attempted_at, status_code, latency_ms",
            &format!("'att_{tag}_' || i, 'dlv_{tag}_' || i, '{project}', {at}, 200, 5"),
            n,
        )
        .await;
        let (roster, seats) = (self.json("[]"), self.json("[0,0]"));
        self.insert(
            "backfills",
            "id, project_id, game_mode, match_id, status, roster, open_seats, fills, seats_filled, \
             revision, created_at, updated_at, expires_at",
            &format!(
                "'bf_{tag}_' || i, '{project}', 'duel', 'mat_{tag}_' || i, 'filled', {roster}, {seats}, \
                 1, 1, 1, {at}, {at}, {at}"
            ),
            children,
        )
        .await;
        self.insert(
            "backfill_fills",
            "id, backfill_id, project_id, match_id, teams, open_seats_left, created_at",
            &format!("'bff_{tag}_' || i, 'bf_{tag}_' || i, '{project}', 'mat_{tag}_' || i, {roster}, {seats}, {at}"),
            children,
        )
        .await;
        self.insert(
            "rating_results",
            "game_mode_id, match_id, project_id, created_at",
            &format!("'{mode_id}', 'mat_{tag}_' || i, '{project}', {at}"),
            children,
        )
        .await;
    }

    /// The id of `project`'s mode `duel`.
    async fn mode_id(&self, project: &str) -> String {
        let row = self
            .db
            .query_one(Statement::from_string(
                self.db.get_database_backend(),
                format!(
                    "SELECT id FROM game_modes WHERE project_id = '{project}' AND name = 'duel'"
                ),
            ))
            .await
            .unwrap()
            .unwrap();
        row.try_get("", "id").unwrap()
    }

    /// Rows of `table` whose `column` starts with `prefix`.
    async fn count(&self, table: &str, column: &str, prefix: &str) -> i64 {
        let row = self
            .db
            .query_one(Statement::from_string(
                self.db.get_database_backend(),
                format!("SELECT COUNT(*) AS n FROM {table} WHERE {column} LIKE '{prefix}%'"),
            ))
            .await
            .unwrap()
            .unwrap();
        row.try_get("", "n").unwrap()
    }
}

/// The tables seeded per match, the column their ids are in and each id's
/// prefix before the tag, and how many rows one match has there
/// (`children` for the last three).
const TABLES: [(&str, &str, &str); 7] = [
    ("matches", "id", "mat_"),
    ("match_tickets", "ticket_id", "tkt_"),
    ("webhook_deliveries", "id", "dlv_"),
    ("webhook_attempts", "id", "att_"),
    ("backfills", "id", "bf_"),
    ("backfill_fills", "id", "bff_"),
    ("rating_results", "match_id", "mat_"),
];

/// The `q`-quantile of `samples` (sorted here).
fn quantile(samples: &mut [Duration], q: f64) -> Duration {
    samples.sort();
    let at = ((samples.len() as f64 - 1.0) * q).round() as usize;
    samples[at.min(samples.len() - 1)]
}

/// One round of API requests: list the matches, read a kept match,
/// generate a ticket; the latency of each.
async fn round(t: &TestApp, project: &str, key: &str, player: usize) -> [Duration; 3] {
    let mut took = [Duration::ZERO; 3];
    let started = Instant::now();
    let listed = t
        .call(
            Method::GET,
            &format!("/v1/projects/{project}/matches?limit=20"),
            Some(key),
            None,
        )
        .await;
    took[0] = started.elapsed();
    assert_eq!(listed.status, StatusCode::OK, "{}", listed.body);
    assert_eq!(
        listed.body["items"].as_array().map(Vec::len),
        Some(20),
        "{}",
        listed.body
    );
    let started = Instant::now();
    let read = t
        .call(
            Method::GET,
            &format!("/v1/projects/{project}/matches/mat_1new_7"),
            Some(key),
            None,
        )
        .await;
    took[1] = started.elapsed();
    assert_eq!(read.status, StatusCode::OK, "{}", read.body);
    let started = Instant::now();
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{project}/tickets"),
            Some(key),
            Some(json!({"gameMode": "duel", "playerId": format!("p{player}"), "attributes": {"mmr": 1500}})),
        )
        .await;
    took[2] = started.elapsed();
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    took
}

/// Seeds `old` matches past the retention of a 90-day project and a few
/// past a 30-day one's, beside recent ones, then prunes while the API
/// answers requests.
async fn api_answers_during_a_large_prune(backend: Backend, old: u64) {
    let t = TestApp::new(backend).await;
    // Rate limits well above what one client sends; 90 days.
    let tier = json!({
        "minCycleDurationSeconds": 1, "minBaseTolerance": 0, "minExpansionMultiplier": 1,
        "maxMatchSize": 16, "maxGameModes": 3, "maxConcurrentSearches": 100000,
        "requestsPerSecond": 50000, "retentionDays": 90
    });
    let put = t
        .call(Method::PUT, "/v1/tiers/load", Some(OPERATOR), Some(tier))
        .await;
    assert_eq!(put.status, StatusCode::CREATED, "{}", put.body);
    let (busy, short) = (t.project("load").await, t.project("free").await);
    let (_, key) = t.key(&busy).await;
    let seed = Seeder { db: &t.db, backend };
    let mut mode_ids = Vec::new();
    for project in [&busy, &short] {
        let (_, project_key) = t.key(project).await;
        let created = t
            .call(
                Method::POST,
                &format!("/v1/projects/{project}/game-modes"),
                Some(&project_key),
                Some(mode("duel")),
            )
            .await;
        assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
        mode_ids.push(seed.mode_id(project).await);
    }
    let seeding = Instant::now();
    // The 90-day project: `old` matches 100 days old, 500 of a day (kept).
    seed.matches(&busy, &mode_ids[0], "0old", 100, old, 10)
        .await;
    seed.matches(&busy, &mode_ids[0], "1new", 1, 500, 10).await;
    // The 30-day project: 45 days old goes, 20 days old stays.
    seed.matches(&short, &mode_ids[1], "0past30", 45, 50, 5)
        .await;
    seed.matches(&short, &mode_ids[1], "1within30", 20, 50, 5)
        .await;
    // 89 days is within the 90-day project's retention.
    seed.matches(&busy, &mode_ids[0], "1edge", 89, 50, 5).await;
    eprintln!("seeded {old} old matches in {:?}", seeding.elapsed());

    // The baseline: the same rounds with nothing else running.
    let mut player = 0;
    let mut baseline = Vec::new();
    for _ in 0..60 {
        player += 1;
        baseline.extend(round(&t, &busy, &key, player).await);
    }

    let cancel = CancellationToken::new();
    let db = t.db.clone();
    let config = RetentionConfig {
        pause: Duration::from_millis(5),
        ..RetentionConfig::default()
    };
    let prune = tokio::spawn(async move {
        let pruner = Pruner {
            db: &db,
            holder: "wrk_test",
            config,
            cancel: &cancel,
        };
        let started = Instant::now();
        let report = pruner.pass(chrono::Utc::now()).await;
        (report, started.elapsed())
    });
    let mut during = Vec::new();
    while !prune.is_finished() {
        player += 1;
        during.extend(round(&t, &busy, &key, player).await);
    }
    let (report, took) = prune.await.unwrap();
    let report = report.unwrap().expect("the pruner holds the lease");
    assert!(report.complete, "{report:?}");

    let (old_n, short_n) = (i64::try_from(old).unwrap(), 50);
    let gone = old_n + short_n;
    assert_eq!(report.pruned.matches, gone as u64, "{report:?}");
    assert_eq!(report.pruned.match_tickets, 2 * gone as u64, "{report:?}");
    assert_eq!(report.pruned.deliveries, gone as u64, "{report:?}");
    assert_eq!(report.pruned.attempts, gone as u64, "{report:?}");
    assert_eq!(report.pruned.backfills, 15, "{report:?}");
    assert_eq!(report.pruned.backfill_fills, 15, "{report:?}");
    assert_eq!(report.pruned.rating_results, 15, "{report:?}");
    for (table, column, prefix) in TABLES {
        for tag in ["0old", "0past30"] {
            let left = seed.count(table, column, &format!("{prefix}{tag}_")).await;
            assert_eq!(left, 0, "{table}: {tag} rows left");
        }
        for (tag, n, children) in [("1new", 500, 10), ("1within30", 50, 5), ("1edge", 50, 5)] {
            let per_match = match table {
                "match_tickets" => 2 * n,
                "backfills" | "backfill_fills" | "rating_results" => children,
                _ => n,
            };
            let kept = seed.count(table, column, &format!("{prefix}{tag}_")).await;
            assert_eq!(kept, per_match, "{table}: {tag} rows kept");
        }
    }

    // Every request answered (asserted in `round`); each within a generous
    // multiple of the baseline's p99 (a prune that held a lock the API
    // waits on would hold it for seconds, against milliseconds).
    assert!(
        during.len() >= 30,
        "only {} requests ran during the prune",
        during.len()
    );
    let (base_p50, base_p99) = (quantile(&mut baseline, 0.5), quantile(&mut baseline, 0.99));
    let (p50, p99) = (quantile(&mut during, 0.5), quantile(&mut during, 0.99));
    let slowest = *during.iter().max().unwrap();
    eprintln!(
        "{backend:?}: pruned {} rows ({} matches) in {took:?}: {:.0} rows/s, {:.0} matches/s, {} batches; \
         API p50 {base_p50:?} -> {p50:?}, p99 {base_p99:?} -> {p99:?}, slowest {slowest:?}, {} requests during",
        report.total(),
        report.pruned.matches,
        report.total() as f64 / took.as_secs_f64(),
        report.pruned.matches as f64 / took.as_secs_f64(),
        report.batches,
        during.len(),
    );
    let bound = base_p99 * 50;
    assert!(
        slowest <= bound,
        "a request took {slowest:?}, over 50x the baseline p99 {base_p99:?}"
    );
}

/// 50 000 old matches (five rows each) by default, a few hundred batches;
/// `MATCHPLANE_PRUNE_TEST_MATCHES` sets another count (docs/retention.md's
/// figures are from 200 000).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_answers_during_a_large_prune_postgres() {
    let matches = std::env::var("MATCHPLANE_PRUNE_TEST_MATCHES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(50_000);
    api_answers_during_a_large_prune(Backend::Postgres, matches).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_answers_during_a_large_prune_sqlite() {
    api_answers_during_a_large_prune(Backend::Sqlite, 20_000).await;
}
