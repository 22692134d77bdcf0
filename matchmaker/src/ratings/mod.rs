//! Ratings: Glicko-2 per game mode from reported results (issue "Ratings").
//!
//! Pure like the rest of the crate: the store hands in the players' ratings
//! as they stood before a report and the number of idle rating periods; this
//! module returns the new ratings.
//!
//! - [`glicko2`]: one rating period for one player (Glickman, "Example of
//!   the Glicko-2 system", 2012), with a bounded volatility root-finder.
//! - [`config`]: the mode's `ratings` block and its validation.
//! - [`report`]: a match report (teams, places, leavers, participation)
//!   turned into each player's pairwise results and new rating.

pub mod config;
pub mod glicko2;
pub mod report;

pub use config::RatingsConfig;
pub use glicko2::{Glicko2Error, Rating};
pub use report::{rate_report, MatchReport, ReportError, TeamResult};
