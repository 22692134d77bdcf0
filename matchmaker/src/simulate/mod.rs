//! `matchplane simulate` (docs/simulate.md): the real matching core in virtual time.
//!
//! Pure like the rest of the crate: the CLI reads files and hands their text
//! in; [`run`] returns a [`Report`] whose JSON is byte-for-byte the same for
//! the same scenario and seed.

mod arrivals_csv;
mod backfills;
mod compare;
mod engine;
mod guard;
mod proposals;
mod replay;
mod report;
mod roles;
mod scenario;
mod stats;
mod table;

pub use arrivals_csv::{
    arrivals_csv_text, parse_arrivals_csv, read_arrivals_csv, read_arrivals_csv_rows,
    write_arrivals_csv, ARRIVALS_CSV_HEADER,
};
pub use backfills::{BackfillStats, SimulatedBackfill, SimulatedFill};
pub use compare::{
    compare, compare_bounded, figures, higher_is_better, render_compare_table, written_diff,
    Comparison, FIGURES,
};
pub use engine::{run, run_bounded, Stopped};
pub use guard::{check_guard, parse_guard, GuardVerdict, GuardedFigure, DEFAULT_GUARD_TOLERANCE};
pub use proposals::{assign_declines, AcceptanceStats, SimAnswer, SimulatedProposal};
pub use replay::{lichess_arrivals, LichessReplay};
pub use report::{Report, SimulatedMatch, SimulatedPlayer, Stats};
pub use roles::RoleStats;
pub use scenario::{
    errors_within, parse_mode, read_mode_with_serde, without_server_fields, Event, ReadMode,
    Scenario, ScenarioBody, ScenarioError,
};
pub use stats::{Percentiles, Spread};
pub use table::render_table;
