//! The running state of a group being grown over one cycle's
//! [`RuleTable`] (docs/rules.md, "Rules"): [`GroupRules::admits`] says
//! whether a candidate fits every member on every rule, both sides' own
//! versions. A group starts at an anchor, or at a backfill's roster
//! ([`GroupRules::start_roster`], docs/rules.md#backfill).

use super::declare::Version;
use super::roster::RosterValues;
use super::table::{player_hash, set_bits, Column, Miss, RuleTable};
use super::value::AttributeValue;
use smallvec::SmallVec;

/// One rule's state over the group being grown.
#[derive(Debug, Clone)]
enum State {
    Equal {
        /// The value every member holds; `None` once members differ
        /// (possible only while every member is off).
        common: Option<u32>,
        all_off: bool,
    },
    Intersect {
        bits: u64,
        need: u32,
    },
    Distance {
        /// Values a joiner may have by every member's own `max`.
        lo: f64,
        hi: f64,
        /// The members' lowest and highest values.
        min: f64,
        max: f64,
    },
    Avoid {
        /// Hashed player ids some member avoids (not sorted: a check
        /// scans them, a join appends).
        avoided: Vec<u64>,
        /// Hashed player ids of the members.
        players: Vec<u64>,
    },
    /// Nothing known yet (a backfill's roster without values for the
    /// rule): admits anyone, and takes the first joiner's state.
    Any,
}

/// Candidate `x`'s own state of one rule, as a group of one.
fn state_at(col: &Column, x: usize) -> State {
    match col {
        Column::Equal { key, off, .. } => State::Equal {
            common: Some(key[x]),
            all_off: off[x],
        },
        Column::Intersect { bits, need, .. } => State::Intersect {
            bits: bits[x],
            need: need[x],
        },
        Column::Distance { value, max } => State::Distance {
            lo: value[x] - max[x],
            hi: value[x] + max[x],
            min: value[x],
            max: value[x],
        },
        Column::Avoid(col) => State::Avoid {
            avoided: col.avoids(x).to_vec(),
            players: col.players(x).to_vec(),
        },
    }
}

/// The rules' running state over a group: [`GroupRules::admits`] says
/// whether a candidate fits every member on every rule.
#[derive(Debug, Clone, Default)]
pub struct GroupRules {
    states: Vec<State>,
    /// The group's candidates, anchor first (none for a backfill's
    /// roster): whom [`GroupRules::miss`] pairs a refused one with.
    members: Vec<usize>,
}

impl GroupRules {
    /// Starts a group at `anchor`.
    pub fn start(&mut self, t: &RuleTable<'_>, anchor: usize) {
        self.members.clear();
        self.members.push(anchor);
        if self.states.len() == t.columns.len() {
            // Keep the `avoid` states' buffers: a cycle starts a group
            // per try.
            for (st, col) in self.states.iter_mut().zip(&t.columns) {
                match (st, col) {
                    (State::Avoid { avoided, players }, Column::Avoid(c)) => {
                        avoided.clear();
                        avoided.extend_from_slice(c.avoids(anchor));
                        players.clear();
                        players.extend_from_slice(c.players(anchor));
                    }
                    (st, col) => *st = state_at(col, anchor),
                }
            }
            return;
        }
        self.states.clear();
        self.states
            .extend(t.columns.iter().map(|col| state_at(col, anchor)));
    }

