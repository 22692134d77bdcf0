//! `matchplane api`: the control-plane REST server (docs/deployment.md, docs/api-tour.md). Refuses to
//! start on a database whose migrations are behind (`matchplane migrate`);
//! warns of one with migrations it does not know (docs/configuration.md).

use super::seconds::{InvalidSeconds, SecondsFlag};
use clap::builder::BoolishValueParser;
use clap::{ArgAction, Args};
use matchplane_api::play::{self, PlaySettings};
use matchplane_api::{ApiConfig, ServeConfig};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `matchplane api`.
#[derive(Args)]
pub struct ApiArgs {
    /// Address to listen on.
    #[arg(long, env = "MATCHPLANE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// The database, Redis and key prefix (the workers').
    #[command(flatten)]
    pub store: super::store_args::StoreArgs,
    /// Bearer token of the operator (tiers, projects); unset or blank
    /// disables them.
    #[arg(long, env = "MATCHPLANE_OPERATOR_TOKEN", hide_env_values = true)]
    pub operator_token: Option<String>,
    /// The operator token being rotated out, accepted beside
    /// `--operator-token` while every instance moves to the new one
    /// (docs/operations.md, "Rotating the operator token"); unset or
    /// blank: none.
    #[arg(
        long,
        env = "MATCHPLANE_OPERATOR_TOKEN_PREVIOUS",
        hide_env_values = true
    )]
    pub operator_token_previous: Option<String>,
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
    /// same on every API instance and worker. Unset: a key drawn once and
    /// kept in the database, shared by every process.
    #[arg(long, env = "MATCHPLANE_RECORDING_KEY", hide_env_values = true)]
    pub recording_key: Option<String>,
    /// Seconds a REST search may go unpolled before it ends `expired` (1 to
    /// 86400).
    #[arg(long, env = "MATCHPLANE_REST_POLL_TIMEOUT", default_value_t = 30.0)]
    pub rest_poll_timeout: f64,
    /// Seconds a WebSocket's search outlives its API instance if that
    /// instance crashes (its socket renews the lease while open; 3 to
    /// 86400).
    #[arg(long, env = "MATCHPLANE_SOCKET_LEASE", default_value_t = 30.0)]
    pub socket_lease: f64,
    /// Timeouts of the dependencies and of the clients' connections.
    #[command(flatten)]
    pub limits: super::limits::ServiceLimits,
}

/// `--rest-poll-timeout`: 1 to 86400 seconds (docs/configuration.md).
const REST_POLL_TIMEOUT: SecondsFlag = SecondsFlag {
    flag: "--rest-poll-timeout",
    variable: "MATCHPLANE_REST_POLL_TIMEOUT",
    min: 1.0,
    max: 86_400.0,
};

/// `--socket-lease`: 3 to 86400 seconds (docs/configuration.md).
const SOCKET_LEASE: SecondsFlag = SecondsFlag {
    flag: "--socket-lease",
    variable: "MATCHPLANE_SOCKET_LEASE",
    min: 3.0,
    max: 86_400.0,
};

/// The settings read from the flags, each in its range.
struct Settings {
    play: PlaySettings,
    limits: super::limits::Limits,
}

fn settings(args: &ApiArgs) -> Result<Settings, InvalidSeconds> {
    Ok(Settings {
        play: PlaySettings {
            rest_poll_timeout: REST_POLL_TIMEOUT.parse(args.rest_poll_timeout)?,
            socket_lease: SOCKET_LEASE.parse(args.socket_lease)?,
            ..PlaySettings::default()
        },
        limits: args.limits.parse()?,
    })
}

/// Serves until Ctrl-C or SIGTERM. Exit 1 when a setting is out of its
/// range, the database is unreachable or behind, or the address cannot be
/// bound.
pub async fn run(args: ApiArgs) -> ExitCode {
    let Settings {
        play: settings,
        limits,
    } = match settings(&args) {
        Ok(settings) => settings,
        Err(err) => {
            super::report_error(&err);
            return ExitCode::FAILURE;
        }
    };
    // A blank token would lock the operator out as surely as none:
    // docs/configuration.md treats it as unset.
    let operator_token = super::non_blank(args.operator_token);
    let operator_token_previous = super::non_blank(args.operator_token_previous);
    if operator_token.is_none() {
        tracing::warn!("MATCHPLANE_OPERATOR_TOKEN is not set: operator routes answer 401");
        if operator_token_previous.is_some() {
            tracing::warn!(
                "MATCHPLANE_OPERATOR_TOKEN_PREVIOUS is ignored without MATCHPLANE_OPERATOR_TOKEN"
            );
        }
    }
    let listener = match tokio::net::TcpListener::bind(args.listen).await {
        Ok(listener) => listener,
        Err(err) => {
            super::report_error(format_args!("cannot listen on {}: {err}", args.listen));
            return ExitCode::FAILURE;
        }
    };
    let config = ServeConfig {
        api: ApiConfig {
            operator_token,
            operator_token_previous,
            allow_private_webhooks: args.allow_private_webhooks,
            recording_key: args.recording_key,
        },
        worker_metrics: None,
        connections: limits.connections,
        request_deadline: limits.request_deadline,
    };
    let db = match matchplane_store::db::connect_with(&args.store.database_url, limits.db).await {
        Ok(db) => db,
        Err(err) => {
            super::report_error(format_args!("cannot connect to the database: {err}"));
            return ExitCode::FAILURE;
        }
    };
    super::migrate::warn_of_unknown(&db).await;
    // Stored ratings stand in for a missing ticket `mmr` in modes with
    // ratings; they share the API's connection pool.
    let ratings = Arc::new(matchplane_api::play::ratings::StoredRatings::new(
        db.clone(),
    ));
    let redis = limits.redis(&args.store.redis_url, &args.store.redis_prefix);
    let play = match play::connect_redis_with(redis, settings).await {
        Ok(play) => Arc::new(play.with_ratings(ratings)),
        Err(err) => {
            super::report_error(format_args!("cannot connect to Redis: {err}"));
            return ExitCode::FAILURE;
        }
    };
    // Searches nothing holds (sockets of the previous release, cut by the
    // upgrade) get a socket's lease, beside serving.
    let lapsing = play.clone();
    tokio::spawn(async move {
        let now = play::unix_now();
        match play::unheld::lapse_unheld(&lapsing, now).await {
            Ok(0) => {}
            Ok(found) => tracing::info!(
                found,
                "searches nothing held now lapse with a socket's lease"
            ),
            Err(error) => tracing::warn!(%error, "looking for searches nothing holds failed"),
        }
    });
    let shutdown = super::runtime::shutdown_signal();
    match matchplane_api::serve_on(db, config, play, listener, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            super::report_error(&err);
            ExitCode::FAILURE
        }
    }
}
