//! The outbox consumer (docs/architecture.md): takes match records from a mode's Redis
//! outbox, stores each match in the database (idempotent on the match id)
//! with its webhook delivery and its tickets (`match_tickets`, each with
//! its token hash, read from the ticket store) in the same transaction, tells each matched
//! search's client, and only then acknowledges the entries. An entry that
//! cannot be read as a match is kept in `outbox_dead_letters` (same
//! transaction), logged at error level and counted
//! ([`crate::metrics::DEAD_LETTERS`]) before it is acknowledged.
//!
//! Killed between any two of those steps, the entries stay pending in the
//! outbox and another consumer takes them over after the idle time
//! ([`crate::WorkerConfig::outbox_min_idle`]): the match and its delivery
//! are stored once (the inserts do nothing the second time), a client may be
//! told twice, and no search is matched twice (the claim took it).

use crate::db_wait::{within, STORE_LIMIT};
use crate::error::WorkerError;
use chrono::{DateTime, Utc};
use futures::stream::{self, StreamExt};
use matchplane_store::entities::{match_, match_ticket, outbox_dead_letter, webhook_delivery};
use matchplane_store::pool::closed::CancelledProposal;
use matchplane_store::pool::{ModeKey, OutboxEntry, PoolStore};
use matchplane_store::repos::deliveries;
use matchplane_store::repos::{backfills, dead_letters, match_tickets, matches, StoreError};
use matchplane_store::tickets::{publish, StatusMessage, TicketStore};
use matchplane_webhook::{Event, EventType, MatchMade, Message};
use sea_orm::{DatabaseConnection, TransactionTrait};
use std::collections::HashMap;
use std::time::Duration;

mod entry;

pub(crate) use entry::match_row;
use entry::{dead_letter, parse, prepare};

/// How long past a failed attempt to store a match its tickets' records are
/// kept at least (one hour; every later attempt pushes it out again).
pub const KEEP_UNSTORED: Duration = Duration::from_secs(3600);

/// The outbox record of a match, in the form of its `match.made` webhook
/// body; the body signed and sent is this record with `madeAt` and each
/// player's `data`, encoded once when the match is stored.
///
/// Takes the body, which it would otherwise copy: a cycle encodes one per
/// match.
///
/// # Errors
/// [`WorkerError::Corrupt`] if the body cannot be serialised.
pub fn encode(body: MatchMade) -> Result<String, WorkerError> {
    let message =
        Message::match_made(body).map_err(|e| WorkerError::Corrupt(format!("match body: {e}")))?;
    String::from_utf8(message.body).map_err(|e| WorkerError::Corrupt(e.to_string()))
}

/// The delivery id of a match's webhook: derived from the match id so that
/// a record handed over twice queues one delivery.
pub fn delivery_id(match_id: &str) -> String {
    format!("dlv_{}", match_id.strip_prefix("mat_").unwrap_or(match_id))
}

/// The outbox consumer: what it needs to record a mode's outbox.
#[derive(Clone, Copy)]
pub struct OutboxConsumer<'a> {
    /// The pool store (outbox, status channels).
    pub pool: &'a dyn PoolStore,
    /// The database.
    pub db: &'a DatabaseConnection,
    /// The ticket store, whose records give each seated ticket's token hash
    /// to keep with the match (`match_tickets`).
    pub tickets: &'a dyn TicketStore,
    /// This consumer's name.
    pub consumer: &'a str,
    /// Entries per batch.
    pub batch: usize,
    /// Idle time after which another consumer's entry is taken over.
    pub min_idle: Duration,
    /// Status publishes in flight at once.
    pub concurrency: usize,
    /// Records the stored matches' players as `matched` in modes that
    /// record; `None` records none.
    pub ends: Option<&'a crate::recordings::EndRecorder>,
    /// The mode's config version when it has acceptance: a made record of
    /// that version is a proposal's. Its row, when the cycle that held it
    /// could not store it (the database out of reach), is stored
    /// `proposed` first and made by the same batch, so that it keeps its
    /// answers and counts in the lifecycle figures as any made proposal.
    /// `None`: such a row is stored as a match made without a proposal.
    pub proposals_of: Option<i64>,
}

