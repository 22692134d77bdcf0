//! Retries: same id and bytes, fresh signatures, 410, Retry-After, jitter.

use crate::common::fixtures::{delivery, match_message, secret};
use crate::common::receiver::{Receiver, Reply};
use crate::common::run::{AttemptRecorder, RunToEnd, Step};
use crate::common::verify::{verify, Rejected};
use chrono::{DateTime, Duration as ChronoDuration, Utc};
use matchplane_webhook::deliver::Attempt;
use matchplane_webhook::{
    Clock, Deliverer, Delivery, DeliveryConfig, Dispatcher, EndpointLimits, Final, NextAction,
    Outcome, Schedule,
};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SCALE: f64 = 0.001;

fn private() -> Deliverer {
    Deliverer::new(DeliveryConfig {
        allow_private: true,
        ..DeliveryConfig::default()
    })
    .unwrap()
}

/// Virtual time running 1/SCALE times faster than the real clock, so the
/// scaled-down waits of the schedule look like the real ones.
fn virtual_clock() -> Clock {
    let start = Instant::now();
    let origin = Utc::now();
    Arc::new(move || {
        let real = start.elapsed().as_secs_f64();
        origin + ChronoDuration::milliseconds((real / SCALE * 1000.0) as i64)
    })
}

#[derive(Default)]
struct Log(Mutex<Vec<(u32, Attempt, NextAction)>>);

impl AttemptRecorder for Log {
    type Error = Infallible;

    async fn record(
        &self,
        _delivery: &Delivery,
        number: u32,
        attempt: &Attempt,
        next: NextAction,
    ) -> Result<(), Infallible> {
        self.0.lock().unwrap().push((number, attempt.clone(), next));
        Ok(())
    }
}

#[tokio::test]
async fn two_failures_then_success_make_three_recorded_attempts_signed_afresh() {
    let clock = virtual_clock();
    let receiver = Receiver::start_with_clock(
        vec![Reply::status(500), Reply::status(500)],
        Reply::status(200),
        Arc::clone(&clock),
    )
    .await;
    let key = secret(10);
    let message = match_message("mat_retry", "player-1");
    let body = message.body.clone();
    let dispatcher = Dispatcher::new(
        private(),
        Schedule::scaled(SCALE).unwrap(),
        EndpointLimits::default(),
    )
    .with_clock(clock);
    let log = Log::default();
    let report = dispatcher
        .run(
            &delivery(&receiver.url(), message, &[&key]),
            1,
            &log,
            &mut StdRng::seed_from_u64(1),
        )
        .await
        .unwrap();
    assert_eq!(report.end, Final::Delivered);
    assert_eq!(report.last_attempt, 3);

    let logged = log.0.lock().unwrap().clone();
    let numbers: Vec<u32> = logged.iter().map(|(n, _, _)| *n).collect();
    assert_eq!(numbers, [1, 2, 3]);
    let statuses: Vec<Option<u16>> = logged.iter().map(|(_, a, _)| a.status).collect();
    assert_eq!(statuses, [Some(500), Some(500), Some(200)]);
    assert!(matches!(logged[0].2, NextAction::Retry { .. }));
    assert_eq!(logged[2].2, NextAction::Stop(Final::Delivered));

    let received = receiver.received();
    assert_eq!(received.len(), 3);
    let timestamps: Vec<i64> = received
        .iter()
        .map(|r| r.header("webhook-timestamp").parse().unwrap())
        .collect();
    for (i, request) in received.iter().enumerate() {
        assert_eq!(request.header("webhook-id"), "mat_retry");
        assert_eq!(request.body, body, "same bytes on every attempt");
        assert_eq!(timestamps[i], logged[i].1.sent_at.timestamp());
        let verified = verify(
            &key,
            &request.header("webhook-id"),
            &request.header("webhook-timestamp"),
            &request.header("webhook-signature"),
            &request.body,
            request.received_at.timestamp(),
            300,
        );
        assert_eq!(verified, Ok(()), "attempt {}", i + 1);
    }
    // Fresh timestamps (the waits were ~1 s and ~2 s of virtual time) and so
    // fresh signatures.
    assert!(
        timestamps[0] < timestamps[1] && timestamps[1] < timestamps[2],
        "{timestamps:?}"
    );
    let signatures: Vec<String> = received
        .iter()
        .map(|r| r.header("webhook-signature"))
        .collect();
    assert_ne!(signatures[0], signatures[1]);
    assert_ne!(signatures[1], signatures[2]);
}

