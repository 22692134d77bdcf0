//! Lapses excused after the pool store was out of reach (docs/searching.md,
//! "Statuses"; docs/operations.md, "What losing a dependency costs").
//!
//! A REST search lives while it is polled, a socket's while its API
//! instance renews its lease. While the store does not answer, neither can
//! reach it: without this, the first sweep after a stall of half a minute
//! ended every live search `REST_POLL_LAPSED` or `SOCKET_LAPSED`, though
//! each client had been there all along.
//!
//! So each worker keeps, from its own expiry calls, when it last reached
//! each mode's pool (on a Redis Cluster one master may stall while the
//! others answer), and whether a call failed since or took more than
//! [`OUTAGE_SECONDS`] to answer (a stall shorter than the command timeout
//! fails no call). When calls failed and
//! more than [`OUTAGE_SECONDS`] pass without reaching it, what
//! came due since is taken to have come due in an outage: the worker
//! expires only what was due before it, while it cannot reach the store and
//! for [`GRACE_SECONDS`] once it can again (a poll or a renewal's whole
//! window), and then as before. A client still there renews in time; one
//! gone ends `GRACE_SECONDS` later than it would have. A ticket whose TTL
//! ran out in the outage ends at the latest then too, `TICKET_TTL`.
//!
//! A proposal whose `acceptBy` fell in the outage or its grace is closed
//! the same way: its silent players may have answered in time with no
//! answer arriving, so nobody is held responsible (the worker's proposal
//! sweep; an API instance closing a proposal past its deadline on a late
//! answer judges the same way from its own status reads and answers).
//!
//! Each process judges from its own calls: a worker that reached the store
//! meanwhile (the outage was another's) expires as usual.

use super::ModeKey;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// Seconds without reaching the store that count as an outage: longer than
/// a slow pass over many modes, shorter than a poll's 30-second window.
pub const OUTAGE_SECONDS: f64 = 10.0;

/// Seconds after an outage during which only what was due before it
/// expires: the 30 seconds of a REST poll's window and of a socket's
/// default lease.
pub const GRACE_SECONDS: f64 = 30.0;

/// When this worker last reached each mode's pool, and the grace of its
/// last outage. Times are Unix seconds, as the caller's clock gives them.
#[derive(Debug, Default)]
pub struct LapseGrace {
    modes: Mutex<HashMap<ModeKey, State>>,
}

#[derive(Debug, Default)]
struct State {
    /// The last store call that answered.
    reached: Option<f64>,
    /// Whether a call failed since (a mode idle for a while, which nobody
    /// called, had no outage).
    failed: bool,
    /// The last outage: when it began (the last call that answered before
    /// it) and when its grace ends.
    excused: Option<(f64, f64)>,
}

impl LapseGrace {
    /// The deadline at or before which `mode`'s searches expire at `now`:
    /// `now`, or during an outage and its grace, the outage's beginning.
    pub fn due_by(&self, mode: &ModeKey, now: f64) -> f64 {
        let modes = self.modes.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(state) = modes.get(mode) else {
            return now;
        };
        let out = |r: &f64| state.failed && now - r > OUTAGE_SECONDS;
        if let Some(reached) = state.reached.filter(out) {
            return reached.min(now);
        }
        match state.excused {
            Some((from, until)) if now < until => from.min(now),
            _ => now,
        }
    }

    /// The time from which a proposal timeout of `mode` closed at `now`
    /// holds nobody responsible: the outage's beginning during an outage
    /// and its grace ([`LapseGrace::due_by`]), else never (infinity).
    pub fn excused_from(&self, mode: &ModeKey, now: f64) -> f64 {
        let from = self.due_by(mode, now);
        if from < now {
            from
        } else {
            f64::INFINITY
        }
    }

    /// Notes that a call to `mode`'s pool made at `now` answered; after an
    /// outage, starts its grace.
    pub fn reached(&self, mode: &ModeKey, now: f64) {
        let mut modes = self.modes.lock().unwrap_or_else(PoisonError::into_inner);
        let state = match modes.get_mut(mode) {
            Some(state) => state,
            None => modes.entry(mode.clone()).or_default(),
        };
        if let Some(last) = state.reached {
            if state.failed && now - last > OUTAGE_SECONDS {
                state.excused = Some((last, now + GRACE_SECONDS));
            }
            if now < last {
                return;
            }
        }
        state.failed = false;
        state.reached = Some(now);
    }

    /// Notes that a call to `mode`'s pool asked at `asked` answered at
    /// `now`. A call that took more than [`OUTAGE_SECONDS`] counts as an
    /// outage from the last call that answered before it: a store that
    /// stalls and resumes within the command timeout fails no call.
    ///
    /// The outage is noted at once, whatever the order in which the calls
    /// that waited it out answer: a quick call asked just after the store
    /// resumed may be noted before them.
    pub fn answered(&self, mode: &ModeKey, asked: f64, now: f64) {
        if now - asked > OUTAGE_SECONDS {
            let mut modes = self.modes.lock().unwrap_or_else(PoisonError::into_inner);
            let state = match modes.get_mut(mode) {
                Some(state) => state,
                None => modes.entry(mode.clone()).or_default(),
            };
            // From the last call that answered before it was asked.
            let began = state.reached.filter(|r| *r <= asked).unwrap_or(asked);
            let from = match state.excused {
                Some((from, until)) if asked <= until => from.min(began),
                _ => began,
            };
            let until = state.excused.map_or(0.0, |(_, until)| until);
            state.excused = Some((from, until.max(now + GRACE_SECONDS)));
        }
        self.reached(mode, now);
    }