impl OutboxConsumer<'_> {
    /// Records `mode`'s outbox until it is empty (or `max_batches` batches
    /// were done), queueing a webhook for each match if `webhook` is set.
    /// Returns the number of entries acknowledged.
    ///
    /// # Errors
    /// A pool store or database failure; what was not acknowledged stays in
    /// the outbox for a later drain.
    pub async fn drain(
        &self,
        mode: &ModeKey,
        webhook: bool,
        now: DateTime<Utc>,
        max_batches: usize,
    ) -> Result<usize, WorkerError> {
        let mut done = 0;
        for _ in 0..max_batches {
            let entries = self
                .pool
                .read_outbox(mode, self.consumer, self.batch, self.min_idle)
                .await?;
            if entries.is_empty() {
                break;
            }
            done += self.record_batch(mode, &entries, webhook, now).await?;
        }
        Ok(done)
    }

    /// Stores, notifies and acknowledges one batch of `mode`'s outbox
    /// entries (as [`PoolStore::read_outbox`] handed them over). A batch
    /// handed over again (its consumer died before acknowledging it) stores
    /// nothing twice. Storing the batch waits for the database at most
    /// [`STORE_LIMIT`] (docs/operations.md, "What losing a dependency
    /// costs"); a batch it did not store stays in the outbox for a later
    /// attempt, and its tickets' records are kept for [`KEEP_UNSTORED`].
    ///
    /// # Errors
    /// A pool store or database failure, or a database that did not answer
    /// in time; the entries stay unacknowledged.
    pub async fn record_batch(
        &self,
        mode: &ModeKey,
        entries: &[OutboxEntry],
        webhook: bool,
        now: DateTime<Utc>,
    ) -> Result<usize, WorkerError> {
        let mut seat_ids = Vec::new();
        // Boxed: the batch's future is large for a worker thread's stack.
        let store = Box::pin(self.store_batch(mode, entries, webhook, now, &mut seat_ids));
        let notices = match within(STORE_LIMIT, "storing the claimed matches", store).await {
            Ok(notices) => notices,
            Err(err) => {
                self.keep_records(mode, &seat_ids, now).await;
                return Err(err);
            }
        };
        let pool = self.pool;
        let futures: Vec<_> = notices
            .iter()
            .map(|(ticket, message)| publish(pool, ticket, message))
            .collect();
        stream::iter(futures)
            .buffer_unordered(self.concurrency.max(1))
            .collect::<Vec<()>>()
            .await;
        let ids: Vec<String> = entries.iter().map(|e| e.id.clone()).collect();
        self.pool.ack_outbox(mode, &ids).await?;
        Ok(entries.len())
    }

    /// Stores one batch of `mode`'s outbox entries at `now` (matches,
    /// tickets, deliveries if `webhook`, backfills, proposals' statuses,
    /// dead letters, fills) and returns the status messages to send. The
    /// seated tickets' ids go to `seat_ids` before the first call out.
    ///
    /// # Errors
    /// A pool store or database failure.
    async fn store_batch(
        &self,
        mode: &ModeKey,
        entries: &[OutboxEntry],
        webhook: bool,
        now: DateTime<Utc>,
        seat_ids: &mut Vec<String>,
    ) -> Result<Vec<(String, StatusMessage)>, WorkerError> {
        let mut matches = Vec::with_capacity(entries.len());
        let mut autos = Vec::new();
        let mut deliveries = Vec::new();
        let mut notices = Vec::new();
        let mut dead = Vec::new();
        let mut parsed = Vec::with_capacity(entries.len());
        let mut fill_seats_of = Vec::new();
        let mut fills = Vec::new();
        let mut cancelled = Vec::new();
        for entry in entries {
            // A cancelled proposal's closing: its row's status and answers.
            if let Some(closed) = CancelledProposal::parse(&entry.record_json) {
                cancelled.push(closed);
                continue;
            }
            if let Ok(Event::Backfilled(body)) = serde_json::from_str::<Event>(&entry.record_json) {
                let fill = crate::backfill::PreparedFill::new(body, entry.record_json.clone());
                fill_seats_of.extend(fill.seats());
                fills.push(fill);
                continue;
            }
            // A record that cannot be read can never be stored as a match;
            // holding it would stop every later match of the mode, dropping
            // it would lose it. It is kept as a dead letter, in the same
            // transaction as the rest of the batch, and acknowledged with it.
            match parse(entry) {
                Ok(body) => parsed.push((entry, body)),
                Err(err) => dead.push(dead_letter(mode, entry, &err, now)),
            }
        }
        let seats: Vec<(String, String)> = parsed
            .iter()
            .flat_map(|(_, body)| {
                body.teams
                    .iter()
                    .flat_map(|team| &team.players)
                    .map(|player| (player.ticket_id.clone(), body.match_id.clone()))
            })
            .chain(fill_seats_of)
            .collect();
        let fill_ticket_ids: std::collections::HashSet<String> = fills
            .iter()
            .flat_map(|fill| fill.seats().into_iter().map(|(ticket, _)| ticket))
            .collect();
        seat_ids.extend(seats.iter().map(|(ticket, _)| ticket.clone()));
        // Each event type queued only when the mode's endpoint sends it (a
        // project endpoint's `eventTypes`, docs/webhooks.md).
        let made_hook = if webhook {
            Box::pin(crate::modes::queues(self.db, mode, EventType::MatchMade)).await
        } else {
            None
        };
        let matched_players: Vec<String> = match self.ends {
            Some(_) => parsed
                .iter()
                .flat_map(|(_, body)| body.teams.iter().flat_map(|team| &team.players))
                .map(|player| player.player_id.clone())
                .collect(),
            None => Vec::new(),
        };
        let seated = self.seated(mode, seats).await?;
        // Each seated ticket's `data`, from its record: never in the pool
        // (docs/architecture.md#where-each-rule-lives), so the claim's record does not carry it.
        let data: HashMap<String, String> = seated
            .iter()
            .filter_map(|row| Some((row.ticket_id.clone(), row.data.clone()?)))
            .collect();
        for (entry, body) in parsed {
            let proposal = (self.proposals_of == Some(body.game_mode_version)).then(|| {
                let players = body.teams.iter().flat_map(|t| &t.players);
                players.map(|p| p.ticket_id.to_string()).collect::<Vec<_>>()
            });
            match prepare(mode, body, &data, made_hook, now) {
                Ok(mut prepared) => {
                    // Inserted only when absent: a stored proposal's row
                    // stays as it is. Either way `apply` makes it below.
                    if let Some(tickets) = proposal {
                        let tickets = tickets.iter().map(String::as_str);
                        prepared.row = crate::match_status::as_proposed(prepared.row, tickets);
                    }
                    autos.extend(prepared.auto);
                    matches.push(prepared.row);
                    deliveries.extend(prepared.delivery);
                    notices.extend(prepared.notices);
                }
                Err(err) => dead.push(dead_letter(mode, entry, &err, now)),
            }
        }
        // The fills' tickets are stored with their fills, after the batch.
        let fill_seats: Vec<match_ticket::Model> = seated
            .iter()
            .filter(|row| fill_ticket_ids.contains(row.ticket_id.as_str()))
            .cloned()
            .collect();
        let stored: std::collections::HashSet<&str> =
            matches.iter().map(|row| row.id.as_str()).collect();
        let seated: Vec<_> = seated
            .into_iter()
            .filter(|row| stored.contains(row.match_id.as_str()))
            .collect();
        let dead_count = dead.len();
        let made: Vec<String> = matches.iter().map(|row| row.id.clone()).collect();
        // `backfill.auto`: each request's row is stored with its match, and
        // opened in the pool store if the claim's worker did not get to it.
        let autos = self.autos(mode, &autos, now).await?;
        let reopen = self.store(matches, seated, deliveries, dead, autos).await?;
        crate::match_status::apply(self.db, mode, &made, &cancelled, now).await?;
        if let Some(ends) = self.ends {
            ends.matched(
                mode,
                matched_players.iter().map(String::as_str),
                now.timestamp_millis(),
            )
            .await;
        }
        for view in &reopen {
            self.pool.open_backfill(mode, view).await?;
        }
        // Fills after the batch's matches: a fill's match is stored by then
        // (its record was claimed before the fill's).
        let fill_hook = webhook
            && !fills.is_empty()
            && Box::pin(crate::modes::queues(
                self.db,
                mode,
                EventType::MatchBackfilled,
            ))
            .await
            .is_some();
        crate::backfill::store_fills(self.pool, self.db, mode, fills, &fill_seats, fill_hook, now)
            .await?;
        if dead_count > 0 {
            crate::metrics::dead_lettered(mode, dead_count);
        }
        Ok(notices)
    }

    /// The `match_tickets` rows of `seats` (ticket id, match id): each
    /// ticket's token hash and expiry from its record in the ticket store.
    /// A ticket whose record is gone already gets no row.
    ///
    /// # Errors
    /// A ticket store failure.
    async fn seated(
        &self,
        mode: &ModeKey,
        seats: Vec<(String, String)>,
    ) -> Result<Vec<match_ticket::Model>, WorkerError> {
        let tickets = self.tickets;
        let project = mode.project_id.as_str();
        let reads: Vec<_> = seats
            .into_iter()
            .map(|(ticket_id, match_id)| async move {
                let ticket = tickets.get(project, &ticket_id).await?;
                Ok::<_, WorkerError>(ticket.map(|t| match_ticket::Model {
                    ticket_id,
                    match_id,
                    project_id: t.project_id,
                    game_mode: t.game_mode,
                    player_id: t.player_id,
                    created_at: t.created_at,
                    token_hash: t.token_hash,
                    expires_at: t.expires_at,
                    data: t.attributes.data.map(|d| d.get().to_owned()),
                }))
            })
            .collect();
        let rows: Vec<_> = stream::iter(reads)
            .buffer_unordered(self.concurrency.max(1))
            .collect()
            .await;
        let asked = rows.len();
        let rows: Vec<match_ticket::Model> = rows
            .into_iter()
            .filter_map(Result::transpose)
            .collect::<Result<_, _>>()?;
        if rows.len() < asked {
            // Their records were lost with Redis data (docs/operations.md,
            // "What losing a dependency costs"): those players' tokens are
            // no longer known, and they read their match from the studio.
            tracing::warn!(game_mode = %mode.mode, lost = asked - rows.len(),
                "seated tickets without a record: their players cannot read the match with their token");
        }
        Ok(rows)
    }

    /// Keeps the ticket records of `ticket_ids` for [`KEEP_UNSTORED`] from
    /// `now`: their matches could not be stored, and their players read
    /// `MATCH_PENDING` until they are, however long that takes (each failed
    /// attempt pushes the records' expiry out again). A failure is logged:
    /// the store's own failure is the one returned.
    async fn keep_records(&self, mode: &ModeKey, ticket_ids: &[String], now: DateTime<Utc>) {
        let tickets = self.tickets;
        let until = now.timestamp() as f64 + KEEP_UNSTORED.as_secs_f64();
        if let Err(error) = tickets
            .keep_until(&mode.project_id, ticket_ids, until)
            .await
        {
            tracing::warn!(%error, game_mode = %mode.mode, "keeping unstored matches' tickets failed");
        }
    }

    /// The automatic backfills of the matches `bodies`.
    async fn autos(
        &self,
        mode: &ModeKey,
        bodies: &[MatchMade],
        now: DateTime<Utc>,
    ) -> Result<Vec<crate::backfill::AutoBackfill>, WorkerError> {
        let mut autos = Vec::with_capacity(bodies.len());
        for body in bodies {
            let auto = crate::backfill::prepare_auto(self.pool, self.db, mode, body, now);
            autos.extend(auto.await?);
        }
        Ok(autos)
    }

    /// Inserts the matches, their tickets, their deliveries, their
    /// automatic backfills' rows and the dead letters in one transaction;
    /// rows already there are left alone. Returns the automatic backfills
    /// to open in the pool store.
    async fn store(
        &self,
        matches: Vec<match_::Model>,
        seated: Vec<match_ticket::Model>,
        deliveries: Vec<webhook_delivery::Model>,
        dead: Vec<outbox_dead_letter::Model>,
        autos: Vec<crate::backfill::AutoBackfill>,
    ) -> Result<Vec<matchplane_matchmaker::OpenBackfill>, WorkerError> {
        let (rows, reopen): (Vec<_>, Vec<_>) = autos.into_iter().map(|a| (a.row, a.reopen)).unzip();
        let txn = self.db.begin().await.map_err(StoreError::from)?;
        matches::insert_if_absent(&txn, matches).await?;
        match_tickets::insert_if_absent(&txn, seated).await?;
        deliveries::queue_if_absent(&txn, deliveries).await?;
        backfills::open_if_absent(&txn, rows).await?;
        dead_letters::keep(&txn, dead).await?;
        txn.commit().await.map_err(StoreError::from)?;
        Ok(reopen.into_iter().flatten().collect())
    }
}
