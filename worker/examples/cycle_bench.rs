//! One worker cycle over a Redis pool of 100 000 searches in one `[5, 5]` MMR
//! mode, from snapshot to every claim committed and every match recorded in
//! PostgreSQL, with the time split and the ratio to the floor (Redis alone
//! returning the pool: HVALS of the pool hash).
//!
//! It also measures, in the same run, the least any claim can cost (a
//! script that only removes the searches and appends the outbox entries),
//! a bare multi-row `INSERT` of the very rows the record step stored (into
//! scratch copies of their tables), and the worker's own CPU time per
//! search (the process's, from `/proc/self/stat`: Redis and PostgreSQL run
//! in their own processes), and prints each against the cycle's goals.
//!
//! ```text
//! cargo run --release -p matchplane-worker --example cycle_bench [-- SEARCHES]
//! ```
//! Uses `MATCHPLANE_TEST_DATABASE_URL` (a fresh database is made and
//! dropped) and `MATCHPLANE_TEST_REDIS_URL` (a fresh key prefix).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stdout)]

use chrono::Utc;
use futures::StreamExt;
use matchplane_matchmaker::Search;
use matchplane_store::pool::{ModeKey, PoolStore, RedisPoolConfig, RedisPoolStore};
use matchplane_store::repos::{game_modes, projects};
use matchplane_store::test_support::TestDatabase;
use matchplane_worker::modes;
use matchplane_worker::record::OutboxConsumer;
use matchplane_worker::tick::Ticker;
use rand::{Rng, SeedableRng};
use sea_orm::{ConnectionTrait, Database};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

