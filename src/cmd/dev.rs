//! `matchplane dev`: the API and the worker in one process on the embedded
//! default, for a laptop. A SQLite file (migrations applied on start) and
//! the in-process pool store, or Redis when `--redis-url` is given. Private
//! webhook addresses are allowed unless `MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS=false`.
//! Without `MATCHPLANE_OPERATOR_TOKEN` an operator token is generated and
//! printed. `--demo` creates a demo project, key and two modes (run again,
//! the project is reused and the earlier demo key revoked). On the
//! in-process pools, proposals an earlier run left open are stored as
//! cancelled at start (their pool went with that process). The worker's
//! metrics are served on the API's `GET /metrics`, after the API's own.

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Args};
use matchplane_api::play::{self, Play, PlaySettings};
use matchplane_api::{ApiConfig, ServeConfig};
use matchplane_store::pool::{MemoryPoolStore, PoolStore};
use matchplane_store::tickets::MemoryTicketStore;
use matchplane_webhook::DeliveryConfig;
use matchplane_worker::WorkerConfig;
use rand::RngCore;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Arguments of `matchplane dev`.
#[derive(Args)]
pub struct DevArgs {
    /// Address the API listens on.
    #[arg(long, env = "MATCHPLANE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Database: a SQLite file by default (created if missing), or `postgres://…`.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "sqlite://matchplane-dev.db",
        hide_env_values = true
    )]
    pub database_url: String,
    /// Redis for pools instead of the in-process pool store.
    #[arg(long, env = "REDIS_URL", hide_env_values = true)]
    pub redis_url: Option<String>,
    /// Key prefix in Redis (with `--redis-url`).
    #[arg(long, env = "MATCHPLANE_REDIS_PREFIX", default_value = "mp-dev")]
    pub redis_prefix: String,
    /// Operator token; generated and printed when absent.
    #[arg(long, env = "MATCHPLANE_OPERATOR_TOKEN", hide_env_values = true)]
    pub operator_token: Option<String>,
    /// Allow webhooks to private addresses and `http` (on by default in dev).
    #[arg(
        long,
        env = "MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS",
        action = ArgAction::Set,
        num_args = 0..=1,
        default_value = "true",
        default_missing_value = "true",
        value_parser = BoolishValueParser::new()
    )]
    pub allow_private_webhooks: bool,
    /// Create a demo project, API key and two game modes, and print them.
    #[arg(
        long,
        env = "MATCHPLANE_DEMO",
        action = ArgAction::Set,
        num_args = 0..=1,
        default_value = "false",
        default_missing_value = "true",
        value_parser = BoolishValueParser::new()
    )]
    pub demo: bool,
    /// Key of the recording's player-id hashes (HMAC-SHA-256), shared by the
    /// API and the worker. Unset: a key drawn once and kept in the database.
    #[arg(long, env = "MATCHPLANE_RECORDING_KEY", hide_env_values = true)]
    pub recording_key: Option<String>,
    /// Timeouts of the dependencies and of the clients' connections, as
    /// `matchplane api` takes them (docs/configuration.md).
    #[command(flatten)]
    pub limits: super::limits::ServiceLimits,
}

