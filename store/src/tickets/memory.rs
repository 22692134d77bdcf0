//! Tickets in process memory, for `matchplane dev` and tests; the player
//! check asks the (memory) pool store it is built over.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;

use super::{
    search_of, CreateTicketError, Hold, StartSearchError, Ticket, TicketStart, TicketStore,
    RECORD_GRACE,
};
use crate::pool::{wall_clock, AddSearchError, ModeKey, PoolError, PoolStore};

/// Tickets kept in a map; records past their grace are pruned on insert.
pub struct MemoryTicketStore {
    pool: Arc<dyn PoolStore>,
    /// Each record and the wall-clock Unix second it is kept until (its
    /// expiry plus [`RECORD_GRACE`], measured from its creation as Redis
    /// measures a key's time to live): no read finds it after that.
    tickets: Mutex<HashMap<(String, String), (Ticket, f64)>>,
    /// Per project, its pending tickets' expiries by ticket id.
    pending: Mutex<HashMap<String, HashMap<String, f64>>>,
    /// (projectId, ticketId) → Unix seconds until which the record is
    /// kept whatever its expiry ([`TicketStore::keep_until`]).
    kept: Mutex<HashMap<(String, String), f64>>,
    /// (projectId, ticketId) → expiry of each ticket a search was started
    /// with ([`TicketStore::started`]); those expired are pruned as the
    /// records are.
    started: Mutex<HashMap<(String, String), f64>>,
}

impl MemoryTicketStore {
    /// An empty store whose player check reads `pool`.
    pub fn new(pool: Arc<dyn PoolStore>) -> Self {
        Self {
            pool,
            tickets: Mutex::default(),
            pending: Mutex::default(),
            kept: Mutex::default(),
            started: Mutex::default(),
        }
    }
}

#[async_trait]
impl TicketStore for MemoryTicketStore {
    async fn create_within(
        &self,
        ticket: &Ticket,
        now: f64,
        max_pending: Option<u64>,
    ) -> Result<(), CreateTicketError> {
        let mode = ModeKey::new(&ticket.project_id, &ticket.game_mode);
        if let Some(ticket_id) = self
            .pool
            .live_ticket_of_player(&mode, &ticket.player_id)
            .await?
        {
            return Err(CreateTicketError::PlayerAlreadySearching {
                ticket_id,
                game_mode: ticket.game_mode.clone(),
            });
        }
        {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            let project = pending.entry(ticket.project_id.clone()).or_default();
            project.retain(|_, expires_at| *expires_at > now);
            if let Some(limit) = max_pending {
                if project.len() as u64 >= limit {
                    return Err(CreateTicketError::LimitExceeded { limit });
                }
            }
            project.insert(ticket.ticket_id.clone(), ticket.expires_at);
        }
        let mut tickets = self.tickets.lock().unwrap_or_else(PoisonError::into_inner);
        if tickets.len() % 1024 == 1023 {
            let grace = RECORD_GRACE.as_secs_f64();
            let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            kept.retain(|_, until| *until > now);
            tickets.retain(|key, (t, _)| t.expires_at + grace > now || kept.contains_key(key));
            let mut started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
            started.retain(|_, expires_at| *expires_at > now);
        }
        let until = wall_clock() + (ticket.expires_at - now) + RECORD_GRACE.as_secs_f64();
        tickets.insert(
            (ticket.project_id.clone(), ticket.ticket_id.clone()),
            (ticket.clone(), until),
        );
        Ok(())
    }

    async fn party_members(
        &self,
        project_id: &str,
        party_id: &str,
    ) -> Result<Option<Vec<String>>, PoolError> {
        // A scan: the embedded store serves one machine's development.
        let tickets = self.tickets.lock().unwrap_or_else(PoisonError::into_inner);
        let mut members: Vec<String> = tickets
            .iter()
            .filter(|((project, _), _)| project == project_id)
            .filter_map(|(_, (t, _))| t.party.as_ref())
            .filter(|p| p.id.as_str() == party_id)
            .flat_map(|p| p.members.iter().cloned())
            .collect();
        members.sort_unstable();
        members.dedup();
        Ok((!members.is_empty()).then_some(members))
    }

    async fn revoke_unstarted(&self, ticket: &Ticket) -> Result<bool, PoolError> {
        let key = (ticket.project_id.clone(), ticket.ticket_id.clone());
        let mode = ModeKey::new(&ticket.project_id, &ticket.game_mode);
        if self
            .started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains_key(&key)
            || !self
                .pool
                .revoke_ticket(&mode, &ticket.ticket_id, ticket.expires_at)
                .await?
        {
            return Ok(false);
        }
        self.tickets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key);
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(project) = pending.get_mut(&ticket.project_id) {
            project.remove(&ticket.ticket_id);
        }
        Ok(true)
    }

    async fn pending(&self, project_id: &str, now: f64) -> Result<u64, PoolError> {
        let pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(pending.get(project_id).map_or(0, |project| {
            project
                .values()
                .filter(|expires_at| **expires_at > now)
                .count() as u64
        }))
    }

    async fn started(&self, project_id: &str, ticket_id: &str) -> Result<bool, PoolError> {
        let key = (project_id.to_owned(), ticket_id.to_owned());
        let started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(started.contains_key(&key))
    }

    async fn get(&self, project_id: &str, ticket_id: &str) -> Result<Option<Ticket>, PoolError> {
        let key = (project_id.to_owned(), ticket_id.to_owned());
        let now = wall_clock();
        // Past its keep, a record reads as gone (as a Redis key past its
        // time to live), whether or not an insert has pruned it yet.
        let kept = {
            let kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
            kept.get(&key).is_some_and(|until| *until > now)
        };
        let tickets = self.tickets.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(tickets
            .get(&key)
            .filter(|(_, until)| kept || *until > now)
            .map(|(t, _)| t.clone()))
    }

    async fn keep_until(
        &self,
        project_id: &str,
        ticket_ids: &[String],
        until: f64,
    ) -> Result<(), PoolError> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        for ticket_id in ticket_ids {
            let at = kept
                .entry((project_id.to_owned(), ticket_id.clone()))
                .or_insert(until);
            *at = at.max(until);
        }
        Ok(())
    }

    async fn start_search(&self, start: &TicketStart<'_>) -> Result<Ticket, StartSearchError> {
        // Two steps, as no round trip is saved in memory: the pool's add is
        // atomic on its own, and a ticket never changes once stored.
        let ticket = self.get(&start.mode.project_id, start.ticket_id).await;
        let ticket = ticket.map_err(|e| StartSearchError::Add(e.into()))?;
        let deadline = start.check(ticket.as_ref())?;
        let ticket = ticket.ok_or(StartSearchError::TicketInvalid)?;
        let added = self
            .pool
            .add_search_scoped(
                start.mode,
                &search_of(&ticket, start.now),
                deadline,
                start.max_live,
                start.scope,
                matches!(start.hold, Hold::Socket { .. }),
            )
            .await;
        match added {
            // Revoked after it was read above (`revoke_unstarted`).
            Err(AddSearchError::TicketRevoked) => return Err(StartSearchError::TicketInvalid),
            other => other?,
        }
        let key = (ticket.project_id.clone(), ticket.ticket_id.clone());
        self.started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key, ticket.expires_at);
        let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(project) = pending.get_mut(&ticket.project_id) {
            project.remove(&ticket.ticket_id);
            if project.is_empty() {
                pending.remove(&ticket.project_id);
            }
        }
        Ok(ticket)
    }

    async fn ping(&self) -> Result<(), PoolError> {
        Ok(())
    }

    fn live_store(&self) -> &'static str {
        "in-process"
    }
}
