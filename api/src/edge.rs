//! What every request goes through, as one middleware: its metrics and log
//! line ([`crate::observe`]), the config cache's invalidation after a write
//! ([`crate::play::cache::ConfigWrite`]), and the problem safety net
//! ([`crate::problem::safety_net`]). One layer instead of three: each axum
//! `from_fn` layer costs a boxed future and a clone of the inner service per
//! request, and ticket generation is a hot path (README, "Benchmark").

use crate::observe::Observed;
use crate::play::cache::ConfigWrite;
use crate::problem::safety_net;
use crate::state::AppState;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;

/// The middleware: observe, run the handler, forget changed configs, turn a
/// non-problem error answer into a problem.
pub async fn edge(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let observed = Observed::start(&req);
    let write = ConfigWrite::of(&req);
    let response = next.run(req).await;
    if let Some(write) = write {
        write.apply(&state, &response);
    }
    observed.record(&state, &response);
    safety_net(response)
}