// The allocator `matchplane` itself uses (src/main.rs).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() {
    let searches: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let admin = std::env::var("MATCHPLANE_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_owned());
    let name = format!("mp_bench_{}", ulid::Ulid::new().to_string().to_lowercase());
    // Dropped with its guard, at the end.
    let database = TestDatabase::create_named(&admin, &name).await;
    let mut options = sea_orm::ConnectOptions::new(database.url());
    options.sqlx_logging(false);
    let db = Database::connect(options).await.unwrap();
    matchplane_migrations::migrate(&db).await.unwrap();

    let redis_url = std::env::var("MATCHPLANE_TEST_REDIS_URL")
        .unwrap_or_else(|_| "redis://127.0.0.1:6379/9".to_owned());
    let prefix = format!("bench{}", ulid::Ulid::new().to_string().to_lowercase());
    let mut config = RedisPoolConfig::new(redis_url.clone());
    config.prefix = prefix.clone();
    config.response_timeout = Duration::from_secs(60);
    let store = RedisPoolStore::connect(config).await.unwrap();
    // The ticket store the outbox reads each seated ticket from, as in
    // production (the bench's searches have no ticket records).
    let tickets = matchplane_store::tickets::RedisTicketStore::new(store.clone());
    let pool: Arc<dyn PoolStore> = Arc::new(store);

    let project = projects::create(&db, "bench", "enterprise", Utc::now())
        .await
        .unwrap();
    let mode_json = json!({
        "name": "ranked-5v5", "matchShape": [5, 5],
        "matchmakingCycleDurationSeconds": 1,
        "algorithm": { "type": "mmr", "minMmr": 0, "maxMmr": 3000,
                       "baseTolerance": 5, "expansionMultiplier": 2 },
        "webhook": { "url": "https://game.example.com/hooks/match", "enabled": true }
    });
    game_modes::create(
        &db,
        &project.id,
        "ranked-5v5",
        mode_json,
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        Utc::now(),
    )
    .await
    .unwrap();
    let mode = ModeKey::new(project.id.clone(), "ranked-5v5");

    let now = Utc::now().timestamp_micros() as f64 / 1e6;
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let all: Vec<Search> = (0..searches)
        .map(|i| {
            Search::solo(
                format!("tkt_{i:07}"),
                format!("player-{i}"),
                rng.gen_range(0.0..3000.0),
                now - rng.gen_range(0.0..30.0),
            )
        })
        .collect();
    let added = Instant::now();
    futures::stream::iter(all.iter())
        .map(|s| {
            let pool = Arc::clone(&pool);
            let mode = mode.clone();
            async move { pool.add_search(&mode, s, now + 3600.0, None).await.unwrap() }
        })
        .buffer_unordered(256)
        .collect::<Vec<()>>()
        .await;
    println!("setup: {searches} searches added in {:?}", added.elapsed());

    let client = redis::Client::open(redis_url.as_str()).unwrap();
    // The least claim's scripts queue behind one another in Redis: on a
    // busy machine the last answers after more than the default timeout.
    let raw_config =
        redis::AsyncConnectionConfig::new().set_response_timeout(Some(Duration::from_secs(60)));
    let mut raw = client
        .get_multiplexed_async_connection_with_config(&raw_config)
        .await
        .unwrap();
    let pool_key = format!("{prefix}:{{{}/ranked-5v5}}:pool", project.id);
    let mut floor = Duration::MAX;
    for _ in 0..3 {
        let started = Instant::now();
        let values: Vec<String> = redis::AsyncCommands::hvals(&mut raw, &pool_key)
            .await
            .unwrap();
        floor = floor.min(started.elapsed());
        assert_eq!(values.len(), searches);
    }

    // A copy of the pool for the claim floor below.
    let floor_keys = [
        format!("{prefix}:{{{}/ranked-5v5}}:floor-pool", project.id),
        format!("{prefix}:{{{}/ranked-5v5}}:floor-outbox", project.id),
    ];
    let copied: bool = redis::cmd("COPY")
        .arg(&pool_key)
        .arg(&floor_keys[0])
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(copied);

    let config = modes::refresh(&db, &mode, None).await.unwrap().unwrap();
    let token = pool
        .acquire_lease(&mode, "bench", Duration::from_secs(600))
        .await
        .unwrap()
        .unwrap();
    let ticker = Ticker {
        pool: pool.as_ref(),
        db: &db,
        // As the worker (config.rs); no search fails in this cycle.
        claim_concurrency: 256,
        expire_batch: 1000,
        ends: None,
        lapses: None,
        period: None,
        carried: None,
    };
    let scripts_before = script_time(&mut raw).await;
    let cpu_before = process_cpu();
    let started = Instant::now();
    let (outcome, report) = ticker
        .tick(&mode, &config, token, Utc::now())
        .await
        .unwrap();
    let cycle = started.elapsed();
    let tick_cpu = process_cpu() - cpu_before;
    let scripts_busy = script_time(&mut raw).await - scripts_before;
    let outbox_key = format!("{prefix}:{{{}/ranked-5v5}}:outbox", project.id);
    let outbox_record = sample_record(&mut raw, &outbox_key).await;
    let outbox = OutboxConsumer {
        pool: pool.as_ref(),
        db: &db,
        tickets: &tickets,
        consumer: "bench",
        batch: 1000,
        min_idle: Duration::from_secs(60),
        concurrency: 256,
        ends: None,
        proposals_of: None,
    };
    let cpu_before = process_cpu();
    let started = Instant::now();
    let recorded = outbox
        .drain(&mode, true, Utc::now(), usize::MAX)
        .await
        .unwrap();
    let record = started.elapsed();
    let record_cpu = process_cpu() - cpu_before;
    let stored = stored_bytes(&db).await;
    let (bare_insert, bare_rows) = bare_insert(&db, &project.id).await;

    let claim_floor = claim_floor(&mut raw, &floor_keys, &all, &outbox_record).await;

    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let to_claims = report.read_pool + report.matching + report.claim;
    println!(
        "outcome: {outcome:?}, {} matches, {recorded} recorded, {} candidates",
        report.matches, report.candidates
    );
    println!("floor (HVALS of {searches}): {:>9.1} ms", ms(floor));
    println!(
        "read pool (expire + snapshot): {:>9.1} ms",
        ms(report.read_pool)
    );
    println!(
        "match (core):                {:>9.1} ms",
        ms(report.matching)
    );
    println!("claim (every group):         {:>9.1} ms", ms(report.claim));
    println!(
        "  Redis busy in scripts:     {:>9.1} ms (the expiry sweep's and the claims')",
        ms(scripts_busy)
    );
    println!(
        "  the least any claim costs: {:>9.1} ms  = {:.2}x floor",
        ms(claim_floor),
        claim_floor.as_secs_f64() / floor.as_secs_f64()
    );
    println!(
        "snapshot -> claims committed:{:>9.1} ms  = {:.2}x floor",
        ms(to_claims),
        to_claims.as_secs_f64() / floor.as_secs_f64()
    );
    // The cycle's read and match as they ran, plus the least claim: what
    // any claim design would add to them.
    let bound = report.read_pool + report.matching + claim_floor;
    println!(
        "read + match + least claim:  {:>9.1} ms  = {:.2}x floor",
        ms(bound),
        bound.as_secs_f64() / floor.as_secs_f64()
    );
    println!(
        "annotate (reasons, figures): {:>9.1} ms",
        ms(report.annotate)
    );
    println!("whole tick:                  {:>9.1} ms", ms(cycle));
    println!("record (PostgreSQL, notify, ack): {:>9.1} ms", ms(record));
    println!(
        "  PostgreSQL bytes per stored match (matches + webhook_deliveries, with indexes): {:.0}",
        stored as f64 / report.matches.max(1) as f64
    );
    println!(
        "  bare multi-row INSERT of its {bare_rows} rows: {:>9.1} ms",
        ms(bare_insert)
    );
    let us_per_search = |d: Duration| d.as_secs_f64() * 1e6 / searches as f64;
    println!(
        "worker CPU (process, excl. Redis): tick {:.2} us/search, record {:.2} us/search",
        us_per_search(tick_cpu),
        us_per_search(record_cpu)
    );
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    let goal = |name: &str, value: f64, limit: f64, unit: &str| {
        let verdict = if value <= limit { "met" } else { "NOT met" };
        println!("goal {name:<44} {value:>7.2}{unit} (goal <= {limit}{unit}): {verdict}");
    };
    goal(
        "claim / least claim",
        ratio(report.claim, claim_floor),
        1.5,
        "x",
    );
    goal(
        "tick / (read + match + least claim)",
        ratio(cycle, bound),
        1.3,
        "x",
    );
    goal(
        "tick + record / (read + match + least claim + bare)",
        ratio(cycle + record, bound + bare_insert),
        1.3,
        "x",
    );
    goal(
        "record / bare INSERT of its rows",
        ratio(record, bare_insert),
        2.0,
        "x",
    );
    goal(
        "worker CPU per search (tick)",
        us_per_search(tick_cpu),
        3.0,
        " us",
    );

    drop(db);
    drop(database);
}

