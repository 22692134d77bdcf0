//! Many modes over a few workers (issue 23, docs/deployment.md#scaling): `scripts/many-modes`
//! runs it.
//!
//! Creates `MODES` enabled modes (default 10 000, 100 per project, 1v1 MMR,
//! `CYCLE_SECONDS` cycles, default 5) in a fresh PostgreSQL database, puts
//! one (never matchable) search in each of `BUSY_MODES` of them (default
//! 100), starts `WORKERS` `matchplane worker` processes (default 3, the
//! binary at `MATCHPLANE_BIN`, lease `LEASE_SECONDS`, default 5) and reads
//! their metrics, Redis's `INFO commandstats` and `/proc`:
//!
//! 1. start: time until every mode is held and the shares are within ±20 %;
//! 2. steady state over `MEASURE_SECONDS` (default 60): each cycle's start
//!    to the next over the period (share within ±5 % and ±10 %), modes per
//!    worker, Redis commands per cycle and per idle cycle, RSS per worker
//!    and per mode over a worker with no modes;
//! 3. a worker killed (`SIGKILL`): time until the survivors hold every mode
//!    again, in seconds and lease times;
//! 4. a worker started: time until the shares are within ±20 % again.
//!
//! Needs `MATCHPLANE_TEST_DATABASE_URL` (an admin URL, default
//! `postgres://postgres@127.0.0.1:5432/postgres`) and
//! `MATCHPLANE_TEST_REDIS_URL` (default `redis://127.0.0.1:6379/9`); the
//! database is dropped and the Redis keys deleted at the end.

// A benchmark: a failed step ends the run with its cause.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use chrono::Utc;
use matchplane_store::pool::{ModeKey, PoolStore, RedisPoolConfig, RedisPoolStore, Search};
use matchplane_store::repos::{game_modes, projects};
use matchplane_store::test_support::TestDatabase;
use sea_orm::Database;
use serde_json::json;
use std::collections::BTreeMap;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

fn setting<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// One `matchplane worker` process.
struct Worker {
    name: String,
    child: Child,
    metrics: u16,
}

impl Worker {
    fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    /// Resident set size (bytes) from `/proc`.
    fn rss(&self) -> u64 {
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    }

    /// The worker's metrics, as `name{labels}` → value (series without
    /// labels are under their bare name).
    async fn scrape(&self) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", self.metrics)).await
        else {
            return out;
        };
        let request = "GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n";
        if stream.write_all(request.as_bytes()).await.is_err() {
            return out;
        }
        let mut text = String::new();
        if stream.read_to_string(&mut text).await.is_err() {
            return out;
        }
        for line in text.lines() {
            if line.starts_with('#') || !line.starts_with("matchplane_") {
                continue;
            }
            // Per-mode series are not needed here.
            if line.contains("mode=\"") {
                continue;
            }
            if let Some((name, value)) = line.rsplit_once(' ') {
                if let Ok(v) = value.parse::<f64>() {
                    out.insert(name.to_owned(), v);
                }
            }
        }
        out
    }
}

struct Bench {
    bin: String,
    db_url: String,
    redis_url: String,
    prefix: String,
    lease: f64,
    next_port: u16,
    spawned: usize,
    logs: std::path::PathBuf,
}

impl Bench {
    fn start(&mut self) -> Worker {
        self.spawned += 1;
        let name = format!("w{}", self.spawned);
        let metrics = self.next_port;
        self.next_port += 1;
        let log = std::fs::File::create(self.logs.join(format!("{name}.log"))).unwrap();
        let child = Command::new(&self.bin)
            .arg("worker")
            .env("DATABASE_URL", &self.db_url)
            .env("REDIS_URL", &self.redis_url)
            .env("MATCHPLANE_REDIS_PREFIX", &self.prefix)
            .env(
                "MATCHPLANE_WORKER_METRICS_LISTEN",
                format!("127.0.0.1:{metrics}"),
            )
            .env("MATCHPLANE_LEASE_TTL_SECONDS", self.lease.to_string())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
            .expect("the matchplane binary (MATCHPLANE_BIN)");
        Worker {
            name,
            child,
            metrics,
        }
    }
}

/// What all workers' metrics say at one moment.
#[derive(Default, Clone)]
struct Sample {
    held: Vec<f64>,
    cycles: f64,
    idle: f64,
    /// Period ratio histogram: `le` → cumulative count.
    ratio: BTreeMap<String, f64>,
    ratio_count: f64,
    /// Scheduler passes, by listing (`full`, `incremental`): (count, seconds).
    passes: BTreeMap<String, (f64, f64)>,
}

