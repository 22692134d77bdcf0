//! The rules of one cycle (docs/rules.md, "Rules"): every candidate's
//! values and its own current version of each rule, built once per cycle,
//! and the running state of a group being grown.
//!
//! A party's values are formed as its declarations say (`party`); its
//! versions come from its wait (its earliest member's start). Values are
//! interned: an `equal` value is a small integer, an `intersect` set a bit
//! set over the declaration's `values`, an `avoid` set hashed player ids.
//! The grouper asks [`GroupRules::admits`] only for a candidate that
//! already fits the group by closeness, so rules cost nothing for
//! candidates the walk never reaches.

pub(super) use super::column::{AvoidColumn, Cell, Column};
use super::declare::{Declaration, NumberParty, Rule, SetParty, Version};
use super::search_columns::{members_values, RuleSpecs, SearchColumn, SearchValues};
use super::value::AttributeValue;
use crate::candidate::Candidate;
use crate::config::GameModeConfig;
use crate::search::Search;
pub(crate) use miss::Miss;
use rustc_hash::{FxHashMap, FxHasher};
use smallvec::SmallVec;
use std::borrow::Cow;
use std::hash::{Hash, Hasher};

mod miss;

/// Every candidate's rule values and versions for one cycle.
#[derive(Debug, Clone)]
pub struct RuleTable<'c> {
    /// The mode's rules, borrowed for the cycle.
    rules: &'c [Rule],
    pub(super) columns: Vec<Column>,
    /// Every candidate's row of cells, one per rule (config order).
    cells: Vec<Cell>,
    /// Per candidate: its partition over the `equal` values (candidates
    /// of one partition agree on every `equal` rule).
    partition: Vec<u32>,
    partitions: u32,
    /// Per candidate: some `equal` rule is off for it (it may match
    /// outside its partition).
    any_off: Vec<bool>,
    /// Per candidate, its waits (seconds), for unblock hints.
    waits: &'c [f64],
}

/// A player id's hash, as `avoid` sets compare them.
pub fn player_hash(id: &str) -> u64 {
    let mut h = FxHasher::default();
    id.hash(&mut h);
    h.finish()
}

impl<'c> RuleTable<'c> {
    /// The table of `candidates` (longest-waiting first, waits `waits`
    /// seconds) under `config`'s rules; `None` when the mode has no rules.
    pub fn build(
        config: &'c GameModeConfig,
        pool: &[Search],
        candidates: &[Candidate],
        waits: &'c [f64],
    ) -> Option<Self> {
        let specs = RuleSpecs::of(config)?;
        let own = SearchValues::of_members(config, &specs, pool, candidates)?;
        Self::from_values(config, pool, candidates, waits, &specs, own)
    }

