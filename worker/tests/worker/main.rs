//! The worker against real PostgreSQL (`MATCHPLANE_TEST_DATABASE_URL`, a
//! fresh database per test) and Redis (`MATCHPLANE_TEST_REDIS_URL`, a fresh
//! key prefix per test), with the loopback webhook receiver of
//! `webhook/tests/webhook/common`, which verifies every signature with its
//! own implementation of the scheme.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod env;
#[path = "../../../api/tests/play/fault_proxy.rs"]
#[allow(dead_code)]
mod fault_proxy;
#[path = "../../../webhook/tests/webhook/common/receiver.rs"]
#[allow(dead_code)]
mod receiver;
#[path = "../../../webhook/tests/webhook/common/verify.rs"]
mod verify;

mod acceptance;
mod attempt_log;
mod backfill;
mod black_hole;
mod catalogue;
mod config_change;
mod console_figures;
mod cycle_clock;
mod dev_mode;
mod end_to_end;
mod fairness;
mod fencing;
mod idle_deadlines;
mod live_ops_metrics;
mod lock_guard;
mod lost_proposals;
mod outages;
mod recordings;
mod recovery;
mod refused_delivery;
mod regions;
mod retention;
mod role_waits;
mod roles_backfill;
mod secret_rotation;
mod stranded;
mod sweep;
mod thin_pools;
mod two_workers;
mod webhook_health;
