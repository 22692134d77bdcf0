//! # matchplane-webhook: how studios learn of their matches
//!
//! Signed `match.made` webhooks (docs/webhook-events.md), used by the API (a mode's webhook
//! URL checked at configuration, the `webhook.test` event sent on demand)
//! and by the worker (every match's delivery):
//!
//! - [`sign`]: Standard Webhooks HMAC-SHA256 signatures and `whsec_` secrets.
//! - [`schedule`]: the retry schedule (delays, jitter, `Retry-After`).
//! - [`payload`]: the bodies (`match.made`, `webhook.test`; `match.backfilled`
//!   in [`backfilled`]), serialised once
//!   into the [`Message`] every attempt sends; [`player_view`] is a player's
//!   view of its match.
//! - [`address`] and [`ssrf`]: the one URL-safety policy, with the one
//!   refusal type [`Refusal`], at configuration and at every delivery.
//! - [`deliver`]: one attempt (sign, POST, classify) with the check at
//!   delivery; [`dispatcher`] runs a delivery through its attempts under a
//!   per-endpoint concurrency cap.
//!
//! The worker records each attempt (the deliveries log, redeliver, the
//! outbox); this crate knows no database.

pub mod address;
pub mod backfilled;
pub mod deliver;
pub mod dispatcher;
pub mod event_type;
pub mod payload;
pub mod player_view;
pub mod schedule;
pub mod sign;
pub mod ssrf;

pub use backfilled::{FillIdentity, MatchBackfilled};
pub use deliver::{Attempt, AttemptError, Deliverer, Delivery, DeliveryConfig};
pub use dispatcher::{Clock, Dispatcher, EndpointLimits};
pub use event_type::EventType;
pub use payload::{Event, MatchIdentity, MatchMade, Message, WebhookTest};
pub use player_view::player_match;
pub use schedule::{Final, NextAction, Outcome, Schedule};
pub use sign::{generate_secret, signature_header, Secret};
pub use ssrf::{check_changed_webhook_url, check_webhook_url, Refusal};
