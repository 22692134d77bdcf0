//! A search's values of the mode's rules, read once and kept across
//! cycles (docs/performance.md, "Rules over attributes").
//!
//! Every cycle re-checks every waiting search against the declarations
//! and reads its values of each rule (an `intersect` set as bits, an
//! `avoid` list as sorted hashes of player ids). Both depend only on the
//! search's values, which never change once its ticket is generated, and
//! on the mode's declarations, rules and composition. A [`RuleCache`]
//! keeps what one cycle read of each search for the next, for as long as
//! the caller keeps handing in the same search (the worker and
//! `simulate` keep their pools' searches from one cycle to the next), and
//! forgets everything when those parts of the config change.

use super::declare::Rule;
use super::parse::recheck_declared_row;
use super::search_columns::RuleSpecs;
use super::table::{player_hash, set_bits};
use super::value::{AttributeValue, DeclaredValues};
use crate::config::GameModeConfig;
use crate::validation::FieldError;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::sync::Arc;

/// What the cycles of one mode read of its searches' values (see the
/// module's comment). Start with [`RuleCache::default`] and hand the same
/// cache to every cycle of the mode ([`crate::run_cycle_with`]); a cache
/// handed searches of another mode only reads them again.
#[derive(Debug, Default)]
pub struct RuleCache {
    /// The declarations, rules and composition the entries were read
    /// under (their JSON).
    under: String,
    /// The cycle reading now: an entry no cycle read is dropped after it.
    stamp: u32,
    /// By the address of the search's values.
    entries: FxHashMap<usize, Entry>,
}

#[derive(Debug)]
struct Entry {
    /// Holds the values, so that no other values take their address while
    /// they are cached.
    _values: Arc<DeclaredValues>,
    stamp: u32,
    read: Read,
}

/// One search's re-check verdict and own value of each rule.
#[derive(Debug)]
pub(crate) struct Read {
    /// The first declared attribute, `intersect` floor or role list the
    /// config refuses.
    pub(crate) verdict: Result<(), Box<FieldError>>,
    /// Per rule (config order), when the verdict passed.
    pub(crate) own: Box<[Own]>,
}

/// A search's own value of one rule.
#[derive(Debug)]
pub(crate) enum Own {
    /// `equal`: the position of its value in the search's values, `None`
    /// for the declaration's default.
    Equal(Option<usize>),
    /// `intersect`: bits over the declaration's `values`.
    Intersect(u64),
    /// `distance`: its number, NaN when it holds none.
    Distance(f64),
    /// `avoid`: hashes of the player ids, sorted, without repeats.
    Avoid(Box<[u64]>),
}

/// What [`Read::of`] reads a search's values under, once per cycle.
pub(crate) struct Under<'c> {
    config: &'c GameModeConfig,
    declarations: Vec<(&'c String, &'c super::Declaration)>,
    floors: super::reachable::Floors<'c>,
    roles: Option<crate::roles::RoleLists<'c>>,
}

impl<'c> Under<'c> {
    /// `config`'s; `None` when it declares no attributes.
    pub(crate) fn of(config: &'c GameModeConfig) -> Option<Self> {
        Some(Self {
            config,
            declarations: config.attributes.as_ref()?.iter().collect(),
            floors: super::reachable::Floors::of(config),
            roles: crate::roles::RoleLists::of(config),
        })
    }
}

impl Read {
    /// Re-checks `values` under the config (the declarations' types and
    /// bounds, the `intersect` floors, the composition's role list) and
    /// reads each of `specs`' rules from them.
    pub(crate) fn of(
        under: &Under<'_>,
        specs: Option<&RuleSpecs<'_>>,
        values: &DeclaredValues,
    ) -> Self {
        let mut row: SmallVec<[Option<&AttributeValue>; 8]> = SmallVec::new();
        let verdict = recheck_declared_row(values, under.declarations.iter().copied(), &mut |v| {
            row.push(v)
        })
        .and_then(|()| under.floors.check_row(&row))
        .and_then(|()| {
            // A role list the changed composition refuses, as any value
            // the changed declarations refuse.
            under.roles.as_ref().map_or(Ok(()), |r| {
                r.check(under.config, values).map_err(|e| {
                    FieldError::new(e.field, crate::codes::Code::AttributeNotAllowed, e.message)
                })
            })
        });
        let verdict = verdict.map_err(Box::new);
        let own = match (&verdict, specs) {
            (Ok(()), Some(specs)) => own_of(under.config, specs, &row, values),
            _ => Box::default(),
        };
        Self { verdict, own }
    }
}

/// Each of `specs`' rules read from `values`, whose value of each
/// declaration (name order) `row` holds.
pub(crate) fn own_of(
    config: &GameModeConfig,
    specs: &RuleSpecs<'_>,
    row: &[Option<&AttributeValue>],
    values: &DeclaredValues,
) -> Box<[Own]> {
    let mut own = Vec::with_capacity(config.rules.len());
    for (rule, (d, declaration, default)) in config.rules.iter().zip(&specs.specs) {
        let mine = row.get(*d).copied().flatten();
        let v = mine.or(default.as_ref());
        own.push(match rule {
            Rule::Equal { .. } => {
                Own::Equal(mine.and_then(|m| values.iter().position(|(_, x)| std::ptr::eq(x, m))))
            }
            Rule::Intersect { .. } => {
                Own::Intersect(set_bits(declaration.values().unwrap_or_default(), v))
            }
            Rule::Distance { .. } => Own::Distance(match v {
                Some(AttributeValue::Number(x)) => *x,
                _ => f64::NAN,
            }),
            Rule::Avoid { .. } => {
                let mut hashes: Vec<u64> = match v {
                    Some(AttributeValue::Set(ids)) => {
                        ids.iter().map(|id| player_hash(id)).collect()
                    }
                    _ => Vec::new(),
                };
                hashes.sort_unstable();
                hashes.dedup();
                Own::Avoid(hashes.into_boxed_slice())
            }
        });
    }
    own.into_boxed_slice()
}

impl RuleCache {
    /// Starts a cycle under `config` over a pool of `len` searches:
    /// forgets every entry when its declarations, rules or composition
    /// changed.
    pub(crate) fn start(&mut self, config: &GameModeConfig, len: usize) {
        let under =
            serde_json::to_string(&(&config.attributes, &config.rules, &config.composition))
                .unwrap_or_default();
        if under != self.under {
            self.entries.clear();
            self.under = under;
        }
        self.stamp = self.stamp.wrapping_add(1);
        // Room for every search at once: a map grown step by step moves
        // its entries again at each step.
        self.entries.reserve(len.saturating_sub(self.entries.len()));
    }

    /// The read of `values`, kept or read now with `read`.
    pub(crate) fn read(
        &mut self,
        values: &Arc<DeclaredValues>,
        read: impl FnOnce() -> Read,
    ) -> &Read {
        let stamp = self.stamp;
        let entry = self
            .entries
            .entry(Arc::as_ptr(values) as usize)
            .or_insert_with(|| Entry {
                _values: Arc::clone(values),
                stamp,
                read: read(),
            });
        entry.stamp = stamp;
        &entry.read
    }

    /// Ends a cycle: drops the entries it did not read (searches that
    /// left the pool).
    pub(crate) fn finish(&mut self) {
        let stamp = self.stamp;
        self.entries.retain(|_, e| e.stamp == stamp);
    }

    /// How many searches' reads are kept.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no read is kept.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
