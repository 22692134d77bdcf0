//! The worker through its dependencies' faults: a Redis restarted without
//! persistence (its own `redis-server` on a spare port, which the test
//! kills and starts again empty), and PostgreSQL out of reach (the fault
//! proxy of the API's tests in front of it).

use crate::env::Env;
use crate::fault_proxy::FaultProxy;
use chrono::Utc;
use matchplane_store::db::{connect_with, DbTimeouts};
use matchplane_store::repos::{matches, mode_holds};
use matchplane_worker::config::CycleHook;
use matchplane_worker::run_worker;
use matchplane_worker::tick::{TickOutcome, Ticker};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// A `redis-server` of this test alone, keeping nothing on disk.
struct OwnRedis {
    port: u16,
    child: Option<Child>,
}

impl OwnRedis {
    async fn start() -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut redis = Self { port, child: None };
        redis.spawn().await;
        redis
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/0", self.port)
    }

    async fn spawn(&mut self) {
        let child = Command::new("redis-server")
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir", "/tmp"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server on the PATH");
        self.child = Some(child);
        for _ in 0..100 {
            if tokio::net::TcpStream::connect(("127.0.0.1", self.port))
                .await
                .is_ok()
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("redis-server did not start on {}", self.port);
    }

    /// Kills the server (everything it held is lost) and starts it again.
    async fn restart(&mut self) {
        self.kill();
        self.spawn().await;
    }

    /// Kills the server: everything it held is lost.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }
}

impl Drop for OwnRedis {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

type Log = Arc<Mutex<Vec<(String, Instant)>>>;

fn starts(name: &str, log: &Log) -> CycleHook {
    let (name, log) = (name.to_owned(), Arc::clone(log));
    Arc::new(move |_, start, at| {
        if start {
            log.lock().unwrap().push((name.clone(), at));
        }
    })
}

/// `matchplane_worker_modes_held` counts a lease only while it surely
/// runs: with Redis gone for longer than the lease, the worker stops
/// counting the mode (another worker may take it once Redis is back), and
/// counts it again once it holds the lease again.
#[test]
fn modes_held_drops_a_lease_that_lapsed_while_redis_was_away() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let recorder = matchplane_worker::metrics::build_recorder().unwrap();
    let handle = recorder.handle();
    let held = move || {
        let text = handle.render();
        text.lines()
            .find_map(|l| l.strip_prefix("matchplane_worker_modes_held "))
            .map(|v| v.parse::<f64>().unwrap())
    };
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            let mut redis = OwnRedis::start().await;
            let env = Env::on_redis(None, 0.3, &redis.url()).await;
            let mut config = env.worker_config("one");
            config.lease_ttl = Duration::from_millis(1500);
            let stop = spawn_configured(&env, config, env.db.clone());
            let until = |want: f64, within: Duration| {
                let held = held.clone();
                async move {
                    let deadline = Instant::now() + within;
                    while held() != Some(want) {
                        assert!(
                            Instant::now() < deadline,
                            "modes held {:?}, not {want}",
                            held()
                        );
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            };
            until(1.0, Duration::from_secs(10)).await;
            redis.kill();
            // The lease runs at most 1.5 lease times past its last renewal,
            // and the next renewal (a tenth of a lease time later) fails.
            until(0.0, Duration::from_secs(6)).await;
            redis.spawn().await;
            until(1.0, Duration::from_secs(10)).await;
            stop.cancel();
        });
    });
}

