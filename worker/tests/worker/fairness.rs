//! One slow webhook endpoint never stalls another tenant's deliveries, and
//! no delivery is sent twice: two workers deliver a slow studio's backlog
//! (its receiver answers after 3 s) and a fast studio's few deliveries. The
//! fast ones arrive at once; each delivery arrives exactly once, and its
//! `attemptCount` equals the attempts logged. And one studio with many
//! hanging endpoints holds only its share of the in-flight slots.
//!
//! Before the fix a delivery took one of the worker's in-flight slots and
//! then waited for its endpoint's slot, so the slow backlog filled every
//! slot, the fast studio waited for it, and locks ran out while attempts
//! waited (the same delivery was then sent by both workers).

use crate::env::{mode_config, Env};
use axum::http::HeaderMap;
use axum::routing::post;
use chrono::Utc;
use matchplane_store::entities::webhook_delivery;
use matchplane_store::repos::{deliveries, game_modes, projects};
use matchplane_webhook::{Deliverer, DeliveryConfig, Dispatcher, EndpointLimits, Schedule};
use matchplane_worker::deliveries::DeliveryWorker;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

pub(crate) type Seen = Arc<Mutex<Vec<(String, Instant)>>>;

/// A receiver answering `200` after `delay`, noting each `webhook-id` and
/// when it arrived.
pub(crate) async fn receiver(delay: Duration) -> (String, Seen) {
    let seen: Seen = Arc::default();
    let noted = seen.clone();
    let app = axum::Router::new().route(
        "/hook",
        post(move |headers: HeaderMap| {
            let noted = noted.clone();
            async move {
                let id = headers
                    .get("webhook-id")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned();
                noted.lock().unwrap().push((id, Instant::now()));
                tokio::time::sleep(delay).await;
                "ok"
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), seen)
}

/// `n` deliveries of `mode`, due at `due`, queued now (after their mode
/// was created: an earlier one would be a deleted mode's, never sent).
fn queued(
    project_id: &str,
    mode: &str,
    n: usize,
    due: chrono::DateTime<Utc>,
) -> Vec<webhook_delivery::Model> {
    (0..n)
        .map(|i| webhook_delivery::Model {
            id: format!("dlv_{}_{i}", ulid::Ulid::new()),
            project_id: project_id.to_owned(),
            game_mode: mode.to_owned(),
            match_id: None,
            event_type: "match.made".to_owned(),
            payload: format!("{{\"n\":{i}}}"),
            status: "pending".to_owned(),
            attempt_count: 0,
            next_attempt_at: Some(due),
            locked_until: None,
            lock_token: None,
            attempts_before_run: 0,
            created_at: Utc::now(),
            updated_at: Utc::now(),
        })
        .collect()
}

/// A worker with 6 in-flight slots, 2 per endpoint, locks of 12 s (the
/// least a worker with 5 s attempts takes).
fn worker(env: &Env) -> DeliveryWorker {
    let deliverer = Deliverer::new(DeliveryConfig {
        allow_private: true,
        ..DeliveryConfig::default()
    })
    .unwrap();
    let dispatcher = Dispatcher::new(
        deliverer,
        Schedule::scaled(0.01).unwrap(),
        EndpointLimits::new(2, 100),
    );
    DeliveryWorker::new(
        env.db.clone(),
        Arc::new(dispatcher),
        Duration::from_secs(12),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_endpoint_never_stalls_another_tenant() {
    let (slow_url, slow_seen) = receiver(Duration::from_secs(3)).await;
    let (fast_url, fast_seen) = receiver(Duration::ZERO).await;
    let env = Env::new(Some(&slow_url), 1.0).await;
    let fast = projects::create(&env.db, "fast studio", "enterprise", Utc::now())
        .await
        .unwrap();
    game_modes::create(
        &env.db,
        &fast.id,
        "duel",
        mode_config("duel", Some(&fast_url), 1.0),
        &env.secret,
        Utc::now(),
    )
    .await
    .unwrap();
    // The slow backlog is due first, so a claim by age takes it first.
    let now = Utc::now();
    let mut rows = queued(
        &env.project_id,
        "duel",
        12,
        now - chrono::Duration::seconds(10),
    );
    rows.extend(queued(&fast.id, "duel", 6, now));
    deliveries::queue_if_absent(&env.db, rows).await.unwrap();

    let shutdown = CancellationToken::new();
    let started = Instant::now();
    let mut loops = Vec::new();
    for _ in 0..2 {
        let worker = worker(&env);
        let stop = shutdown.clone();
        loops.push(tokio::spawn(async move {
            worker.run(6, Duration::from_millis(50), stop).await
        }));
    }
    let deadline = started + Duration::from_secs(40);
    let done = |seen: &Seen, n: usize| {
        let ids: std::collections::HashSet<String> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|(id, _)| id.clone())
            .collect();
        ids.len() >= n
    };
    while !(done(&fast_seen, 6) && done(&slow_seen, 12)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Let the last answers be recorded.
    tokio::time::sleep(Duration::from_secs(4)).await;
    shutdown.cancel();
    for handle in loops {
        handle.await.unwrap();
    }

    let fast_arrivals = fast_seen.lock().unwrap().clone();
    assert_eq!(fast_arrivals.len(), 6, "{fast_arrivals:?}");
    let slowest_fast = fast_arrivals
        .iter()
        .map(|(_, at)| at.duration_since(started))
        .max()
        .unwrap();
    // A slow attempt takes 3 s: before the fix the fast studio waited for
    // at least one of them; now it waits for none.
    assert!(
        slowest_fast < Duration::from_millis(2500),
        "the fast studio's last delivery arrived after {slowest_fast:?}"
    );

    let mut sent: HashMap<String, usize> = HashMap::new();
    for (id, _) in slow_seen.lock().unwrap().iter().chain(fast_arrivals.iter()) {
        *sent.entry(id.clone()).or_default() += 1;
    }
    let twice: Vec<_> = sent.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "sent more than once: {twice:?}");
    assert_eq!(sent.len(), 18);

    for project in [&env.project_id, &fast.id] {
        for (delivery, attempts) in deliveries::of_mode(
            &env.db,
            project,
            ("duel", chrono::DateTime::UNIX_EPOCH),
            None,
            100,
        )
        .await
        .unwrap()
        {
            assert_eq!(delivery.status, "succeeded", "{delivery:?}");
            assert_eq!(delivery.attempt_count, 1, "{delivery:?}");
            assert_eq!(attempts.len(), 1, "{attempts:?}");
            assert_eq!(attempts[0].status_code, Some(200));
        }
    }
}

/// Endpoints that accept a connection and never answer (a tarpit), each on
/// its own port; the connections are held until [`Tarpit::release`].
struct Tarpit {
    urls: Vec<String>,
    held: Arc<Mutex<Vec<tokio::net::TcpStream>>>,
    listeners: Vec<tokio::task::JoinHandle<()>>,
}

impl Tarpit {
    async fn new(endpoints: usize) -> Self {
        let held: Arc<Mutex<Vec<tokio::net::TcpStream>>> = Arc::default();
        let (mut urls, mut listeners) = (Vec::new(), Vec::new());
        for _ in 0..endpoints {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            urls.push(format!("http://{}/hook", listener.local_addr().unwrap()));
            let held = held.clone();
            listeners.push(tokio::spawn(async move {
                while let Ok((stream, _)) = listener.accept().await {
                    held.lock().unwrap().push(stream);
                }
            }));
        }
        Self {
            urls,
            held,
            listeners,
        }
    }

    /// Connections accepted and held now.
    fn hanging(&self) -> usize {
        self.held.lock().unwrap().len()
    }

    /// Stops listening and closes every held connection, so the attempts
    /// hanging on them end at once.
    fn release(&self) {
        for listener in &self.listeners {
            listener.abort();
        }
        self.held.lock().unwrap().clear();
    }
}

/// One studio with many modes, each with its webhook on its own port of a
/// tarpit, never holds up another studio: the other's `match.made` is
/// delivered while the first one's attempts still hang.
///
/// Before the fix only each endpoint was capped: with more hanging
/// endpoints than `max_in_flight / per_endpoint` one project held every
/// in-flight slot, and another project's delivery waited for one of those
/// attempts to time out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_with_many_slow_endpoints_never_stalls_another() {
    const MAX_IN_FLIGHT: usize = 8;
    const HANGING_MODES: usize = 6;
    let tarpit = Tarpit::new(HANGING_MODES).await;
    let (fast_url, fast_seen) = receiver(Duration::ZERO).await;
    let env = Env::new(None, 1.0).await;
    let slow_modes: Vec<String> = (0..HANGING_MODES).map(|i| format!("hang{i}")).collect();
    for (mode, url) in slow_modes.iter().zip(&tarpit.urls) {
        game_modes::create(
            &env.db,
            &env.project_id,
            mode,
            mode_config(mode, Some(url), 1.0),
            &env.secret,
            Utc::now(),
        )
        .await
        .unwrap();
    }
    let fast = projects::create(&env.db, "fast studio", "enterprise", Utc::now())
        .await
        .unwrap();
    game_modes::create(
        &env.db,
        &fast.id,
        "duel",
        mode_config("duel", Some(&fast_url), 1.0),
        &env.secret,
        Utc::now(),
    )
    .await
    .unwrap();
    // The slow project's backlog is due first, so a claim by age takes it
    // first: enough of it to fill every in-flight slot twice over.
    let now = Utc::now();
    let mut rows = Vec::new();
    for mode in &slow_modes {
        rows.extend(queued(
            &env.project_id,
            mode,
            4,
            now - chrono::Duration::seconds(10),
        ));
    }
    rows.extend(queued(&fast.id, "duel", 1, now));
    deliveries::queue_if_absent(&env.db, rows).await.unwrap();

    let shutdown = CancellationToken::new();
    let worker = worker(&env);
    let stop = shutdown.clone();
    let running = tokio::spawn(async move {
        worker
            .run(MAX_IN_FLIGHT, Duration::from_millis(50), stop)
            .await
    });

    // Wait for the fast studio's delivery (long past the 5 s attempt
    // timeout, so that a stalled delivery shows as late, not missing).
    let deadline = Instant::now() + Duration::from_secs(20);
    while fast_seen.lock().unwrap().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // On a loaded machine the slow project's first attempts may still be
    // connecting when the fast delivery arrives (they were started before
    // it): give them up to 2 s, well within their 5 s timeout.
    let connecting = Instant::now() + Duration::from_secs(2);
    while tarpit.hanging() == 0 && Instant::now() < connecting {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let hanging = tarpit.hanging();
    let mut slow_attempts = Vec::new();
    for mode in &slow_modes {
        for (_, attempts) in deliveries::of_mode(
            &env.db,
            &env.project_id,
            (mode, chrono::DateTime::UNIX_EPOCH),
            None,
            100,
        )
        .await
        .unwrap()
        {
            slow_attempts.extend(attempts);
        }
    }
    shutdown.cancel();
    tarpit.release();
    running.await.unwrap();

    assert_eq!(
        fast_seen.lock().unwrap().len(),
        1,
        "the fast studio's delivery never arrived"
    );
    let ended: Vec<_> = slow_attempts
        .iter()
        .filter(|a| a.error.as_deref() != Some(deliveries::ATTEMPT_UNFINISHED))
        .map(|a| (a.error.clone(), a.latency_ms))
        .collect();
    assert!(
        ended.is_empty(),
        "the fast studio's delivery waited for the slow project's attempts to end: \
         {} of them had ended (error, ms): {:?}",
        ended.len(),
        &ended[..ended.len().min(3)]
    );
    assert!(
        hanging > 0 && !slow_attempts.is_empty(),
        "the slow project's attempts were hanging ({hanging} connections)"
    );
    assert!(
        hanging < MAX_IN_FLIGHT,
        "the slow project held {hanging} of the {MAX_IN_FLIGHT} in-flight slots"
    );
}
