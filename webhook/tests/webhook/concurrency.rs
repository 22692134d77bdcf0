//! The per-endpoint cap: a studio whose endpoint hangs does not hold up
//! deliveries to another.

use crate::common::fixtures::{delivery, match_message, secret};
use crate::common::receiver::{Receiver, Reply};
use crate::common::run::{AttemptRecorder, RunToEnd};
use matchplane_webhook::{
    Attempt, AttemptError, Deliverer, Delivery, DeliveryConfig, Dispatcher, EndpointLimits, Final,
    NextAction, Outcome, Schedule,
};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinSet;

struct NoLog;

impl AttemptRecorder for NoLog {
    type Error = Infallible;

    async fn record(
        &self,
        _: &Delivery,
        _: u32,
        _: &Attempt,
        _: NextAction,
    ) -> Result<(), Infallible> {
        Ok(())
    }
}

#[tokio::test]
async fn a_hanging_receiver_does_not_delay_another() {
    let hanging = Receiver::start(vec![], Reply::hang()).await;
    let healthy = Receiver::start(vec![], Reply::status(200)).await;
    let dispatcher = Arc::new(Dispatcher::new(
        Deliverer::new(DeliveryConfig {
            allow_private: true,
            ..DeliveryConfig::default()
        })
        .unwrap(),
        Schedule::scaled(0.001).unwrap(),
        EndpointLimits::new(2, 100),
    ));
    let recorder = Arc::new(NoLog);
    let mut stuck = JoinSet::new();
    for i in 0..20 {
        let (dispatcher, recorder) = (Arc::clone(&dispatcher), Arc::clone(&recorder));
        let delivery = delivery(
            &hanging.url(),
            match_message(&format!("mat_h{i}"), "p"),
            &[&secret(30)],
        );
        stuck.spawn(async move {
            let mut rng = StdRng::seed_from_u64(i);
            dispatcher
                .run(&delivery, 1, recorder.as_ref(), &mut rng)
                .await
        });
    }
    // Wait until the hanging endpoint holds its two slots.
    let deadline = Instant::now() + Duration::from_secs(3);
    while hanging.received().len() < 2 {
        assert!(
            Instant::now() < deadline,
            "the hanging receiver got no requests"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    let started = Instant::now();
    let report = dispatcher
        .run(
            &delivery(
                &healthy.url(),
                match_message("mat_fast", "p"),
                &[&secret(31)],
            ),
            1,
            &NoLog,
            &mut StdRng::seed_from_u64(99),
        )
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(report.end, Final::Delivered);
    assert!(
        took < Duration::from_secs(2),
        "the healthy studio waited {took:?}"
    );
    assert_eq!(
        hanging.received().len(),
        2,
        "the cap keeps the other 18 deliveries off the hanging endpoint"
    );
    stuck.abort_all();
}

#[tokio::test]
async fn an_attempt_without_an_answer_times_out() {
    assert_eq!(DeliveryConfig::default().timeout, Duration::from_secs(5));
    let hanging = Receiver::start(vec![], Reply::hang()).await;
    let deliverer = Deliverer::new(DeliveryConfig {
        allow_private: true,
        timeout: Duration::from_millis(300),
    })
    .unwrap();
    let started = Instant::now();
    let attempt = deliverer
        .attempt(
            &delivery(
                &hanging.url(),
                match_message("mat_slow", "p"),
                &[&secret(32)],
            ),
            chrono::Utc::now(),
        )
        .await;
    assert_eq!(attempt.error, Some(AttemptError::Timeout));
    assert_eq!(attempt.status, None);
    assert_eq!(attempt.outcome, Outcome::Retryable { retry_after: None });
    assert!(attempt.latency_ms >= 300, "{}", attempt.latency_ms);
    assert!(started.elapsed() < Duration::from_secs(2));
}
