//! The player's side (docs/searching.md): tickets, searches and their status, shared
//! by the ticket routes (`routes::tickets`), the REST search routes
//! (`routes::searches`) and the WebSocket search (`routes::search_ws`).
//!
//! [`Play`] holds the live stores (a [`PoolStore`] and a [`TicketStore`]:
//! Redis in the service, memory in `matchplane dev` and tests), the cache of
//! mode configs and project quotas that keeps the hot path free of database
//! queries, and the timing settings.
//!
//! Hot path cost: generating a ticket is one Redis round trip (the player
//! check and the write, pipelined); starting a search is one script, the
//! start script that reads the ticket and adds the search at once (see
//! [`start::start_with_token`] for the cases that read the ticket first),
//! all on the shared multiplexed connection; mode configs and quotas come
//! from [`cache::ConfigCache`]. A WebSocket start subscribes to
//! the ticket's status channel at the same time as it adds the search.

pub mod answers;
pub mod cache;
pub mod lost;
pub mod matched;
pub mod player_scope;
pub mod proposal_view;
pub mod queue_status;
pub mod ratings;
pub mod released;
pub mod role_waits;
pub mod sockets;
pub mod start;
pub mod status;
pub mod token;
pub mod unfreed;
pub mod unheld;

use cache::ConfigCache;
use matchplane_store::pool::lapse_grace::LapseGrace;
use matchplane_store::pool::{MemoryPoolStore, ModeKey, PoolError, PoolStore, SearchState};
use matchplane_store::tickets::{MemoryTicketStore, TicketStore};
use ratings::{NoRatings, RatingsLookup};
use std::sync::Arc;
use std::time::Duration;

/// Timing of searches. The defaults are docs/searching.md's.
#[derive(Debug, Clone)]
pub struct PlaySettings {
    /// A REST search not polled for this long ends `expired` (docs/searching.md: 30 s).
    pub rest_poll_timeout: Duration,
    /// How often a WebSocket search is pinged (docs/searching.md: every second); also how
    /// often its status is re-read.
    pub ping_interval: Duration,
    /// A WebSocket search with no Pong for this long ends `expired`
    /// (`reason` `PONG_TIMEOUT`); [`PONG_TIMEOUT`] by default.
    pub pong_timeout: Duration,
    /// How long a WebSocket search outlives its socket's last renewal of
    /// it (docs/searching.md, "Closing": 30 s); see
    /// [`PlaySettings::socket_lease`].
    pub socket_lease: Duration,
}

/// How long a WebSocket may leave Pings unanswered before its search ends
/// `expired` with `reason` `PONG_TIMEOUT`: 10 s, ten missed pongs at one
/// Ping a second.
pub const PONG_TIMEOUT: Duration = Duration::from_secs(10);

impl PlaySettings {
    /// How long a WebSocket search outlives its socket's last renewal of
    /// it (docs/searching.md, "Closing"): the `socket_lease` setting, and
    /// at least three ping intervals. The socket renews it once a third
    /// has passed, at a status re-read; an API instance that stops without
    /// ending its sockets' searches (a crash) leaves each for at most this
    /// long.
    pub fn socket_lease(&self) -> Duration {
        self.socket_lease.max(self.ping_interval * 3)
    }
}

impl Default for PlaySettings {
    fn default() -> Self {
        Self {
            rest_poll_timeout: Duration::from_secs(30),
            ping_interval: Duration::from_secs(1),
            pong_timeout: PONG_TIMEOUT,
            socket_lease: Duration::from_secs(30),
        }
    }
}

/// Everything the player-side routes share.
pub struct Play {
    /// The live pools.
    pub pool: Arc<dyn PoolStore>,
    /// The generated tickets.
    pub tickets: Arc<dyn TicketStore>,
    /// Mode configs and project quotas, cached.
    pub cache: ConfigCache,
    /// Stored ratings standing in for a missing `mmr` (modes with `ratings`).
    pub ratings: Arc<dyn RatingsLookup>,
    /// Timing.
    pub settings: PlaySettings,
    /// The search recording of modes with `recording` (issue 22); records
    /// once [`crate::recording::Recorder::attach`]ed (the router does).
    pub recorder: crate::recording::Recorder,
    /// Counts the searches this process ends, once attached to the
    /// router's recorder (the router does).
    pub ends: crate::observe::SearchEnds,
    /// Each role-queue mode's median waits by role, for the statuses'
    /// `roleWaits` (docs/rules.md, "Role waits"), cached a few seconds.
    pub role_waits: role_waits::RoleWaitCache,
    /// The WebSocket searches this process holds, stopped with the server.
    pub sockets: sockets::Sockets,
    /// When this process last reached each mode's pool, from its status
    /// reads and answers: a proposal it closes past its deadline after an
    /// outage holds nobody to the timeout ([`answers`]).
    pub lapses: LapseGrace,
}

