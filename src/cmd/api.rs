//! `matchplane api`: the control-plane REST server (SPEC 1, 7). Refuses to
//! start on a database whose migrations are behind (`matchplane migrate`).

use clap::builder::BoolishValueParser;
use clap::{ArgAction, Args};
use matchplane_api::{ApiConfig, ServeConfig};
use std::net::SocketAddr;
use std::process::ExitCode;

/// Arguments of `matchplane api`.
#[derive(Args)]
pub struct ApiArgs {
    /// Address to listen on.
    #[arg(long, env = "MATCHPLANE_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Control-plane database: `postgres://…` or `sqlite://file.db`.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
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
}

/// Serves until Ctrl-C or SIGTERM. Exit 1 when the database is unreachable
/// or behind, or the address cannot be bound.
pub async fn run(args: ApiArgs) -> ExitCode {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .try_init();
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
        database_url: args.database_url,
        api: ApiConfig {
            operator_token: args.operator_token,
            allow_private_webhooks: args.allow_private_webhooks,
        },
    };
    match matchplane_api::serve(config, listener, super::runtime::shutdown_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::FAILURE
        }
    }
}
