//! Starting a search from a stored ticket: the ticket's record is read (it
//! sits under no hash tag, see `keys::ticket_key`), checked against the
//! token, and its pool entry spliced from it, then the search is added like
//! any other (`searches::add_entry`).

use super::keys::ticket_key;
use super::live::Admission;
use super::searches::AddEntry;
use super::RedisPoolStore;
use crate::pool::{AddSearchError, PlayerSearchScope, PoolError};
use crate::tickets::{StartSearchError, Ticket, TicketStart};

/// The pool entry of a ticket's stored record `json` started at `now` (its
/// serde text): the record's fields up to `,"projectId":` (the pool entry's
/// own, first in [`Ticket`]'s layout) and `queuedAt`. Splicing keeps serde's
/// number formatting byte for byte. `None` if the record is not laid out so
/// (its first field must be `ticketId`, its second `playerId`).
fn entry_of(json: &str, ticket_id: &str, now: &str) -> Option<String> {
    let head = format!("{{\"ticketId\":\"{ticket_id}\",\"playerId\":\"");
    let cut = json.find(",\"projectId\":")?;
    if !json.starts_with(&head) {
        return None;
    }
    let mut entry = String::with_capacity(cut + now.len() + 14);
    entry.push_str(&json[..cut]);
    entry.push_str(",\"queuedAt\":");
    entry.push_str(now);
    entry.push('}');
    Some(entry)
}

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
            // serde's formatting: the text goes into the pool entry as is.
            let now = serde_json::to_string(&start.now).map_err(|e| corrupt(e.to_string()))?;
            let json = json.unwrap_or_default();
            let entry = entry_of(&json, start.ticket_id, &now).ok_or_else(|| {
                corrupt(format!(
                    "ticket {} is not laid out as a pool entry needs",
                    start.ticket_id
                ))
            })?;
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
            pending: true,
        };
        match early {
            Some(admission) => self.add_admitted(start.mode, &add, admission).await?,
            None => self.add_entry(start.mode, &add).await?,
        }
        Ok(ticket)
    }
}

#[cfg(test)]
mod tests {
    use super::entry_of;

    #[test]
    fn the_entry_is_the_records_head_and_queued_at() {
        let json = r#"{"ticketId":"tkt_1","playerId":"ana","mmr":1500.25,"projectId":"prj_1","gameMode":"duel"}"#;
        assert_eq!(
            entry_of(json, "tkt_1", "1700000000.5").as_deref(),
            Some(r#"{"ticketId":"tkt_1","playerId":"ana","mmr":1500.25,"queuedAt":1700000000.5}"#)
        );
        assert_eq!(
            entry_of(json, "tkt_2", "1"),
            None,
            "another ticket's record"
        );
        assert_eq!(entry_of(r#"{"ticketId":"tkt_1"}"#, "tkt_1", "1"), None);
    }
}
