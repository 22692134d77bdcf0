//! The bounds of `matchplane api` on its dependencies and its clients:
//! how long PostgreSQL and Redis may keep a request waiting, how long a
//! request may take, and what one connection may hold. Each is a flag with
//! its environment variable; docs/configuration.md lists them.

use super::seconds::{InvalidSeconds, SecondsFlag};
use clap::Args;
use matchplane_api::ConnectionLimits;
use matchplane_store::db::DbTimeouts;
use matchplane_store::pool::RedisPoolConfig;
use std::time::Duration;

/// Timeouts and caps of `matchplane api` (seconds unless named otherwise).
#[derive(Args, Debug, Clone)]
pub struct ServiceLimits {
    /// Seconds to open a database connection, and to take one from the
    /// pool: past it, a request is answered 503 while the database is out
    /// of reach.
    #[arg(
        long,
        env = "MATCHPLANE_DB_CONNECT_TIMEOUT_SECONDS",
        default_value_t = 3.0
    )]
    pub db_connect_timeout_seconds: f64,
    /// Seconds to open a Redis connection (one retry after it).
    #[arg(
        long,
        env = "MATCHPLANE_REDIS_CONNECT_TIMEOUT_SECONDS",
        default_value_t = 2.0
    )]
    pub redis_connect_timeout_seconds: f64,
    /// Seconds one Redis command may wait for its answer.
    #[arg(
        long,
        env = "MATCHPLANE_REDIS_COMMAND_TIMEOUT_SECONDS",
        default_value_t = 5.0
    )]
    pub redis_command_timeout_seconds: f64,
    /// Seconds a request may take before it is answered 503
    /// SERVICE_UNAVAILABLE, or 408 REQUEST_TIMEOUT when its body is what
    /// has not arrived (WebSocket searches are not cut).
    #[arg(
        long,
        env = "MATCHPLANE_REQUEST_TIMEOUT_SECONDS",
        default_value_t = 10.0
    )]
    pub request_timeout_seconds: f64,
    /// Seconds for a request's headers to arrive, and the most a kept-alive
    /// connection may sit idle.
    #[arg(
        long,
        env = "MATCHPLANE_HEADER_READ_TIMEOUT_SECONDS",
        default_value_t = 10.0
    )]
    pub header_read_timeout_seconds: f64,
    /// Seconds a request body may pause between two reads (past it: 408
    /// REQUEST_TIMEOUT).
    #[arg(
        long,
        env = "MATCHPLANE_BODY_READ_TIMEOUT_SECONDS",
        default_value_t = 10.0
    )]
    pub body_read_timeout_seconds: f64,
    /// Connections open at once (WebSockets included), at least 1; more
    /// wait in the listen backlog.
    #[arg(
        long,
        env = "MATCHPLANE_MAX_CONNECTIONS",
        default_value_t = 10_000,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub max_connections: u64,
}

/// The timeouts above accept 0.05 to 600 seconds; a value outside is
/// clamped with a warning, one that is not a number refused
/// (docs/configuration.md, `matchplane api`).
const fn timeout(flag: &'static str, variable: &'static str) -> SecondsFlag {
    SecondsFlag {
        flag,
        variable,
        min: 0.05,
        max: 600.0,
    }
}

/// [`ServiceLimits`] read: each timeout a duration.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The database's timeouts.
    pub db: DbTimeouts,
    redis_connect: Duration,
    redis_command: Duration,
    /// The request deadline.
    pub request_deadline: Duration,
    /// What one connection may hold, and how many there may be.
    pub connections: ConnectionLimits,
}

impl ServiceLimits {
    /// The limits as durations; a timeout out of range is clamped (with a
    /// warning).
    ///
    /// # Errors
    /// [`InvalidSeconds`] naming the first timeout that is `NaN` or
    /// infinite.
    pub fn parse(&self) -> Result<Limits, InvalidSeconds> {
        let wait = timeout(
            "--db-connect-timeout-seconds",
            "MATCHPLANE_DB_CONNECT_TIMEOUT_SECONDS",
        )
        .clamp(self.db_connect_timeout_seconds)?;
        Ok(Limits {
            db: DbTimeouts {
                connect: wait,
                acquire: wait,
            },
            redis_connect: timeout(
                "--redis-connect-timeout-seconds",
                "MATCHPLANE_REDIS_CONNECT_TIMEOUT_SECONDS",
            )
            .clamp(self.redis_connect_timeout_seconds)?,
            redis_command: timeout(
                "--redis-command-timeout-seconds",
                "MATCHPLANE_REDIS_COMMAND_TIMEOUT_SECONDS",
            )
            .clamp(self.redis_command_timeout_seconds)?,
            request_deadline: timeout(
                "--request-timeout-seconds",
                "MATCHPLANE_REQUEST_TIMEOUT_SECONDS",
            )
            .clamp(self.request_timeout_seconds)?,
            connections: ConnectionLimits {
                header_read_timeout: timeout(
                    "--header-read-timeout-seconds",
                    "MATCHPLANE_HEADER_READ_TIMEOUT_SECONDS",
                )
                .clamp(self.header_read_timeout_seconds)?,
                body_read_timeout: timeout(
                    "--body-read-timeout-seconds",
                    "MATCHPLANE_BODY_READ_TIMEOUT_SECONDS",
                )
                .clamp(self.body_read_timeout_seconds)?,
                max_connections: usize::try_from(self.max_connections).unwrap_or(usize::MAX),
            },
        })
    }
}

impl Limits {
    /// Redis at `url` under `prefix`, with these timeouts.
    pub fn redis(&self, url: &str, prefix: &str) -> RedisPoolConfig {
        let mut config = RedisPoolConfig::new(url);
        config.prefix = prefix.to_owned();
        config.connect_timeout = self.redis_connect;
        config.response_timeout = self.redis_command;
        config
    }
}
