//! One test's world: its own database, its own Redis prefix, a project and
//! a game mode, and helpers to add searches and run ticks.

use chrono::Utc;
use matchplane_matchmaker::Search;
use matchplane_store::pool::{ModeKey, PoolStore, RedisPoolConfig, RedisPoolStore};
use matchplane_store::repos::{game_modes, projects};
use matchplane_store::test_support::TestDatabase;
use matchplane_store::tickets::{MemoryTicketStore, RedisTicketStore, TicketStore};
use matchplane_webhook::{
    generate_secret, Deliverer, DeliveryConfig, Dispatcher, EndpointLimits, Schedule,
};
use matchplane_worker::deliveries::DeliveryWorker;
use matchplane_worker::modes::{self, ModeConfig};
use matchplane_worker::record::OutboxConsumer;
use matchplane_worker::tick::{TickOutcome, TickReport, Ticker};
use matchplane_worker::WorkerConfig;
use rand::rngs::StdRng;
use rand::SeedableRng;
use sea_orm::{Database, DatabaseConnection};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

pub struct Env {
    pub db: DatabaseConnection,
    pub pool: Arc<dyn PoolStore>,
    /// The ticket store beside `pool`.
    pub tickets: Arc<dyn TicketStore>,
    pub project_id: String,
    pub mode: ModeKey,
    pub secret: String,
    database: TestDatabase,
    redis_url: String,
    prefix: String,
    /// The incomplete parties' clocks and the last hold read, kept across
    /// [`Env::tick`]s as the mode loop keeps them.
    pub carried: matchplane_worker::tick::Carried,
}

/// A 1v1 MMR mode with a webhook to `url` (if any), cycling every `cycle` s.
pub fn mode_config(name: &str, url: Option<&str>, cycle: f64) -> Value {
    let mut config = json!({
        "name": name,
        "enabled": true,
        "matchShape": [1, 1],
        "matchmakingCycleDurationSeconds": cycle,
        "algorithm": { "type": "mmr", "minMmr": 0, "maxMmr": 3000,
                       "baseTolerance": 5, "expansionMultiplier": 2 }
    });
    if let Some(url) = url {
        config["webhook"] = json!({ "url": url, "enabled": true });
    }
    config
}

impl Env {
    /// Queues a `match.made` delivery of mode `duel` (body `{}`), due at
    /// `now`; returns its id.
    pub async fn queue_delivery(&self, now: chrono::DateTime<chrono::Utc>) -> String {
        let id = format!("dlv_{}", ulid::Ulid::new());
        let pending = matchplane_store::repos::deliveries::PendingDelivery {
            id: id.clone(),
            project_id: self.project_id.clone(),
            game_mode: "duel".into(),
            match_id: None,
            event_type: "match.made",
            payload: "{}".into(),
        };
        matchplane_store::repos::deliveries::queue_if_absent(&self.db, vec![pending.row(now)])
            .await
            .unwrap();
        id
    }

    pub async fn new(url: Option<&str>, cycle: f64) -> Self {
        let redis_url = matchplane_store::test_support::redis_url();
        Self::on_redis(url, cycle, &redis_url).await
    }

    /// This test's database URL through `host:port` (a fault proxy).
    pub fn db_url_via(&self, host_port: &str) -> String {
        let direct = self.database.url();
        direct.replacen(&self.database_host(), host_port, 1)
    }

    /// The `host:port` of the test PostgreSQL server (what a fault proxy
    /// forwards to).
    pub fn database_host(&self) -> String {
        matchplane_store::test_support::host_port(&matchplane_store::test_support::database_url())
    }

    /// [`Env::new`] on the in-process pool store (`matchplane dev`'s).
    pub async fn on_memory(url: Option<&str>, cycle: f64) -> Self {
        let mut env = Self::new(url, cycle).await;
        env.pool = Arc::new(matchplane_store::pool::MemoryPoolStore::new());
        env.tickets = Arc::new(MemoryTicketStore::new(env.pool.clone()));
        env
    }

    /// [`Env::new`] on the Redis at `redis_url`.
    pub async fn on_redis(url: Option<&str>, cycle: f64, redis_url: &str) -> Self {
        let redis_url = redis_url.to_owned();
        let database = TestDatabase::create("mp_t_").await;
        let mut options = sea_orm::ConnectOptions::new(database.url());
        options.sqlx_logging(false);
        let db = Database::connect(options).await.unwrap();
        matchplane_migrations::migrate(&db).await.unwrap();

        let prefix = format!("t{}", ulid::Ulid::new().to_string().to_lowercase());
        let mut config = RedisPoolConfig::new(redis_url.clone());
        config.prefix = prefix.clone();
        let redis_pool = RedisPoolStore::connect(config).await.unwrap();
        let tickets: Arc<dyn TicketStore> = Arc::new(RedisTicketStore::new(redis_pool.clone()));
        let pool: Arc<dyn PoolStore> = Arc::new(redis_pool);

        let project = projects::create(&db, "studio", "enterprise", Utc::now())
            .await
            .unwrap();
        let secret = generate_secret(&mut StdRng::seed_from_u64(7));
        game_modes::create(
            &db,
            &project.id,
            "duel",
            mode_config("duel", url, cycle),
            &secret,
            Utc::now(),
        )
        .await
        .unwrap();
        Self {
            mode: ModeKey::new(project.id.clone(), "duel"),
            project_id: project.id,
            db,
            pool,
            tickets,
            secret,
            database,
            redis_url,
            prefix,
            carried: Default::default(),
        }
    }