async fn sample(workers: &[Worker]) -> Sample {
    let mut s = Sample::default();
    for w in workers {
        let m = w.scrape().await;
        s.held.push(
            m.get("matchplane_worker_modes_held")
                .copied()
                .unwrap_or(0.0),
        );
        s.cycles += m.get("matchplane_cycles_total").copied().unwrap_or(0.0);
        s.idle += m
            .get("matchplane_idle_cycles_total")
            .copied()
            .unwrap_or(0.0);
        s.ratio_count += m
            .get("matchplane_cycle_period_ratio_count")
            .copied()
            .unwrap_or(0.0);
        for (k, v) in &m {
            for (suffix, count) in [("_count", true), ("_sum", false)] {
                if let Some(listing) = k
                    .strip_prefix("matchplane_worker_scheduler_pass_seconds")
                    .and_then(|r| r.strip_prefix(suffix))
                    .and_then(|r| r.strip_prefix("{listing=\""))
                    .and_then(|r| r.strip_suffix("\"}"))
                {
                    let e = s.passes.entry(listing.to_owned()).or_default();
                    if count {
                        e.0 += v;
                    } else {
                        e.1 += v;
                    }
                }
            }
            if let Some(le) = k
                .strip_prefix("matchplane_cycle_period_ratio_bucket{le=\"")
                .and_then(|r| r.strip_suffix("\"}"))
            {
                *s.ratio.entry(le.to_owned()).or_default() += v;
            }
        }
    }
    s
}

/// Largest deviation of a share from the even share, as a fraction of it.
fn spread(held: &[f64], modes: usize) -> f64 {
    let even = modes as f64 / held.len() as f64;
    held.iter()
        .map(|h| (h - even).abs() / even)
        .fold(0.0, f64::max)
}