    /// Starts a group at a backfill's roster (docs/rules.md#backfill):
    /// the roster's values stand as members, each rule's version at `age`
    /// (seconds the backfill has been open, as a member's wait). For each
    /// rule the request's own value stands for the whole roster; else
    /// every roster player's value that is known counts; a rule with no
    /// value known admits anyone. `avoid` reads every known set, and every
    /// roster player's id may be avoided by a newcomer.
    pub fn start_roster(&mut self, t: &RuleTable<'_>, roster: &RosterValues, age: f64) {
        self.members.clear();
        self.states.clear();
        for (rule, col) in t.rules().iter().zip(&t.columns) {
            let attribute = rule.attribute();
            let values: SmallVec<[&AttributeValue; 8]> = match roster.attributes.get(attribute) {
                Some(v) => SmallVec::from_elem(v, 1),
                None => roster
                    .players
                    .iter()
                    .filter_map(|p| p.attributes.get(attribute))
                    .collect(),
            };
            let version = rule.version_at(age);
            let state = match col {
                Column::Avoid(_) => {
                    let mut avoided: Vec<u64> = values
                        .iter()
                        .filter_map(|v| match v {
                            AttributeValue::Set(ids) => Some(ids.iter().map(|id| player_hash(id))),
                            _ => None,
                        })
                        .flatten()
                        .collect();
                    avoided.sort_unstable();
                    avoided.dedup();
                    let players = roster.players.iter().map(|p| player_hash(&p.player_id));
                    State::Avoid {
                        avoided,
                        players: players.collect(),
                    }
                }
                _ if values.is_empty() => State::Any,
                Column::Equal {
                    values: interned, ..
                } => {
                    let first = values[0];
                    let common = values.iter().all(|v| *v == first).then(|| {
                        // A value no candidate holds: nobody but an `off`
                        // candidate may join.
                        interned
                            .iter()
                            .position(|v| v == first)
                            .map_or(u32::MAX, |k| k as u32)
                    });
                    State::Equal {
                        common,
                        all_off: matches!(version, Version::Equal { off: true }),
                    }
                }
                Column::Intersect { names, .. } => State::Intersect {
                    bits: values
                        .iter()
                        .fold(u64::MAX, |acc, v| acc & set_bits(names, Some(v))),
                    need: match version {
                        Version::Intersect { min_overlap } => min_overlap,
                        _ => 1,
                    },
                },
                Column::Distance { .. } => {
                    let max = match version {
                        Version::Distance { max } => max,
                        _ => 0.0,
                    };
                    let numbers = values.iter().map(|v| match v {
                        AttributeValue::Number(x) => *x,
                        _ => f64::NAN,
                    });
                    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
                    let (mut min, mut top) = (f64::INFINITY, f64::NEG_INFINITY);
                    for v in numbers {
                        lo = lo.max(v - max);
                        hi = hi.min(v + max);
                        min = min.min(v);
                        top = top.max(v);
                    }
                    State::Distance {
                        lo,
                        hi,
                        min,
                        max: top,
                    }
                }
            };
            self.states.push(state);
        }
    }

    /// `Ok` when candidate `x` fits every member of the group on every
    /// rule (both sides' own versions); otherwise the index of the first
    /// rule it breaks (`avoid` rules are read last).
    pub fn admits(&self, t: &RuleTable<'_>, x: usize) -> Result<(), usize> {
        let mut avoid = None;
        let row = t.row(x);
        // A state is always of its column's kind (`state_at`,
        // `start_roster`): the check reads the state alone, and the column
        // only for an `avoid` rule's sets.
        for (k, (st, cell)) in self.states.iter().zip(row).enumerate() {
            let ok = match st {
                State::Equal { common, all_off } => {
                    (cell.b != 0 && *all_off) || *common == Some(cell.a as u32)
                }
                State::Intersect { bits: g, need: n } => {
                    (g & cell.a).count_ones() >= (*n).max(cell.b as u32)
                }
                State::Distance {
                    lo,
                    hi,
                    min,
                    max: top,
                } => {
                    let (v, max) = (f64::from_bits(cell.a), f64::from_bits(cell.b));
                    v >= *lo - 1e-9
                        && v <= *hi + 1e-9
                        && v - max <= *min + 1e-9
                        && v + max >= *top - 1e-9
                }
                State::Avoid { .. } => {
                    avoid.get_or_insert(k);
                    true
                }
                State::Any => true,
            };
            if !ok {
                return Err(k);
            }
        }
        if let Some(k) = avoid {
            let cells = t.columns.iter().zip(&self.states).zip(row);
            for (k, ((col, st), cell)) in cells.enumerate().skip(k) {
                if let (
                    Column::Avoid(col),
                    State::Avoid {
                        avoided,
                        players: g,
                    },
                ) = (col, st)
                {
                    let (avoids, players) = col.sets_of(cell);
                    let blocked = players.iter().any(|p| avoided.contains(p))
                        || (!avoids.is_empty()
                            && g.iter().any(|p| avoids.binary_search(p).is_ok()));
                    if blocked {
                        return Err(k);
                    }
                }
            }
        }
        Ok(())
    }