/// CPU time (user + system) of this process so far, every thread: fields
/// 14 and 15 of `/proc/self/stat`, in clock ticks of 10 ms.
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the command name, which is in parentheses.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    // `rest` starts at field 3 (state): utime is field 14, stime 15.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// Bytes on disk of the tables the record step writes (`matches` and
/// `webhook_deliveries`, with their indexes and TOAST), for the growth per
/// match in the sizing guide.
async fn stored_bytes(db: &sea_orm::DatabaseConnection) -> i64 {
    use sea_orm::{ConnectionTrait, Statement};
    db.execute_unprepared("VACUUM ANALYZE matches, webhook_deliveries")
        .await
        .unwrap();
    let row = db
        .query_one(Statement::from_string(
            sea_orm::DbBackend::Postgres,
            "SELECT (pg_total_relation_size('matches') + pg_total_relation_size('webhook_deliveries'))::bigint AS b",
        ))
        .await
        .unwrap()
        .unwrap();
    row.try_get::<i64>("", "b").unwrap()
}

/// The least PostgreSQL can take to store what the record step stored: the
/// same rows (every match of `project_id` and its webhook delivery, read
/// back), as plain multi-row `INSERT`s of 1 000 rows (as the outbox consumer's)
/// into empty scratch copies of their tables (`LIKE … INCLUDING ALL`: the
/// same indexes), one statement after the other, no `ON CONFLICT`, no
/// transaction. Returns the time and the rows inserted.
async fn bare_insert(db: &sea_orm::DatabaseConnection, project_id: &str) -> (Duration, usize) {
    use matchplane_store::entities::{match_, webhook_delivery};
    use sea_orm::sea_query::Alias;
    use sea_orm::{ColumnTrait, EntityTrait, IntoActiveModel, QueryFilter, QueryTrait};
    let matches = match_::Entity::find()
        .filter(match_::Column::ProjectId.eq(project_id))
        .all(db)
        .await
        .unwrap();
    let deliveries = webhook_delivery::Entity::find()
        .filter(webhook_delivery::Column::ProjectId.eq(project_id))
        .all(db)
        .await
        .unwrap();
    for table in ["matches", "webhook_deliveries"] {
        db.execute_unprepared(&format!(
            "CREATE TABLE bench_{table} (LIKE {table} INCLUDING ALL)"
        ))
        .await
        .unwrap();
    }
    let rows = matches.len() + deliveries.len();
    let started = Instant::now();
    for chunk in matches.chunks(1000) {
        let mut insert = match_::Entity::insert_many(
            chunk
                .iter()
                .cloned()
                .map(IntoActiveModel::into_active_model),
        );
        insert.query().into_table(Alias::new("bench_matches"));
        insert.exec_without_returning(db).await.unwrap();
    }
    for chunk in deliveries.chunks(1000) {
        let mut insert = webhook_delivery::Entity::insert_many(
            chunk
                .iter()
                .cloned()
                .map(IntoActiveModel::into_active_model),
        );
        insert
            .query()
            .into_table(Alias::new("bench_webhook_deliveries"));
        insert.exec_without_returning(db).await.unwrap();
    }
    (started.elapsed(), rows)
}

