//! The status messages a worker publishes to a search's client (SPEC 4):
//! `matched` (with the player's view of the match), `failed` (with its
//! code) and `expired`. Publishing is fire and forget: a client that was
//! not listening reads the search's state when it subscribes.
//!
//! The player's view in a `matched` message is
//! [`matchplane_webhook::player_match`], the one the API builds from the
//! stored match, so a `matched` message carries the same match whichever
//! way it reached the client.

use matchplane_store::pool::PoolStore;
use serde_json::{json, Value};

/// `{"type":"matched","match":{…}}`, `match` being `ticket_id`'s view of
/// the match ([`matchplane_webhook::player_match`]).
pub fn matched(player_view: &Value) -> String {
    json!({ "type": "matched", "match": player_view }).to_string()
}

/// `{"type":"failed","code":…,"message":…}`.
pub fn failed(code: &str, message: &str) -> String {
    json!({ "type": "failed", "code": code, "message": message }).to_string()
}

/// `{"type":"expired"}`.
pub fn expired() -> String {
    json!({ "type": "expired" }).to_string()
}

/// Publishes `message` to `ticket_id`'s subscribers; a failure is logged
/// (the client reads the state on its next status read).
pub async fn publish(pool: &dyn PoolStore, ticket_id: &str, message: &str) {
    if let Err(err) = pool.publish_status(ticket_id, message).await {
        tracing::warn!(%ticket_id, error = %err, "status publish failed");
    }
}