#[tokio::test]
async fn a_retry_ten_minutes_later_passes_a_five_minute_tolerance() {
    // The receiver asks for 5 minutes twice, then accepts.
    let receiver = Receiver::start(
        vec![
            Reply::status(503).header("retry-after", "300"),
            Reply::status(503).header("retry-after", "300"),
        ],
        Reply::status(200),
    )
    .await;
    let key = secret(11);
    let delivery = delivery(&receiver.url(), match_message("mat_late", "p"), &[&key]);
    let deliverer = private();
    let schedule = Schedule::default();
    let mut rng = StdRng::seed_from_u64(2);

    // Virtual time: the schedule's pure functions say when each attempt goes.
    let first_sent: DateTime<Utc> = DateTime::from_timestamp(1_900_000_000, 0).unwrap();
    let mut sent_at = first_sent;
    let mut attempts = Vec::new();
    for number in 1.. {
        let attempt = deliverer.attempt(&delivery, sent_at).await;
        let next = schedule.next(number, attempt.outcome, &mut rng);
        attempts.push(attempt);
        match next {
            NextAction::Retry { after } => {
                assert!(
                    after >= Duration::from_secs(300),
                    "Retry-After honoured: {after:?}"
                );
                sent_at += ChronoDuration::from_std(after).unwrap();
            }
            NextAction::Stop(end) => {
                assert_eq!(end, Final::Delivered);
                break;
            }
        }
    }
    assert_eq!(attempts.len(), 3);
    let last = &attempts[2];
    assert!(last.sent_at - first_sent >= ChronoDuration::minutes(10));

    let received = receiver.received();
    let (first, third) = (&received[0], &received[2]);
    assert_eq!(first.header("webhook-id"), third.header("webhook-id"));
    assert_eq!(first.body, third.body);
    // The receiver's clock at the last arrival is the last attempt's send time.
    let now = last.sent_at.timestamp();
    let check = |request: &crate::common::receiver::Received| {
        verify(
            &key,
            &request.header("webhook-id"),
            &request.header("webhook-timestamp"),
            &request.header("webhook-signature"),
            &request.body,
            now,
            300,
        )
    };
    assert_eq!(check(third), Ok(()), "the late retry is signed afresh");
    assert_eq!(
        check(first),
        Err(Rejected::TooOld),
        "a replayed first attempt is not"
    );
}