fn generated_token() -> String {
    let mut bytes = [0u8; 24];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Runs the subcommand until Ctrl-C or SIGTERM.
pub async fn run(args: DevArgs) -> ExitCode {
    let limits = match args.limits.parse() {
        Ok(limits) => limits,
        Err(err) => {
            super::report_error(err);
            return ExitCode::FAILURE;
        }
    };
    let db = match matchplane_store::db::connect_with(&args.database_url, limits.db).await {
        Ok(db) => db,
        Err(err) => {
            super::report_error(format_args!("cannot open the database: {err}"));
            return ExitCode::FAILURE;
        }
    };
    let pending = matchplane_migrations::pending(&db).await.unwrap_or(0);
    if let Err(err) = matchplane_migrations::migrate(&db).await {
        super::report_error(format_args!("migrations failed: {err}"));
        return ExitCode::FAILURE;
    }
    if pending > 0 {
        tracing::info!(applied = pending, "database migrated");
    }
    if args.redis_url.is_none() {
        // The in-process pools start empty: a proposal stored by an earlier
        // run can no longer be answered, and is stored as cancelled
        // (README.md; docs/backfill.md, on `matchplane dev`).
        match matchplane_store::repos::match_status::cancel_all_proposed(&db).await {
            Ok(0) => {}
            Ok(n) => super::say(format_args!(
                "  {n} proposal(s) of the previous run cancelled"
            )),
            Err(err) => super::say_err(format_args!(
                "warning: the previous run's proposals stay proposed: {err}"
            )),
        }
        // And a backfill request it left open could never be filled.
        let now = chrono::Utc::now();
        match matchplane_store::repos::backfills::close_all_open(&db, now).await {
            Ok(0) => {}
            Ok(n) => super::say(format_args!(
                "  {n} backfill request(s) of the previous run closed"
            )),
            Err(err) => super::say_err(format_args!(
                "warning: the previous run's backfill requests stay open: {err}"
            )),
        }
    }
    let (operator_token, generated) = match super::non_blank(args.operator_token.clone()) {
        Some(token) => (token, false),
        None => (generated_token(), true),
    };
    let settings = PlaySettings::default();
    let play = match &args.redis_url {
        Some(url) => {
            match play::connect_redis_with(limits.redis(url, &args.redis_prefix), settings).await {
                Ok(play) => play,
                Err(err) => {
                    super::report_error(format_args!("cannot connect to Redis: {err}"));
                    return ExitCode::FAILURE;
                }
            }
        }
        None => {
            let pool: Arc<dyn PoolStore> = Arc::new(MemoryPoolStore::new());
            let tickets = Arc::new(MemoryTicketStore::new(pool.clone()));
            Play::new(pool, tickets, settings)
        }
    };
    let play = Arc::new(play.with_ratings(Arc::new(
        matchplane_api::play::ratings::StoredRatings::new(db.clone()),
    )));
    // The worker shares the API's pool store: one process, one connection.
    let pool = play.pool.clone();
    let tickets = play.tickets.clone();
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(err) => {
            super::report_error(format_args!("cannot listen on {}: {err}", args.listen));
            return ExitCode::FAILURE;
        }
    };
    let base = format!(
        "http://{}",
        listener.local_addr().map_or(args.listen, |a| a)
    );

    let shutdown = CancellationToken::new();
    let signal = shutdown.clone();
    tokio::spawn(async move {
        super::runtime::shutdown_signal().await;
        signal.cancel();
    });
    // The worker records through the process-wide recorder; the API's
    // `GET /metrics` serves it after the API's own metrics.
    let worker_metrics = match matchplane_worker::metrics::install() {
        Ok(handle) => Some(handle),
        Err(err) => {
            super::say_err(format_args!(
                "warning: the worker's metrics are not on /metrics: {err}"
            ));
            None
        }
    };
    // One key for the API's and the worker's hashes, so a recorded start
    // and the worker's end of the same search carry the same player hash:
    // the configured one, else the database's (both read it).
    let recording_key = args.recording_key.clone();
    let config = ServeConfig {
        api: ApiConfig {
            operator_token: Some(operator_token.clone()),
            operator_token_previous: None,
            allow_private_webhooks: args.allow_private_webhooks,
            recording_key: recording_key.clone(),
        },
        worker_metrics,
        connections: limits.connections,
        request_deadline: limits.request_deadline,
    };
    let stop_api = shutdown.clone();
    // One connection pool for the API, its stored ratings and the worker:
    // with SQLite, separate pools would only contend for the file's lock.
    let api = tokio::spawn(matchplane_api::serve_on(
        db.clone(),
        config,
        play,
        listener,
        async move {
            stop_api.cancelled().await;
        },
    ));
    let worker_config = WorkerConfig {
        delivery: DeliveryConfig {
            allow_private: args.allow_private_webhooks,
            ..DeliveryConfig::default()
        },
        recording_key,
        ..WorkerConfig::default()
    };
    let worker = tokio::spawn(matchplane_worker::run_worker(
        worker_config,
        pool,
        tickets,
        db,
        shutdown.clone(),
    ));

    super::say(format_args!(
        "matchplane dev: API on {base} (docs {base}/docs/), worker running"
    ));
    super::say(format_args!(
        "  database {}, pools {}",
        if args.database_url.starts_with("sqlite:") {
            args.database_url.as_str()
        } else {
            "PostgreSQL"
        },
        if args.redis_url.is_some() {
            "in Redis"
        } else {
            "in process"
        }
    ));
    if generated {
        super::say(format_args!(
            "  operator token (generated): {operator_token}"
        ));
        super::say(format_args!(
            "  export MATCHPLANE_OPERATOR_TOKEN={operator_token}"
        ));
    }
    if args.demo {
        match demo(&base, &operator_token).await {
            Ok(text) => super::say(text),
            Err(err) => super::say_err(format_args!(
                "warning: the demo could not be created: {err}"
            )),
        }
    }

    let (api, worker) = tokio::join!(api, worker);
    shutdown.cancel();
    let mut code = ExitCode::SUCCESS;
    if let Ok(Err(err)) = api {
        super::report_error(format_args!("api: {err}"));
        code = ExitCode::FAILURE;
    }
    if let Ok(Err(err)) = worker {
        super::report_error(format_args!("worker: {err}"));
        code = ExitCode::FAILURE;
    }
    code
}

