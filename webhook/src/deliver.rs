//! One delivery attempt (docs/webhooks.md): sign, POST, classify, record.
//!
//! The body bytes of the [`Message`] are sent verbatim and signed over
//! exactly those bytes, with this attempt's timestamp. The attempt has a 5 s
//! budget end to end, follows no redirect and ignores proxy settings.
//!
//! The SSRF check happens again here (docs/game-modes.md, [`crate::ssrf`]): with private
//! webhooks not allowed, the scheme must be `https`, an IP-literal host must
//! be public, and a named host is resolved once by [`CheckedResolver`], which refuses
//! the name if any address is not public and hands the HTTP client exactly
//! the addresses it checked, so the connection goes to a checked address and
//! a DNS rebinding between check and connect cannot reach inside.

use crate::address::is_forbidden;
use crate::payload::Message;
use crate::schedule::{parse_retry_after, Outcome};
use crate::sign::{signature_header, Secret};
use crate::ssrf::{check_url, Refusal};
use chrono::{DateTime, Utc};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use reqwest::redirect::Policy;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use url::Url;

/// Budget of one attempt, from connect to the last byte read (docs/webhooks.md: 5 s).
pub const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// How much of the receiver's answer is kept with the attempt (bytes).
pub const EXCERPT_BYTES: usize = 1024;

/// `user-agent` of every webhook request.
pub const USER_AGENT: &str = concat!("matchplane-webhooks/", env!("CARGO_PKG_VERSION"));

/// Why an attempt failed without an HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AttemptError {
    /// Not sent: the SSRF check refused the URL, or the addresses its
    /// host name resolves to; the delivery stops ([`Outcome::Refused`]).
    #[error("refused: {0}")]
    Refused(Refusal),
    /// The host name does not resolve (NXDOMAIN, no DNS, no network):
    /// retried, as the name may come to resolve (a mode may be configured
    /// before its endpoint's DNS exists).
    #[error("the host `{0}` does not resolve")]
    Unresolved(String),
    /// No complete answer within [`ATTEMPT_TIMEOUT`].
    #[error("timed out")]
    Timeout,
    /// Name resolution, TCP or TLS failed.
    #[error("connection failed: {0}")]
    Connect(String),
    /// Anything else on the way (the message names no URL).
    #[error("request failed: {0}")]
    Request(String),
}

/// Why a [`Delivery`] cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeliveryError {
    /// The endpoint is not an absolute URL.
    #[error("the webhook URL is not a valid absolute URL")]
    Url,
    /// No secret to sign with.
    #[error("a webhook needs at least one signing secret")]
    NoSecret,
}

/// A webhook to deliver: where, what, and the secrets that sign it.
#[derive(Debug, Clone)]
pub struct Delivery {
    url: Url,
    message: Message,
    secrets: Vec<Secret>,
}

impl Delivery {
    /// A delivery of `message` to `url`, signed with every one of `secrets`
    /// (the current one and, during a rotation, the previous one).
    ///
    /// # Errors
    /// [`DeliveryError`] for a malformed URL or no secret.
    pub fn new(url: &str, message: Message, secrets: Vec<Secret>) -> Result<Self, DeliveryError> {
        let url = Url::parse(url).map_err(|_| DeliveryError::Url)?;
        if secrets.is_empty() {
            return Err(DeliveryError::NoSecret);
        }
        Ok(Self {
            url,
            message,
            secrets,
        })
    }

    /// The endpoint.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The message (its `webhook-id` and body bytes).
    pub fn message(&self) -> &Message {
        &self.message
    }

    /// `host:port` of the endpoint: the key of its concurrency cap.
    pub fn endpoint_key(&self) -> String {
        let host = self.url.host_str().unwrap_or_default();
        match self.url.port_or_known_default() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_owned(),
        }
    }
}

