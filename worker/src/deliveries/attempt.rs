//! One attempt of a claimed delivery: logged before it is sent, sent under
//! its endpoint's slot only while its lock outlasts it (or taken back
//! unsent), completed after, the mode's webhook health updated.

use super::lock::Stamp;
use super::{Attempted, DeliveryWorker, Ready};
use crate::db_wait::{within, DELIVERY_LIMIT};
use crate::error::WorkerError;
use chrono::{DateTime, Utc};
use matchplane_store::entities::{webhook_attempt, webhook_delivery};
use matchplane_store::repos::deliveries::{self, AfterAttempt, ClaimHeld};
use matchplane_store::repos::StoreError;
use matchplane_store::repos::{project_webhooks, webhook_health};
use matchplane_webhook::dispatcher::failure_text;
use matchplane_webhook::schedule::{Final, NextAction};
use matchplane_webhook::{Attempt, Delivery, Message, Secret};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::time::Duration;
use tracing::Instrument;

impl DeliveryWorker {
    /// Updates the mode's webhook health after an attempt made to its URL,
    /// and the project endpoint's (under [`project_webhooks::HEALTH_KEY`])
    /// when it went there. A failure to write it is logged: the attempt
    /// itself is recorded.
    async fn record_health(
        &self,
        row: &webhook_delivery::Model,
        attempt: &Attempt,
        project_endpoint: bool,
    ) {
        let keys = std::iter::once(row.game_mode.as_str())
            .chain(project_endpoint.then_some(project_webhooks::HEALTH_KEY));
        for key in keys {
            let write = async {
                match failure_text(attempt) {
                    None => {
                        webhook_health::record_success(
                            &self.db,
                            &row.project_id,
                            key,
                            attempt.sent_at,
                        )
                        .await
                    }
                    Some(error) => {
                        webhook_health::record_failure(
                            &self.db,
                            &row.project_id,
                            key,
                            attempt.sent_at,
                            &error,
                        )
                        .await
                    }
                }
            };
            let written = within(DELIVERY_LIMIT, "recording webhook health", write).await;
            if let Err(err) = written {
                tracing::warn!(delivery_id = %row.id, error = %err, "webhook health not recorded");
            }
        }
    }

    /// Takes back the unsent attempt `log_id` of delivery `id` and gives
    /// the delivery back ([`deliveries::withdraw_attempt`]). A database
    /// failure is tried again, a few times a second apart: until it goes
    /// through, the attempt stays listed (counted, without an outcome) and
    /// the delivery waits for its lock to run out, as one whose worker
    /// stopped.
    async fn withdraw(&self, id: &str, log_id: &str, token: &str) {
        for tried in 1..=WITHDRAW_TRIES {
            let withdraw = deliveries::withdraw_attempt(&self.db, id, log_id, token, Utc::now());
            match within(DELIVERY_LIMIT, "taking back an unsent attempt", withdraw).await {
                Ok(_) => return,
                Err(err) if tried == WITHDRAW_TRIES => {
                    tracing::warn!(delivery_id = %id, error = %err,
                        "unsent webhook attempt not taken back; the delivery waits for its lock");
                }
                Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
            }
        }
    }

    /// Makes one attempt of a ready delivery: logged first (counted), sent
    /// under its endpoint's slot, then completed. `None` when nothing was
    /// sent: the claim no longer held the delivery, or its lock had less
    /// than [`DeliveryWorker::needed`] left, even after a renewal (the
    /// attempt is then taken back, uncounted, and the delivery given back
    /// due as before; docs/operations.md, "Webhook delivery: one studio
    /// never holds up another").
    pub(super) async fn attempt(&self, ready: Ready) -> Result<Option<Attempted>, WorkerError> {
        let Ready {
            row,
            lock,
            delivery,
            slot,
            project_endpoint,
        } = ready;
        let token = row.lock_token.clone().unwrap_or_default();
        let number = row.attempt_count.saturating_add(1);
        // The retry schedule counts this run's attempts (a redelivery
        // starts a new run).
        let in_run = number.saturating_sub(row.attempts_before_run).max(1);
        let stamp = Stamp::now();
        let started = stamp.wall();
        let log_id = format!("att_{}", ulid::Ulid::new());
        let opening = webhook_attempt::Model {
            id: log_id.clone(),
            delivery_id: row.id.clone(),
            project_id: row.project_id.clone(),
            attempted_at: started,
            status_code: None,
            latency_ms: 0,
            error: Some(deliveries::ATTEMPT_UNFINISHED.to_owned()),
            response_body: None,
        };
        let until = started + self.lock_span();
        let start = deliveries::start_attempt(&self.db, opening, &token, until, started);
        match within(DELIVERY_LIMIT, "logging a webhook attempt", start).await? {
            ClaimHeld::Yes => lock.extended(stamp, until),
            ClaimHeld::Lost => {
                lock.lost();
                tracing::warn!(delivery_id = %row.id, "webhook delivery taken over; not sent");
                return Ok(None);
            }
        }
        if delivery.is_some() && !self.lock_lasts(&row, &token, &lock).await {
            tracing::warn!(delivery_id = %row.id, left_ms = lock.left().as_millis(),
                needed_ms = self.needed().as_millis(),
                "webhook lock too short for an attempt; not sent, given back");
            self.withdraw(&row.id, &log_id, &token).await;
            return Ok(None);
        }
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
                    .step_holding(
                        slot.as_ref(),
                        &delivery,
                        u32::try_from(in_run).unwrap_or(u32::MAX),
                        &mut rng,
                    )
                    .instrument(span)
                    .await;
                drop(slot);
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
                not_sent(started),
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
            id: log_id,
            delivery_id: row.id.clone(),
            project_id: row.project_id.clone(),
            attempted_at: attempt.sent_at,
            status_code: attempt.status.map(i32::from),
            latency_ms: i64::try_from(attempt.latency_ms).unwrap_or(i64::MAX),
            error: attempt.error.as_ref().map(ToString::to_string),
            response_body: attempt.response_excerpt.clone(),
        };
        let finish = deliveries::finish_attempt(&self.db, log, &token, after, Utc::now());
        match within(DELIVERY_LIMIT, "completing a webhook attempt", finish).await {
            Ok(ClaimHeld::Yes) => {
                if sent {
                    self.record_health(&row, &attempt, project_endpoint).await;
                }
            }
            Ok(ClaimHeld::Lost) => {
                tracing::warn!(delivery_id = %row.id, "webhook lock lost during the attempt");
            }
            Err(WorkerError::Store(StoreError::NotFound)) => {}
            Err(err) => return Err(err),
        }
        Ok(Some(Attempted {
            delivery_id: row.id,
            number,
            status: attempt.status,
            after,
        }))
    }
}

/// How many times [`DeliveryWorker::withdraw`] tries.
const WITHDRAW_TRIES: u32 = 5;

/// The delivery of a stored row: its id as `webhook-id` (the match id for a
/// match), its payload bytes, signed with `secrets`.
pub(super) fn build(
    row: &webhook_delivery::Model,
    url: &str,
    secrets: &[String],
) -> Option<Delivery> {
    let id = crate::backfill::webhook_id(row)
        .or_else(|| row.match_id.clone())
        .unwrap_or_else(|| row.id.clone());
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
            "the game mode has no enabled webhook any more (or its project endpoint does not send this event type)".to_owned(),
        )),
        response_excerpt: None,
        outcome: matchplane_webhook::Outcome::Refused,
    }
}
