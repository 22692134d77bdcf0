//! A whole worker with PostgreSQL black-holed (connections open, nothing
//! answered: the fault proxy stalled) keeps each 1-second mode cycling at
//! the pace docs/operations.md ("What losing a dependency costs") states,
//! with or without acceptance, while it claims a match every cycle and its
//! delivery loop waits on the database too; once the database answers
//! again, every match claimed meanwhile is stored, once.

use crate::env::{mode_config, Env};
use crate::fault_proxy::FaultProxy;
use chrono::Utc;
use matchplane_store::db::{connect_with, DbTimeouts};
use matchplane_store::pool::AnswerOutcome;
use matchplane_store::repos::{game_modes, matches};
use matchplane_worker::record::OutboxConsumer;
use matchplane_worker::tick::TickOutcome;
use matchplane_worker::WorkerError;
use matchplane_worker::{run_worker, shares};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long the database stays black-holed.
const HOLE: Duration = Duration::from_secs(24);

/// The cycles a 1-second mode starts in [`HOLE`] at least. The docs bound a
/// cycle during the outage by its pause (1 s) and its waits for the
/// database (1 s in all for its reads and figures, 3 s for storing its
/// claimed matches): about 5 s, so 5 cycles start in 24 s. One is spared
/// for a loaded machine: 4 start even if each takes 7.5 s. Before the
/// waits were bounded, 3 started (a cycle every 8.5 s), and 1 in a mode
/// with acceptance.
const MIN_CYCLES: usize = 4;

/// A 1-second mode, black-holed for [`HOLE`]: at least [`MIN_CYCLES`] cycles
/// start meanwhile, and every match claimed is stored once it is over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_black_holed_database_keeps_a_mode_cycling_at_the_documented_pace() {
    through_a_black_hole(false).await;
}

/// As above, in a mode with acceptance: its players accept every proposal,
/// and the proposal sweeps between cycles do not hold the cycles up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_black_holed_database_keeps_an_acceptance_mode_cycling_at_the_documented_pace() {
    through_a_black_hole(true).await;
}

/// Where the mode's webhooks go: nothing listens there, and nothing is
/// stored to send before the black hole ends.
const WEBHOOK: &str = "http://127.0.0.1:9/hook";

