//! Route handlers, one resource per file. Handlers are thin: authorize the
//! caller, call the store or the matching core, map to a response type.

pub mod api_keys;
pub mod deliveries;
pub mod game_mode_schema;
pub mod game_modes;
pub mod matches;
pub mod mode_stats;
pub mod projects;
pub mod ratings;
pub mod search_ws;
pub mod searches;
pub mod service;
pub mod tickets;
pub mod tiers;
pub mod webhook_test;
