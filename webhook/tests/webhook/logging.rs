//! How attempts are logged: a failed attempt at WARN, a delivery that fails
//! for good at ERROR, a delivered one at INFO; never the URL's path or
//! query, the body or a secret.

use crate::common::fixtures::{delivery, match_message, secret};
use crate::common::receiver::{Receiver, Reply};
use crate::common::run::{AttemptRecorder, RunToEnd};
use matchplane_webhook::{
    Attempt, Deliverer, Delivery, DeliveryConfig, Dispatcher, EndpointLimits, Final, NextAction,
    Schedule,
};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Every event of the worker as (level, its fields as text).
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<(Level, String)>>>);

struct Text(String);

impl Visit for Text {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, "{}={:?} ", field.name(), value);
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        // Ours only (the HTTP client's own traces are not matchplane's logs).
        if !event.metadata().target().starts_with("matchplane_webhook") {
            return;
        }
        let mut text = Text(String::new());
        event.record(&mut text);
        self.0
            .lock()
            .unwrap()
            .push((*event.metadata().level(), text.0));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

struct NoLog;

impl AttemptRecorder for NoLog {
    type Error = std::convert::Infallible;

    async fn record(
        &self,
        _: &Delivery,
        _: u32,
        _: &Attempt,
        _: NextAction,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn dispatcher() -> Dispatcher {
    let deliverer = Deliverer::new(DeliveryConfig {
        allow_private: true,
        ..DeliveryConfig::default()
    })
    .unwrap();
    Dispatcher::new(
        deliverer,
        Schedule::scaled(0.0001).unwrap(),
        EndpointLimits::default(),
    )
}

/// The capture, installed once as the global subscriber of this test
/// binary (a thread-scoped one can miss events whose callsite another
/// test's thread registered first).
fn capture() -> Capture {
    static CAPTURE: std::sync::OnceLock<Capture> = std::sync::OnceLock::new();
    CAPTURE
        .get_or_init(|| {
            let capture = Capture::default();
            let _ = tracing::subscriber::set_global_default(capture.clone());
            capture
        })
        .clone()
}

#[tokio::test]
async fn failures_are_warnings_and_a_lost_delivery_an_error() {
    let capture = capture();
    let receiver = Receiver::start(vec![], Reply::status(503).body("busy")).await;
    let key = secret(40);
    let url = format!("{}?token=s3cr3t-query", receiver.url());
    let report = dispatcher()
        .run(
            &delivery(&url, match_message("mat_logs", "p"), &[&key]),
            1,
            &NoLog,
            &mut StdRng::seed_from_u64(1),
        )
        .await
        .unwrap();
    assert_eq!(report.end, Final::Exhausted);
    let events = capture.0.lock().unwrap().clone();
    let ours: Vec<&(Level, String)> = events
        .iter()
        .filter(|(_, text)| text.contains("mat_logs"))
        .collect();
    let warns = ours.iter().filter(|(l, _)| *l == Level::WARN).count();
    let errors: Vec<_> = ours.iter().filter(|(l, _)| *l == Level::ERROR).collect();
    assert_eq!(warns, 8, "{ours:?}");
    assert_eq!(errors.len(), 1, "{ours:?}");
    assert!(errors[0].1.contains("HTTP 503"), "{:?}", errors[0]);
    for (_, text) in &ours {
        for secret_part in ["s3cr3t-query", "/hook", "busy", key.as_str(), "whsec_"] {
            assert!(!text.contains(secret_part), "{secret_part} logged: {text}");
        }
    }

    // A delivered attempt is INFO.
    let ok = Receiver::start(vec![], Reply::status(204)).await;
    let before = capture.0.lock().unwrap().len();
    dispatcher()
        .run(
            &delivery(&ok.url(), match_message("mat_fine", "p"), &[&key]),
            1,
            &NoLog,
            &mut StdRng::seed_from_u64(2),
        )
        .await
        .unwrap();
    let after: Vec<(Level, String)> = capture.0.lock().unwrap()[before..].to_vec();
    let fine: Vec<_> = after
        .iter()
        .filter(|(_, t)| t.contains("mat_fine"))
        .collect();
    assert_eq!(fine.len(), 1, "{after:?}");
    assert_eq!(fine[0].0, Level::INFO);
}
