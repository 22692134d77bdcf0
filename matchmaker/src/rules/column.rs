//! The rule table's columns (docs/rules.md, "Cost"): each rule's values
//! over the candidates, and the row of cells per candidate a rule check
//! reads (see [`super::table::RuleTable`]).

use super::table::RuleTable;
use super::value::AttributeValue;

/// One rule's values over the candidates.
#[derive(Debug, Clone)]
pub(super) enum Column {
    Equal {
        /// Interned value per candidate.
        key: Vec<u32>,
        /// Past an `off` step, per candidate.
        off: Vec<bool>,
        /// Interned values, by key.
        values: Vec<AttributeValue>,
    },
    Intersect {
        bits: Vec<u64>,
        need: Vec<u32>,
        /// The declaration's `values`, by bit.
        names: Vec<String>,
    },
    Distance {
        value: Vec<f64>,
        max: Vec<f64>,
    },
    Avoid(AvoidColumn),
}

/// One rule's values of one candidate as [`super::GroupRules::admits`]
/// reads them. A candidate's cells sit side by side, a row per candidate:
/// a check reads one or two cache lines instead of one line per rule and
/// value (the walk meets candidates at random, so each was a miss).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Cell {
    /// `equal`: the key; `intersect`: the bit set; `distance`: the
    /// value's bits; `avoid`: for a solo, where its avoided hashes start
    /// (high 48 bits) and how many (low 16), else the candidate (high)
    /// and [`SPILL`] (low): see [`AvoidColumn::sets_of`].
    pub(super) a: u64,
    /// `equal`: 1 when off; `intersect`: the `minOverlap`; `distance`:
    /// the `max`'s bits; `avoid`: a solo's player hash.
    pub(super) b: u64,
}

/// The low 16 bits of an `avoid` cell that send a check to the column.
const SPILL: usize = 0xFFFF;

impl Column {
    /// Candidate `c`'s cell.
    pub(super) fn cell(&self, c: usize) -> Cell {
        match self {
            Column::Equal { key, off, .. } => Cell {
                a: u64::from(key[c]),
                b: u64::from(off[c]),
            },
            Column::Intersect { bits, need, .. } => Cell {
                a: bits[c],
                b: u64::from(need[c]),
            },
            Column::Distance { value, max } => Cell {
                a: value[c].to_bits(),
                b: max[c].to_bits(),
            },
            Column::Avoid(col) => {
                let (start, end) = (col.avoid_starts[c], col.avoid_starts[c + 1]);
                match col.players(c) {
                    // A solo: where its set lies and its own hash, so that
                    // a check reads no other array but the set.
                    [player] if end - start < SPILL && (start as u64) < 1 << 48 => Cell {
                        a: (start as u64) << 16 | (end - start) as u64,
                        b: *player,
                    },
                    _ => Cell {
                        a: (c as u64) << 16 | SPILL as u64,
                        b: 0,
                    },
                }
            }
        }
    }
}

/// An `avoid` rule's values over the candidates, every candidate's in one
/// array (no allocation per candidate).
#[derive(Debug, Clone, Default)]
pub(super) struct AvoidColumn {
    /// Hashed player ids each candidate avoids (its members' union,
    /// sorted): candidate `c`'s are `avoided[avoid_starts[c]..avoid_starts[c + 1]]`.
    pub(super) avoided: Vec<u64>,
    pub(super) avoid_starts: Vec<usize>,
    /// Hashed player ids of each candidate's members, likewise.
    pub(super) players: Vec<u64>,
    pub(super) player_starts: Vec<usize>,
}

impl AvoidColumn {
    pub(super) fn with_capacity(n: usize) -> Self {
        let mut starts = Vec::with_capacity(n + 1);
        starts.push(0);
        Self {
            avoided: Vec::with_capacity(n),
            avoid_starts: starts.clone(),
            players: Vec::with_capacity(n),
            player_starts: starts,
        }
    }

    /// Hashed player ids candidate `c` avoids, sorted.
    pub(super) fn avoids(&self, c: usize) -> &[u64] {
        &self.avoided[self.avoid_starts[c]..self.avoid_starts[c + 1]]
    }

    /// The avoided hashes and the players' hashes of the candidate whose
    /// cell of this column is `cell`.
    pub(super) fn sets_of<'s>(&'s self, cell: &'s Cell) -> (&'s [u64], &'s [u64]) {
        let high = (cell.a >> 16) as usize;
        match (cell.a & 0xFFFF) as usize {
            SPILL => (self.avoids(high), self.players(high)),
            len => (
                &self.avoided[high..high + len],
                std::slice::from_ref(&cell.b),
            ),
        }
    }

    /// Hashed player ids of candidate `c`'s members.
    pub(super) fn players(&self, c: usize) -> &[u64] {
        &self.players[self.player_starts[c]..self.player_starts[c + 1]]
    }
}

impl RuleTable<'_> {
    /// Whether candidates `x` and `y` hold the same `equal` values (and
    /// `off` steps) and `intersect` values and versions: within a group
    /// they count alike on those rules.
    pub(crate) fn same_values(&self, x: usize, y: usize) -> bool {
        self.columns
            .iter()
            .zip(self.row(x).iter().zip(self.row(y)))
            .all(|(col, (a, b))| {
                !matches!(col, Column::Equal { .. } | Column::Intersect { .. })
                    || (a.a == b.a && a.b == b.b)
            })
    }

    /// Hashed player ids that any of `members` avoids on any `avoid`
    /// rule, sorted and without repeats: what
    /// [`RuleTable::interchangeable`] reads.
    pub(crate) fn avoided_by(&self, members: &[usize]) -> Vec<u64> {
        let mut avoided = Vec::new();
        for col in &self.columns {
            if let Column::Avoid(col) = col {
                for &m in members {
                    avoided.extend_from_slice(col.avoids(m));
                }
            }
        }
        avoided.sort_unstable();
        avoided.dedup();
        avoided
    }

    /// Whether candidates `x` and `y` count alike on every rule in any
    /// group of candidates whose avoided players are `avoided` (from
    /// [`RuleTable::avoided_by`]): the same value and version on every
    /// rule, the same players avoided, and neither avoided by anyone.
    pub(crate) fn interchangeable(&self, x: usize, y: usize, avoided: &[u64]) -> bool {
        let named = |players: &[u64]| players.iter().any(|p| avoided.binary_search(p).is_ok());
        self.columns
            .iter()
            .zip(self.row(x).iter().zip(self.row(y)))
            .all(|(col, (a, b))| match col {
                Column::Avoid(col) => {
                    col.avoids(x) == col.avoids(y)
                        && !named(col.players(x))
                        && !named(col.players(y))
                }
                _ => a.a == b.a && a.b == b.b,
            })
    }
}