    /// Notes that a call to `mode`'s pool failed (a timeout, a refused
    /// connection).
    pub fn failed(&self, mode: &ModeKey) {
        let mut modes = self.modes.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(state) = modes.get_mut(mode) {
            state.failed = true;
        }
    }

    /// Notes that the store failed a call that is every mode's (the
    /// sweep's listing of the pools).
    pub fn failed_all(&self) {
        let mut modes = self.modes.lock().unwrap_or_else(PoisonError::into_inner);
        for state in modes.values_mut() {
            state.failed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_that_answers_only_after_a_stall_is_an_outage() {
        let grace = LapseGrace::default();
        grace.reached(&duel(), 100.0);
        // Asked at 101, answered at 121 once the store resumed: no call
        // failed, yet the store was out of reach in between.
        grace.answered(&duel(), 101.0, 121.0);
        assert_eq!(grace.due_by(&duel(), 125.0), 100.0);
        assert_eq!(grace.excused_from(&duel(), 125.0), 100.0);
        assert_eq!(grace.due_by(&duel(), 152.0), 152.0, "after the grace");
        // Noted however the calls' answers come: a quick call asked after
        // the store resumed, noted first, hides nothing.
        let raced = LapseGrace::default();
        raced.reached(&duel(), 100.0);
        raced.answered(&duel(), 121.0, 121.1);
        raced.answered(&duel(), 101.0, 121.0);
        assert!(raced.excused_from(&duel(), 122.0) <= 101.0);
        // A quick answer is no outage.
        let quick = LapseGrace::default();
        quick.reached(&duel(), 100.0);
        quick.answered(&duel(), 101.0, 103.0);
        assert_eq!(quick.excused_from(&duel(), 104.0), f64::INFINITY);
    }

    fn duel() -> ModeKey {
        ModeKey::new("prj_a", "duel")
    }

    #[test]
    fn without_an_outage_everything_due_expires() {
        let grace = LapseGrace::default();
        assert_eq!(grace.due_by(&duel(), 100.0), 100.0);
        for t in [100.0, 101.0, 105.0, 114.0] {
            grace.reached(&duel(), t);
            assert_eq!(grace.due_by(&duel(), t + 1.0), t + 1.0);
        }
    }

    #[test]
    fn an_outage_and_its_grace_expire_only_what_was_due_before_it() {
        let grace = LapseGrace::default();
        grace.reached(&duel(), 100.0);
        grace.failed(&duel());
        // Out of reach: past ten seconds, nothing due since the last call.
        assert_eq!(grace.due_by(&duel(), 109.0), 109.0);
        assert_eq!(grace.due_by(&duel(), 125.0), 100.0);
        // Back at 130: the grace runs to 160.
        grace.reached(&duel(), 130.0);
        assert_eq!(grace.due_by(&duel(), 131.0), 100.0);
        // The store answering every few seconds meanwhile.
        for t in [131.0, 140.0, 149.0, 158.0] {
            grace.reached(&duel(), t);
        }
        assert_eq!(grace.due_by(&duel(), 159.0), 100.0);
        assert_eq!(grace.due_by(&duel(), 160.0), 160.0);
        grace.reached(&duel(), 160.0);
        assert_eq!(grace.due_by(&duel(), 162.0), 162.0);
    }

    #[test]
    fn each_mode_has_its_own_outage() {
        let grace = LapseGrace::default();
        let other = ModeKey::new("prj_a", "ranked");
        grace.reached(&duel(), 100.0);
        for t in [100.0, 105.0, 110.0, 115.0, 120.0] {
            grace.reached(&other, t);
        }
        grace.failed_all();
        grace.reached(&other, 121.0);
        assert_eq!(grace.due_by(&duel(), 121.0), 100.0);
        assert_eq!(grace.due_by(&other, 121.0), 121.0);
    }

    #[test]
    fn a_mode_nobody_called_for_a_while_had_no_outage() {
        let grace = LapseGrace::default();
        grace.reached(&duel(), 100.0);
        assert_eq!(grace.due_by(&duel(), 200.0), 200.0);
        grace.reached(&duel(), 200.0);
        assert_eq!(grace.due_by(&duel(), 201.0), 201.0);
    }

    #[test]
    fn a_call_that_answered_late_does_not_move_the_clock_back() {
        let grace = LapseGrace::default();
        grace.reached(&duel(), 100.0);
        grace.reached(&duel(), 99.0);
        grace.failed(&duel());
        assert_eq!(grace.due_by(&duel(), 111.0), 100.0);
    }
}