    /// Adds a solo search with `mmr`, queued now.
    pub async fn add(&self, player: &str, mmr: f64) -> String {
        let ticket = format!("tkt_{}", ulid::Ulid::new());
        let now = Utc::now().timestamp_micros() as f64 / 1e6;
        let search = Search::solo(ticket.clone(), player, mmr, now);
        self.pool
            .add_search(&self.mode, &search, now + 600.0, None)
            .await
            .unwrap();
        ticket
    }

    /// Adds `search` as it is (its `queuedAt` and attributes kept).
    pub async fn add_search(&self, search: &Search) {
        let now = Utc::now().timestamp_micros() as f64 / 1e6;
        self.pool
            .add_search(&self.mode, search, now + 600.0, None)
            .await
            .unwrap();
    }

    /// Adds a solo search with `mmr` that started `waited` seconds ago.
    pub async fn add_waited(&self, player: &str, mmr: f64, waited: f64) -> String {
        let ticket = format!("tkt_{}", ulid::Ulid::new());
        let now = Utc::now().timestamp_micros() as f64 / 1e6;
        let search = Search::solo(ticket.clone(), player, mmr, now - waited);
        self.pool
            .add_search(&self.mode, &search, now + 600.0, None)
            .await
            .unwrap();
        ticket
    }

    pub async fn config(&self) -> ModeConfig {
        modes::refresh(&self.db, &self.mode, None)
            .await
            .unwrap()
            .expect("the test's mode exists")
    }

    pub async fn lease(&self, owner: &str, ttl: Duration) -> u64 {
        self.pool
            .acquire_lease(&self.mode, owner, ttl)
            .await
            .unwrap()
            .expect("lease free")
    }

    pub async fn tick(&self, token: u64) -> (TickOutcome, TickReport) {
        let config = self.config().await;
        self.tick_with(token, &config).await
    }

    /// One tick on `config` as given (a worker's cached one, say).
    pub async fn tick_with(&self, token: u64, config: &ModeConfig) -> (TickOutcome, TickReport) {
        Ticker {
            pool: self.pool.as_ref(),
            db: &self.db,
            claim_concurrency: 16,
            expire_batch: 100,
            ends: None,
            lapses: None,
            period: None,
            carried: Some(&self.carried),
        }
        .tick(&self.mode, config, token, Utc::now())
        .await
        .unwrap()
    }

    pub fn consumer<'a>(&'a self, consumer: &'a str, min_idle: Duration) -> OutboxConsumer<'a> {
        OutboxConsumer {
            pool: self.pool.as_ref(),
            db: &self.db,
            tickets: self.tickets.as_ref(),
            consumer,
            batch: 100,
            min_idle,
            concurrency: 16,
            ends: None,
            proposals_of: None,
        }
    }

    pub async fn drain(&self, consumer: &str) -> usize {
        let webhook = self.config().await.webhook_enabled();
        self.consumer(consumer, Duration::from_secs(60))
            .drain(&self.mode, webhook, Utc::now(), 10)
            .await
            .unwrap()
    }

    pub fn deliveries(&self, retry_scale: f64) -> DeliveryWorker {
        let deliverer = Deliverer::new(DeliveryConfig {
            allow_private: true,
            ..DeliveryConfig::default()
        })
        .unwrap();
        let dispatcher = Dispatcher::new(
            deliverer,
            Schedule::scaled(retry_scale).unwrap(),
            EndpointLimits::default(),
        );
        DeliveryWorker::new(
            self.db.clone(),
            Arc::new(dispatcher),
            Duration::from_secs(30),
        )
    }

    /// Worker settings for this test's loops: short lease, quick reconcile
    /// and sweep.
    pub fn worker_config(&self, id: &str) -> WorkerConfig {
        WorkerConfig {
            worker_id: id.to_owned(),
            lease_ttl: Duration::from_millis(600),
            reconcile_interval: Duration::from_millis(200),
            sweep_interval: Duration::from_millis(200),
            outbox_min_idle: Duration::from_millis(500),
            delivery: DeliveryConfig {
                allow_private: true,
                ..DeliveryConfig::default()
            },
            schedule: Schedule::scaled(0.01).unwrap(),
            delivery_poll: Duration::from_millis(50),
            ..WorkerConfig::default()
        }
    }

    /// Runs a worker loop with `config` over this environment's pool,
    /// tickets and database until `shutdown` is cancelled; the loop's task.
    pub fn spawn_worker(
        &self,
        config: WorkerConfig,
        shutdown: &tokio_util::sync::CancellationToken,
    ) -> tokio::task::JoinHandle<Result<(), matchplane_worker::WorkerError>> {
        tokio::spawn(matchplane_worker::run_worker(
            config,
            self.pool.clone(),
            self.tickets.clone(),
            self.db.clone(),
            shutdown.clone(),
        ))
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        // The database goes with `self.database`.
        let _ =
            matchplane_store::pool::redis::delete_prefix_blocking(&self.redis_url, &self.prefix);
    }
}

/// The JSON body of a received webhook, after checking its signature with
/// the test mode's secret (a five-minute tolerance around its arrival).
pub fn verified_body(env: &Env, request: &crate::receiver::Received) -> Value {
    crate::verify::verify(
        &env.secret,
        &request.header("webhook-id"),
        &request.header("webhook-timestamp"),
        &request.header("webhook-signature"),
        &request.body,
        request.received_at.timestamp(),
        300,
    )
    .unwrap();
    serde_json::from_slice(&request.body).unwrap()
}
