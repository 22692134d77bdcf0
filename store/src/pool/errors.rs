//! The errors of the [`super::PoolStore`] interface: the store's own
//! failures, and the pool's rules a search's add can break.

/// A failure of the store itself (not a rule of the pool).
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// Redis could not be reached or answered an error.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// A stored value could not be read back (a bug or a foreign writer).
    #[error("corrupt pool data: {0}")]
    Corrupt(String),
    /// A background task the store needs has stopped (the process is shutting
    /// down).
    #[error("pool store unavailable: {0}")]
    Unavailable(&'static str),
    /// A claim that cannot be right: no ticket, or a ticket listed twice.
    #[error("invalid claim: {0}")]
    InvalidClaim(String),
}

/// Why a search could not be added.
#[derive(Debug, thiserror::Error)]
pub enum AddSearchError {
    /// The ticket already has a live search (`SEARCH_ALREADY_ACTIVE`).
    #[error("the ticket already has a live search")]
    SearchAlreadyActive,
    /// The player already has a live search in this mode, or in any mode
    /// of the project under [`super::PlayerSearchScope::Project`]
    /// (`PLAYER_ALREADY_SEARCHING`).
    #[error("the player is already searching with ticket {ticket_id} in {game_mode}")]
    PlayerAlreadySearching {
        /// The live search's ticket id.
        ticket_id: String,
        /// The mode of that search.
        game_mode: String,
    },
    /// The ticket's search was matched: it is spent (`TICKET_ALREADY_MATCHED`).
    #[error("the ticket was already matched")]
    TicketAlreadyMatched,
    /// The ticket was revoked before a search started with it (a start
    /// that read its record just before the studio cancelled it): the
    /// start answers `TICKET_INVALID`.
    #[error("the ticket was cancelled before it searched")]
    TicketRevoked,
    /// The player is cooled down in the mode after a proposal they did not
    /// accept (`DECLINE_COOLDOWN`): refused in the add itself, so a start
    /// racing the proposal's close cannot slip in.
    #[error("the player is cooled down for {retry_after_seconds} s")]
    DeclineCooldown {
        /// Seconds until the player may search again (at least 1).
        retry_after_seconds: u64,
    },
    /// The project is at its tier's `maxConcurrentSearches` (`QUOTA_EXCEEDED`).
    #[error("the project has reached its limit of {limit} live searches")]
    QuotaExceeded {
        /// The limit that was applied.
        limit: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] PoolError),
}
