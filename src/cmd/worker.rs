//! `matchplane worker`: per-mode matchmaking cycles and webhook delivery
//! (docs/deployment.md, docs/game-modes.md#how-a-cycle-forms-matches, docs/webhook-events.md). Any number of replicas may run against one database and
//! one Redis; SIGTERM or Ctrl-C stops it gracefully (leases released at once).

use super::seconds::SecondsFlag;
use clap::builder::BoolishValueParser;
use clap::{ArgAction, Args};
use matchplane_store::pool::{PoolStore, RedisPoolConfig, RedisPoolStore};
use matchplane_store::tickets::{RedisTicketStore, TicketStore};
use matchplane_webhook::{DeliveryConfig, Schedule};
use matchplane_worker::WorkerConfig;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Arguments of `matchplane worker`.
#[derive(Args)]
pub struct WorkerArgs {
    /// The database, Redis and key prefix (the API's).
    #[command(flatten)]
    pub store: super::store_args::StoreArgs,
    /// Serve Prometheus metrics (`GET /metrics`) and the liveness probe
    /// (`GET /healthz`) on this address; none if unset.
    #[arg(long, env = "MATCHPLANE_WORKER_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Allow webhook URLs on private addresses, and `http` (development only).
    #[arg(
        long,
        env = "MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS",
        action = ArgAction::Set,
        num_args = 0..=1,
        default_value = "false",
        default_missing_value = "true",
        value_parser = BoolishValueParser::new()
    )]
    pub allow_private_webhooks: bool,
    /// Multiplies every webhook retry delay, in (0, 1] (tests only).
    #[arg(long, env = "MATCHPLANE_WEBHOOK_RETRY_SCALE", default_value = "1")]
    pub webhook_retry_scale: String,
    /// Lifetime of a mode's lease in seconds, 0.3 to 600; a killed worker's
    /// modes move to the others within about two times this.
    #[arg(long, env = "MATCHPLANE_LEASE_TTL_SECONDS", default_value_t = 5.0)]
    pub lease_ttl_seconds: f64,
    /// Key of the recording's player-id hashes (HMAC-SHA-256): the API's
    /// `MATCHPLANE_RECORDING_KEY`. Unset: the key kept in the database,
    /// as the API's.
    #[arg(long, env = "MATCHPLANE_RECORDING_KEY", hide_env_values = true)]
    pub recording_key: Option<String>,
}

/// Longest a worker waits for its releases and last writes after SIGTERM
/// or Ctrl-C, whatever Redis and the database do meanwhile: with the
/// runtime's own grace (`runtime::SHUTDOWN_GRACE`) it exits within the
/// 10 seconds docs/configuration.md promises.
const STOP_WAIT: Duration = Duration::from_secs(9);

/// `--lease-ttl-seconds`: 0.3 to 600 (docs/configuration.md).
const LEASE_TTL: SecondsFlag = SecondsFlag {
    flag: "--lease-ttl-seconds",
    variable: "MATCHPLANE_LEASE_TTL_SECONDS",
    min: 0.3,
    max: 600.0,
};

/// Runs until Ctrl-C or SIGTERM. Exit 1 when the database or Redis is
/// unreachable, the database is behind, or a setting is out of its range.
pub async fn run(args: WorkerArgs) -> ExitCode {
    let schedule = match Schedule::from_setting(Some(&args.webhook_retry_scale)) {
        Ok(schedule) => schedule,
        Err(err) => {
            super::report_error(format_args!(
                "--webhook-retry-scale (MATCHPLANE_WEBHOOK_RETRY_SCALE): {err}"
            ));
            return ExitCode::FAILURE;
        }
    };
    let lease_ttl = match LEASE_TTL.parse(args.lease_ttl_seconds) {
        Ok(ttl) => ttl,
        Err(err) => {
            super::report_error(err);
            return ExitCode::FAILURE;
        }
    };
    // Bounded waits: while the database is out of reach a cycle's reads and
    // writes fail after seconds, and the mode keeps matching on its last
    // known config.
    let timeouts = matchplane_store::db::DbTimeouts::default();
    let db = match matchplane_store::db::connect_with(&args.store.database_url, timeouts).await {
        Ok(db) => db,
        Err(err) => {
            super::report_error(format_args!("cannot connect to the database: {err}"));
            return ExitCode::FAILURE;
        }
    };
    super::migrate::warn_of_unknown(&db).await;
    if let Err(err) = matchplane_store::db::ensure_migrated(&db).await {
        super::report_error(err);
        return ExitCode::FAILURE;
    }
    let mut redis = RedisPoolConfig::new(args.store.redis_url);
    redis.prefix = args.store.redis_prefix;
    redis.response_timeout = Duration::from_secs(30);
    let (pool, tickets): (Arc<dyn PoolStore>, Arc<dyn TicketStore>) =
        match RedisPoolStore::connect(redis).await {
            Ok(pool) => {
                pool.warn_without_persistence().await;
                let tickets = Arc::new(RedisTicketStore::new(pool.clone()));
                (Arc::new(pool), tickets)
            }
            Err(err) => {
                super::report_error(format_args!("cannot connect to Redis: {err}"));
                return ExitCode::FAILURE;
            }
        };
    let shutdown = CancellationToken::new();
    if let Some(addr) = args.metrics_listen {
        let handle = match matchplane_worker::metrics::install() {
            Ok(handle) => handle,
            Err(err) => {
                super::report_error(format_args!("metrics: {err}"));
                return ExitCode::FAILURE;
            }
        };
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(listener) => listener,
            Err(err) => {
                super::report_error(format_args!("cannot listen on {addr}: {err}"));
                return ExitCode::FAILURE;
            }
        };
        let stop = shutdown.clone();
        let deps = matchplane_worker::metrics::Dependencies {
            db: db.clone(),
            live: tickets.clone(),
        };
        tokio::spawn(async move {
            let served =
                matchplane_worker::metrics::serve(listener, handle, Some(deps), async move {
                    stop.cancelled().await;
                });
            if let Err(err) = served.await {
                tracing::warn!(error = %err, "the metrics server stopped");
            }
        });
    }
    let config = WorkerConfig {
        lease_ttl,
        delivery: DeliveryConfig {
            allow_private: args.allow_private_webhooks,
            ..DeliveryConfig::default()
        },
        schedule,
        recording_key: args.recording_key,
        ..WorkerConfig::default()
    };
    tracing::info!(worker_id = %config.worker_id, "worker starting");
    let signal = shutdown.clone();
    tokio::spawn(async move {
        super::runtime::shutdown_signal().await;
        tracing::info!("worker stopping: handing its modes over");
        signal.cancel();
    });
    let run = matchplane_worker::run_worker(config, pool, tickets, db, shutdown.clone());
    // A stopping worker waits at most STOP_WAIT for Redis and the database
    // to take its leave: one that stopped answering would otherwise hold
    // each release for its whole response timeout, past an orchestrator's
    // grace period. The leases it could not release lapse on their own.
    let deadline = async {
        shutdown.cancelled().await;
        tokio::time::sleep(STOP_WAIT).await;
    };
    let stopped = tokio::select! {
        stopped = run => stopped,
        () = deadline => {
            tracing::warn!(
                waited_seconds = STOP_WAIT.as_secs(),
                "the worker's stores did not answer while it stopped: its leases lapse on their own (--lease-ttl-seconds)"
            );
            Ok(())
        }
    };
    match stopped {
        Ok(()) => {
            tracing::info!("worker stopped");
            ExitCode::SUCCESS
        }
        Err(err) => {
            super::report_error(err);
            ExitCode::FAILURE
        }
    }
}
