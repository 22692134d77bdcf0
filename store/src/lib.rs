//! # matchplane-store: the durable side of matchplane
//!
//! - [`db`]: connecting to the database and refusing one whose migrations
//!   are behind this build.
//! - [`entities`]: sea-orm entities, one per table of `matchplane-migrations`.
//! - [`repos`]: small project-scoped repositories with a typed
//!   [`repos::StoreError`]; the API calls these, never SQL.
//! - [`tickets`]: generated tickets (Redis beside the pools, or in memory)
//!   and the status messages of a search.
//! - [`pool`]: the live pools of searches (Redis, or in memory for
//!   `matchplane dev`), their leases, match outboxes and status channels.
//! - [`redact`]: connection URLs without their passwords, for errors.
//! - [`search_ends`]: the names and closed label sets of the search-end
//!   metrics the API and the worker both count.

pub mod db;
pub mod entities;
pub mod health;
pub mod pool;
pub mod redact;
pub mod released;
pub mod repos;
pub mod search_ends;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub mod tickets;
