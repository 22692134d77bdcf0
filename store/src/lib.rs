//! # matchplane-store: the durable side of matchplane
//!
//! - [`entities`]: sea-orm entities, one per table of `matchplane-migrations`.
//! - [`repos`]: small project-scoped repositories with a typed
//!   [`repos::StoreError`]; the API calls these, never SQL.

pub mod entities;
pub mod repos;