async fn through_a_black_hole(acceptance: bool) {
    let env = Env::new(Some(WEBHOOK), 1.0).await;
    if acceptance {
        let mut config = mode_config("duel", Some(WEBHOOK), 1.0);
        config["acceptance"] = json!({"timeoutSeconds": 30});
        game_modes::replace(&env.db, &env.project_id, "duel", config, Utc::now())
            .await
            .unwrap();
    }
    let proxy = FaultProxy::start(&env.database_host()).await;
    // The worker's own database settings (`matchplane worker`).
    let url = env.db_url_via(&format!("127.0.0.1:{}", proxy.port));
    let worker_db = connect_with(&url, DbTimeouts::default()).await.unwrap();
    let starts: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let mut config = env.worker_config("w");
    config.lease_ttl = Duration::from_secs(5);
    let log = starts.clone();
    config.on_cycle = Some(Arc::new(move |_, start, at| {
        if start {
            log.lock().unwrap().push(at);
        }
    }));
    let stop = CancellationToken::new();
    tokio::spawn(run_worker(
        config,
        env.pool.clone(),
        env.tickets.clone(),
        worker_db,
        stop.clone(),
    ));

    // One match through the healthy database first.
    pair(&env, "warm", acceptance).await;
    wait_for_stored(&env, 1, Duration::from_secs(20)).await;
    // Deliveries the worker keeps attempting (nothing listens at their
    // URL), so that its delivery loop has database calls of its own in
    // flight when the database falls silent.
    for _ in 0..20 {
        env.queue_delivery(Utc::now()).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;

    proxy.stall();
    let holed = Instant::now();
    let mut pairs = 0;
    while holed.elapsed() < HOLE {
        pair(&env, &format!("p{pairs}"), acceptance).await;
        pairs += 1;
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let during: Vec<Duration> = starts
        .lock()
        .unwrap()
        .iter()
        .filter(|at| **at >= holed)
        .map(|at| at.duration_since(holed))
        .collect();
    assert_eq!(
        stored(&env).await,
        1,
        "nothing stored during the black hole"
    );
    proxy.resume();
    assert!(
        during.len() >= MIN_CYCLES,
        "{} cycles started in {HOLE:?} of black hole (at {during:?}), not at least {MIN_CYCLES}",
        during.len()
    );

    // Every match claimed meanwhile is stored once the database answers.
    let waiting = Instant::now() + Duration::from_secs(30);
    while !env.pool.snapshot(&env.mode).await.unwrap().is_empty() {
        assert!(Instant::now() < waiting, "searches left in the pool");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    wait_for_stored(&env, 1 + pairs, Duration::from_secs(30)).await;
    stop.cancel();
}

/// Adds two searches that match each other; in a mode with acceptance, a
/// task accepts their proposal for both once it is made.
async fn pair(env: &Env, name: &str, acceptance: bool) {
    let a = env.add(&format!("{name}-a"), 1500.0).await;
    let b = env.add(&format!("{name}-b"), 1500.0).await;
    if !acceptance {
        return;
    }
    let (pool, mode) = (env.pool.clone(), env.mode.clone());
    tokio::spawn(async move {
        for ticket in [a, b] {
            let until = Instant::now() + Duration::from_secs(120);
            while Instant::now() < until {
                let now = Utc::now().timestamp_micros() as f64 / 1e6;
                match pool.answer(&mode, &ticket, true, now).await {
                    Ok(AnswerOutcome::Open { .. } | AnswerOutcome::Closed { .. }) => break,
                    _ => tokio::time::sleep(Duration::from_millis(100)).await,
                }
            }
        }
    });
}

async fn stored(env: &Env) -> usize {
    matches::list(&env.db, &env.project_id, None, None, 1000)
        .await
        .unwrap()
        .len()
}

/// Waits until exactly `n` matches are stored (never more).
async fn wait_for_stored(env: &Env, n: usize, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let count = stored(env).await;
        assert!(count <= n, "{count} matches stored, more than {n}");
        if count == n {
            return;
        }
        assert!(Instant::now() < deadline, "{count} matches stored, not {n}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// An attempt to store the outbox on a pooled connection that is open but
/// never answers again (the driver hands it out without a check) ends
/// within its limit (3 s), its match kept in the outbox; once the database
/// answers, the next attempt stores it, on the same pool. Before: the
/// attempt waited for as long as the network stayed silent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn storing_on_an_open_connection_that_never_answers_ends_in_time() {
    let env = Env::new(None, 1.0).await;
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let token = env.lease("w", Duration::from_secs(60)).await;
    assert_eq!(env.tick(token).await.0, TickOutcome::Matched(1));

    let proxy = FaultProxy::start(&env.database_host()).await;
    let url = env.db_url_via(&format!("127.0.0.1:{}", proxy.port));
    let mut options = sea_orm::ConnectOptions::new(url);
    options
        .sqlx_logging(false)
        .max_connections(1)
        .test_before_acquire(false);
    let open = sea_orm::Database::connect(options).await.unwrap();
    // The pool's one connection, open and idle.
    matches::list(&open, &env.project_id, None, None, 1)
        .await
        .unwrap();
    proxy.stall();
    let consumer = OutboxConsumer {
        db: &open,
        ..env.consumer("w", Duration::from_secs(60))
    };
    let started = Instant::now();
    let attempt = consumer.drain(&env.mode, false, Utc::now(), 10);
    let ended = tokio::time::timeout(Duration::from_secs(20), attempt).await;
    let took = started.elapsed();
    assert!(
        matches!(ended, Ok(Err(WorkerError::Timeout(_)))),
        "{ended:?} after {took:?}"
    );
    assert!(took < Duration::from_secs(8), "the attempt took {took:?}");
    assert_eq!(stored(&env).await, 0);

    proxy.resume();
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        match consumer.drain(&env.mode, false, Utc::now(), 10).await {
            Ok(n) => {
                assert_eq!(n, 1);
                break;
            }
            Err(err) => assert!(Instant::now() < until, "{err}"),
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(stored(&env).await, 1);
}

/// The worker that runs a mode stops while the database answers nothing:
/// the mode moves to the other worker as with the database up (once the
/// stopped one's heartbeat lapses), although that worker's listing of the
/// modes waits on a connection the database no longer answers. Before: it
/// never moved, the other worker's scheduler waiting on its listing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_workers_mode_moves_while_the_database_answers_nothing() {
    let env = Env::new(None, 1.0).await;
    let proxy = FaultProxy::start(&env.database_host()).await;
    let names = ["one".to_owned(), "two".to_owned()];
    let owner = shares::owner(&names, &env.mode).unwrap().to_owned();
    let other = names.iter().find(|n| **n != owner).unwrap().clone();
    let log: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let mut stops = Vec::new();
    for name in &names {
        let mut config = env.worker_config(name);
        config.lease_ttl = Duration::from_secs(1);
        let (name, log) = (name.clone(), log.clone());
        config.on_cycle = Some(Arc::new(move |_, start, at| {
            if start {
                log.lock().unwrap().push((name.clone(), at));
            }
        }));
        let stop = CancellationToken::new();
        tokio::spawn(run_worker(
            config,
            env.pool.clone(),
            env.tickets.clone(),
            unchecked_pool(&env, &proxy).await,
            stop.clone(),
        ));
        stops.push(stop);
    }
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    wait_for_stored(&env, 1, Duration::from_secs(20)).await;

    proxy.stall();
    // Long enough for each scheduler to start a listing that hangs.
    tokio::time::sleep(Duration::from_secs(1)).await;
    stops[names.iter().position(|n| *n == owner).unwrap()].cancel();
    let stopped = Instant::now();
    let within = Duration::from_secs(15);
    loop {
        let moved = log
            .lock()
            .unwrap()
            .iter()
            .any(|(name, at)| *name == other && *at > stopped);
        if moved {
            break;
        }
        assert!(
            stopped.elapsed() < within,
            "{other} ran no cycle of the mode in {within:?} after {owner} stopped"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    proxy.resume();
    for stop in stops {
        stop.cancel();
    }
}

/// A worker's database through `proxy` with the worker's waits, whose
/// pooled connections are handed out without a check: a call on one once
/// the database falls silent waits for as long as nothing bounds it.
async fn unchecked_pool(env: &Env, proxy: &FaultProxy) -> sea_orm::DatabaseConnection {
    let url = env.db_url_via(&format!("127.0.0.1:{}", proxy.port));
    let timeouts = DbTimeouts::default();
    let mut options = sea_orm::ConnectOptions::new(url);
    options
        .sqlx_logging(false)
        .connect_timeout(timeouts.connect)
        .acquire_timeout(timeouts.acquire)
        .test_before_acquire(false);
    sea_orm::Database::connect(options).await.unwrap()
}
