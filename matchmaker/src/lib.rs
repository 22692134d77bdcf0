//! # matchplane-matchmaker: the pure matching core
//!
//! Everything that decides who plays with whom lives here, and nothing else:
//! no IO, no clock (callers hand in `now`), no randomness they do not hand
//! in. The worker and `matchplane simulate` both call [`run_cycle`].
//!
//! Where each rule of `SPEC.md` lives:
//! - SPEC 2 tiers: [`tier`]
//! - SPEC 3 config and its validation: [`config`], [`validation`]
//! - SPEC 3 "Config changes" re-check: [`recheck`]
//! - SPEC 5.1 candidates: [`candidate`]
//! - SPEC 5.3 tolerance: [`tolerance`]
//! - SPEC 5.2-5.5 grouping: [`grouping`]
//! - SPEC 5.6 teams: [`teams`]
//! - SPEC 5.9 why not matched: [`reasons`]
//! - SPEC 8 simulation: [`simulate`]

pub mod codes;
pub mod config;
pub mod search;
pub mod tier;
pub mod validation;

/// The reference-counted string of ticket, player and party ids (see [`Search`]).
pub use arcstr::ArcStr;
pub use codes::Code;
pub use config::{Algorithm, GameModeConfig, Parties, TeamAssignment, WebhookConfig};
pub use search::{Party, Search};
pub use tier::Tier;
pub use validation::{validate, FieldError, ValidationErrors};

pub mod candidate;
pub mod cycle;
pub mod grouping;
pub mod ratings;
pub mod reasons;
pub mod recheck;
pub mod teams;
pub mod ticket;
pub mod tolerance;

pub use cycle::{
    run_cycle, CycleOutcome, MatchedPlayer, ProposedMatch, ProposedTeam, WaitingSearch,
};
pub use reasons::WaitingReason;
pub use recheck::FailedSearch;
pub mod simulate;
