//! A delivery run through all its attempts in process, for the tests: the
//! worker makes one attempt per tick with `Dispatcher::step_holding` and keeps the
//! schedule in the database; these tests follow one delivery from its first
//! attempt to its end, recording each attempt as the worker would.

use matchplane_webhook::{Attempt, Delivery, Dispatcher, Final, NextAction};
use rand::Rng;
use std::future::Future;

/// Where a run records its attempts.
pub trait AttemptRecorder: Send + Sync {
    /// Why recording failed.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Records attempt number `number` (1 for the first) of `delivery`, and
    /// what follows it. The run waits for it before going on.
    fn record(
        &self,
        delivery: &Delivery,
        number: u32,
        attempt: &Attempt,
        next: NextAction,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Report {
    /// The delivery's end.
    pub end: Final,
    /// Number of the last attempt made.
    pub last_attempt: u32,
}

/// A run stopped because recording failed.
#[derive(Debug)]
pub struct RecordFailed<E>(pub E);

/// [`Step::step`] on the dispatcher.
pub trait Step {
    /// Makes attempt number `number` of `delivery` under its endpoint's
    /// cap (waiting for a slot, as the worker takes one), and says what
    /// follows.
    fn step<G: Rng + Send + ?Sized>(
        &self,
        delivery: &Delivery,
        number: u32,
        rng: &mut G,
    ) -> impl Future<Output = (Attempt, NextAction)> + Send;
}

impl Step for Dispatcher {
    async fn step<G: Rng + Send + ?Sized>(
        &self,
        delivery: &Delivery,
        number: u32,
        rng: &mut G,
    ) -> (Attempt, NextAction) {
        let slot = self.limits().acquire(&delivery.endpoint_key()).await;
        self.step_holding(slot.as_ref(), delivery, number, rng)
            .await
    }
}

/// [`RunToEnd::run`] on the dispatcher.
pub trait RunToEnd {
    /// Runs `delivery` from attempt `first_attempt` until it is delivered,
    /// gone, refused or out of attempts, sleeping between attempts; every
    /// attempt goes to `recorder` first, and a failure to record stops it.
    fn run<R: AttemptRecorder, G: Rng + Send + ?Sized>(
        &self,
        delivery: &Delivery,
        first_attempt: u32,
        recorder: &R,
        rng: &mut G,
    ) -> impl Future<Output = Result<Report, RecordFailed<R::Error>>> + Send;
}

impl RunToEnd for Dispatcher {
    async fn run<R: AttemptRecorder, G: Rng + Send + ?Sized>(
        &self,
        delivery: &Delivery,
        first_attempt: u32,
        recorder: &R,
        rng: &mut G,
    ) -> Result<Report, RecordFailed<R::Error>> {
        let mut number = first_attempt.max(1);
        loop {
            let (attempt, next) = self.step(delivery, number, rng).await;
            recorder
                .record(delivery, number, &attempt, next)
                .await
                .map_err(RecordFailed)?;
            match next {
                NextAction::Stop(end) => {
                    return Ok(Report {
                        end,
                        last_attempt: number,
                    })
                }
                NextAction::Retry { after } => {
                    tokio::time::sleep(after).await;
                    number = number.saturating_add(1);
                }
            }
        }
    }
}
