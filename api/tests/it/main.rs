//! Integration tests of the control-plane API, each run on PostgreSQL
//! (`MATCHPLANE_TEST_DATABASE_URL`, a fresh `mp_t_<random>` database per
//! test) and on SQLite (a temp file per test).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod backfill;
mod bom;
mod common;
mod config_size;
mod connections;
mod console_routes;
mod created_location;
mod cross_tenant;
mod cross_tenant_all;
mod errors;
mod game_modes;
mod idempotency;
mod if_match;
mod keys;
mod matches;
mod metrics_help;
mod nul_in_paths;
mod openapi;
mod operator_rotation;
mod project_webhook;
mod query_params;
mod ratings;
mod read_only_test_event;
mod recreated_mode;
mod retention;
mod scopes;
mod secret_rotation;
mod service;
mod ssrf;
mod strict_bodies;
mod thin_pools;
mod ticket_limit;
mod tiers;
mod unknown_modes;
