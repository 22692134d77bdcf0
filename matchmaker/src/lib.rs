//! # matchplane-matchmaker: the pure matching core
//!
//! Everything that decides who plays with whom lives here, and nothing else:
//! no IO, no clock (callers hand in `now`), no randomness they do not hand
//! in. The worker and `matchplane simulate` both call [`run_cycle`].
//!
//! Where each rule lives (docs/architecture.md, 'Where each rule lives',
//! has the whole table; in brackets, the docs page that states the rule):
//! - tiers: [`tier`] (docs/game-modes.md, 'Tier limits')
//! - config and its validation: [`config`], [`validation`]
//!   (docs/game-modes.md)
//! - the re-check after a config change: [`recheck`] (docs/game-modes.md,
//!   'Changing a mode')
//! - candidates: [`candidate`]; grouping: [`grouping`] (docs/game-modes.md,
//!   'How a cycle forms matches')
//! - the MMR window: [`tolerance`] (docs/game-modes.md, 'The MMR window')
//! - teams: [`teams`] (docs/game-modes.md, '`teamAssignment`')
//! - why not matched: [`reasons`], with unblock hints in [`hints`]
//!   (docs/game-modes.md, 'Why a player is still waiting')
//! - thin pools: [`relaxation`], [`bots`], [`flexible`], [`shape`],
//!   [`thin_validation`], [`queue_status`]; seating in [`seating`]
//!   (docs/game-modes.md, 'Thin pools: smaller matches and bots')
//! - a search's attributes (one type from the ticket's body on):
//!   [`attributes`] (docs/searching.md)
//! - attributes a mode declares and rules over them: [`rules`]
//!   (docs/rules.md)
//! - regions: [`latency`] (shapes, validation), [`regions`] (the rule)
//!   (docs/regions.md)
//! - acceptance and assignment: [`acceptance`], [`assignment`]
//!   (docs/acceptance.md)
//! - backfill: [`backfill`] (config, roster, fit, the pass)
//!   (docs/backfill.md)
//! - a held mode's cycle: [`hold`] (docs/game-modes.md, 'Holding matching')
//! - console figures: [`pool_summary`] (the live pool), [`histogram`]
//!   (mergeable histograms of the stats history) (docs/console.md)
//! - simulation: [`simulate`]; a proposed config previewed on a live pool:
//!   [`preview`] (docs/simulate.md, docs/tuning.md)

pub mod acceptance;
pub mod assignment;
pub mod attributes;
pub mod codes;
pub mod config;
pub mod json_kind;
pub mod latency;
pub mod mean;
pub mod raw_json;
pub mod recording;
pub mod search;
pub mod shape;
pub mod strict_json;
mod tagged;
pub mod thin_validation;
pub mod tier;
pub mod timestamp;
pub mod validation;

/// The reference-counted string of ticket, player and party ids (see [`Search`]).
pub use arcstr::ArcStr;
pub use attributes::{Attributes, RawAttributes};
pub use codes::Code;
pub use config::{
    Algorithm, Bots, FlexibleShape, GameModeConfig, MatchShape, Parties, PartyMmr, Relaxation,
    TeamAssignment, TeamSize, WebhookConfig,
};
pub use latency::{Latencies, LatencyStep, Regions};
pub use raw_json::RawJson;
pub use search::{Party, Search};
pub use tier::Tier;
pub use validation::{validate, FieldError, ValidationErrors};

pub mod backfill;
pub mod bots;
pub mod candidate;
pub mod cycle;
pub mod flexible;
pub mod grouping;
pub mod hints;
pub mod histogram;
pub mod hold;
pub mod party_timeout;
pub mod pool_summary;
pub mod preview;
pub mod queue_status;
pub mod ratings;
pub mod reasons;
pub mod recheck;
pub mod regions;
pub mod relaxation;
pub mod role_waits;
pub mod roles;
pub mod rules;
pub mod seating;
pub mod teams;
pub mod ticket;
pub mod tolerance;

pub use backfill::{
    run_cycle_with_backfills, BackfillConfig, CycleWithFills, OpenBackfill, ProposedFill,
};
pub use cycle::{
    run_cycle, CycleOutcome, MatchedPlayer, ProposedMatch, ProposedTeam, WaitingSearch,
};
pub use hold::{run_held_cycle, run_held_cycle_with_backfills};
pub use party_timeout::IncompleteParties;
pub use reasons::{WaitingReason, WaitingStatus};
pub use recheck::FailedSearch;
pub mod simulate;
