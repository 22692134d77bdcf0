//! The SSRF check at delivery (docs/game-modes.md): refused unless private webhooks are
//! allowed, on the address actually connected to; no redirect is followed.

use crate::common::fixtures::{delivery, match_message, secret};
use crate::common::receiver::{Receiver, Reply};
use crate::common::run::{AttemptRecorder, RunToEnd};
use chrono::Utc;
use matchplane_webhook::{
    AttemptError, Deliverer, DeliveryConfig, Dispatcher, EndpointLimits, Final, NextAction,
    Outcome, Refusal, Schedule,
};
use rand::rngs::StdRng;
use rand::SeedableRng;

fn deliverer(allow_private: bool) -> Deliverer {
    Deliverer::new(DeliveryConfig {
        allow_private,
        ..DeliveryConfig::default()
    })
    .unwrap()
}

#[tokio::test]
async fn internal_addresses_are_refused_at_delivery() {
    let receiver = Receiver::start(vec![], Reply::status(200)).await;
    let port = receiver.addr.port();
    let strict = deliverer(false);
    let key = secret(20);
    for url in [
        format!("https://127.0.0.1:{port}/hook"),
        "http://10.0.0.1/hook".to_owned(),
        "https://10.0.0.1/hook".to_owned(),
        "https://169.254.169.254/latest/meta-data".to_owned(),
        "https://[::1]/hook".to_owned(),
        "https://[fd00::1]/hook".to_owned(),
        "https://[::ffff:127.0.0.1]/hook".to_owned(),
        format!("http://127.0.0.1:{port}/hook"),
    ] {
        let attempt = strict
            .attempt(
                &delivery(&url, match_message("mat_ssrf", "p"), &[&key]),
                Utc::now(),
            )
            .await;
        assert_eq!(attempt.outcome, Outcome::Refused, "{url}");
        assert!(
            matches!(attempt.error, Some(AttemptError::Refused(_))),
            "{url}: {:?}",
            attempt.error
        );
        assert_eq!(attempt.status, None);
    }
    assert!(
        receiver.received().is_empty(),
        "nothing reached the receiver"
    );
}

#[tokio::test]
async fn a_name_resolving_inside_is_refused_on_the_resolved_address() {
    let receiver = Receiver::start(vec![], Reply::status(200)).await;
    let url = format!("https://localhost:{}/hook", receiver.addr.port());
    let attempt = deliverer(false)
        .attempt(
            &delivery(&url, match_message("mat_dns", "p"), &[&secret(21)]),
            Utc::now(),
        )
        .await;
    // Nothing was connected to, and the delivery stops (docs/webhooks.md).
    assert_eq!(attempt.outcome, Outcome::Refused);
    match &attempt.error {
        Some(AttemptError::Refused(Refusal::Resolved { host, address })) => {
            assert_eq!(host, "localhost");
            assert!(address.is_loopback(), "{address}");
        }
        other => panic!("expected a refused address, got {other:?}"),
    }
    // The attempt's error is shown to the tenant (attempt log, webhook
    // status, test answer): it says what the name resolves to in general,
    // never the address the resolver gave (docs/webhooks.md).
    let text = attempt
        .error
        .as_ref()
        .map(ToString::to_string)
        .unwrap_or_default();
    assert_eq!(
        text,
        "refused: the host `localhost` resolves to a non-public address"
    );
    assert!(
        !text.contains("127.0.0.1") && !text.contains("::1"),
        "{text}"
    );
    assert!(receiver.received().is_empty());
}

#[tokio::test]
async fn with_private_webhooks_allowed_loopback_works_by_ip_and_by_name() {
    let receiver = Receiver::start(vec![], Reply::status(200)).await;
    let open = deliverer(true);
    for url in [
        receiver.url(),
        format!("http://localhost:{}/hook", receiver.addr.port()),
    ] {
        let attempt = open
            .attempt(
                &delivery(&url, match_message("mat_ok", "p"), &[&secret(22)]),
                Utc::now(),
            )
            .await;
        assert_eq!(
            attempt.outcome,
            Outcome::Delivered,
            "{url}: {:?}",
            attempt.error
        );
    }
    assert_eq!(receiver.received().len(), 2);
}

