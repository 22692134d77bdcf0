//! `matchplane api`: the control-plane REST server (docs/deployment.md, docs/api-tour.md). Refuses to
//! start on a database whose migrations are behind (`matchplane migrate`).

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Args};
use matchplane_api::play::{self, PlaySettings};
use matchplane_api::{ApiConfig, ServeConfig};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `matchplane api`.
#[derive(Args)]
pub struct ApiArgs {
    /// Address to listen on.
    #[arg(long, env = "MATCHPLANE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The database, Redis and key prefix (the workers').
    #[command(flatten)]
    pub store: super::store_args::StoreArgs,
    /// Bearer token of the operator (tiers, projects); unset disables them.
    #[arg(long, env = "MATCHPLANE_OPERATOR_TOKEN", hide_env_values = true)]
    pub operator_token: Option<String>,
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
    /// Key of the recording's player-id hashes (HMAC-SHA-256); set the
    /// same on every API instance. Unset: a random key per process.
    #[arg(long, env = "MATCHPLANE_RECORDING_KEY", hide_env_values = true)]
    pub recording_key: Option<String>,
    /// Seconds a REST search may go unpolled before it ends `expired`.
    #[arg(long, env = "MATCHPLANE_REST_POLL_TIMEOUT", default_value_t = 30.0)]
    pub rest_poll_timeout: f64,
    /// Seconds a WebSocket's search outlives its API instance if that
    /// instance crashes (its socket renews the lease while open; at least
    /// 3).
    #[arg(long, env = "MATCHPLANE_SOCKET_LEASE", default_value_t = 30.0)]
    pub socket_lease: f64,
    /// Timeouts of the dependencies and of the clients' connections.
    #[command(flatten)]
    pub limits: super::limits::ServiceLimits,
}

/// Serves until Ctrl-C or SIGTERM. Exit 1 when the database is unreachable
/// or behind, or the address cannot be bound.
pub async fn run(args: ApiArgs) -> ExitCode {
    if args.operator_token.is_none() {
        tracing::warn!("MATCHPLANE_OPERATOR_TOKEN is not set: operator routes answer 401");
    }
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(err) => {
            eprintln!("error: cannot listen on {}: {err}", args.listen);
            return ExitCode::FAILURE;
        }
    };
    let config = ServeConfig {
        api: ApiConfig {
            operator_token: args.operator_token,
            allow_private_webhooks: args.allow_private_webhooks,
            recording_key: args.recording_key,
        },
        worker_metrics: None,
        connections: args.limits.connections(),
        request_deadline: args.limits.request_deadline(),
    };
    let settings = PlaySettings {
        rest_poll_timeout: Duration::from_secs_f64(args.rest_poll_timeout.max(1.0)),
        socket_lease: Duration::from_secs_f64(args.socket_lease.clamp(3.0, 86_400.0)),
        ..PlaySettings::default()
    };
    let db = match matchplane_store::db::connect_with(&args.store.database_url, args.limits.db())
        .await
    {
        Ok(db) => db,
        Err(err) => {
            eprintln!("error: cannot connect to the database: {err}");
            return ExitCode::FAILURE;
        }
    };
    // Stored ratings stand in for a missing ticket `mmr` in modes with
    // ratings; they share the API's connection pool.
    let ratings = Arc::new(matchplane_api::play::ratings::StoredRatings::new(
        db.clone(),
    ));
    let redis = args
        .limits
        .redis(&args.store.redis_url, &args.store.redis_prefix);
    let play = match play::connect_redis_with(redis, settings).await {
        Ok(play) => Arc::new(play.with_ratings(ratings)),
        Err(err) => {
            eprintln!("error: cannot connect to Redis: {err}");
            return ExitCode::FAILURE;
        }
    };
    let shutdown = super::runtime::shutdown_signal();
    match matchplane_api::serve_on(db, config, play, listener, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