/// The record of one attempt (docs/webhooks.md: time, status code, latency, error,
/// first 1 KiB of the answer).
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// When it was sent; its unix seconds are the `webhook-timestamp`.
    pub sent_at: DateTime<Utc>,
    /// The HTTP status, if an answer came.
    pub status: Option<u16>,
    /// From sending to the end of reading the excerpt (milliseconds).
    pub latency_ms: u64,
    /// Why no answer came, if none did.
    pub error: Option<AttemptError>,
    /// The first [`EXCERPT_BYTES`] of the answer's body (lossy UTF-8).
    pub response_excerpt: Option<String>,
    /// What the attempt means for the schedule.
    pub outcome: Outcome,
}

/// Settings of the [`Deliverer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryConfig {
    /// `MATCHPLANE_ALLOW_PRIVATE_WEBHOOKS`: lifts the SSRF check and allows `http`.
    pub allow_private: bool,
    /// Budget of one attempt; [`ATTEMPT_TIMEOUT`] outside tests.
    pub timeout: Duration,
}

impl Default for DeliveryConfig {
    fn default() -> Self {
        Self {
            allow_private: false,
            timeout: ATTEMPT_TIMEOUT,
        }
    }
}

/// Why the HTTP client could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the webhook HTTP client")]
pub struct ClientError(#[source] reqwest::Error);

/// Sends attempts; one per worker, shared (it holds the connection pool).
#[derive(Debug, Clone)]
pub struct Deliverer {
    client: reqwest::Client,
    allow_private: bool,
    timeout: Duration,
}

impl Deliverer {
    /// A deliverer with its HTTP client.
    ///
    /// # Errors
    /// [`ClientError`] if the TLS backend cannot be set up.
    pub fn new(config: DeliveryConfig) -> Result<Self, ClientError> {
        let client = reqwest::Client::builder()
            .timeout(config.timeout)
            .redirect(Policy::none())
            .no_proxy()
            .user_agent(USER_AGENT)
            .dns_resolver(Arc::new(CheckedResolver {
                allow_private: config.allow_private,
            }))
            .build()
            .map_err(ClientError)?;
        Ok(Self {
            client,
            allow_private: config.allow_private,
            timeout: config.timeout,
        })
    }

    /// The longest one attempt lasts, name resolution to the last byte of
    /// the answer read ([`DeliveryConfig::timeout`]): a caller sending under
    /// a lock needs at least this much of it left.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Makes one attempt of `delivery`, signed with `sent_at` (the caller's
    /// clock), and records how it went. Never fails: a failure is an
    /// [`Attempt`] with an error.
    pub async fn attempt(&self, delivery: &Delivery, sent_at: DateTime<Utc>) -> Attempt {
        if let Err(refusal) = check_url(&delivery.url, self.allow_private) {
            return refused(sent_at, refusal);
        }
        let message = &delivery.message;
        let timestamp = sent_at.timestamp();
        let signature = signature_header(&delivery.secrets, &message.id, timestamp, &message.body);
        let started = Instant::now();
        let sent = self
            .client
            .post(delivery.url.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header("webhook-id", message.id.as_str())
            .header("webhook-timestamp", timestamp.to_string())
            .header("webhook-signature", signature)
            .body(message.body.clone())
            .send()
            .await;
        let mut response = match sent {
            Ok(response) => response,
            Err(err) => {
                let error = classify_error(err);
                // A name the resolver refused (it resolves to a non-public
                // address) ends the delivery as a refused URL does
                // (docs/webhooks.md); any other failure is retried.
                let outcome = match error {
                    AttemptError::Refused(_) => Outcome::Refused,
                    _ => Outcome::Retryable { retry_after: None },
                };
                return Attempt {
                    sent_at,
                    status: None,
                    latency_ms: elapsed_ms(started),
                    error: Some(error),
                    response_excerpt: None,
                    outcome,
                };
            }
        };
        let status = response.status().as_u16();
        let answered_at = sent_at + chrono::Duration::milliseconds(elapsed_ms(started) as i64);
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| parse_retry_after(value, answered_at));
        let excerpt = read_excerpt(&mut response).await;
        Attempt {
            sent_at,
            status: Some(status),
            latency_ms: elapsed_ms(started),
            error: None,
            response_excerpt: Some(excerpt),
            outcome: classify_status(status, retry_after),
        }
    }
}

/// What an HTTP answer means for the schedule: 2xx delivered, 410 gone,
/// anything else retried (with the receiver's `Retry-After`, if any).
pub fn classify_status(status: u16, retry_after: Option<Duration>) -> Outcome {
    match status {
        200..=299 => Outcome::Delivered,
        410 => Outcome::Gone,
        _ => Outcome::Retryable { retry_after },
    }
}

fn refused(sent_at: DateTime<Utc>, refusal: Refusal) -> Attempt {
    Attempt {
        sent_at,
        status: None,
        latency_ms: 0,
        error: Some(AttemptError::Refused(refusal)),
        response_excerpt: None,
        outcome: Outcome::Refused,
    }
}

fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// Reads at most [`EXCERPT_BYTES`] of the body; a body cut short (timeout,
/// reset) keeps what arrived.
async fn read_excerpt(response: &mut reqwest::Response) -> String {
    let mut kept = Vec::with_capacity(EXCERPT_BYTES);
    while kept.len() < EXCERPT_BYTES {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let room = EXCERPT_BYTES - kept.len();
                kept.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(None) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

/// Turns a client error into an [`AttemptError`] whose text names no URL
/// (a webhook URL may carry a token).
fn classify_error(err: reqwest::Error) -> AttemptError {
    let err = err.without_url();
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&err);
    let mut innermost = err.to_string();
    while let Some(current) = source {
        if let Some(refusal) = current.downcast_ref::<Refusal>() {
            return AttemptError::Refused(refusal.clone());
        }
        if let Some(Unresolved(host)) = current.downcast_ref::<Unresolved>() {
            return AttemptError::Unresolved(host.clone());
        }
        innermost = current.to_string();
        source = current.source();
    }
    if err.is_timeout() {
        AttemptError::Timeout
    } else if err.is_connect() {
        AttemptError::Connect(innermost)
    } else {
        AttemptError::Request(innermost)
    }
}

/// A host name that did not resolve, as the resolver reports it.
#[derive(Debug, thiserror::Error)]
#[error("the host `{0}` does not resolve")]
struct Unresolved(String);

/// The resolver of the webhook client: resolves a host once and returns
/// exactly the addresses it checked, or refuses the host when any of them
/// is not public (unless private webhooks are allowed).
#[derive(Debug, Clone, Copy)]
pub struct CheckedResolver {
    allow_private: bool,
}

impl Resolve for CheckedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_owned();
        let allow_private = self.allow_private;
        Box::pin(async move {
            let looked_up = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map(Iterator::collect::<Vec<SocketAddr>>);
            let Ok(found) = looked_up else {
                return Err(Box::new(Unresolved(host)) as _);
            };
            if found.is_empty() {
                return Err(Box::new(Unresolved(host)) as _);
            }
            if !allow_private {
                if let Some(bad) = found.iter().find(|addr| is_forbidden(addr.ip())) {
                    return Err(Box::new(Refusal::resolved(host, bad.ip())) as _);
                }
            }
            Ok(Box::new(found.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delivery_needs_a_url_and_a_secret() {
        let message = Message {
            id: "mat_1".to_owned(),
            body: b"{}".to_vec(),
        };
        let secret = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            Delivery::new("not a url", message.clone(), vec![secret.clone()]).err(),
            Some(DeliveryError::Url)
        );
        assert_eq!(
            Delivery::new("https://a.example/h", message.clone(), vec![]).err(),
            Some(DeliveryError::NoSecret)
        );
        let delivery = Delivery::new("https://a.example/h?t=1", message, vec![secret]).unwrap();
        assert_eq!(delivery.endpoint_key(), "a.example:443");
    }

    #[test]
    fn classifies_statuses() {
        assert_eq!(classify_status(204, None), Outcome::Delivered);
        assert_eq!(classify_status(410, None), Outcome::Gone);
        assert_eq!(
            classify_status(302, None),
            Outcome::Retryable { retry_after: None }
        );
        let wait = Some(Duration::from_secs(9));
        assert_eq!(
            classify_status(429, wait),
            Outcome::Retryable { retry_after: wait }
        );
    }
}
