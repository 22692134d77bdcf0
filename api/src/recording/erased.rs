//! Players erased a moment ago (docs/retention.md, "Erasing a player"):
//! the rows of theirs still queued for the recording, such as the cancel
//! of the search the erasure itself ended, are dropped by the writer
//! instead of being stored after the erasure deleted their recorded
//! events.

use matchplane_store::repos::recordings::NewRecording;
use moka::sync::Cache;
use std::time::Duration;

/// How long an erased player's rows are dropped: far longer than a row
/// waits in the queue.
const KEEP: Duration = Duration::from_secs(60);

/// Erasures remembered at most at once (each for [`KEEP`]).
const MOST: u64 = 100_000;

/// The keyed hashes of players erased within [`KEEP`].
pub(super) struct Erased {
    hashes: Cache<String, ()>,
}

impl Default for Erased {
    fn default() -> Self {
        Self {
            hashes: Cache::builder()
                .time_to_live(KEEP)
                .max_capacity(MOST)
                .build(),
        }
    }
}

impl std::fmt::Debug for Erased {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Erased").finish_non_exhaustive()
    }
}

impl Erased {
    /// Drops, from now on, the rows whose player hash is among `hashes`.
    pub(super) fn add(&self, hashes: &[String]) {
        for hash in hashes {
            self.hashes.insert(hash.clone(), ());
        }
    }

    /// Takes the rows of erased players out of `batch`.
    pub(super) fn take_out(&self, batch: &mut Vec<NewRecording>) {
        batch.retain(|row| !self.hashes.contains_key(&row.player_hash));
    }
}

#[cfg(test)]
mod tests {
    use super::Erased;
    use matchplane_store::repos::recordings::{Kind, NewRecording};

    #[test]
    fn an_erased_players_queued_rows_are_taken_out() {
        let erased = Erased::default();
        let row = |hash: &str| NewRecording::event("prj_1", "duel", Kind::Cancel, hash.into(), 1);
        let mut batch = vec![row("a"), row("b"), row("a")];
        erased.take_out(&mut batch);
        assert_eq!(batch.len(), 3);
        erased.add(&["a".to_owned()]);
        erased.take_out(&mut batch);
        let left: Vec<&str> = batch.iter().map(|r| r.player_hash.as_str()).collect();
        assert_eq!(left, ["b"]);
    }
}
