//! The rules over a mode's attributes inside group building
//! (docs/rules.md): a joiner must fit every member of the group on every
//! rule, checked only for candidates that already fit by closeness.
//!
//! With `equal` rules the candidates are also split into partitions (one
//! list per combination of `equal` values): an anchor grows first in its
//! own partition, where every candidate already agrees with it, so many
//! small partitions cost no longer walks than one. Only when that group
//! stays short does the anchor walk every candidate (its `off` steps may
//! reach other partitions, and the walk tells which rule turned who away).

use super::{Attempt, Grouper, List};
use crate::reasons::WaitingReason;
use crate::rules::table::Miss;
use crate::rules::{GroupRules, Rule, RuleTable};
use smallvec::SmallVec;

/// The rules of one cycle and what the grouper learnt of them.
#[derive(Debug, Default)]
pub(super) struct RuleState<'a> {
    table: Option<&'a RuleTable<'a>>,
    group: GroupRules,
    /// Seats each rule turned away in the current try.
    turned: Vec<u32>,
    /// Each rule's nearest miss in the current try.
    nearest: Vec<Miss>,
    /// Per rule, a bit per candidate it turned away in a try this cycle
    /// that stayed short.
    marks: Vec<Vec<u64>>,
    /// The current try's refusals (rule, candidate), marked once the try
    /// is known to stay short.
    pending: Vec<(usize, usize)>,
    /// Where the current walk's refusals start in `pending`.
    walk_from: usize,
    /// Index in `Grouper::lists` of the list of every partition, one
    /// segment after another, when partitioned.
    partition_base: Option<usize>,
    /// Where each partition's segment starts in that list, and one past
    /// the last (`[0, n]` unpartitioned).
    pub(super) partition_starts: Vec<usize>,
    /// The bucket index over a `distance` rule (`indexed.rs`).
    pub(super) index: Option<super::indexed::Index>,
    /// Per partition, how many tries in a row stayed short there (see
    /// [`RuleState::index_first`]).
    short_run: Vec<u32>,
    /// With the index, the rules that can turn away a candidate of the
    /// anchor's partition out of the anchor's window on the indexed rule:
    /// the rules up to it but `equal` rules (the partition agrees on
    /// them) and `avoid` rules (read last).
    could: SmallVec<[usize; 4]>,
    /// Whether the current walk's refusals count only for the marks: the
    /// own-partition walk of a partitioned try, whose reason is never read
    /// (a short one is walked again over every candidate, which starts the
    /// counts afresh).
    quiet: bool,
}

/// Tries in a row that stayed short in a partition after which its tries
/// skip the index walk until one fills.
const SHORT_RUN: u32 = 2;

impl<'a> RuleState<'a> {
    /// The cycle's rule table, when the mode has rules.
    pub(super) fn table(&self) -> Option<&'a RuleTable<'a>> {
        self.table
    }

    /// The list of `c`'s partition, when the candidates are partitioned.
    pub(super) fn partition_list(&self) -> Option<usize> {
        self.partition_base
    }

    /// Whether a try at `anchor` walks the index first. The index walk
    /// forms the group the full walk forms, and serves only when it fills
    /// (a short try is walked the full way again for its reason): where the
    /// last tries of the anchor's partition stayed short, the full walk
    /// alone is likely all the try needs. Either way the try's outcome is
    /// the same; only its cost differs.
    pub(super) fn index_first(&self, anchor: usize) -> bool {
        self.table.is_none_or(|t| {
            self.short_run
                .get(t.partition(anchor) as usize)
                .is_none_or(|run| *run < SHORT_RUN)
        })
    }

    /// Notes whether the try at `anchor` stayed `short`.
    pub(super) fn note_try(&mut self, anchor: usize, short: bool) {
        let Some(t) = self.table else {
            return;
        };
        if let Some(run) = self.short_run.get_mut(t.partition(anchor) as usize) {
            *run = if short { run.saturating_add(1) } else { 0 };
        }
    }

    /// Starts a try at `anchor`.
    pub(super) fn start(&mut self, anchor: usize) {
        if let Some(t) = self.table {
            self.group.start(t, anchor);
            self.walk_from = self.pending.len();
            self.turned.iter_mut().for_each(|s| *s = 0);
            self.nearest.iter_mut().for_each(|m| *m = Miss::None);
        }
    }

