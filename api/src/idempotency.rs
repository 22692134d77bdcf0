//! `Idempotency-Key` on the `POST`s that create (tickets, result reports,
//! API keys, backfill requests, projects; docs/config-as-code.md): a retry
//! with the same key and the same request gets the first answer again
//! (same status, same body: the same ticket and token) and creates
//! nothing; the same key with another request (another body, path or
//! caller) is `422 IDEMPOTENCY_KEY_REUSED`. Keys are kept 24 hours per
//! project; the operator's requests outside any project (`POST
//! /v1/projects`) have a key space of their own ([`OPERATOR_KEY_SPACE`]).
//!
//! - The first request reserves the key with an insert into
//!   `idempotency_keys`: of two requests at once exactly one runs; the other
//!   waits for its answer (up to [`WAIT_FOR_FIRST`], then `409
//!   IDEMPOTENCY_KEY_IN_USE` with `Retry-After`).
//! - Only a success (2xx) is kept: after an error (a panic, a request cut
//!   at its deadline included) the key is released and a retry runs again.
//! - It is a layer on the creating routes themselves ([`on`], where they
//!   are routed), not a table of paths.
//! - The answer holds secrets (a ticket token, an API key), which matchplane
//!   otherwise stores only as hashes. It is stored encrypted
//!   (ChaCha20-Poly1305) under a key derived with HMAC-SHA256 from the
//!   caller's credential (the API key or operator token presented, itself
//!   never stored) and a random per-row seed: the database alone gives no
//!   token away, and only the same caller's retry can read the answer.

use crate::auth::{Caller, Operator, ProjectCaller};
use crate::extract::body_bytes;
use crate::problem::ApiError;
use crate::state::AppState;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, Request};
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderName, Method};
use axum::response::{IntoResponse, Response};
use axum::routing::Route;
use chrono::{Duration as Days, Utc};
use futures::FutureExt;
use matchplane_store::repos::idempotency::{self, NewReservation, Reservation};
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tower::ServiceExt;
use utoipa_axum::router::UtoipaMethodRouter;

mod answer;
use answer::{keep, replay};

/// The request header.
pub const HEADER: HeaderName = HeaderName::from_static("idempotency-key");
/// Set on a replayed answer: `Idempotent-Replayed: true`.
pub const REPLAYED: HeaderName = HeaderName::from_static("idempotent-replayed");
/// Longest key (characters; printable ASCII).
pub const MAX_KEY_CHARS: usize = 255;
/// How long a key is kept: 24 hours.
pub const KEPT_HOURS: i64 = 24;
/// How long a retry waits for the first request's answer.
pub const WAIT_FOR_FIRST: Duration = Duration::from_secs(10);
/// A reservation without an answer this old was abandoned (its process
/// stopped): a retry takes it over.
const ABANDONED_AFTER_SECONDS: i64 = 60;
/// Largest answer body kept.
const MAX_ANSWER_BYTES: usize = 1 << 20;
/// The project id the operator's keys outside any project (`POST
/// /v1/projects`) are kept under: never a project's (`prj_<ulid>`).
pub const OPERATOR_KEY_SPACE: &str = "(operator)";

/// Whose keys a creating route's `Idempotency-Key`s are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeySpace {
    /// The path's project's (the operator or a key of that project).
    Project,
    /// The operator's own ([`OPERATOR_KEY_SPACE`]).
    Operator,
}

/// A creating route (its handlers, the `POST` among them) with
/// `Idempotency-Key` honoured by [`layer`] (given the `state`) and
/// documented on its `POST`: applied where the route is routed
/// ([`crate::router`]). Without a state (the OpenAPI document alone) the
/// route is only documented.
pub fn on(
    routes: UtoipaMethodRouter<AppState>,
    state: Option<&AppState>,
) -> UtoipaMethodRouter<AppState> {
    layered(routes, state, KeySpace::Project)
}

/// As [`on`], for a creating route outside any project that only the
/// operator may call (`POST /v1/projects`): any key is refused `401`
/// before the header is looked at, and the keys are the operator's own
/// ([`OPERATOR_KEY_SPACE`]).
pub fn on_operator(
    routes: UtoipaMethodRouter<AppState>,
    state: Option<&AppState>,
) -> UtoipaMethodRouter<AppState> {
    layered(routes, state, KeySpace::Operator)
}

fn layered(
    (schemas, mut paths, method_router): UtoipaMethodRouter<AppState>,
    state: Option<&AppState>,
    space: KeySpace,
) -> UtoipaMethodRouter<AppState> {
    document(&mut paths);
    let method_router = match state {
        Some(state) => method_router.route_layer(IdempotencyLayer(state.clone(), space)),
        None => method_router,
    };
    (schemas, paths, method_router)
}

/// The layer of a creating route: a `POST` carrying [`HEADER`] as
/// described in the module docs, any other request passed on as is. A
/// plain tower layer, not an axum `from_fn` one: a request without the
/// header (most of them, and every ticket of the hot path) costs no boxed
/// future and no clone of the route (docs/performance.md). The idempotent
/// path is boxed: its database queries would make every request's future
/// large.
#[derive(Clone)]
pub struct IdempotencyLayer(AppState, KeySpace);

