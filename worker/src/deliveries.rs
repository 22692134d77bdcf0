//! The webhook delivery loop (SPEC 6): takes due deliveries from the
//! database, makes one attempt of each with [`Dispatcher::step`] (the
//! per-endpoint cap applies), logs the attempt and schedules the next one.
//!
//! The URL and the signing secrets are read from the mode at each attempt,
//! so a rotation signs with both secrets for its 24 hours and a changed URL
//! is used from the next attempt. The body is the stored payload, the exact
//! bytes of the first attempt.

use crate::error::WorkerError;
use crate::modes;
use chrono::{DateTime, Utc};
use matchplane_store::entities::{webhook_attempt, webhook_delivery};
use matchplane_store::repos::deliveries::{self, AfterAttempt};
use matchplane_store::repos::webhook_health;
use matchplane_store::repos::StoreError;
use matchplane_webhook::dispatcher::failure_text;
use matchplane_webhook::schedule::{Final, NextAction};
use matchplane_webhook::{Attempt, Delivery, Dispatcher, Message, Secret};
use rand::rngs::StdRng;
use rand::SeedableRng;
use sea_orm::DatabaseConnection;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// What one delivery attempt came to.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempted {
    /// The delivery.
    pub delivery_id: String,
    /// The attempt's number (1 for the first).
    pub number: i32,
    /// The HTTP status, if an answer came.
    pub status: Option<u16>,
    /// What follows.
    pub after: AfterAttempt,
}

/// The delivery side of a worker; cheap to clone.
#[derive(Clone)]
pub struct DeliveryWorker {
    db: DatabaseConnection,
    dispatcher: Arc<Dispatcher>,
    lock_for: Duration,
}

impl DeliveryWorker {
    /// Deliveries of `db` sent by `dispatcher`, each locked for `lock_for`
    /// while attempted.
    pub fn new(db: DatabaseConnection, dispatcher: Arc<Dispatcher>, lock_for: Duration) -> Self {
        Self {
            db,
            dispatcher,
            lock_for,
        }
    }

    /// Takes up to `limit` due deliveries and makes one attempt of each,
    /// concurrently, returning how each went. Never sleeps.
    ///
    /// # Errors
    /// A database failure while taking them; a failure of one attempt's
    /// record is logged, its delivery left locked until the lock runs out.
    pub async fn tick(
        &self,
        now: DateTime<Utc>,
        limit: u64,
    ) -> Result<Vec<Attempted>, WorkerError> {
        let taken = self.take(now, limit).await?;
        let mut set = JoinSet::new();
        for row in taken {
            let this = self.clone();
            set.spawn(async move { this.attempt(row).await });
        }
        let mut out = Vec::new();
        while let Some(joined) = set.join_next().await {
            match joined {
                Ok(Ok(attempted)) => out.push(attempted),
                Ok(Err(err)) => tracing::warn!(error = %err, "webhook attempt not recorded"),
                Err(err) => tracing::warn!(error = %err, "webhook task stopped"),
            }
        }
        Ok(out)
    }

