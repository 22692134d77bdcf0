//! The one mapping of the stores' errors to problems: each store error type
//! converts into [`ApiError`], so handlers answer a store call with `?`. A
//! store out of reach (no connection, a broken or timed-out one, a database
//! refusing writes during a failover) is `503 SERVICE_UNAVAILABLE` with
//! `Retry-After`, logged once here at WARN; any other failure of a store
//! itself is `500 INTERNAL`, logged once (by [`ApiError::internal`]) and
//! never shown; a refusal is its documented code.

use super::ApiError;
use matchplane_matchmaker::{Code, FieldError};
use matchplane_store::pool::{AddSearchError, PoolError};
use matchplane_store::repos::StoreError;
use matchplane_store::tickets::{CreateTicketError, StartSearchError};

/// The answer to the database being out of reach.
fn database_unavailable(cause: &dyn std::fmt::Display) -> ApiError {
    tracing::warn!(error = %cause, "the database is out of reach");
    ApiError::unavailable("the database is unreachable; retry shortly")
}

/// The answer to Redis being out of reach.
fn redis_unavailable(cause: &dyn std::fmt::Display) -> ApiError {
    tracing::warn!(error = %cause, "Redis is out of reach");
    ApiError::unavailable("the live store (Redis) is unreachable; retry shortly")
}

/// Whether a Redis error is Redis being out of reach (no connection, a
/// broken one, no answer in time) rather than a refused command. On a
/// cluster, a slot being moved or a master restarting is that too: the
/// answers the client still held after its retries (`MOVED`, `ASK`,
/// `TRYAGAIN` while a slot migrates, `CLUSTERDOWN`, `MASTERDOWN`, `LOADING`
/// while a restarted node reads its append-only file) pass within seconds.
/// So do a node busy running a script (`BUSY`, until the script ends or is
/// killed) and a write that met a replica not yet promoted (`READONLY`).
fn redis_down(err: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    err.is_io_error()
        || err.is_timeout()
        || err.is_connection_refusal()
        || err.is_connection_dropped()
        || err.is_unrecoverable_error()
        || err.is_cluster_error()
        || matches!(
            err.kind(),
            ErrorKind::Server(ServerErrorKind::MasterDown | ServerErrorKind::BusyLoading)
        )
        // The server's own answer, of a command or of any command of a
        // pipeline or a transaction (a pipeline's error is kinded by its
        // first failure alone, and `BUSY` has no kind of its own).
        || err
            .clone()
            .into_server_errors()
            .is_some_and(|failed| failed.iter().any(|(_, e)| PASSING.contains(&e.code())))
}

/// The answers of a Redis that pass by themselves (see [`redis_down`]).
const PASSING: [&str; 6] = [
    "BUSY",
    "LOADING",
    "READONLY",
    "TRYAGAIN",
    "CLUSTERDOWN",
    "MASTERDOWN",
];

/// A repository failure: `404`, `409 CONFLICT`, `422` naming an unknown
/// reference, `503 SERVICE_UNAVAILABLE` when the database is out of reach,
/// or `500 INTERNAL`.
impl From<StoreError> for ApiError {
    fn from(err: StoreError) -> Self {
        if err.is_unavailable() {
            return database_unavailable(&err);
        }
        match err {
            StoreError::NotFound => ApiError::not_found("no such resource"),
            StoreError::Conflict => ApiError::new(
                Code::Conflict,
                "the resource was changed or already exists; reload and retry",
            ),
            StoreError::UnknownReference(what) => ApiError::invalid(vec![FieldError::new(
                what,
                Code::ValidationError,
                format!("unknown {what}"),
            )]),
            other => ApiError::internal(&other),
        }
    }
}

/// A failure of the pool or ticket store itself: `503 SERVICE_UNAVAILABLE`
/// when Redis is out of reach, else `500 INTERNAL`, the cause logged once
/// and never sent.
impl From<PoolError> for ApiError {
    fn from(err: PoolError) -> Self {
        match &err {
            PoolError::Redis(redis) if redis_down(redis) => redis_unavailable(&err),
            PoolError::Unavailable(_) => redis_unavailable(&err),
            _ => ApiError::internal(&err),
        }
    }
}

