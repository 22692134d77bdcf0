//! Bot fill (docs/game-modes.md#thin-pools-smaller-matches-and-bots): once a group's anchor has waited
//! `fillAfterSeconds`, a group of at least `minHumans` players, all in
//! range of each other, is completed with bot seats to the base shape.
//!
//! Runs after every relaxation was tried. Parties stay whole: the humans
//! must fit the base shape's teams without splitting a party (keep-together
//! still refuses what cannot be seated). Their seats per team are spread as
//! evenly as the parties allow (largest party first, to the team with the
//! fewest humans), the
//! humans are then seated by `teamAssignment`, and bots take the seats left.

use crate::config::GameModeConfig;
use crate::grouping::Grouper;
use crate::seating::{unit_sizes, Formed, SeatPlan};
use crate::teams::pack_partial;

/// The bot pass over anchors still unmatched (`waits[c]` in seconds,
/// longest first).
pub fn bot_pass(
    grouper: &mut Grouper,
    config: &GameModeConfig,
    waits: &[f64],
    formed: &mut Vec<Formed>,
) {
    let candidates = grouper.candidates();
    let Some(bots) = &config.bots else {
        return;
    };
    let base = config.match_shape.caps();
    for (anchor, &wait) in waits.iter().enumerate() {
        if wait < bots.fill_after_seconds {
            break;
        }
        if grouper.is_matched(anchor) || grouper.alive_seats() < u64::from(bots.min_humans) {
            continue;
        }
        let attempt = grouper.try_anchor(anchor, &base);
        if attempt.short.is_none() {
            grouper.take(&attempt.group);
            formed.push(Formed {
                group: attempt.group,
                plan: SeatPlan::Exact(base.clone()),
            });
            continue;
        }
        if attempt.seats < bots.min_humans {
            continue;
        }
        let sizes = unit_sizes(candidates, &attempt.group, config.parties.keep_together);
        if let Some(humans) = human_seats(&sizes, &base) {
            grouper.take(&attempt.group);
            formed.push(Formed {
                group: attempt.group,
                plan: SeatPlan::WithBots { humans },
            });
        }
    }
}

/// Humans per team for units of `sizes` seats in teams of `caps` seats:
/// largest unit first, each to the team with the fewest humans that has
/// room (as a deal round the teams would), so humans spread evenly and
/// bots fill the emptiest teams. Falls back to any
/// packing when that greedy order dead-ends; `None` if none exists.
pub fn human_seats(sizes: &[u32], caps: &[u32]) -> Option<Vec<u32>> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by(|a, b| sizes[*b].cmp(&sizes[*a]).then(a.cmp(b)));
    let mut fill = vec![0u32; caps.len()];
    let mut greedy_ok = true;
    for &u in &order {
        let best = (0..caps.len())
            .filter(|&t| caps[t] - fill[t] >= sizes[u])
            .min_by_key(|&t| (fill[t], t));
        match best {
            Some(t) => fill[t] += sizes[u],
            None => {
                greedy_ok = false;
                break;
            }
        }
    }
    if greedy_ok {
        return Some(fill);
    }
    let seat = pack_partial(sizes, caps)?;
    let mut fill = vec![0u32; caps.len()];
    for (u, &t) in seat.iter().enumerate() {
        fill[t] += sizes[u];
    }
    Some(fill)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humans_spread_evenly() {
        assert_eq!(human_seats(&[1, 1, 1, 1], &[5, 5]), Some(vec![2, 2]));
        assert_eq!(human_seats(&[3, 1, 1], &[5, 5]), Some(vec![3, 2]));
        assert_eq!(human_seats(&[1, 1], &[1, 3]), Some(vec![1, 1]));
    }

    #[test]
    fn parties_stay_whole_or_nothing() {
        // Two trios and a duo cannot sit in [4, 4] without splitting one.
        assert_eq!(human_seats(&[3, 3, 2], &[4, 4]), None);
        assert_eq!(human_seats(&[3, 2, 2], &[4, 4]), Some(vec![3, 4]));
        // Greedy puts the duos apart, then a trio has no room: the packing
        // finds 3+1 beside 2+2.
        assert_eq!(
            human_seats(&[2, 2, 3, 1], &[4, 4]).map(|f| f.iter().sum::<u32>()),
            Some(8)
        );
        assert_eq!(human_seats(&[2, 2, 3], &[4, 3]), Some(vec![4, 3]));
    }
}
