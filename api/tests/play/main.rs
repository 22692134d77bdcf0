//! Integration tests of tickets and searches (docs/searching.md): every test runs on
//! the Redis pool and ticket stores (real Redis at
//! `MATCHPLANE_TEST_REDIS_URL`, a random
//! key prefix per test) and on the memory stores, with the control plane on
//! PostgreSQL (`MATCHPLANE_TEST_DATABASE_URL`, a fresh database per test).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod acceptance;
mod answer_races;
mod backfill_fill;
mod backfill_rules;
mod cache_outages;
mod deleted;
mod elsewhere;
mod erase;
mod fault_proxy;
mod harness;
mod heartbeat;
mod hold;
mod late_answers;
mod late_messages;
mod lifecycle;
mod live_ops_metrics;
mod load;
mod lost_searches;
mod lost_tickets;
mod outages;
mod party;
mod pending_reads;
mod player_scope;
mod preview;
mod project_webhook;
mod proxy;
mod re_search;
mod recording;
mod regions;
mod rematch_data;
mod replay_window;
mod rest;
mod restart;
mod role_stats;
mod searches;
mod slow_store_pongs;
mod socket;
mod stats;
mod stranded_redis;
mod tenant;
mod ticket_data;
mod tickets;
mod unfreed_tickets;
mod unrecorded_answers;
mod upgrade;
mod ws;
