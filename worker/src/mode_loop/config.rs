//! The config a mode's cycle runs on (docs/game-modes.md, "Changing a
//! mode"): the one the scheduler listed, the one read last, or a fresh read.

use crate::error::WorkerError;
use crate::modes::{self, ModeConfig};
use crate::worker::{Listed, Shared};
use matchplane_store::pool::ModeKey;
use std::time::{Duration, Instant};

/// The mode's config for the next cycle: the cached one while the
/// scheduler lists the mode at its revision and its listing is fresh (unless
/// `replaced`: the last cycle found the mode changed since), otherwise
/// read from the database (the deleted mode is `Ok(None)`).
pub(super) async fn config_for_cycle(
    shared: &Shared,
    key: &ModeKey,
    cached: &Option<(ModeConfig, Instant)>,
    listed: Listed,
    replaced: bool,
) -> Result<Option<ModeConfig>, WorkerError> {
    if let Listed::At {
        version,
        config: read,
    } = listed
    {
        if shared.listing_fresh() && !replaced {
            if let Some(config) = read.filter(|c| c.is_at(&version)) {
                return Ok(Some(config.as_ref().clone()));
            }
            if let Some((config, _)) = cached.as_ref().filter(|(c, _)| c.is_at(&version)) {
                return Ok(Some(config.clone()));
            }
        }
    }
    let ttl = shared.config.lease_ttl;
    let last = cached.as_ref().map(|(config, _)| config.clone());
    // Bounded: the lease is not renewed meanwhile, and a database that
    // does not answer must not hold the mode up.
    let limit = (ttl / 3).max(Duration::from_millis(250));
    tokio::time::timeout(limit, modes::refresh(&shared.db, key, last))
        .await
        .unwrap_or(Err(WorkerError::Timeout("reading the mode")))
}

/// The config last read, if it was read less than `grace` ago.
pub(super) fn known_config(
    cached: Option<&(ModeConfig, Instant)>,
    grace: Duration,
) -> Option<ModeConfig> {
    cached
        .filter(|(_, read_at)| read_at.elapsed() < grace)
        .map(|(config, _)| config.clone())
}
