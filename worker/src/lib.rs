//! # matchplane-worker: where matches happen and studios learn of them
//!
//! `matchplane worker` runs [`run_worker`]: for every game mode a
//! self-rescheduling loop ([`mode_loop`]) under a Redis lease with a fencing
//! token, whose tick ([`tick`]) runs the matching core over the mode's pool
//! and claims each match atomically; an outbox consumer ([`record`]) that
//! stores matches in the database, tells the matched searches and queues
//! their webhooks; the sweep ([`sweep`]) that expires due searches and fails
//! those of deleted modes and projects, in every pool, every second; a
//! delivery loop ([`deliveries`]) that sends the signed webhooks of
//! `matchplane-webhook` (docs/game-modes.md#how-a-cycle-forms-matches, docs/webhook-events.md); and the retention pruning
//! ([`retention`]), one worker at a time, of matches, webhook deliveries and
//! stats older than they are kept (docs/deployment.md#scaling). The worker alone ends searches that
//! neither their client nor a match ends (`docs/architecture.md`).
//!
//! See `README.md` for the design and the guarantees.

pub mod assignment;
pub mod backfill;
pub mod config;
pub mod db_wait;
pub mod deliveries;
pub mod error;
pub use matchplane_store::pool::lapse_grace;
pub mod lost_proposals;
pub mod match_status;
pub mod metrics;
pub mod mode_loop;
pub mod modes;
pub mod proposals;
pub mod record;
pub mod recordings;
pub mod retention;
pub mod shares;
pub mod sweep;
pub mod tick;
pub mod worker;

pub use config::WorkerConfig;
pub use error::WorkerError;
pub use worker::run_worker;