#[tokio::test]
async fn gone_stops_at_once() {
    let receiver = Receiver::start(vec![], Reply::status(410)).await;
    let dispatcher = Dispatcher::new(
        private(),
        Schedule::scaled(SCALE).unwrap(),
        EndpointLimits::default(),
    );
    let log = Log::default();
    let report = dispatcher
        .run(
            &delivery(
                &receiver.url(),
                match_message("mat_gone", "p"),
                &[&secret(12)],
            ),
            1,
            &log,
            &mut StdRng::seed_from_u64(3),
        )
        .await
        .unwrap();
    assert_eq!(report.end, Final::Gone);
    assert_eq!(report.end.status(), "failed");
    assert_eq!(report.last_attempt, 1);
    assert_eq!(receiver.received().len(), 1);
    assert_eq!(log.0.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn every_failure_is_retried_until_the_schedule_runs_out() {
    let receiver = Receiver::start(vec![], Reply::status(500)).await;
    let dispatcher = Dispatcher::new(
        private(),
        Schedule::scaled(SCALE).unwrap(),
        EndpointLimits::default(),
    );
    let log = Log::default();
    let report = dispatcher
        .run(
            &delivery(
                &receiver.url(),
                match_message("mat_fail", "p"),
                &[&secret(13)],
            ),
            1,
            &log,
            &mut StdRng::seed_from_u64(4),
        )
        .await
        .unwrap();
    assert_eq!(report.end, Final::Exhausted);
    assert_eq!(report.last_attempt, 9);
    assert_eq!(receiver.received().len(), 9);
}

#[tokio::test]
async fn retry_after_is_read_and_capped_at_the_schedule_maximum() {
    let in_a_minute = (Utc::now() + ChronoDuration::seconds(60))
        .to_rfc2822()
        .replace("+0000", "GMT");
    let receiver = Receiver::start(
        vec![
            Reply::status(429).header("retry-after", "3600"),
            Reply::status(503).header("retry-after", in_a_minute),
        ],
        Reply::status(200),
    )
    .await;
    let delivery = delivery(
        &receiver.url(),
        match_message("mat_ra", "p"),
        &[&secret(14)],
    );
    let deliverer = private();
    let schedule = Schedule::default();
    let mut rng = StdRng::seed_from_u64(5);

    let hour = deliverer.attempt(&delivery, Utc::now()).await;
    assert_eq!(
        hour.outcome,
        Outcome::Retryable {
            retry_after: Some(Duration::from_secs(3600))
        }
    );
    let NextAction::Retry { after } = schedule.next(1, hour.outcome, &mut rng) else {
        panic!("expected a retry")
    };
    assert!(
        (300.0..=330.0).contains(&after.as_secs_f64()),
        "capped: {after:?}"
    );

    let dated = deliverer.attempt(&delivery, Utc::now()).await;
    let Outcome::Retryable {
        retry_after: Some(asked),
    } = dated.outcome
    else {
        panic!("expected a Retry-After, got {:?}", dated.outcome)
    };
    assert!((55..=61).contains(&asked.as_secs()), "{asked:?}");
}

#[tokio::test]
async fn a_burst_of_failures_is_retried_with_jitter() {
    // A receiver that is down: the port was bound, then closed.
    let closed = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap()
    };
    let url = format!("http://{closed}/hook");
    let deliverer = private();
    let schedule = Schedule::default();
    let mut rng = StdRng::seed_from_u64(6);
    let key = secret(15);
    let mut next_times = Vec::new();
    for i in 0..1_000 {
        let delivery = delivery(&url, match_message(&format!("mat_{i}"), "p"), &[&key]);
        let attempt = deliverer
            .attempt(&delivery, DateTime::from_timestamp(0, 0).unwrap())
            .await;
        assert!(attempt.error.is_some() && attempt.status.is_none());
        let NextAction::Retry { after } = schedule.next(5, attempt.outcome, &mut rng) else {
            panic!("a connection error is retried")
        };
        next_times.push(after.as_secs_f64());
    }
    let min = next_times.iter().copied().fold(f64::MAX, f64::min);
    let max = next_times.iter().copied().fold(f64::MIN, f64::max);
    assert!(
        min >= 27.0 && max <= 33.0,
        "within ±10 % of 30 s: {min}..{max}"
    );
    assert!(max - min > 3.0, "not all at the same instant: {min}..{max}");
    let mut distinct = next_times.clone();
    distinct.sort_by(f64::total_cmp);
    distinct.dedup();
    assert!(
        distinct.len() > 900,
        "{} distinct next-attempt times",
        distinct.len()
    );
}

struct Broken;

#[derive(Debug, thiserror::Error)]
#[error("the store is down")]
struct StoreDown;

impl AttemptRecorder for Broken {
    type Error = StoreDown;

    async fn record(
        &self,
        _: &Delivery,
        _: u32,
        _: &Attempt,
        _: NextAction,
    ) -> Result<(), StoreDown> {
        Err(StoreDown)
    }
}

#[tokio::test]
async fn a_recorder_failure_stops_the_run_for_a_later_one() {
    let receiver = Receiver::start(vec![], Reply::status(500)).await;
    let dispatcher = Dispatcher::new(
        private(),
        Schedule::scaled(SCALE).unwrap(),
        EndpointLimits::default(),
    );
    let result = dispatcher
        .run(
            &delivery(
                &receiver.url(),
                match_message("mat_store", "p"),
                &[&secret(16)],
            ),
            1,
            &Broken,
            &mut StdRng::seed_from_u64(7),
        )
        .await;
    assert!(result.is_err());
    assert_eq!(
        receiver.received().len(),
        1,
        "no attempt after one it could not record"
    );
}

#[tokio::test]
async fn a_step_is_one_attempt_and_what_follows() {
    let receiver = Receiver::start(vec![Reply::status(502)], Reply::status(200)).await;
    let dispatcher = Dispatcher::new(private(), Schedule::default(), EndpointLimits::default());
    let delivery = delivery(
        &receiver.url(),
        match_message("mat_step", "p"),
        &[&secret(17)],
    );
    let mut rng = StdRng::seed_from_u64(8);
    // A resumed delivery: attempts 1 to 3 were made by a worker that died.
    let (attempt, next) = dispatcher.step(&delivery, 4, &mut rng).await;
    assert_eq!(attempt.status, Some(502));
    let NextAction::Retry { after } = next else {
        panic!("expected a retry, got {next:?}")
    };
    assert!(
        (9.0..=11.0).contains(&after.as_secs_f64()),
        "the 4th retry waits ~10 s: {after:?}"
    );
    let (attempt, next) = dispatcher.step(&delivery, 5, &mut rng).await;
    assert_eq!(attempt.status, Some(200));
    assert_eq!(next, NextAction::Stop(Final::Delivered));
}