/// Time Redis has spent running scripts since its start or last
/// `CONFIG RESETSTAT` (`INFO commandstats`: `cmdstat_evalsha`, `cmdstat_eval`).
async fn script_time(raw: &mut redis::aio::MultiplexedConnection) -> Duration {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(raw)
        .await
        .unwrap();
    let micros: u64 = info
        .lines()
        .filter(|l| l.starts_with("cmdstat_evalsha:") || l.starts_with("cmdstat_eval:"))
        .filter_map(|l| {
            l.split(",usec=")
                .nth(1)?
                .split(',')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .sum();
    Duration::from_micros(micros)
}

/// A match record as the claim wrote it to the outbox: its size is what a
/// claim sends and Redis stores per match.
async fn sample_record(raw: &mut redis::aio::MultiplexedConnection, outbox: &str) -> String {
    let entries: redis::streams::StreamRangeReply =
        redis::AsyncCommands::xrange_count(raw, outbox, "-", "+", 1)
            .await
            .unwrap();
    entries.ids[0].get("record").unwrap()
}

/// The least Redis can take to claim every search of the pool, whatever
/// the claim's design: a script over a copy of the pool (`keys`: pool,
/// outbox) in batches of 2 000 searches, as the worker's, all sent at once,
/// that only removes each search from the pool (one `HDEL` per batch) and
/// appends one outbox entry per group of 10 (the issue's outbox, with a
/// real record). Any claim of the issue does at least this; the worker's
/// also checks that each search is still live, frees its player, writes
/// its `ended` record and checks the lease.
async fn claim_floor(
    raw: &mut redis::aio::MultiplexedConnection,
    keys: &[String; 2],
    searches: &[Search],
    record: &str,
) -> Duration {
    const BATCH: usize = 2_000;
    let script = redis::Script::new(
        r"
        local n = #ARGV - 1
        local removed = 0
        for first = 1, n, 1000 do
          removed = removed + redis.call('HDEL', KEYS[1], unpack(ARGV, first, math.min(first + 999, n)))
        end
        for g = 10, n, 10 do
          redis.call('XADD', KEYS[2], '*', 'matchId', ARGV[g], 'record', ARGV[#ARGV])
        end
        return removed
        ",
    );
    // Loaded before the clock starts, as the worker's scripts are.
    let _: String = script.prepare_invoke().load_async(raw).await.unwrap();
    let started = Instant::now();
    let calls = searches.chunks(BATCH).map(|batch| {
        let mut call = script.prepare_invoke();
        call.key(&keys[0]).key(&keys[1]);
        for search in batch {
            call.arg(search.ticket_id.as_str());
        }
        call.arg(record);
        let mut conn = raw.clone();
        async move { call.invoke_async::<usize>(&mut conn).await.unwrap() }
    });
    let claimed: usize = futures::future::join_all(calls).await.into_iter().sum();
    assert_eq!(claimed, searches.len());
    started.elapsed()
}
