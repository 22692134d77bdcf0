//! The rule table's first pass (docs/rules.md, "Cost"): every search's
//! own value of each rule, read in pool order (the order the searches'
//! values sit in memory; the candidates, longest-waiting first, would
//! visit them at random) and kept compact for the table's candidate pass.

use super::declare::{Declaration, Rule};
use super::table::{party_scalar_of_one, player_hash, set_bits, ValueKey};
use super::value::{by_declaration, AttributeValue};
use crate::candidate::Candidate;
use crate::search::Search;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::borrow::Cow;

/// One rule's values over the searches of the pool (by pool index), read
/// in pool order before the candidates' columns are formed from them.
pub(super) enum SearchColumn<'v> {
    Equal {
        /// Interned value per search (a party's computed values are
        /// interned alongside).
        key: Vec<u32>,
        interned: FxHashMap<ValueKey<'v>, u32>,
        values: Vec<Cow<'v, AttributeValue>>,
    },
    Intersect {
        bits: Vec<u64>,
        names: &'v [String],
    },
    Distance {
        /// The search's number (NaN when it holds none).
        value: Vec<f64>,
    },
    Avoid {
        /// Search `i`'s avoided hashes, sorted and deduplicated:
        /// `hashes[starts[i]..starts[i + 1]]`.
        starts: Vec<usize>,
        hashes: Vec<u64>,
        /// Hash of the search's player id.
        player: Vec<u64>,
    },
}

impl<'v> SearchColumn<'v> {
    pub(super) fn new(rule: &Rule, declaration: &'v Declaration, len: usize) -> Self {
        match rule {
            Rule::Equal { .. } => SearchColumn::Equal {
                key: vec![0; len],
                interned: FxHashMap::default(),
                values: Vec::new(),
            },
            Rule::Intersect { .. } => SearchColumn::Intersect {
                bits: vec![0; len],
                names: declaration.values().unwrap_or_default(),
            },
            Rule::Distance { .. } => SearchColumn::Distance {
                value: vec![f64::NAN; len],
            },
            Rule::Avoid { .. } => SearchColumn::Avoid {
                starts: vec![0; len + 1],
                hashes: Vec::new(),
                player: vec![0; len],
            },
        }
    }

    /// Records search `i`'s value `v` (its own or the default) and its
    /// player id. Searches come in increasing `i`.
    pub(super) fn push(&mut self, i: usize, v: Option<&'v AttributeValue>, player_id: &str) {
        match self {
            SearchColumn::Equal {
                key,
                interned,
                values,
            } => {
                // A solo's party value is its own (see `party_scalar`).
                let v = party_scalar_of_one(v);
                let next = values.len() as u32;
                let k = *interned.entry(ValueKey::of(&v)).or_insert(next);
                if k == next {
                    values.push(v);
                }
                key[i] = k;
            }
            SearchColumn::Intersect { bits, names } => bits[i] = set_bits(names, v),
            SearchColumn::Distance { value } => {
                value[i] = match v {
                    Some(AttributeValue::Number(x)) => *x,
                    _ => f64::NAN,
                }
            }
            SearchColumn::Avoid {
                starts,
                hashes,
                player,
            } => {
                let at = hashes.len();
                starts[i] = at;
                if let Some(AttributeValue::Set(ids)) = v {
                    hashes.extend(ids.iter().map(|id| player_hash(id)));
                    hashes[at..].sort_unstable();
                    let mut kept = at;
                    for j in at..hashes.len() {
                        if j == at || hashes[j] != hashes[kept - 1] {
                            hashes[kept] = hashes[j];
                            kept += 1;
                        }
                    }
                    hashes.truncate(kept);
                }
                starts[i + 1] = hashes.len();
                player[i] = player_hash(player_id);
            }
        }
    }
}

/// The values of declaration `d` (name order) of `c`'s members, each its
/// own or `default`.
pub(super) fn members_values<'v>(
    pool: &'v [Search],
    declarations: &'v super::Declarations,
    c: &Candidate,
    d: usize,
    default: Option<&'v AttributeValue>,
) -> SmallVec<[Option<&'v AttributeValue>; 4]> {
    c.searches
        .iter()
        .map(|&i| {
            by_declaration(&pool[i].attributes, declarations)
                .nth(d)
                .and_then(|(_, _, v)| v)
                .or(default)
        })
        .collect()
}