/// A search the pool refused, at its docs/searching.md code; a store failure as
/// [`PoolError`].
impl From<AddSearchError> for ApiError {
    fn from(err: AddSearchError) -> Self {
        match err {
            AddSearchError::SearchAlreadyActive => ApiError::new(
                Code::SearchAlreadyActive,
                "this ticket already has a live search",
            ),
            AddSearchError::PlayerAlreadySearching {
                ticket_id,
                game_mode,
            } => ApiError::player_already_searching(ticket_id, game_mode),
            AddSearchError::TicketAlreadyMatched => ApiError::new(
                Code::TicketAlreadyMatched,
                "this ticket was matched already: generate a new one",
            ),
            AddSearchError::TicketRevoked => ApiError::ticket_unknown(),
            AddSearchError::DeclineCooldown {
                retry_after_seconds,
            } => ApiError::decline_cooldown(retry_after_seconds),
            AddSearchError::QuotaExceeded { limit } => ApiError::new(
                Code::QuotaExceeded,
                format!("the project has reached its tier's {limit} concurrent searches"),
            ),
            AddSearchError::Store(err) => err.into(),
        }
    }
}

/// A search a ticket could not start: `401 TICKET_INVALID`; the code a
/// cycle would fail the search with when the mode's config rules the
/// ticket out (`422` `MMR_OUT_OF_RANGE`, `PARTIES_NOT_ENABLED`,
/// `ATTRIBUTE_NOT_ALLOWED`, …, with the field); or as [`AddSearchError`].
impl From<StartSearchError> for ApiError {
    fn from(err: StartSearchError) -> Self {
        match err {
            StartSearchError::TicketInvalid => ApiError::ticket_unknown(),
            StartSearchError::RuledOut(error) => ApiError::invalid(vec![error]),
            StartSearchError::Add(err) => err.into(),
        }
    }
}

/// A ticket that could not be stored: `409 PLAYER_ALREADY_SEARCHING`,
/// `429 TICKET_LIMIT_EXCEEDED`, or a store failure as [`PoolError`].
impl From<CreateTicketError> for ApiError {
    fn from(err: CreateTicketError) -> Self {
        match err {
            CreateTicketError::PlayerAlreadySearching {
                ticket_id,
                game_mode,
            } => ApiError::player_already_searching(ticket_id, game_mode),
            CreateTicketError::LimitExceeded { limit } => ApiError::new(
                Code::TicketLimitExceeded,
                format!(
                    "the project holds {limit} tickets not yet searching (its tier's \
                     maxPendingTickets): start searches with them or let them expire"
                ),
            ),
            CreateTicketError::Store(err) => err.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::redis_down;

    /// The error a Redis node answers with `line`, as the client reads it.
    fn answered(line: &str) -> redis::RedisError {
        let value = redis::parse_redis_value(format!("-{line}\r\n").as_bytes()).unwrap();
        value.extract_error().unwrap_err()
    }

    /// Answers that pass by themselves are Redis out of reach (`503` with
    /// `Retry-After`); a refused command is not. Before, a node busy with a
    /// script answered `500 INTERNAL` to every request it held.
    #[test]
    fn passing_answers_are_redis_out_of_reach() {
        for line in [
            "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
            "LOADING Redis is loading the dataset in memory",
            "READONLY You can't write against a read only replica.",
            "TRYAGAIN Multiple keys request during rehashing of slot",
            "CLUSTERDOWN The cluster is down",
            "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
        ] {
            assert!(redis_down(&answered(line)), "{line}");
        }
        for line in [
            "ERR unknown command",
            "WRONGTYPE Operation against a key holding the wrong kind of value",
            "NOSCRIPT No matching script.",
        ] {
            assert!(!redis_down(&answered(line)), "{line}");
        }
    }

    /// The same answers to a command of a pipeline, as a real Redis gives
    /// them (a script answering with the error): a pipeline's error is
    /// kinded by its first failure alone. Before, a `BUSY` in a pipeline
    /// (ticket creation's) answered `500` (a fault probe: 4 105 of them).
    #[tokio::test]
    async fn passing_answers_in_a_pipeline_are_redis_out_of_reach() {
        let url = matchplane_store::test_support::redis_url();
        let client = redis::Client::open(url).unwrap();
        let mut conn = client.get_multiplexed_async_connection().await.unwrap();
        for (code, down) in [("BUSY", true), ("READONLY", true), ("WRONGTYPE", false)] {
            let script = format!("return redis.error_reply('{code} answered by a test')");
            let failed = redis::pipe()
                .cmd("PING")
                .cmd("EVAL")
                .arg(&script)
                .arg(0)
                .query_async::<()>(&mut conn)
                .await
                .unwrap_err();
            assert_eq!(redis_down(&failed), down, "{code}: {failed:?}");
        }
    }
}
