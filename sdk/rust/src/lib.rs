//! `matchplane-client`: the client SDK of matchplane's API.
//!
//! - [`BackendClient`]: the studio backend's REST client (game modes,
//!   tickets, matches, results, assignment), errors as [`Problem`]s;
//! - [`GameClient::search`]: the game client's search as a `Stream` of
//!   [`SearchMessage`]s over the WebSocket, with REST polling as the
//!   fallback, and [`Search::accept`], [`Search::decline`], [`Search::cancel`];
//! - [`verify_webhook`]: Standard Webhooks verification of the webhooks.
//!
//! It speaks the API version [`API_VERSION`] (the OpenAPI document's `info.version`).

mod backend;
mod error;
mod messages;
mod rest_poll;
mod search;
mod status;
mod webhook;

pub use backend::{BackendClient, CreatedTicket, EndedPartySearches, NewTicket};
pub use error::{Error, FieldError, Problem};
pub use messages::{Proposal, SearchMessage, Status};
pub use search::{GameClient, Search, SearchOptions, Transport, REST_POLL_LIMIT};
pub use status::TicketStatus;
pub use webhook::{verify_webhook, verify_webhook_at, WebhookError, DEFAULT_TOLERANCE};

/// The API version this SDK speaks: `info.version` of the OpenAPI document.
pub const API_VERSION: &str = "0.1.0";

/// How long one HTTP call of the default clients may take, its answer read
/// included, before it fails (a connection gone silent, a load balancer
/// that takes connections and never answers); also the WebSocket's default
/// time to open. Above the server's own 10 s bound on a request, so that its
/// `503` with `Retry-After` arrives first. A client of your own
/// (`with_http`) sets its own.
pub const REQUEST_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// The default HTTP client: every call bounded by [`REQUEST_TIMEOUT`].
fn bounded_http() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(REQUEST_TIMEOUT)
        .build()
        .unwrap_or_default()
}

/// `base_url` with a trailing slash, so relative joins keep its path.
pub(crate) fn base_url(raw: &str) -> Result<url::Url, Error> {
    let with_slash = if raw.ends_with('/') {
        raw.to_owned()
    } else {
        format!("{raw}/")
    };
    let url = url::Url::parse(&with_slash).map_err(|e| Error::Url(e.to_string()))?;
    if url.scheme() != "http" && url.scheme() != "https" {
        return Err(Error::Url(format!("scheme `{}`", url.scheme())));
    }
    Ok(url)
}

/// One path segment, percent-encoded.
pub(crate) fn segment(raw: &str) -> String {
    url::form_urlencoded::byte_serialize(raw.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}
