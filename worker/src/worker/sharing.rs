//! Telling each mode's loop whether its mode is this worker's share
//! ([`crate::shares`]), also while the scheduler waits on the database: a
//! worker that joins or leaves moves modes at once, even while the
//! database answers nothing (docs/operations.md, "What losing a dependency
//! costs").

use super::ModeChannels;
use crate::db_wait::{within, LISTING_LIMIT};
use crate::error::WorkerError;
use matchplane_store::pool::ModeKey;
use std::collections::HashMap;
use std::future::Future;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The live workers the loops were last told their shares over.
#[derive(Debug, Default)]
pub(super) struct Sharing {
    pub(super) over: Vec<String>,
}

impl Sharing {
    /// Tells every loop of `channels` whether its mode is `me`'s among
    /// `workers`, when those differ from the workers the shares were last
    /// computed over (a changed mode's share is told with its change).
    pub(super) fn apply(
        &mut self,
        me: &str,
        workers: &[String],
        channels: &HashMap<ModeKey, ModeChannels>,
    ) {
        if self.over == workers {
            return;
        }
        for (key, sender) in channels {
            let mine = crate::shares::owner(workers, key) == Some(me);
            sender
                .mine
                .send_if_modified(|m| std::mem::replace(m, mine) != mine);
        }
        self.over = workers.to_vec();
    }
}

/// What the scheduler needs to keep the shares told while it waits.
pub(super) struct Watch<'a> {
    pub(super) me: &'a str,
    pub(super) views: &'a mut watch::Receiver<Vec<String>>,
    pub(super) sharing: &'a mut Sharing,
    pub(super) channels: &'a HashMap<ModeKey, ModeChannels>,
    pub(super) shutdown: &'a CancellationToken,
}

impl Watch<'_> {
    /// `call`'s result (a database call of the scheduler, cut at
    /// [`LISTING_LIMIT`]: a connection that stopped answering is not waited
    /// on for ever), telling the loops of every membership change
    /// meanwhile; `None` on shutdown.
    pub(super) async fn listing<T>(
        &mut self,
        what: &'static str,
        call: impl Future<Output = Result<T, WorkerError>>,
    ) -> Option<Result<T, WorkerError>> {
        let call = within(LISTING_LIMIT, what, call);
        tokio::pin!(call);
        let mut watching = true;
        loop {
            tokio::select! {
                done = &mut call => return Some(done),
                () = self.shutdown.cancelled() => return None,
                changed = self.views.changed(), if watching => {
                    if changed.is_err() {
                        watching = false;
                        continue;
                    }
                    let workers = self.views.borrow_and_update().clone();
                    self.sharing.apply(self.me, &workers, self.channels);
                }
            }
        }
    }
}
