//! `needed` of a searching status (docs/searching.md#statuses): the seats of the smallest
//! match a candidate's wait allows now. (`found` comes from the cycle's own
//! tries, see [`crate::grouping::Grouper::found`].)

use crate::config::GameModeConfig;

/// Seats of the smallest match `config` allows a candidate of `seats`
/// players (its party's, 1 for a solo) that has waited `wait_seconds`: the
/// base shape's; a relaxed shape's once its `afterSeconds` has passed and,
/// with `keepTogether`, one of its teams holds the whole party; `minTeams
/// × min` once a flexible shape settles; `minHumans` once bots apply.
pub fn needed(config: &GameModeConfig, wait_seconds: f64, seats: u32) -> u32 {
    let mut needed = config.match_size();
    for step in &config.relaxations {
        if wait_seconds >= step.after_seconds && seats_party(config, &step.match_shape, seats) {
            needed = needed.min(step.match_shape.iter().sum());
        }
    }
    if let Some(flex) = config.match_shape.flexible() {
        if wait_seconds >= flex.settle_after() {
            needed = needed.min(flex.min_teams().saturating_mul(flex.team_size.min));
        }
    }
    if let Some(bots) = &config.bots {
        if wait_seconds >= bots.fill_after_seconds {
            needed = needed.min(bots.min_humans);
        }
    }
    needed
}

/// Whether a team of `shape` seats a party of `seats` players whole as
/// `config` wants it: always without `keepTogether` (the party may be
/// split), else when its largest team holds it.
pub fn seats_party(config: &GameModeConfig, shape: &[u32], seats: u32) -> bool {
    !config.parties.keep_together || shape.iter().any(|team| *team >= seats)
}
