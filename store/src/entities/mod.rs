//! sea-orm entities: one file per table of `matchplane-migrations`.
//!
//! Rows are plain data; the only way the API reaches them is through the
//! project-scoped functions of [`crate::repos`].

pub mod api_key;
pub mod backfill;
pub mod backfill_fill;
pub mod game_mode;
pub mod game_mode_version;
pub mod idempotency_key;
pub mod match_;
pub mod match_ticket;
pub mod mode_cycle_stat;
pub mod mode_stats_minute;
pub mod outbox_dead_letter;
pub mod project;
pub mod project_webhook;
pub mod rating;
pub mod rating_result;
pub mod search_recording;
pub mod tier;
pub mod webhook_attempt;
pub mod webhook_delivery;
pub mod webhook_health;
