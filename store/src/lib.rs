//! # matchplane-store: the durable side of matchplane
//!
//! - [`entities`]: sea-orm entities, one per table of `matchplane-migrations`.
//! - [`repos`]: small project-scoped repositories with a typed
//!   [`repos::StoreError`]; the API calls these, never SQL.
//! - [`pool`]: the live pools of searches (Redis, or in memory for
//!   `matchplane dev`), their leases, match outboxes and status channels.

pub mod entities;
pub mod pool;
pub mod repos;