    /// Runs until `shutdown`: keeps at most `max_in_flight` attempts going,
    /// each in its own task, so a slow endpoint holds only its own slots.
    pub async fn run(&self, max_in_flight: usize, poll: Duration, shutdown: CancellationToken) {
        let slots = Arc::new(Semaphore::new(max_in_flight.max(1)));
        let mut set = JoinSet::new();
        loop {
            while set.try_join_next().is_some() {}
            let free = slots.available_permits() as u64;
            let taken = if free == 0 {
                Vec::new()
            } else {
                match self.take(Utc::now(), free).await {
                    Ok(rows) => rows,
                    Err(err) => {
                        tracing::warn!(error = %err, "taking due webhook deliveries failed");
                        Vec::new()
                    }
                }
            };
            let idle = taken.is_empty();
            for row in taken {
                let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
                    break;
                };
                let this = self.clone();
                set.spawn(async move {
                    if let Err(err) = this.attempt(row).await {
                        tracing::warn!(error = %err, "webhook attempt not recorded");
                    }
                    drop(permit);
                });
            }
            if idle {
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = tokio::time::sleep(poll) => {}
                }
            } else if shutdown.is_cancelled() {
                break;
            }
        }
        // In-flight attempts finish (each at most its timeout) and are logged.
        while set.join_next().await.is_some() {}
    }

    async fn take(
        &self,
        now: DateTime<Utc>,
        limit: u64,
    ) -> Result<Vec<webhook_delivery::Model>, WorkerError> {
        let lock = chrono::Duration::from_std(self.lock_for)
            .unwrap_or_else(|_| chrono::Duration::seconds(30));
        Ok(deliveries::claim_due(&self.db, now, lock, limit).await?)
    }

    /// Updates the mode's webhook health after an attempt made to its URL.
    /// A failure to write it is logged: the attempt itself is recorded.
    async fn record_health(&self, row: &webhook_delivery::Model, attempt: &Attempt) {
        let written = match failure_text(attempt) {
            None => {
                webhook_health::record_success(
                    &self.db,
                    &row.project_id,
                    &row.game_mode,
                    attempt.sent_at,
                )
                .await
            }
            Some(error) => {
                webhook_health::record_failure(
                    &self.db,
                    &row.project_id,
                    &row.game_mode,
                    attempt.sent_at,
                    &error,
                )
                .await
            }
        };
        if let Err(err) = written {
            tracing::warn!(delivery_id = %row.id, error = %err, "webhook health not recorded");
        }
    }

    /// Makes one attempt of `row` and records it.
    async fn attempt(&self, row: webhook_delivery::Model) -> Result<Attempted, WorkerError> {
        let number = row.attempt_count.saturating_add(1);
        let now = Utc::now();
        let target = modes::webhook_target(&self.db, &row.project_id, &row.game_mode, now).await?;
        let delivery = target.and_then(|(url, secrets)| build(&row, &url, &secrets));
        let sent = delivery.is_some();
        let (attempt, after) = match delivery {
            Some(delivery) => {
                let mut rng = StdRng::from_entropy();
                let span = tracing::info_span!(
                    "webhook",
                    project_id = %row.project_id,
                    game_mode = %row.game_mode,
                    delivery_id = %row.id
                );
                let (attempt, next) = self
                    .dispatcher
                    .step(
                        &delivery,
                        u32::try_from(number).unwrap_or(u32::MAX),
                        &mut rng,
                    )
                    .instrument(span)
                    .await;
                let after = match next {
                    NextAction::Stop(end) => AfterAttempt::Finished(end.status()),
                    NextAction::Retry { after } => AfterAttempt::RetryAt(
                        Utc::now()
                            + chrono::Duration::from_std(after)
                                .unwrap_or_else(|_| chrono::Duration::seconds(300)),
                    ),
                };
                (attempt, after)
            }
            None => (
                not_sent(now),
                AfterAttempt::Finished(Final::Refused.status()),
            ),
        };
        let ended = match after {
            AfterAttempt::Finished(status) => Some(status),
            AfterAttempt::RetryAt(_) => None,
        };
        crate::metrics::attempt(
            attempt.status,
            Duration::from_millis(attempt.latency_ms),
            ended,
        );
        let log = webhook_attempt::Model {
            id: format!("att_{}", ulid::Ulid::new()),
            delivery_id: row.id.clone(),
            project_id: row.project_id.clone(),
            attempted_at: attempt.sent_at,
            status_code: attempt.status.map(i32::from),
            latency_ms: i64::try_from(attempt.latency_ms).unwrap_or(i64::MAX),
            error: attempt.error.as_ref().map(ToString::to_string),
            response_body: attempt.response_excerpt.clone(),
        };
        match deliveries::record_attempt(&self.db, log, number, after, Utc::now()).await {
            Ok(()) => {
                if sent {
                    self.record_health(&row, &attempt).await;
                }
            }
            Err(StoreError::NotFound) => {}
            Err(err) => return Err(err.into()),
        }
        Ok(Attempted {
            delivery_id: row.id,
            number,
            status: attempt.status,
            after,
        })
    }
}

/// The delivery of a stored row: its id as `webhook-id` (the match id for a
/// match), its payload bytes, signed with `secrets`.
fn build(row: &webhook_delivery::Model, url: &str, secrets: &[String]) -> Option<Delivery> {
    let id = row.match_id.clone().unwrap_or_else(|| row.id.clone());
    let message = Message {
        id,
        body: row.payload.clone().into_bytes(),
    };
    let secrets: Vec<Secret> = secrets
        .iter()
        .filter_map(|s| Secret::parse(s).ok())
        .collect();
    match Delivery::new(url, message, secrets) {
        Ok(delivery) => Some(delivery),
        Err(err) => {
            tracing::warn!(delivery_id = %row.id, error = %err, "webhook not deliverable");
            None
        }
    }
}

/// The attempt logged when the mode or its webhook is gone.
fn not_sent(now: DateTime<Utc>) -> Attempt {
    Attempt {
        sent_at: now,
        status: None,
        latency_ms: 0,
        error: Some(matchplane_webhook::AttemptError::Request(
            "the game mode has no enabled webhook any more".to_owned(),
        )),
        response_excerpt: None,
        outcome: matchplane_webhook::Outcome::Refused,
    }
}
