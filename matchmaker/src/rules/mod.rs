//! A mode's own attributes and the rules over them (docs/rules.md).
//!
//! - [`declare`]: the `attributes` and `rules` blocks and each candidate's
//!   version of a rule at its wait;
//! - [`check`]: their validation;
//! - [`sent`]: a ticket's values as sent; [`value`]: as checked;
//!   [`parse`]: their parse and checks,
//!   and the cycle's re-check of them;
//! - [`table`]: one cycle's values and versions per candidate (its
//!   columns and rows of cells in `column`; its first pass over the
//!   searches in [`search_columns`], which the cycle's re-check feeds);
//! - [`group`]: the state of a group being grown, which the grouper
//!   consults wherever it already decides who may join (the cycle, relaxed
//!   shapes, bots, preview and `simulate` all go through it), and the
//!   backfill pass for a fill against a roster;
//! - [`reachable`]: a ticket a rule alone would keep from ever matching;
//! - [`own_players`]: a block list naming the ticket's own player or party,
//!   or a backfill's own roster;
//! - [`roster`]: a backfill roster's values for the rules;
//! - [`player_values`]: a matched player's values, defaults shared.

pub mod check;
mod column;
pub mod declare;
pub mod group;
pub mod own_players;
pub mod parse;
pub mod player_values;
pub mod reachable;
pub mod roster;
pub mod search_columns;
pub mod sent;
pub mod table;
pub mod value;

pub use declare::{
    Declaration, Declarations, DistanceStep, EqualStep, NumberParty, OverlapStep, Rule, SetParty,
    Version,
};
pub use group::GroupRules;
pub use own_players::Owner;
pub use player_values::PlayerValues;
pub use roster::{RosterMember, RosterValues};
pub use table::RuleTable;
pub use value::{AttributeValue, DeclaredValues};
