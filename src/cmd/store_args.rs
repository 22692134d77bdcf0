//! The stores' arguments, shared by `matchplane api` and `matchplane
//! worker` (flattened into each): the two must name the same database,
//! Redis and key prefix.

use clap::Args;

/// Where the control plane and the live pools are.
#[derive(Args)]
pub struct StoreArgs {
    /// Control-plane database: `postgres://…` or `sqlite://file.db`.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    pub database_url: String,
    /// Redis of the live pools and tickets: `redis://host:port/db`, or
    /// `redis+cluster://host:port,…` for a Redis Cluster.
    #[arg(long, env = "REDIS_URL", hide_env_values = true)]
    pub redis_url: String,
    /// First part of every Redis key and channel; the same on every API
    /// instance and worker.
    #[arg(long, env = "MATCHPLANE_REDIS_PREFIX", default_value = "mp")]
    pub redis_prefix: String,
}
