//! Players erased a moment ago (docs/retention.md, "Erasing a player"):
//! the rows of theirs still queued for the recording, such as the cancel
//! of the search the erasure itself ended, are dropped by the writer
//! instead of being stored after the erasure deleted their recorded
//! events.

use matchplane_store::repos::recordings::NewRecording;
use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long an erased player's rows are dropped: far longer than a row
/// waits in the queue.
const KEEP: Duration = Duration::from_secs(60);

/// The keyed hashes of players erased within [`KEEP`].
#[derive(Debug, Default)]
pub(super) struct Erased {
    hashes: Mutex<HashMap<String, Instant>>,
}

impl Erased {
    /// Drops, from now on, the rows whose player hash is among `hashes`.
    pub(super) fn add(&self, hashes: &[String]) {
        let now = Instant::now();
        let mut erased = self.hashes.lock().unwrap_or_else(PoisonError::into_inner);
        erased.retain(|_, at| now.duration_since(*at) < KEEP);
        for hash in hashes {
            erased.insert(hash.clone(), now);
        }
    }

    /// Takes the rows of erased players out of `batch`.
    pub(super) fn take_out(&self, batch: &mut Vec<NewRecording>) {
        let erased = self.hashes.lock().unwrap_or_else(PoisonError::into_inner);
        if erased.is_empty() {
            return;
        }
        let now = Instant::now();
        batch.retain(|row| {
            erased
                .get(&row.player_hash)
                .is_none_or(|at| now.duration_since(*at) >= KEEP)
        });
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