    /// The nearest miss of candidate `x`, which rule `k` turned away, to
    /// the group grown from `anchor` (docs/rules.md, "Why a player is still
    /// waiting"): for an `intersect` rule the values `x` shares with the
    /// group's shared set (what the check read) and the larger
    /// `minOverlap`, so the miss never shows an overlap the rule allows;
    /// for a `distance` or `equal` rule the pair of `anchor` and `x`
    /// ([`RuleTable::miss`]).
    pub(crate) fn miss(&self, t: &RuleTable<'_>, k: usize, anchor: usize, x: usize) -> Miss {
        match self.states.get(k) {
            Some(State::Intersect { bits, need }) => {
                let cell = t.row(x)[k];
                Miss::Overlap {
                    of: x,
                    overlap: (bits & cell.a).count_ones(),
                    min_overlap: (*need).max(cell.b as u32),
                }
            }
            // The member `x` is furthest past the pair's `max` from: a
            // joiner must fit every member, not only the anchor.
            Some(State::Distance { .. }) => self
                .members
                .iter()
                .map(|&m| t.miss(k, m, x))
                .filter_map(|miss| match miss {
                    Miss::Distance { distance, max, .. } if distance > max + 1e-9 => {
                        Some((distance - max, miss))
                    }
                    _ => None,
                })
                .max_by(|a, b| a.0.total_cmp(&b.0))
                .map_or_else(|| t.miss(k, anchor, x), |(_, miss)| miss),
            _ => t.miss(k, anchor, x),
        }
    }

    /// The values a joiner may hold on `distance` rule `k` by every
    /// member's own `max` (`None` for another kind of rule).
    pub fn window(&self, k: usize) -> Option<(f64, f64)> {
        match self.states.get(k) {
            Some(State::Distance { lo, hi, .. }) => Some((*lo, *hi)),
            _ => None,
        }
    }

    /// Adds candidate `x` (admitted) to the group's state.
    pub fn join(&mut self, t: &RuleTable<'_>, x: usize) {
        self.members.push(x);
        let row = t.row(x);
        for ((col, st), cell) in t.columns.iter().zip(self.states.iter_mut()).zip(row) {
            if matches!(st, State::Any) {
                *st = state_at(col, x);
                continue;
            }
            match (col, st) {
                (Column::Equal { .. }, State::Equal { common, all_off }) => {
                    if *common != Some(cell.a as u32) {
                        *common = None;
                    }
                    *all_off &= cell.b != 0;
                }
                (Column::Intersect { .. }, State::Intersect { bits: g, need: n }) => {
                    *g &= cell.a;
                    *n = (*n).max(cell.b as u32);
                }
                (
                    Column::Distance { .. },
                    State::Distance {
                        lo,
                        hi,
                        min,
                        max: top,
                    },
                ) => {
                    let (v, max) = (f64::from_bits(cell.a), f64::from_bits(cell.b));
                    *lo = lo.max(v - max);
                    *hi = hi.min(v + max);
                    *min = min.min(v);
                    *top = top.max(v);
                }
                (
                    Column::Avoid(col),
                    State::Avoid {
                        avoided,
                        players: g,
                    },
                ) => {
                    // The joiner's sets as its cell says where they lie
                    // (for a solo, its own hash is the cell's: no other
                    // read); the group's avoided hashes stay unsorted, a
                    // few dozen a check scans.
                    let (avoids, players) = col.sets_of(cell);
                    avoided.extend_from_slice(avoids);
                    g.extend_from_slice(players);
                }
                _ => {}
            }
        }
    }
}