#[tokio::test]
async fn a_refusal_ends_the_delivery_without_retries() {
    let dispatcher = Dispatcher::new(
        deliverer(false),
        Schedule::scaled(0.001).unwrap(),
        EndpointLimits::default(),
    );
    let log = NoLog;
    let report = dispatcher
        .run(
            &delivery(
                "https://169.254.169.254/",
                match_message("mat_meta", "p"),
                &[&secret(23)],
            ),
            1,
            &log,
            &mut StdRng::seed_from_u64(1),
        )
        .await
        .unwrap();
    assert_eq!(report.end, Final::Refused);
    assert_eq!(report.last_attempt, 1);
}

/// A host name that resolves to loopback at delivery (accepted at
/// configuration while it did not resolve) ends the delivery at its first
/// attempt, `failed`, with the refusal as its error; nothing is sent.
#[tokio::test]
async fn a_name_resolving_inside_ends_the_delivery_at_its_first_attempt() {
    let receiver = Receiver::start(vec![], Reply::status(200)).await;
    let dispatcher = Dispatcher::new(
        deliverer(false),
        Schedule::scaled(0.001).unwrap(),
        EndpointLimits::default(),
    );
    let log = Attempts::default();
    let url = format!("https://localhost:{}/hook", receiver.addr.port());
    let report = dispatcher
        .run(
            &delivery(&url, match_message("mat_rebind", "p"), &[&secret(26)]),
            1,
            &log,
            &mut StdRng::seed_from_u64(2),
        )
        .await
        .unwrap();
    assert_eq!(report.end, Final::Refused);
    assert_eq!(report.end.status(), "failed");
    assert_eq!(report.last_attempt, 1);
    let attempts = log.0.lock().unwrap().clone();
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    let (attempt, next) = &attempts[0];
    assert_eq!(*next, NextAction::Stop(Final::Refused));
    assert!(
        matches!(&attempt.error, Some(AttemptError::Refused(Refusal::Resolved { address, .. })) if address.is_loopback()),
        "{:?}",
        attempt.error
    );
    // The mode's webhook status shows this text as its last error.
    let shown = matchplane_webhook::dispatcher::failure_text(attempt).unwrap_or_default();
    assert!(
        shown.contains("resolves to a non-public address"),
        "{shown}"
    );
    assert!(
        !shown.contains("127.0.0.1") && !shown.contains("::1"),
        "{shown}"
    );
    assert!(receiver.received().is_empty());
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let inside = Receiver::start(vec![], Reply::status(200)).await;
    let outside =
        Receiver::start(vec![], Reply::status(307).header("location", inside.url())).await;
    let attempt = deliverer(true)
        .attempt(
            &delivery(
                &outside.url(),
                match_message("mat_redirect", "p"),
                &[&secret(24)],
            ),
            Utc::now(),
        )
        .await;
    assert_eq!(attempt.status, Some(307));
    assert!(matches!(attempt.outcome, Outcome::Retryable { .. }));
    assert!(
        inside.received().is_empty(),
        "the redirect was not followed"
    );
}

struct NoLog;

/// Every attempt of a run and what followed it.
#[derive(Default)]
struct Attempts(std::sync::Mutex<Vec<(matchplane_webhook::Attempt, NextAction)>>);

impl AttemptRecorder for Attempts {
    type Error = std::convert::Infallible;

    async fn record(
        &self,
        _: &matchplane_webhook::Delivery,
        _: u32,
        attempt: &matchplane_webhook::Attempt,
        next: NextAction,
    ) -> Result<(), Self::Error> {
        self.0.lock().unwrap().push((attempt.clone(), next));
        Ok(())
    }
}

impl AttemptRecorder for NoLog {
    type Error = std::convert::Infallible;

    async fn record(
        &self,
        _: &matchplane_webhook::Delivery,
        _: u32,
        _: &matchplane_webhook::Attempt,
        _: matchplane_webhook::NextAction,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_retried_with_a_clear_error() {
    // `.invalid` never resolves (RFC 6761), with or without network.
    for allow_private in [false, true] {
        let attempt = deliverer(allow_private)
            .attempt(
                &delivery(
                    "https://hooks.nowhere.invalid/hook?token=s3cr3t",
                    match_message("mat_nxdomain", "p"),
                    &[&secret(25)],
                ),
                Utc::now(),
            )
            .await;
        assert_eq!(attempt.outcome, Outcome::Retryable { retry_after: None });
        match &attempt.error {
            Some(err @ AttemptError::Unresolved(host)) => {
                assert_eq!(host, "hooks.nowhere.invalid");
                let text = err.to_string();
                assert!(text.contains("does not resolve"), "{text}");
                assert!(!text.contains("s3cr3t"), "{text}");
            }
            other => panic!("expected an unresolved host, got {other:?}"),
        }
    }
}