    /// Whether `x` (of `seats` seats) fits the group on every rule; a
    /// refusal is counted against the rule that refused it.
    pub(super) fn fits(&mut self, anchor: usize, x: usize, seats: u32) -> bool {
        let Some(t) = self.table else {
            return true;
        };
        if self.counted_out(anchor, x) {
            return false;
        }
        match self.group.admits(t, x) {
            Ok(()) => true,
            Err(k) if self.quiet => {
                self.pending.push((k, x));
                false
            }
            Err(k) => {
                self.turned[k] += seats;
                // An `avoid` rule, and an `equal` rule without an `off`
                // step, never loosen: no miss of theirs is nearer.
                let loosens = match &t.rules()[k] {
                    Rule::Avoid { .. } => false,
                    Rule::Equal { relax, .. } => !relax.is_empty(),
                    _ => true,
                };
                if loosens {
                    let miss = self.group.miss(t, k, anchor, x);
                    if miss.nearer(self.nearest[k]) {
                        self.nearest[k] = miss;
                    }
                }
                self.pending.push((k, x));
                false
            }
        }
    }

    /// Whether the quiet walk of `anchor`'s partition may refuse `x`
    /// without asking the rules: out of the anchor's window on the indexed
    /// rule, `x` is turned away by one of the rules `could`
    /// names, each of which counted it already this cycle, so that the
    /// refusal would count nothing new (docs/rules.md, "Which rule costs
    /// wait time").
    fn counted_out(&self, anchor: usize, x: usize) -> bool {
        self.quiet
            && !self.could.is_empty()
            && self
                .could
                .iter()
                .all(|&k| self.marks[k][x / 64] & (1 << (x % 64)) != 0)
            && self.index.as_ref().is_some_and(|ix| ix.outside(anchor, x))
    }

    /// Starts a try (one anchor, however many walks it takes).
    pub(super) fn begin_try(&mut self) {
        self.pending.clear();
    }

    /// Ends a try: what the rules turned away counts only when it stayed
    /// `short` (a try that formed a match cost nobody wait time).
    pub(super) fn end_try(&mut self, short: bool) {
        if short {
            for &(k, x) in &self.pending {
                self.marks[k][x / 64] |= 1 << (x % 64);
            }
        }
        self.pending.clear();
    }

    /// Whether `x` fits the group on every rule, counting nothing (the
    /// indexed walk's check).
    pub(super) fn admits(&self, x: usize) -> bool {
        self.table.is_none_or(|t| self.group.admits(t, x).is_ok())
    }

    /// The group's window on `distance` rule `k` (see
    /// [`GroupRules::window`]).
    pub(super) fn window(&self, k: usize) -> Option<(f64, f64)> {
        self.group.window(k)
    }

    /// Adds the admitted `x` to the group's state.
    pub(super) fn join(&mut self, x: usize) {
        if let Some(t) = self.table {
            self.group.join(t, x);
        }
    }

    /// `RULE_NOT_MET` for a short try in which a rule turned candidates
    /// away, when enough were in range (`enough`) for the rule to be what
    /// kept the group short; the rule named is the one that turned away
    /// the most seats. Among rules tied on seats, the one whose loosening
    /// comes soonest is named (a rule that never loosens last; then config
    /// order): a player kept apart from one candidate by a build and from
    /// another by a platform that loosens in a minute waits for the minute,
    /// not forever (docs/rules.md, "Why a player is still waiting"). With
    /// role queues, see [`Grouper::rules_or_roles_reason`].
    pub(super) fn reason(&self, anchor: usize, enough: bool) -> Option<WaitingReason> {
        self.reason_among(anchor, enough, |_| true)
    }

    /// The current walk's refusals (rule, candidate).
    pub(super) fn walk_refusals(&self) -> &[(usize, usize)] {
        self.pending.get(self.walk_from..).unwrap_or_default()
    }

    /// [`RuleState::reason`] naming only a rule `among` allows.
    pub(super) fn reason_among(
        &self,
        anchor: usize,
        enough: bool,
        among: impl Fn(usize) -> bool,
    ) -> Option<WaitingReason> {
        let t = self.table?;
        if !enough {
            return None;
        }
        let turned = || {
            self.turned
                .iter()
                .enumerate()
                .map(|(k, s)| (k, if among(k) { *s } else { 0 }))
        };
        let most = turned().map(|(_, s)| s).max().filter(|s| *s > 0)?;
        let unblocks = |k: usize| t.unblocks_in(k, anchor, self.nearest[k]);
        let (k, _) = turned()
            .filter(|(_, s)| *s == most)
            .map(|(k, _)| (k, unblocks(k)))
            .min_by(|a, b| match (a.1, b.1) {
                (Some(x), Some(y)) => x.total_cmp(&y).then(a.0.cmp(&b.0)),
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => a.0.cmp(&b.0),
            })?;
        let (distance, max, overlap, min_overlap) = match self.nearest[k] {
            Miss::Distance { distance, max, .. } => (Some(distance), Some(max), None, None),
            Miss::Overlap {
                overlap,
                min_overlap,
                ..
            } => (None, None, Some(overlap), Some(min_overlap)),
            Miss::Apart { .. } | Miss::None => (None, None, None, None),
        };
        Some(WaitingReason::RuleNotMet {
            rule: t.rules()[k].name().to_owned(),
            distance,
            max,
            overlap,
            min_overlap,
            unblocks_in_seconds: t.unblocks_in(k, anchor, self.nearest[k]),
        })
    }
}

