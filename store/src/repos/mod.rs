//! Small repositories over the entities: the only SQL of the service.
//!
//! Every function on a tenant's rows takes the project id first and builds
//! its query from the project-scoped `scoped(project_id)` select of that
//! table (svix's `secure_find`), so a row of another project is simply not
//! found. Time comes in as a `now` argument.

pub mod api_keys;
pub mod backfills;
pub mod cycle_stats;
pub mod dead_letters;
pub mod deliveries;
pub mod error;
pub mod game_modes;
pub mod idempotency;
mod insert_absent;
pub mod instance_keys;
pub mod job_leases;
pub mod lease_epochs;
pub mod match_status;
pub mod match_tickets;
pub mod matches;
pub mod mode_holds;
pub mod players;
pub mod project_webhooks;
pub mod projects;
pub mod ratings;
pub mod recordings;
pub mod retention;
pub mod stats_history;
pub mod tiers;
pub mod webhook_health;
pub mod webhook_secrets;

pub use error::{db_unavailable, StoreError};

/// Whether `key`, a name or id read from a request path, holds a NUL. It
/// then names nothing (no stored name or id has one: every body refuses
/// it) and is never sent to the database, as PostgreSQL refuses to compare
/// text holding one: the lookup answers "not found" at once.
pub(crate) fn holds_nul(key: &str) -> bool {
    key.contains('\0')
}