    /// [`RuleTable::build`] from every member search's own values, read
    /// already ([`SearchValues`]: the cycle reads them in its re-check's
    /// pass over the pool, so that each search's attributes are read once).
    pub fn from_values<'v>(
        config: &'c GameModeConfig,
        pool: &'v [Search],
        candidates: &[Candidate],
        waits: &'c [f64],
        specs: &'v RuleSpecs<'v>,
        own: SearchValues<'v>,
    ) -> Option<Self> {
        let declarations = config.attributes.as_ref()?;
        let n = candidates.len();
        let own = own.columns;
        // A party's members' values or the default, by reference (parties
        // read their members' values again: few, and their own rules).
        let read =
            |c: &Candidate, d: usize, default| members_values(pool, declarations, c, d, default);
        let mut columns = Vec::with_capacity(config.rules.len());
        for ((rule, (d, declaration, default)), col) in
            config.rules.iter().zip(&specs.specs).zip(own)
        {
            let column = match col {
                SearchColumn::Equal {
                    key: own_key,
                    mut interned,
                    values: mut own_values,
                    ..
                } => {
                    // Keys are renumbered in candidate order (first seen).
                    let mut renumber: Vec<u32> = Vec::new();
                    let mut values = Vec::new();
                    let mut key = Vec::with_capacity(n);
                    let mut off = Vec::with_capacity(n);
                    for (c, w) in candidates.iter().zip(waits) {
                        let k = match c.searches.as_slice() {
                            [i] => own_key[*i],
                            _ => {
                                let v = party_scalar(declaration, &read(c, *d, default.as_ref()));
                                let next = own_values.len() as u32;
                                let k = *interned.entry(ValueKey::of(&v)).or_insert(next);
                                if k == next {
                                    own_values.push(v);
                                }
                                k
                            }
                        } as usize;
                        if renumber.len() <= k {
                            renumber.resize(k + 1, u32::MAX);
                        }
                        if renumber[k] == u32::MAX {
                            renumber[k] = values.len() as u32;
                            values.push(own_values[k].clone().into_owned());
                        }
                        key.push(renumber[k]);
                        off.push(matches!(rule.version_at(*w), Version::Equal { off: true }));
                    }
                    Column::Equal { key, off, values }
                }
                SearchColumn::Intersect {
                    bits: own_bits,
                    names,
                } => {
                    let names: Vec<String> = names.to_vec();
                    let union = matches!(
                        declaration,
                        Declaration::StringSet {
                            party: SetParty::Union,
                            ..
                        }
                    );
                    let mut bits = Vec::with_capacity(n);
                    let mut need = Vec::with_capacity(n);
                    for (c, w) in candidates.iter().zip(waits) {
                        let mut acc: Option<u64> = None;
                        for &i in &c.searches {
                            let b = own_bits[i];
                            acc = Some(match acc {
                                None => b,
                                Some(a) if union => a | b,
                                Some(a) => a & b,
                            });
                        }
                        bits.push(acc.unwrap_or(0));
                        need.push(match rule.version_at(*w) {
                            Version::Intersect { min_overlap } => min_overlap,
                            _ => 1,
                        });
                    }
                    Column::Intersect { bits, need, names }
                }
                SearchColumn::Distance { value: own_value } => {
                    let mut value = Vec::with_capacity(n);
                    let mut max = Vec::with_capacity(n);
                    for (c, w) in candidates.iter().zip(waits) {
                        value.push(match c.searches.as_slice() {
                            [i] => own_value[*i],
                            _ => {
                                let v = party_scalar(declaration, &read(c, *d, default.as_ref()));
                                match v.as_ref() {
                                    AttributeValue::Number(x) => *x,
                                    _ => f64::NAN,
                                }
                            }
                        });
                        max.push(match rule.version_at(*w) {
                            Version::Distance { max } => max,
                            _ => 0.0,
                        });
                    }
                    Column::Distance { value, max }
                }
                SearchColumn::Avoid {
                    starts: own_starts,
                    hashes: own_hashes,
                    player: own_player,
                } => {
                    let mut avoid = AvoidColumn::with_capacity(n);
                    let mut set: Vec<u64> = Vec::new();
                    for c in candidates {
                        match c.searches.as_slice() {
                            [i] => avoid
                                .avoided
                                .extend_from_slice(&own_hashes[own_starts[*i]..own_starts[*i + 1]]),
                            members => {
                                set.clear();
                                for &i in members {
                                    set.extend_from_slice(
                                        &own_hashes[own_starts[i]..own_starts[i + 1]],
                                    );
                                }
                                set.sort_unstable();
                                set.dedup();
                                avoid.avoided.extend_from_slice(&set);
                            }
                        }
                        avoid.avoid_starts.push(avoid.avoided.len());
                        avoid
                            .players
                            .extend(c.searches.iter().map(|&i| own_player[i]));
                        avoid.player_starts.push(avoid.players.len());
                    }
                    Column::Avoid(avoid)
                }
            };
            columns.push(column);
        }
        let mut partition = Vec::with_capacity(n);
        let mut any_off = Vec::with_capacity(n);
        let mut ids: FxHashMap<SmallVec<[u32; 4]>, u32> = FxHashMap::default();
        for c in 0..n {
            let mut tuple: SmallVec<[u32; 4]> = SmallVec::new();
            let mut off = false;
            for col in &columns {
                if let Column::Equal { key, off: o, .. } = col {
                    tuple.push(key[c]);
                    off |= o[c];
                }
            }
            let next = ids.len() as u32;
            partition.push(*ids.entry(tuple).or_insert(next));
            any_off.push(off);
        }
        let mut cells = Vec::with_capacity(n * columns.len());
        for c in 0..n {
            cells.extend(columns.iter().map(|col| col.cell(c)));
        }
        Some(Self {
            rules: &config.rules,
            columns,
            cells,
            partitions: ids.len() as u32,
            partition,
            any_off,
            waits,
        })
    }

    /// Candidate `x`'s cells, one per rule.
    pub(super) fn row(&self, x: usize) -> &[Cell] {
        let k = self.columns.len();
        &self.cells[x * k..(x + 1) * k]
    }

    /// The rules, in config order.
    pub fn rules(&self) -> &[Rule] {
        self.rules
    }

    /// Candidate `c`'s partition over the `equal` values.
    pub fn partition(&self, c: usize) -> u32 {
        self.partition[c]
    }

    /// How many partitions there are (1 without `equal` rules).
    pub fn partitions(&self) -> u32 {
        self.partitions
    }

    /// Each `distance` rule's values and every candidate's current `max`
    /// (the grouper's index over the most selective one, see
    /// `grouping/indexed.rs`), by rule index.
    pub(crate) fn distance_columns(&self) -> impl Iterator<Item = (usize, &[f64], &[f64])> {
        self.columns
            .iter()
            .enumerate()
            .filter_map(|(k, col)| match col {
                Column::Distance { value, max } => Some((k, value.as_slice(), max.as_slice())),
                _ => None,
            })
    }

    /// Whether some `equal` rule is off for candidate `c`.
    pub fn any_off(&self, c: usize) -> bool {
        self.any_off[c]
    }

    /// The match's `attributes` for a group of candidates (docs/rules.md,
    /// "The match"): the common value of each `equal` rule every member
    /// shares, and each `intersect` rule's shared values, by attribute.
    pub fn match_attributes(&self, group: &[usize]) -> super::DeclaredValues {
        let mut out = super::DeclaredValues::new();
        for (rule, col) in self.rules.iter().zip(&self.columns) {
            match col {
                Column::Equal { key, values, .. } => {
                    let first = group.first().map(|&c| key[c]);
                    if let Some(k) = first.filter(|k| group.iter().all(|&c| key[c] == *k)) {
                        out.insert(rule.attribute().to_owned(), values[k as usize].clone());
                    }
                }
                Column::Intersect { bits, names, .. } => {
                    let shared = group.iter().fold(u64::MAX, |a, &c| a & bits[c]);
                    let set = names
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| shared >> i & 1 == 1)
                        .map(|(_, v)| v.clone())
                        .collect();
                    out.insert(rule.attribute().to_owned(), AttributeValue::Set(set));
                }
                _ => {}
            }
        }
        out
    }
}