impl tower::Layer<Route> for IdempotencyLayer {
    type Service = Idempotent;

    fn layer(&self, inner: Route) -> Idempotent {
        Idempotent {
            inner,
            state: self.0.clone(),
            space: self.1,
        }
    }
}

/// The service of [`IdempotencyLayer`] around a creating route.
#[derive(Clone)]
pub struct Idempotent {
    inner: Route,
    state: AppState,
    space: KeySpace,
}

impl tower::Service<Request> for Idempotent {
    type Response = Response;
    type Error = Infallible;
    type Future = futures::future::Either<
        <Route as tower::Service<Request>>::Future,
        futures::future::BoxFuture<'static, Result<Response, Infallible>>,
    >;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Infallible>> {
        tower::Service::<Request>::poll_ready(&mut self.inner, cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        if req.method() != Method::POST || !req.headers().contains_key(&HEADER) {
            return futures::future::Either::Left(self.inner.call(req));
        }
        // The request's own path and query, not its route's template: the
        // same key and body on another match's or mode's path is another
        // request (`IDEMPOTENCY_KEY_REUSED`), never the first one's answer.
        let route = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_owned())
            .unwrap_or_default();
        // The route made ready by `poll_ready` runs the request; a clone
        // stays for the next one.
        let ready = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, ready);
        let (state, space) = (self.state.clone(), self.space);
        futures::future::Either::Right(Box::pin(async move {
            Ok(idempotent(&state, space, &route, req, inner)
                .await
                .unwrap_or_else(IntoResponse::into_response))
        }))
    }
}

/// Releases a reserved key when the request is dropped before its answer
/// is kept (cut at its deadline, [`crate::deadline`]), as any failure
/// releases it: a retry runs again.
struct ReleaseOnDrop {
    db: Option<sea_orm::DatabaseConnection>,
    project_id: String,
    key: String,
}

impl ReleaseOnDrop {
    /// Releases now (after a panic, before it goes on to the panic
    /// catcher's `500`).
    async fn now(mut self) {
        if let Some(db) = self.db.take() {
            release_logged(&db, &self.project_id, &self.key).await;
        }
    }

    /// The answer came: [`keep`] keeps or releases the key.
    fn disarm(mut self) {
        self.db = None;
    }
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        let Some(db) = self.db.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (project_id, key) = (
            std::mem::take(&mut self.project_id),
            std::mem::take(&mut self.key),
        );
        runtime.spawn(async move { release_logged(&db, &project_id, &key).await });
    }
}

async fn release_logged(db: &sea_orm::DatabaseConnection, project_id: &str, key: &str) {
    if let Err(error) = idempotency::release(db, project_id, key).await {
        tracing::warn!(%error, project_id, "releasing an idempotency key failed");
    }
}

/// The one `Idempotency-Key` of a request; `400` for a malformed one, an
/// empty one or two.
fn the_key(headers: &axum::http::HeaderMap) -> Result<String, ApiError> {
    let keys: Vec<_> = headers.get_all(&HEADER).iter().collect();
    match keys.as_slice() {
        [_, _, ..] => Err(ApiError::header_repeated("Idempotency-Key", keys.len())),
        key => key
            .first()
            .and_then(|k| k.to_str().ok())
            .filter(|k| well_formed(k))
            .map(str::to_owned)
            .ok_or_else(|| {
                ApiError::bad_request(
                    "Idempotency-Key",
                    format!("Idempotency-Key is 1 to {MAX_KEY_CHARS} printable ASCII characters"),
                )
            }),
    }
}

fn well_formed(key: &str) -> bool {
    (1..=MAX_KEY_CHARS).contains(&key.len()) && key.bytes().all(|b| (0x21..=0x7e).contains(&b))
}

/// Who may run the request and in which key space: the path's project
/// (authenticated and rate limited once: the handler reuses the caller) or
/// the operator's own.
async fn caller_of(
    state: &AppState,
    space: KeySpace,
    parts: &mut axum::http::request::Parts,
) -> Result<(Caller, String), ApiError> {
    match space {
        KeySpace::Project => {
            let caller = ProjectCaller::from_request_parts(parts, state).await?;
            parts.extensions.insert(caller.clone());
            Ok((caller.caller, caller.project_id))
        }
        KeySpace::Operator => {
            Operator::from_request_parts(parts, state).await?;
            Ok((Caller::Operator, OPERATOR_KEY_SPACE.to_owned()))
        }
    }
}

