//! Reading a ticket's stored record: the current layout (its attributes
//! whole, its search's pool entry a field of its own) and the one before it
//! (`mmr`, `latencies` and `data` at the top, no entry), which tickets
//! generated before an upgrade still have until they expire; such a record
//! gets its entry written from its fields, as at generation.

use super::{NewTicket, Ticket};
use matchplane_matchmaker::{Attributes, Latencies, Party, RawJson};
use serde::Deserialize;

/// A stored record of either layout.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct StoredTicket {
    ticket_id: String,
    project_id: String,
    game_mode: String,
    player_id: String,
    #[serde(default)]
    party: Option<Party>,
    #[serde(default)]
    attributes: Option<Attributes>,
    #[serde(default)]
    entry: Option<RawJson>,
    /// The previous layout's `attributes.mmr`.
    #[serde(default)]
    mmr: Option<f64>,
    /// The previous layout's `attributes.latencies`.
    #[serde(default)]
    latencies: Option<Latencies>,
    /// The previous layout's `attributes.data`, its raw text in a string.
    #[serde(default)]
    data: Option<String>,
    token_hash: String,
    created_at: f64,
    expires_at: f64,
}

impl TryFrom<StoredTicket> for Ticket {
    type Error = String;

    fn try_from(stored: StoredTicket) -> Result<Self, String> {
        let attributes = match (stored.attributes, stored.entry) {
            (Some(attributes), Some(entry)) => {
                return Ok(Ticket {
                    attributes,
                    entry,
                    ticket_id: stored.ticket_id,
                    project_id: stored.project_id,
                    game_mode: stored.game_mode,
                    player_id: stored.player_id,
                    party: stored.party,
                    token_hash: stored.token_hash,
                    created_at: stored.created_at,
                    expires_at: stored.expires_at,
                })
            }
            (attributes, _) => attributes,
        };
        let data = stored
            .data
            .map(RawJson::from_text)
            .transpose()
            .map_err(|e| format!("ticket data: {e}"))?;
        let attributes = attributes.unwrap_or(Attributes {
            mmr: stored.mmr,
            latencies: stored.latencies,
            data,
            declared: Default::default(),
        });
        NewTicket {
            ticket_id: stored.ticket_id,
            project_id: stored.project_id,
            game_mode: stored.game_mode,
            player_id: stored.player_id,
            party: stored.party,
            attributes,
            token_hash: stored.token_hash,
            created_at: stored.created_at,
            expires_at: stored.expires_at,
        }
        .into_ticket()
        .map_err(|e| e.to_string())
    }
}