impl Play {
    /// Over the given stores, with no ratings lookup.
    pub fn new(
        pool: Arc<dyn PoolStore>,
        tickets: Arc<dyn TicketStore>,
        settings: PlaySettings,
    ) -> Self {
        Self {
            pool,
            tickets,
            cache: ConfigCache::default(),
            ratings: Arc::new(NoRatings),
            settings,
            recorder: crate::recording::Recorder::default(),
            ends: crate::observe::SearchEnds::default(),
            role_waits: role_waits::RoleWaitCache::default(),
            sockets: sockets::Sockets::default(),
            lapses: LapseGrace::default(),
        }
    }

    /// `ticket_id`'s search in `mode`, noting in [`Play::lapses`] whether
    /// the pool answered.
    ///
    /// # Errors
    /// The pool store's.
    pub async fn search_state(
        &self,
        mode: &ModeKey,
        ticket_id: &str,
    ) -> Result<Option<SearchState>, PoolError> {
        let asked = unix_now();
        let state = self.pool.search_state(mode, ticket_id).await;
        self.reached(mode, asked, state.is_ok());
        state
    }

    /// Notes in [`Play::lapses`] whether a call to `mode`'s pool asked at
    /// `asked` (Unix seconds) answered.
    pub fn reached(&self, mode: &ModeKey, asked: f64, answered: bool) {
        if answered {
            self.lapses.answered(mode, asked, unix_now());
        } else {
            self.lapses.failed(mode);
        }
    }

    /// In-process stores (`matchplane dev`, tests).
    pub fn in_memory(settings: PlaySettings) -> Self {
        let pool: Arc<dyn PoolStore> = Arc::new(MemoryPoolStore::new());
        let tickets = Arc::new(MemoryTicketStore::new(pool.clone()));
        Self::new(pool, tickets, settings)
    }

    /// Replaces the ratings lookup.
    pub fn with_ratings(mut self, ratings: Arc<dyn RatingsLookup>) -> Self {
        self.ratings = ratings;
        self
    }
}

/// Unix seconds now (the pool's `queuedAt` clock).
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// RFC 3339 of Unix seconds (millisecond precision).
pub fn rfc3339(unix: f64) -> String {
    matchplane_matchmaker::timestamp::from_unix_seconds(unix)
}

/// Connects the Redis pool and ticket stores at `url` under `prefix` (the
/// service's setting; `matchplane api` requires it).
///
/// # Errors
/// The connection error.
pub async fn connect_redis(
    url: &str,
    prefix: &str,
    settings: PlaySettings,
) -> Result<Play, matchplane_store::pool::PoolError> {
    let mut config = matchplane_store::pool::RedisPoolConfig::new(url);
    config.prefix = prefix.to_owned();
    connect_redis_with(config, settings).await
}

/// [`connect_redis`] with every setting of the connection (`matchplane api`
/// passes its connect and command timeouts).
///
/// # Errors
/// The pool store's error when Redis cannot be reached.
pub async fn connect_redis_with(
    config: matchplane_store::pool::RedisPoolConfig,
    settings: PlaySettings,
) -> Result<Play, matchplane_store::pool::PoolError> {
    use matchplane_store::pool::RedisPoolStore;
    use matchplane_store::tickets::RedisTicketStore;
    let pool = RedisPoolStore::connect(config).await?;
    pool.warn_without_persistence().await;
    // Over the pool store's connection and prefix: one place names the keys.
    let tickets = RedisTicketStore::new(pool.clone());
    Ok(Play::new(Arc::new(pool), Arc::new(tickets), settings))
}