/// The worker's scrape reads its dependencies' health like the API's:
/// `matchplane_dependency_up{dependency="redis"}` is 0 while its Redis is
/// gone and 1 again once it is back (docs/operations.md, 'Metrics'); the
/// database stays 1 throughout.
#[test]
fn a_scrape_reads_redis_down_and_up_again() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let recorder = matchplane_worker::metrics::build_recorder().unwrap();
    let handle = recorder.handle();
    let up = move |dependency: &str| {
        let series = format!("matchplane_dependency_up{{dependency=\"{dependency}\"}} ");
        handle
            .render()
            .lines()
            .find_map(|l| l.strip_prefix(series.as_str()).map(str::to_owned))
    };
    metrics::with_local_recorder(&recorder, || {
        runtime.block_on(async {
            use matchplane_worker::metrics::{check_dependencies, Dependencies};
            let mut redis = OwnRedis::start().await;
            let env = Env::on_redis(None, 0.3, &redis.url()).await;
            let deps = Dependencies {
                db: env.db.clone(),
                live: env.tickets.clone(),
            };
            assert_eq!(check_dependencies(&deps).await, (true, true));
            assert_eq!(up("redis").as_deref(), Some("1"));
            redis.kill();
            assert_eq!(check_dependencies(&deps).await, (true, false));
            assert_eq!(up("redis").as_deref(), Some("0"));
            assert_eq!(up("database").as_deref(), Some("1"));
            redis.spawn().await;
            let mut back = false;
            for _ in 0..100 {
                if check_dependencies(&deps).await == (true, true) {
                    back = true;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            assert!(back, "redis is up again");
            assert_eq!(up("redis").as_deref(), Some("1"));
        });
    });
}

/// Two workers on one mode, Redis restarted empty five times under them:
/// after each restart one worker runs the mode's cycles, never both (the
/// fence counter starts again at zero, yet the old holder's token does not
/// renew the lease the other worker takes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_without_persistence_leaves_one_lease_holder() {
    let mut redis = OwnRedis::start().await;
    let env = Env::on_redis(None, 0.3, &redis.url()).await;
    let log: Log = Arc::default();
    let mut stops = Vec::new();
    for name in ["one", "two"] {
        let mut config = env.worker_config(name);
        config.lease_ttl = Duration::from_millis(1500);
        config.on_cycle = Some(starts(name, &log));
        stops.push(spawn_configured(&env, config, env.db.clone()));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    for round in 0..5 {
        redis.restart().await;
        let restarted = Instant::now();
        tokio::time::sleep(Duration::from_millis(3500)).await;
        // Past the takeover (a lease time at most), one holder only.
        let from = restarted + Duration::from_millis(2000);
        let holders: std::collections::BTreeSet<String> = log
            .lock()
            .unwrap()
            .iter()
            .filter(|(_, at)| *at >= from)
            .map(|(name, _)| name.clone())
            .collect();
        assert_eq!(
            holders.len(),
            1,
            "after restart {round}, cycles on {holders:?} at once"
        );
    }
    for stop in stops {
        stop.cancel();
    }
}

/// PostgreSQL out of reach for the worker: the mode keeps cycling on its
/// last config (searches are claimed from Redis), and the matches claimed
/// meanwhile are stored once the database is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_outage_keeps_matching_and_stores_afterwards() {
    let env = Env::new(None, 0.1).await;
    let upstream = env.database_host();
    let mut proxy = FaultProxy::start(&upstream).await;
    let port = proxy.port;
    let worker_db = proxied_database(&env, &proxy).await;
    let stop = spawn_worker(&env, worker_db);

    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    wait_for_matches(&env, 1, Duration::from_secs(10)).await;

    proxy.drop_all();
    for i in 0..10 {
        env.add(&format!("out-{i}"), 1500.0).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !env.pool.snapshot(&env.mode).await.unwrap().is_empty() {
        assert!(
            Instant::now() < deadline,
            "no search claimed while the database is out of reach"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(stored(&env).await, 1, "nothing stored during the outage");

    proxy = FaultProxy::start_on(&upstream, port).await;
    wait_for_matches(&env, 6, Duration::from_secs(20)).await;
    drop(proxy);
    stop.cancel();
}

/// The worker's connection to PostgreSQL through a fault proxy, giving up
/// on a connection or a pooled one after a second.
async fn proxied_database(env: &Env, proxy: &FaultProxy) -> sea_orm::DatabaseConnection {
    let timeouts = DbTimeouts {
        connect: Duration::from_secs(1),
        acquire: Duration::from_secs(1),
    };
    let url = env.db_url_via(&format!("127.0.0.1:{}", proxy.port));
    connect_with(&url, timeouts).await.unwrap()
}

/// A worker (2 s leases) on `env`'s stores and `db`, until the token is
/// cancelled.
fn spawn_worker(env: &Env, db: sea_orm::DatabaseConnection) -> CancellationToken {
    let mut config = env.worker_config("w");
    config.lease_ttl = Duration::from_secs(2);
    spawn_configured(env, config, db)
}

/// A worker of `config` on `env`'s stores and `db`; cancel to stop it.
fn spawn_configured(
    env: &Env,
    config: matchplane_worker::WorkerConfig,
    db: sea_orm::DatabaseConnection,
) -> CancellationToken {
    let stop = CancellationToken::new();
    tokio::spawn(run_worker(
        config,
        env.pool.clone(),
        env.tickets.clone(),
        db,
        stop.clone(),
    ));
    stop
}

/// A held mode stays held while the worker cannot read its hold: the
/// worker goes on with the hold it last read, and matches nobody until the
/// hold is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_mode_stays_held_through_a_database_outage() {
    let env = Env::new(None, 0.1).await;
    let upstream = env.database_host();
    let mut proxy = FaultProxy::start(&upstream).await;
    let port = proxy.port;
    let worker_db = proxied_database(&env, &proxy).await;
    let (project, mode) = (&env.project_id, &env.mode.mode);
    mode_holds::hold(&env.db, project, mode, "test", Utc::now())
        .await
        .unwrap();
    let stop = spawn_worker(&env, worker_db);
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    tokio::time::sleep(Duration::from_secs(1)).await;

    proxy.drop_all();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let waiting = env.pool.snapshot(&env.mode).await.unwrap().len();
    assert_eq!(
        waiting, 2,
        "a held mode matched while its hold could not be read"
    );

    proxy = FaultProxy::start_on(&upstream, port).await;
    mode_holds::release(&env.db, project, mode).await.unwrap();
    wait_for_matches(&env, 1, Duration::from_secs(20)).await;
    drop(proxy);
    stop.cancel();
}

/// A worker that takes a held mode over while the database is out of reach
/// (its last holder stopped) keeps it held: the hold the last worker read
/// is kept in the pool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_mode_taken_over_during_a_database_outage_stays_held() {
    let env = Env::new(None, 0.1).await;
    let (project, mode) = (&env.project_id, &env.mode.mode);
    mode_holds::hold(&env.db, project, mode, "test", Utc::now())
        .await
        .unwrap();
    env.add("a", 1500.0).await;
    env.add("b", 1500.0).await;
    let token = env.lease("w1", Duration::from_secs(60)).await;
    let (outcome, report) = env.tick(token).await;
    assert!(report.held && outcome == TickOutcome::Idle, "{outcome:?}");

    let proxy = FaultProxy::start(&env.database_host()).await;
    let gone = proxied_database(&env, &proxy).await;
    proxy.drop_all();
    let never_read = matchplane_worker::tick::Carried::default();
    let ticker = Ticker {
        pool: env.pool.as_ref(),
        db: &gone,
        claim_concurrency: 16,
        expire_batch: 100,
        ends: None,
        lapses: None,
        period: None,
        carried: Some(&never_read),
    };
    let config = env.config().await;
    let (outcome, report) = ticker
        .tick(&env.mode, &config, token, Utc::now())
        .await
        .unwrap();
    assert!(report.held, "the new holder matched a held mode");
    assert_eq!(outcome, TickOutcome::Idle);
    assert_eq!(env.pool.snapshot(&env.mode).await.unwrap().len(), 2);
}

/// A database that answers nothing (a black-holed network) holds a cycle
/// up for its bounded reads and writes only, and the cycle's clock moves on
/// by the time they took: a search that started while the cycle waited is
/// never matched, nor its match dated, before its own start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_database_delays_a_cycle_briefly_and_never_dates_a_match_early() {
    let env = Env::new(None, 0.1).await;
    let proxy = FaultProxy::start(&env.database_host()).await;
    let slow = proxied_database(&env, &proxy).await;
    let token = env.lease("w", Duration::from_secs(60)).await;
    let config = env.config().await;
    env.add("a", 1500.0).await;
    proxy.stall();
    let ticker = Ticker {
        pool: env.pool.as_ref(),
        db: &slow,
        claim_concurrency: 16,
        expire_batch: 100,
        ends: None,
        lapses: None,
        period: None,
        carried: None,
    };
    let started = Utc::now();
    let late = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let at = Utc::now();
        env.add("b", 1500.0).await;
        at
    };
    let cycle = ticker.tick(&env.mode, &config, token, started);
    let (ticked, b_started) =
        tokio::join!(tokio::time::timeout(Duration::from_secs(10), cycle), late);
    let (outcome, _) = ticked.expect("the cycle ended").unwrap();
    assert_eq!(outcome, TickOutcome::Matched(1));
    let took = (Utc::now() - started).to_std().unwrap();
    assert!(took < Duration::from_secs(4), "the cycle waited {took:?}");

    env.drain("c").await;
    let stored = matches::list(&env.db, &env.project_id, None, None, 10)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert!(
        stored[0].created_at >= b_started,
        "a match dated {} holds a search started at {b_started}",
        stored[0].created_at
    );
    drop(proxy);
}

async fn stored(env: &Env) -> usize {
    matches::list(&env.db, &env.project_id, None, None, 1000)
        .await
        .unwrap()
        .len()
}

async fn wait_for_matches(env: &Env, n: usize, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        let count = stored(env).await;
        if count >= n {
            assert_eq!(count, n);
            return;
        }
        assert!(Instant::now() < deadline, "{count} matches stored, not {n}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The sweep goes on without the database: due searches still expire
/// (a deleted mode's searches wait for it to come back).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweep_expires_due_searches_without_the_database() {
    let env = Env::new(None, 0.1).await;
    env.add("a", 1500.0).await;
    let proxy = FaultProxy::start(&env.database_host()).await;
    let gone = proxied_database(&env, &proxy).await;
    proxy.drop_all();
    let sweeper = matchplane_worker::sweep::Sweeper {
        pool: env.pool.as_ref(),
        db: &gone,
        expire_batch: 100,
        concurrency: 4,
        ends: None,
        lapses: None,
    };
    let later = Utc::now() + chrono::Duration::seconds(700);
    let report = sweeper.pass(later).await.unwrap();
    assert_eq!(report.expired, 1, "{report:?}");
    assert!(env.pool.snapshot(&env.mode).await.unwrap().is_empty());
}