/// Waits until the workers hold every mode with shares within ±20 %; the
/// time it took, or `None` after `limit`.
async fn settle(workers: &[Worker], modes: usize, since: Instant, limit: Duration) -> Option<f64> {
    let mut covered: Option<f64> = None;
    loop {
        let s = sample(workers).await;
        let total: f64 = s.held.iter().sum();
        if covered.is_none() && total >= modes as f64 {
            covered = Some(since.elapsed().as_secs_f64());
            println!("  every mode held after {:.1} s", covered.unwrap_or(0.0));
        }
        if total as usize == modes && spread(&s.held, modes) <= 0.2 {
            return Some(since.elapsed().as_secs_f64());
        }
        if since.elapsed() > limit {
            println!("  not settled after {limit:?}: held {:?}", s.held);
            return None;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn commandstats(redis: &mut redis::aio::MultiplexedConnection) -> BTreeMap<String, f64> {
    let text: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(redis)
        .await
        .unwrap();
    text.lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = rest
                .split(',')
                .find_map(|kv| kv.strip_prefix("calls="))?
                .parse()
                .ok()?;
            Some((name.to_owned(), calls))
        })
        .collect()
}

fn share_within(before: &Sample, after: &Sample, low: &str, high: &str) -> f64 {
    let at = |s: &Sample, le: &str| s.ratio.get(le).copied().unwrap_or(0.0);
    let count = after.ratio_count - before.ratio_count;
    if count <= 0.0 {
        return 0.0;
    }
    ((at(after, high) - at(before, high)) - (at(after, low) - at(before, low))) / count
}

fn print_periods(before: &Sample, after: &Sample) {
    let count = after.ratio_count - before.ratio_count;
    println!(
        "  cycle periods: {count:.0} intervals; within ±5 %: {:.2} %, within ±10 %: {:.2} %, within ±20 %: {:.2} %",
        100.0 * share_within(before, after, "0.95", "1.05"),
        100.0 * share_within(before, after, "0.9", "1.1"),
        100.0 * share_within(before, after, "0.8", "1.2"),
    );
}

#[tokio::main]
async fn main() {
    let modes: usize = setting("MODES", 10_000);
    let workers_n: usize = setting("WORKERS", 3);
    let cycle: f64 = setting("CYCLE_SECONDS", 5.0);
    let lease: f64 = setting("LEASE_SECONDS", 5.0);
    let busy: usize = setting("BUSY_MODES", 100);
    let measure: u64 = setting("MEASURE_SECONDS", 60);
    let bin =
        std::env::var("MATCHPLANE_BIN").unwrap_or_else(|_| "target/release/matchplane".into());

    let admin = std::env::var("MATCHPLANE_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let name = format!("mp_modes_{}", ulid::Ulid::new().to_string().to_lowercase());
    // Dropped with its guard, at the end.
    let database = TestDatabase::create_named(&admin, &name).await;
    let db_url = database.url().to_owned();
    let mut options = sea_orm::ConnectOptions::new(db_url.clone());
    options.sqlx_logging(false).max_connections(16);
    let db = Database::connect(options).await.unwrap();
    matchplane_migrations::migrate(&db).await.unwrap();
    let redis_url = std::env::var("MATCHPLANE_TEST_REDIS_URL")
        .unwrap_or_else(|_| "redis://127.0.0.1:6379/9".to_owned());
    let prefix = format!("modes{}", ulid::Ulid::new().to_string().to_lowercase());
    let logs = std::env::temp_dir().join(&prefix);
    std::fs::create_dir_all(&logs).unwrap();
    let mut bench = Bench {
        bin,
        db_url,
        redis_url: redis_url.clone(),
        prefix: prefix.clone(),
        lease,
        next_port: setting("METRICS_PORT", 19_400),
        spawned: 0,
        logs: logs.clone(),
    };
    println!(
        "many modes: {modes} modes ({busy} with a search), {cycle} s cycles, {workers_n} workers, lease {lease} s; logs in {}",
        logs.display()
    );

    // A worker with no modes: the baseline of the per-mode memory.
    let mut empty = bench.start();
    tokio::time::sleep(Duration::from_secs(4)).await;
    let baseline = empty.rss();
    empty.child.kill().await.ok();
    println!(
        "  worker with no modes: RSS {:.1} MB",
        baseline as f64 / 1e6
    );

    let started = Instant::now();
    let mut keys = Vec::with_capacity(modes);
    let per_project = 100;
    let mut project_id = String::new();
    for i in 0..modes {
        if i % per_project == 0 {
            project_id = projects::create(&db, &format!("bench {i}"), "enterprise", Utc::now())
                .await
                .unwrap()
                .id;
        }
        keys.push(ModeKey::new(project_id.clone(), format!("duel-{i}")));
    }
    let configs: Vec<_> = keys.iter().collect();
    let created = futures_util_stream(configs, |key| {
        let db = db.clone();
        let key = key.clone();
        async move {
            let config = json!({
                "name": key.mode, "matchShape": [1, 1],
                "matchmakingCycleDurationSeconds": cycle,
                "algorithm": { "type": "mmr", "minMmr": 0, "maxMmr": 3000,
                               "baseTolerance": 5, "expansionMultiplier": 2 },
            });
            game_modes::create(
                &db,
                &key.project_id,
                &key.mode,
                config,
                "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
                Utc::now(),
            )
            .await
            .unwrap();
        }
    })
    .await;
    let mut pool_config = RedisPoolConfig::new(redis_url.clone());
    pool_config.prefix = prefix.clone();
    let pool: Arc<dyn PoolStore> = Arc::new(RedisPoolStore::connect(pool_config).await.unwrap());
    let now = Utc::now().timestamp_micros() as f64 / 1e6;
    for (i, key) in keys
        .iter()
        .enumerate()
        .step_by((modes / busy.max(1)).max(1))
        .take(busy)
    {
        let search = Search::solo(format!("tkt_{i}"), format!("player-{i}"), 1500.0, now);
        pool.add_search(key, &search, now + 7200.0, None)
            .await
            .unwrap();
    }
    println!(
        "  {created} modes created in {:.1} s",
        started.elapsed().as_secs_f64()
    );

    let client = redis::Client::open(redis_url.as_str()).unwrap();
    let mut redis = client.get_multiplexed_async_connection().await.unwrap();

    println!("start:");
    let since = Instant::now();
    let mut workers: Vec<Worker> = (0..workers_n).map(|_| bench.start()).collect();
    let limit = Duration::from_secs(120);
    let settled = settle(&workers, modes, since, limit).await;
    println!(
        "  shares within ±20 % after {:.1} s",
        settled.unwrap_or(f64::NAN)
    );
    // Let every mode run a few cycles on its final holder.
    tokio::time::sleep(Duration::from_secs_f64(cycle * 3.0)).await;

    println!("steady state over {measure} s:");
    let before = sample(&workers).await;
    let cmds_before = commandstats(&mut redis).await;
    tokio::time::sleep(Duration::from_secs(measure)).await;
    let after = sample(&workers).await;
    let cmds_after = commandstats(&mut redis).await;
    print_periods(&before, &after);
    for (listing, (n, secs)) in &after.passes {
        let (n0, secs0) = before.passes.get(listing).copied().unwrap_or_default();
        println!(
            "  scheduler passes ({listing} listing): {:.0}, mean {:.1} ms (since start: {n:.0}, mean {:.1} ms)",
            n - n0,
            1e3 * (secs - secs0) / (n - n0).max(1.0),
            1e3 * secs / n.max(1.0)
        );
    }
    let cycles = after.cycles - before.cycles;
    let idle = after.idle - before.idle;
    println!(
        "  cycles: {cycles:.0} ({:.1}/s, expected {:.1}/s), idle {idle:.0}",
        cycles / measure as f64,
        modes as f64 / cycle
    );
    println!(
        "  modes per worker: {:?} (largest deviation from an even share {:.1} %)",
        after.held,
        100.0 * spread(&after.held, modes)
    );
    let mut deltas: Vec<(String, f64)> = cmds_after
        .iter()
        .map(|(k, v)| (k.clone(), v - cmds_before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, d)| *d > 0.0)
        .collect();
    deltas.sort_by(|a, b| b.1.total_cmp(&a.1));
    let total: f64 = deltas.iter().map(|(_, d)| d).sum();
    println!(
        "  Redis commands (scripts' inner calls included): {total:.0}, {:.2} per cycle; by command per cycle:",
        total / cycles
    );
    for (name, d) in deltas.iter().take(12) {
        println!("    {name:<22} {:>8.3}", d / cycles);
    }
    for w in &workers {
        let rss = w.rss();
        let held = w
            .scrape()
            .await
            .get("matchplane_worker_modes_held")
            .copied()
            .unwrap_or(0.0);
        println!(
            "  {}: RSS {:.1} MB, {held:.0} modes held of {modes} listed: {:.0} bytes per listed mode over the empty worker",
            w.name,
            rss as f64 / 1e6,
            (rss.saturating_sub(baseline)) as f64 / modes as f64
        );
    }

    println!("a worker leaves (SIGKILL):");
    let mut gone = workers.remove(0);
    let killed = Instant::now();
    gone.child.kill().await.ok();
    let before_kill = sample(&workers).await;
    let back = settle(&workers, modes, killed, limit).await;
    if let Some(t) = back {
        println!("  rebalanced after {t:.1} s = {:.2} lease times", t / lease);
    }
    tokio::time::sleep(Duration::from_secs_f64(cycle * 2.0)).await;
    let after_kill = sample(&workers).await;
    println!("  over the takeover and two cycles after:");
    print_periods(&before_kill, &after_kill);

    println!("a worker joins:");
    let joined = Instant::now();
    workers.push(bench.start());
    let before_join = sample(&workers).await;
    let back = settle(&workers, modes, joined, limit).await;
    if let Some(t) = back {
        println!(
            "  rebalanced after {t:.1} s = {:.2} lease times (the new worker's start included)",
            t / lease
        );
    }
    tokio::time::sleep(Duration::from_secs_f64(cycle * 2.0)).await;
    let after_join = sample(&workers).await;
    println!("  over the handover and two cycles after:");
    print_periods(&before_join, &after_join);
    println!("  modes per worker: {:?}", after_join.held);

    for w in &workers {
        let _ = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(w.pid().to_string())
            .status();
    }
    for w in &mut workers {
        let _ = tokio::time::timeout(Duration::from_secs(10), w.child.wait()).await;
    }
    drop(pool);
    db.close().await.ok();
    drop(database);
    let deleted = tokio::task::spawn_blocking(move || {
        matchplane_store::pool::redis::delete_prefix_blocking(&redis_url, &prefix)
    })
    .await;
    println!("cleaned up (Redis keys deleted: {deleted:?})");
}

/// Runs `f` over `items`, 16 at a time; how many ran.
async fn futures_util_stream<T, F, Fut>(items: Vec<T>, f: F) -> usize
where
    F: Fn(T) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    use futures::stream::{self, StreamExt};
    let n = items.len();
    stream::iter(items.into_iter().map(f))
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
    n
}
