//! Webhook delivery over real HTTP on loopback, checked by a receiver with
//! its own implementation of the Standard Webhooks scheme (docs/webhook-events.md).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod concurrency;
mod logging;
mod retries;
mod signing;
mod ssrf;