impl<'a> Grouper<'a> {
    /// Adds the rules over attributes (docs/rules.md). Call after
    /// [`Grouper::with_regions`]: with regions the candidates are not
    /// partitioned (every walk checks every rule instead).
    pub fn with_rules(mut self, table: Option<&'a RuleTable<'a>>) -> Self {
        let Some(t) = table else {
            return self;
        };
        let n = self.candidates.len();
        self.rules.table = Some(t);
        self.rules.turned = vec![0; t.rules().len()];
        self.rules.nearest = vec![Miss::None; t.rules().len()];
        self.rules.marks = vec![vec![0; n.div_ceil(64)]; t.rules().len()];
        self.rules.short_run = vec![0; t.partitions() as usize];
        if t.partitions() > 1 && self.regions.is_none() {
            // One list, the partitions one after another (each in the
            // order of the list of every candidate): one position array
            // for all of them, however many partitions there are.
            let mut orders: Vec<Vec<usize>> = vec![Vec::new(); t.partitions() as usize];
            for &c in &self.lists[0].order {
                orders[t.partition(c) as usize].push(c);
            }
            let mut at = 0;
            for o in &orders {
                self.rules.partition_starts.push(at);
                at += o.len();
            }
            self.rules.partition_starts.push(at);
            let order: Vec<usize> = orders.into_iter().flatten().collect();
            let mut list = List::new(self.candidates, self.values, self.ranges, order);
            for (slot, &c) in list.slots.iter_mut().zip(&list.order) {
                slot.part = t.partition(c);
            }
            self.rules.partition_base = Some(self.lists.len());
            self.lists.push(list);
        }
        if self.rules.partition_starts.is_empty() {
            self.rules.partition_starts = vec![0, n];
        }
        if self.regions.is_none() && !self.fifo {
            self.build_index(t);
        }
        if let Some(ix) = &self.rules.index {
            self.rules.could = t.rules()[..=ix.rule()]
                .iter()
                .enumerate()
                .filter(|(_, r)| !matches!(r, Rule::Equal { .. } | Rule::Avoid { .. }))
                .map(|(k, _)| k)
                .collect();
        }
        self
    }

    /// Per rule (config order): its name and how many candidates it
    /// turned away in the tries that stayed short so far this cycle.
    pub fn rule_turned_away(&self) -> Vec<(String, u32)> {
        let Some(t) = self.rules.table else {
            return Vec::new();
        };
        t.rules()
            .iter()
            .zip(&self.rules.marks)
            .map(|(r, bits)| {
                (
                    r.name().to_owned(),
                    bits.iter().map(|w| w.count_ones()).sum(),
                )
            })
            .collect()
    }

    /// Grows in the anchor's partition `l` first; when that stays short,
    /// over every candidate (see the module's comment), keeping the larger
    /// group for `found`.
    pub(super) fn grow_partitioned(
        &mut self,
        anchor: usize,
        caps: &[u32],
        size: u32,
        l: usize,
    ) -> Attempt {
        // Its reason is never read: a short one is walked again below.
        self.rules.quiet = true;
        let own = if self.fifo {
            self.grow_fifo(anchor, caps, size, l)
        } else {
            self.grow_close(anchor, caps, size, l)
        };
        self.rules.quiet = false;
        if own.short.is_none() {
            return own;
        }
        // An anchor past an `off` step may match outside its partition:
        // it walks every candidate. Any other can match only within it,
        // and looks at a few neighbours of other partitions for the reason.
        let relaxed = self.rules.table.is_some_and(|t| t.any_off(anchor));
        let mut all = if self.fifo {
            self.grow_fifo(anchor, caps, size, 0)
        } else if relaxed {
            self.grow_close(anchor, caps, size, 0)
        } else {
            self.grow_close_within(anchor, caps, size, 0, 4 * size as usize)
        };
        if all.short.is_some() && own.seats > all.seats {
            all.group = own.group;
            all.seats = own.seats;
        }
        all
    }
}