/// An `equal` value as a hash key (numbers by their bits), borrowing
/// the value's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum ValueKey<'a> {
    /// A party none of whose members holds a value (the re-check fails
    /// such searches first; kept apart from every real value).
    Missing,
    Number(u64),
    Text(&'a str),
    Set(&'a [String]),
}

impl<'a> ValueKey<'a> {
    pub(super) fn of(v: &Cow<'a, AttributeValue>) -> Self {
        let v: &AttributeValue = match v {
            Cow::Borrowed(v) => v,
            // An owned value is a party's computed number.
            Cow::Owned(AttributeValue::Number(x)) => return ValueKey::Number((x + 0.0).to_bits()),
            // The only other owned value: none held (`party_scalar`).
            Cow::Owned(_) => return ValueKey::Missing,
        };
        match v {
            AttributeValue::Number(x) => ValueKey::Number((x + 0.0).to_bits()),
            AttributeValue::Text(t) => ValueKey::Text(t),
            AttributeValue::Set(s) => ValueKey::Set(s),
        }
    }
}

/// A party's single value (`string`: its members agree, the re-check
/// fails a party that does not; `number`: as its `party` says). A solo's
/// is its own value, borrowed.
fn party_scalar<'a>(
    declaration: &Declaration,
    members: &[Option<&'a AttributeValue>],
) -> Cow<'a, AttributeValue> {
    if members.len() > 1 {
        let numbers: SmallVec<[f64; 4]> = members
            .iter()
            .filter_map(|v| match v {
                Some(AttributeValue::Number(x)) => Some(*x),
                _ => None,
            })
            .collect();
        if let (Declaration::Number { party, .. }, false) = (declaration, numbers.is_empty()) {
            let v = match party {
                NumberParty::Mean => crate::mean::mean(&numbers).unwrap_or(f64::NAN),
                NumberParty::Min => numbers.iter().copied().fold(f64::INFINITY, f64::min),
                NumberParty::Max => numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            };
            return Cow::Owned(AttributeValue::Number(v));
        }
    }
    match members.iter().flatten().next() {
        Some(v) => Cow::Borrowed(v),
        None => Cow::Owned(AttributeValue::Text(String::new())),
    }
}

/// [`party_scalar`] of a single member.
pub(super) fn party_scalar_of_one(v: Option<&AttributeValue>) -> Cow<'_, AttributeValue> {
    match v {
        Some(v) => Cow::Borrowed(v),
        None => Cow::Owned(AttributeValue::Text(String::new())),
    }
}

pub(crate) fn set_bits(names: &[String], v: Option<&AttributeValue>) -> u64 {
    let Some(AttributeValue::Set(items)) = v else {
        return 0;
    };
    let mut bits = 0u64;
    for item in items {
        if let Some(i) = names.iter().position(|n| n == item).filter(|i| *i < 64) {
            bits |= 1 << i;
        }
    }
    bits
}
