//! The WebSocket searches this process holds, for a graceful stop
//! (docs/deployment.md, "Scaling"). When the server stops, each
//! open socket ends its search cancelled and closes with 1001 (going
//! away), so that its client searches again with the same ticket, on
//! another instance or on this one restarted. Without it a stopping
//! process dropped its sockets unannounced and their searches stayed live
//! with nobody to tell: matched into matches their players never heard
//! of, and refusing the ticket's next search (`SEARCH_ALREADY_ACTIVE`)
//! until the ticket expired.

use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tokio_util::task::task_tracker::TrackedFuture;
use tokio_util::task::TaskTracker;

/// The open sockets' stop signal and their tasks.
#[derive(Debug, Default)]
pub struct Sockets {
    stopping: CancellationToken,
    tasks: TaskTracker,
}

impl Sockets {
    /// `socket` (one socket's task), tracked until it ends.
    pub fn track<F: Future>(&self, socket: F) -> TrackedFuture<F> {
        self.tasks.track_future(socket)
    }

    /// The signal a socket's task waits on beside its client: cancelled
    /// when the server stops.
    pub fn stopping(&self) -> CancellationToken {
        self.stopping.clone()
    }

    /// Tells every open socket to stop and waits up to `grace` for their
    /// tasks. Returns how many were still running when `grace` ran out (a
    /// store that does not answer); a socket opened after this stops at
    /// once.
    pub async fn stop(&self, grace: Duration) -> usize {
        self.stopping.cancel();
        self.tasks.close();
        match tokio::time::timeout(grace, self.tasks.wait()).await {
            Ok(()) => 0,
            Err(_) => self.tasks.len(),
        }
    }
}
