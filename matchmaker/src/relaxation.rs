//! Relaxed shapes (docs/game-modes.md#thin-pools-smaller-matches-and-bots): once a group's anchor has waited a step's
//! `afterSeconds`, the cycle also tries that step's smaller shape.
//!
//! Runs after the full-size pass, so every candidate had its chance at a
//! full match first. Anchors are taken in wait order; each tries the shapes
//! its wait allows, largest first, and the first full group wins. Grouping
//! is the same as for the base shape (every member in range of every
//! other, keep-together exact on the shape used).

use crate::config::GameModeConfig;
use crate::grouping::Grouper;
use crate::seating::{Formed, SeatPlan};

/// The relaxation pass: tries `config.relaxations` for anchors still
/// unmatched, `waits[c]` being candidate `c`'s wait (seconds, longest first).
pub fn relaxed_pass(
    grouper: &mut Grouper,
    config: &GameModeConfig,
    waits: &[f64],
    formed: &mut Vec<Formed>,
) {
    let mut steps: Vec<(&[u32], f64, u32)> = config
        .relaxations
        .iter()
        .map(|r| {
            (
                r.match_shape.as_slice(),
                r.after_seconds,
                r.match_shape.iter().sum(),
            )
        })
        .collect();
    if steps.is_empty() {
        return;
    }
    // Largest first; equal sizes keep their listed order.
    steps.sort_by_key(|s| std::cmp::Reverse(s.2));
    let earliest = steps.iter().map(|s| s.1).fold(f64::INFINITY, f64::min);
    for (anchor, &wait) in waits.iter().enumerate() {
        if wait < earliest {
            // Candidates are ordered longest-waiting first: nobody after
            // this one has waited long enough either.
            break;
        }
        if grouper.is_matched(anchor) {
            continue;
        }
        let seats = grouper.candidates()[anchor].seats;
        for &(shape, after, size) in &steps {
            if wait < after || grouper.alive_seats() < u64::from(size) {
                continue;
            }
            // A party no team of the shape holds whole never fits it.
            if !crate::queue_status::seats_party(config, shape, seats) {
                continue;
            }
            let attempt = grouper.try_anchor(anchor, shape);
            if attempt.short.is_none() {
                grouper.take(&attempt.group);
                formed.push(Formed {
                    group: attempt.group,
                    plan: SeatPlan::Exact(shape.to_vec()),
                });
                break;
            }
        }
    }
}
