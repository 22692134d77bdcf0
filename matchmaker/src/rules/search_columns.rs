//! The rule table's first pass (docs/rules.md, "Cost"): every search's
//! own value of each rule, read in pool order (the order the searches'
//! values sit in memory; the candidates, longest-waiting first, would
//! visit them at random) and kept compact for the table's candidate pass.

use super::declare::{Declaration, Rule};
use super::parse::by_declaration;
use super::table::{party_scalar_of_one, player_hash, set_bits, ValueKey};
use super::value::{effective, AttributeValue};
use crate::candidate::Candidate;
use crate::config::GameModeConfig;
use crate::search::Search;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::borrow::Cow;

/// Each rule's declaration (its position in name order, the declaration,
/// its default), config order.
pub struct RuleSpecs<'c> {
    pub(super) specs: Vec<(usize, &'c Declaration, Option<AttributeValue>)>,
}

impl<'c> RuleSpecs<'c> {
    /// `config`'s; `None` when the mode has no rules (or a rule's
    /// attribute is not declared, which validation refuses).
    pub fn of(config: &'c GameModeConfig) -> Option<Self> {
        if config.rules.is_empty() {
            return None;
        }
        let declarations = config.attributes.as_ref()?;
        let mut specs = Vec::with_capacity(config.rules.len());
        for rule in &config.rules {
            let d = declarations.keys().position(|k| k == rule.attribute())?;
            let declaration = declarations.get(rule.attribute())?;
            specs.push((d, declaration, effective(declaration, None)));
        }
        Some(Self { specs })
    }
}

/// Every search's own value of each rule (its own or the default), read
/// in pool order (see the module's comment): one `SearchColumn` per
/// rule, config order.
pub struct SearchValues<'v> {
    pub(super) columns: Vec<SearchColumn<'v>>,
}

impl<'v> SearchValues<'v> {
    /// Empty columns over a pool of `len` searches.
    pub fn new(config: &'v GameModeConfig, specs: &'v RuleSpecs<'v>, len: usize) -> Self {
        let columns = config
            .rules
            .iter()
            .zip(&specs.specs)
            .map(|(rule, (_, declaration, _))| SearchColumn::new(rule, declaration, len))
            .collect();
        Self { columns }
    }

    /// Records search `i` (searches come in increasing `i`): `row` holds
    /// its value of each declaration in name order ([`by_declaration`]),
    /// `player_id` its player.
    pub fn push(
        &mut self,
        specs: &'v RuleSpecs<'v>,
        i: usize,
        row: &[Option<&'v AttributeValue>],
        player_id: &str,
    ) {
        for (col, (d, _, default)) in self.columns.iter_mut().zip(&specs.specs) {
            let own = row.get(*d).copied().flatten();
            col.push(i, own.or(default.as_ref()), player_id);
        }
    }

    /// The values of the searches some candidate holds, read in pool order.
    pub(super) fn of_members(
        config: &'v GameModeConfig,
        specs: &'v RuleSpecs<'v>,
        pool: &'v [Search],
        candidates: &[Candidate],
    ) -> Option<Self> {
        let declarations = config.attributes.as_ref()?;
        let mut member = vec![false; pool.len()];
        for c in candidates {
            for &i in &c.searches {
                member[i] = true;
            }
        }
        let mut own = Self::new(config, specs, pool.len());
        let mut row: SmallVec<[Option<&AttributeValue>; 8]> = SmallVec::new();
        for (i, search) in pool.iter().enumerate() {
            if !member[i] {
                continue;
            }
            row.clear();
            row.extend(by_declaration(&search.attributes, declarations).map(|(_, _, v)| v));
            own.push(specs, i, &row, &search.player_id);
        }
        Some(own)
    }
}

/// One rule's values over the searches of the pool (by pool index), read
/// in pool order before the candidates' columns are formed from them.
pub(super) enum SearchColumn<'v> {
    Equal {
        /// Interned value per search (a party's computed values are
        /// interned alongside).
        key: Vec<u32>,
        interned: FxHashMap<ValueKey<'v>, u32>,
        values: Vec<Cow<'v, AttributeValue>>,
        /// The last value interned and its key: searches in a row often
        /// hold the same value (a default above all), which then costs a
        /// comparison instead of a hash and a probe.
        last: Option<(ValueKey<'v>, u32)>,
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
                last: None,
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
                last,
            } => {
                // A solo's party value is its own (see `party_scalar`).
                let v = party_scalar_of_one(v);
                let of = ValueKey::of(&v);
                let k = match last {
                    Some((seen, k)) if *seen == of => *k,
                    _ => {
                        let next = values.len() as u32;
                        let k = *interned.entry(of).or_insert(next);
                        if k == next {
                            values.push(v);
                        }
                        *last = Some((of, k));
                        k
                    }
                };
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
