//! A WebSocket search started but not yet taken over by its socket
//! (docs/searching.md): dropped armed, it ends the search as cancelled.

use crate::play::start::Started;
use crate::play::status::end;
use crate::play::Play;
use matchplane_store::pool::EndOutcome;
use matchplane_store::tickets::Ticket;
use std::sync::Arc;

/// Ends the search of its start when dropped before [`Armed::disarm`]: the
/// request's future was dropped (cut at the request's deadline while the
/// status subscription waited, say) after the search was added, which would
/// otherwise leave it waiting, and matched, with no socket to tell.
pub(super) struct Armed {
    armed: Option<(Arc<Play>, Ticket)>,
}

impl Armed {
    /// Arms the search `started` began.
    pub(super) fn new(play: &Arc<Play>, started: &Started) -> Self {
        Self {
            armed: Some((Arc::clone(play), started.ticket.clone())),
        }
    }

    /// The socket's handler takes the search over.
    pub(super) fn disarm(mut self) {
        self.armed = None;
    }
}

impl Drop for Armed {
    fn drop(&mut self) {
        let Some((play, ticket)) = self.armed.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            tracing::info!(ticket_id = %ticket.ticket_id, project_id = %ticket.project_id,
                game_mode = %ticket.game_mode,
                "a WebSocket search start was dropped before its socket: cancelled");
            runtime.spawn(async move {
                let _ = end(&play, &ticket, EndOutcome::Cancelled).await;
            });
        }
    }
}
