//! The status messages a worker publishes to a search's client (SPEC 4):
//! `matched` (with the match), `failed` (with its code) and `expired`.
//! Publishing is fire and forget: a client that was not listening reads the
//! search's state when it subscribes.

use matchplane_store::pool::PoolStore;
use serde_json::json;

/// `{"type":"matched","match":{…}}`, `match` being the `match.made` body
/// without its `type`.
pub fn matched(match_json: &serde_json::Value) -> String {
    json!({ "type": "matched", "match": match_json }).to_string()
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
