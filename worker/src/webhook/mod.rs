//! Signed `match.made` webhooks (SPEC 6): signing, the retry schedule, one
//! attempt with the SSRF check at delivery, and the dispatcher that runs a
//! delivery through its attempts under a per-endpoint concurrency cap.
//!
//! The store integration (the deliveries log, redeliver, the outbox) plugs in
//! through [`dispatcher::AttemptRecorder`].

pub mod address;
pub mod deliver;
pub mod dispatcher;
pub mod payload;
pub mod schedule;
pub mod sign;

pub use deliver::{Attempt, AttemptError, Deliverer, Delivery, DeliveryConfig, Refusal};
pub use dispatcher::{AttemptRecorder, Clock, Dispatcher, EndpointLimits, Report};
pub use payload::{Event, MatchIdentity, MatchMade, Message, WebhookTest};
pub use schedule::{Final, NextAction, Outcome, Schedule};
pub use sign::{generate_secret, signature_header, Secret};