/// Creates the demo project, key and modes through the API itself.
async fn demo(base: &str, operator_token: &str) -> Result<String, String> {
    let http = reqwest::Client::new();
    for _ in 0..50 {
        if http
            .get(format!("{base}/readyz"))
            .send()
            .await
            .is_ok_and(|r| r.status().is_success())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let post = |path: String, auth: String, body: Value| {
        let http = http.clone();
        async move {
            let resp = http
                .post(format!("{base}{path}"))
                .header("authorization", auth)
                .json(&body)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = resp.status();
            let body: Value = resp.json().await.map_err(|e| e.to_string())?;
            // 409: the demo's mode is there from an earlier run.
            if status.is_success() || status == reqwest::StatusCode::CONFLICT {
                Ok(body)
            } else {
                Err(format!("{path}: {status} {body}"))
            }
        }
    };
    let get = |path: String, auth: String| {
        let http = http.clone();
        async move {
            http.get(format!("{base}{path}"))
                .header("authorization", auth)
                .send()
                .await
                .map_err(|e| e.to_string())?
                .json::<Value>()
                .await
                .map_err(|e| e.to_string())
        }
    };
    let operator = format!("Bearer {operator_token}");
    // Run again on the same database, the demo project is reused (with a new
    // key: keys are shown once) instead of added a second time.
    let projects = get("/v1/projects".into(), operator.clone()).await?;
    let existing = projects.as_array().and_then(|all| {
        all.iter()
            .find(|p| p["name"] == "demo")
            .and_then(|p| p["id"].as_str())
            .map(str::to_owned)
    });
    let project_id = match existing {
        Some(id) => id,
        None => post(
            "/v1/projects".into(),
            operator.clone(),
            json!({"name": "demo", "tier": "pro"}),
        )
        .await?["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    };
    let key = post(
        format!("/v1/projects/{project_id}/keys"),
        operator,
        // The operator's keys are admin by default; said here because the
        // demo's key creates the modes below and README's quickstart
        // replaces one and rotates its secret with it.
        json!({"name": "demo", "scopes": ["admin"]}),
    )
    .await?;
    let key_id = key["id"].as_str().unwrap_or_default().to_owned();
    let key = key["key"].as_str().unwrap_or_default().to_owned();
    let bearer = format!("Bearer {key}");
    // Keys are shown once, so each run makes a new demo key: the earlier
    // runs' demo keys are revoked, leaving one live demo key.
    let keys = get(format!("/v1/projects/{project_id}/keys"), bearer.clone()).await?;
    let stale = keys.as_array().into_iter().flatten().filter(|k| {
        k["name"] == "demo" && k["revokedAt"].is_null() && k["id"].as_str() != Some(&key_id)
    });
    for old in stale {
        let id = old["id"].as_str().unwrap_or_default();
        http.delete(format!("{base}/v1/projects/{project_id}/keys/{id}"))
            .header("authorization", &bearer)
            .send()
            .await
            .map_err(|e| e.to_string())?;
    }
    post(
        format!("/v1/projects/{project_id}/game-modes"),
        bearer.clone(),
        json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
               "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
               "ratings": {"enabled": true}}),
    )
    .await?;
    post(
        format!("/v1/projects/{project_id}/game-modes"),
        bearer,
        json!({"name": "squad", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
               "algorithm": {"type": "ping", "maxDelta": 80},
               "parties": {"allowParties": true, "maxSize": 2, "keepTogether": true}}),
    )
    .await?;
    Ok(format!(
        "demo: project {project_id}, API key {key}\n  export PROJECT={project_id} KEY={key}\n  modes: duel ([1,1] MMR, with ratings), squad ([2,2] Ping, duos kept together)\n  try:\n    curl -s -X POST {base}/v1/projects/{project_id}/tickets -H 'Authorization: Bearer {key}' -H 'Content-Type: application/json' -d '{{\"gameMode\":\"duel\",\"playerId\":\"ana\",\"attributes\":{{\"mmr\":1500}}}}'"
    ))
}
