//! Route handlers, one resource per file. Handlers are thin: authorize the
//! caller, call the store or the matching core, map to a response type.

pub mod api_keys;
pub mod backfills;
pub mod created;
pub mod deliveries;
pub mod game_mode_checks;
pub mod game_mode_history;
pub mod game_mode_view;
pub mod game_modes;
pub mod match_lifecycle;
pub mod matches;
pub mod mode_hold;
pub mod mode_pool;
pub mod mode_stats;
pub mod mode_stats_history;
pub mod party_searches;
pub mod players;
pub mod preview;
pub mod project_settings;
pub mod project_webhook;
pub mod projects;
pub mod ratings;
pub mod recording;
pub mod replay;
pub mod report_match;
pub mod role_stats;
pub mod search_ws;
pub mod searches;
pub mod service;
pub mod simulate;
pub mod tickets;
pub mod tiers;
pub mod webhook_status;
pub mod webhook_test;

use crate::problem::ApiError;
use matchplane_store::repos::StoreError;

/// Maps the store error of a call on the project's game mode `name` (read,
/// delete, rotate, versions): an absent mode is `404 GAME_MODE_NOT_FOUND`
/// naming it, on every route under `…/game-modes/{name}`, the same code a
/// ticket for an unknown mode gets; any other as every store error.
pub fn mode_error(name: &str) -> impl FnOnce(StoreError) -> ApiError + '_ {
    move |err| match err {
        StoreError::NotFound => ApiError::game_mode_not_found(name),
        other => other.into(),
    }
}