async fn idempotent(
    state: &AppState,
    space: KeySpace,
    route: &str,
    req: Request,
    inner: Route,
) -> Result<Response, ApiError> {
    let (mut parts, body) = req.into_parts();
    let (caller, project_id) = caller_of(state, space, &mut parts).await?;
    let key = the_key(&parts.headers)?;
    let credential = parts
        .headers
        .get(AUTHORIZATION)
        .map(|v| v.as_bytes().to_vec())
        .unwrap_or_default();
    // Read as the handler would (its limit, `413`, `408`); the parts are
    // kept to hand the handler the request again.
    let bytes = body_bytes(Request::from_parts(parts.clone(), body), state).await?;
    let digest = request_digest(&caller, route, &bytes);
    prune_now_and_then(state).await;
    let started = tokio::time::Instant::now();
    loop {
        let mut seed = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut seed);
        let seed = hex::encode(seed);
        let now = Utc::now();
        let reservation = idempotency::reserve(
            &state.db,
            NewReservation {
                project_id: &project_id,
                key: &key,
                request_digest: &digest,
                seed: &seed,
                now,
                expired_before: now - Days::hours(KEPT_HOURS),
                abandoned_before: now - Days::seconds(ABANDONED_AFTER_SECONDS),
            },
        )
        .await?;
        let row = match reservation {
            Reservation::Reserved => {
                let req = Request::from_parts(parts, Body::from(bytes));
                let release = ReleaseOnDrop {
                    db: Some(state.db.clone()),
                    project_id: project_id.clone(),
                    key: key.clone(),
                };
                let answer = match AssertUnwindSafe(inner.oneshot(req)).catch_unwind().await {
                    Ok(Ok(answer)) => answer,
                    Err(panic) => {
                        release.now().await;
                        std::panic::resume_unwind(panic);
                    }
                };
                release.disarm();
                return Ok(keep(state, &project_id, &key, &seed, &credential, answer).await);
            }
            Reservation::Taken(row) => row,
        };
        if row.request_digest != digest {
            return Err(ApiError::idempotency_key_reused(
                "this Idempotency-Key was used with another request (body, path or credential) in the last 24 hours; use a new key",
            ));
        }
        if row.status.is_some() {
            return replay(&row, &project_id, &key, &credential);
        }
        if started.elapsed() >= WAIT_FOR_FIRST {
            return Err(ApiError::idempotency_key_in_use());
        }
        // The first request is running: wait for its answer (or for its
        // release, after which this one runs).
        tokio::time::sleep(Duration::from_millis(20)).await;
        match idempotency::get(&state.db, &project_id, &key).await {
            Ok(Some(row)) if row.status.is_some() && row.request_digest == digest => {
                return replay(&row, &project_id, &key, &credential);
            }
            Ok(_) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// SHA-256 of who asks, the request's path (with its query) and the body.
fn request_digest(caller: &Caller, route: &str, body: &Bytes) -> String {
    let who = match caller {
        Caller::Operator => "operator",
        Caller::Key { key_id, .. } => key_id.as_str(),
    };
    let mut hash = Sha256::new();
    for part in [who.as_bytes(), b"\0", route.as_bytes(), b"\0", body] {
        hash.update(part);
    }
    hex::encode(hash.finalize())
}

/// Documents the header (and its `409`/`422`) on the `POST` of `paths`.
fn document(paths: &mut utoipa::openapi::path::Paths) {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    use utoipa::openapi::{ContentBuilder, ObjectBuilder, Ref, ResponseBuilder, Type};
    let problem = |description: &str| {
        ResponseBuilder::new()
            .description(description)
            .content(
                crate::problem::PROBLEM_JSON,
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("Problem")))
                    .build(),
            )
            .build()
    };
    for item in paths.paths.values_mut() {
        let Some(operation) = item.post.as_mut() else {
            continue;
        };
        let header = ParameterBuilder::new()
            .name("Idempotency-Key")
            .parameter_in(ParameterIn::Header)
            .description(Some(
                "A key of your choice (1 to 255 printable ASCII characters): a retry with the same key and body within 24 hours gets the first answer again (same status and body) and creates nothing",
            ))
            .schema(Some(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(MAX_KEY_CHARS))
                    .pattern(Some("^[!-~]+$")),
            ))
            .build();
        operation
            .parameters
            .get_or_insert_with(Vec::new)
            .push(header);
        let responses = &mut operation.responses.responses;
        responses.entry("409".to_owned()).or_insert_with(|| {
            problem("IDEMPOTENCY_KEY_IN_USE: the first request with this key is still running; see Retry-After").into()
        });
        responses.entry("422".to_owned()).or_insert_with(|| {
            problem("IDEMPOTENCY_KEY_REUSED: the key was used with another request").into()
        });
    }
}

/// Unix second of this process's last prune.
static LAST_PRUNE: AtomicI64 = AtomicI64::new(0);

/// Deletes keys older than 24 hours, at most once a minute per process.
async fn prune_now_and_then(state: &AppState) {
    let now = Utc::now();
    let last = LAST_PRUNE.load(Ordering::Relaxed);
    if now.timestamp() - last < 60
        || LAST_PRUNE
            .compare_exchange(last, now.timestamp(), Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
    {
        return;
    }
    if let Err(error) = idempotency::prune(&state.db, now - Days::hours(KEPT_HOURS)).await {
        tracing::warn!(%error, "pruning idempotency keys failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_printable_ascii_up_to_255() {
        assert!(well_formed("retry-1"));
        assert!(!well_formed(""));
        assert!(!well_formed("has space"));
        assert!(!well_formed(&"a".repeat(256)));
    }
}
