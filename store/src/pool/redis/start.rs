//! Starting a search from a stored ticket: the ticket's record is read (it
//! sits under no hash tag, see `keys::ticket_key`), checked against the
//! token, and its search's pool entry, written once at generation, gets its
//! `queuedAt`; then the search is added like any other
//! (`searches::add_entry`).

use super::keys::ticket_key;
use super::live::Admission;
use super::searches::AddEntry;
use super::RedisPoolStore;
use crate::pool::{AddSearchError, PlayerSearchScope, PoolError};
use crate::tickets::{Hold, StartSearchError, Ticket, TicketStart};
use matchplane_matchmaker::search::SearchEntry;

impl RedisPoolStore {
    /// See [`crate::tickets::TicketStore::start_search`].
    pub(crate) async fn start_from_ticket(
        &self,
        start: &TicketStart<'_>,
    ) -> Result<Ticket, StartSearchError> {
        let corrupt = |what: String| StartSearchError::Add(PoolError::Corrupt(what).into());
        let store = |e: PoolError| StartSearchError::Add(AddSearchError::Store(e));
        let key = ticket_key(self.prefix(), &start.mode.project_id, start.ticket_id);
        let read = async {
            redis::cmd("GET")
                .arg(&key)
                .query_async::<Option<String>>(&mut self.conn())
                .await
                .map_err(|e| store(e.into()))
        };
        // Under the `mode` scope the project's step needs nothing from the
        // record, so both go at once; under `project` it needs the player.
        let (json, early) = if start.scope == PlayerSearchScope::Mode {
            let admit = self.admit(start.mode, start.ticket_id, "", start.max_live, start.scope);
            let (json, admission) = futures::join!(read, admit);
            (json, Some(admission.map_err(store)?))
        } else {
            (read.await, None)
        };
        let ticket = json.and_then(|json| {
            let ticket = json
                .as_deref()
                .map(serde_json::from_str::<Ticket>)
                .transpose()
                .map_err(|e| corrupt(format!("ticket: {e}")))?;
            let deadline = start.check(ticket.as_ref())?;
            let ticket = ticket.ok_or(StartSearchError::TicketInvalid)?;
            let mut entry = SearchEntry::started(ticket.entry(), start.now).ok_or_else(|| {
                corrupt(format!("ticket {} holds no pool entry", start.ticket_id))
            })?;
            if matches!(start.hold, Hold::Socket { .. }) {
                held_by_socket(&mut entry);
            }
            Ok((ticket, deadline, entry))
        });
        let (ticket, deadline, entry) = match ticket {
            Ok(parts) => parts,
            Err(err) => {
                if early.as_ref().is_some_and(Admission::registered) {
                    // The project's step registered the mode for a search
                    // that will not come: measured again.
                    self.sync_live(start.mode).await;
                }
                return Err(err);
            }
        };
        let add = AddEntry {
            ticket_id: start.ticket_id,
            player_id: &ticket.player_id,
            entry: &entry,
            deadline,
            max_live: start.max_live,
            scope: start.scope,
            started: Some(ticket.expires_at),
        };
        let added = match early {
            Some(admission) => self.add_admitted(start.mode, &add, admission).await,
            None => self.add_entry(start.mode, &add).await,
        };
        match added {
            // Revoked after its record was read above (`revoke_unstarted`).
            Err(AddSearchError::TicketRevoked) => Err(StartSearchError::TicketInvalid),
            Err(err) => Err(err.into()),
            Ok(()) => Ok(ticket),
        }
    }
}

/// The end of a pool entry whose search a WebSocket holds: the entry's
/// last field (after `queuedAt`), which the core's parse ignores and the
/// scripts copy into the search's `ended` record (`with_queued_at`).
pub(super) const SOCKET_MARK: &str = ",\"socket\":true}";

/// Marks a started entry (a JSON object's text) as held by a socket.
pub(super) fn held_by_socket(entry: &mut String) {
    if entry.ends_with('}') {
        entry.pop();
        entry.push_str(SOCKET_MARK);
    }
}
