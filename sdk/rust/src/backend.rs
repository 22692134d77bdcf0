//! The studio backend's REST client: game modes, tickets, matches, results
//! and the webhook's secret, authenticated with a project API key
//! (`Authorization: Bearer mp_sk_…`).

use crate::error::{read_json, Error};
use crate::status::TicketStatus;
use reqwest::Method;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use url::Url;

/// Body of `POST /v1/projects/{projectId}/tickets`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NewTicket {
    /// The game mode's name.
    pub game_mode: String,
    /// The studio's player id (1..=128 printable characters).
    pub player_id: String,
    /// `{"mmr": …, "latencies": {…}, "data": {…}}`; omitted when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Value>,
    /// `{"id": …, "members": […]}`; omitted when `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub party: Option<Value>,
}

/// A generated ticket: hand `token` to the game client (it is shown once).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreatedTicket {
    /// `tkt_…`.
    pub ticket_id: String,
    /// The game client's credential for searching (a secret: never log it).
    pub token: String,
    /// When the token stops being valid (RFC 3339).
    pub expires_at: String,
}

/// What [`BackendClient::end_party_searches`] ended (`EndedPartySearches`
/// of the OpenAPI document).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EndedPartySearches {
    /// The party's id, as the studio named it in the tickets' `party`.
    pub party_id: String,
    /// The game mode whose searches ended.
    pub game_mode: String,
    /// `tkt_…` of every search this call cancelled (each one's client gets
    /// `cancelled`); empty when none was live.
    pub cancelled: Vec<String>,
}

/// The backend client of one project.
#[derive(Debug, Clone)]
pub struct BackendClient {
    http: reqwest::Client,
    project: Url,
    key: String,
}

impl BackendClient {
    /// A client for project `project_id` at `base_url` (e.g.
    /// `https://mm.example.com`), with an API key.
    ///
    /// # Errors
    /// [`Error::Url`] when `base_url` is not an `http(s)` URL.
    pub fn new(base_url: &str, project_id: &str, api_key: &str) -> Result<Self, Error> {
        let base = crate::base_url(base_url)?;
        let project = base
            .join(&format!("v1/projects/{}/", crate::segment(project_id)))
            .map_err(|e| Error::Url(e.to_string()))?;
        Ok(Self {
            http: crate::bounded_http(),
            project,
            key: api_key.to_owned(),
        })
    }

    /// The same client over a `reqwest::Client` of the caller's (timeouts, proxies).
    pub fn with_http(mut self, http: reqwest::Client) -> Self {
        self.http = http;
        self
    }

    /// Any route of the project: `path` is relative to
    /// `/v1/projects/{projectId}/` (e.g. `"game-modes/duel/stats"`).
    ///
    /// # Errors
    /// [`Error::Problem`] for the server's problem answers; transport errors.
    pub async fn request<T: serde::de::DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, Error> {
        let url = self
            .project
            .join(path)
            .map_err(|e| Error::Url(e.to_string()))?;
        let mut request = self.http.request(method, url).bearer_auth(&self.key);
        if let Some(body) = body {
            request = request.json(body);
        }
        read_json(request.send().await?).await
    }

    /// `PUT game-modes/{name}`: creates or replaces a mode (config as code).
    /// On create the answer's `webhook.secret` is shown in full, once.
    ///
    /// # Errors
    /// `VALIDATION_ERROR` with every failed rule in `errors`, and the like.
    pub async fn put_game_mode(&self, name: &str, mode: &Value) -> Result<Value, Error> {
        let path = format!("game-modes/{}", crate::segment(name));
        self.request(Method::PUT, &path, Some(mode)).await
    }

    /// `GET game-modes/{name}`.
    ///
    /// # Errors
    /// `GAME_MODE_NOT_FOUND` and the like.
    pub async fn game_mode(&self, name: &str) -> Result<Value, Error> {
        let path = format!("game-modes/{}", crate::segment(name));
        self.request(Method::GET, &path, None).await
    }

    /// `GET game-modes`.
    ///
    /// # Errors
    /// As [`BackendClient::request`].
    pub async fn game_modes(&self) -> Result<Value, Error> {
        self.request(Method::GET, "game-modes", None).await
    }

    /// `DELETE game-modes/{name}`.
    ///
    /// # Errors
    /// As [`BackendClient::request`].
    pub async fn delete_game_mode(&self, name: &str) -> Result<(), Error> {
        let path = format!("game-modes/{}", crate::segment(name));
        let _: Value = self
            .request(Method::DELETE, &path, None)
            .await
            .or_else(empty)?;
        Ok(())
    }

    /// `POST game-modes/{name}/webhook/rotate-secret`: the answer (the mode)
    /// carries the new secret in full in `webhook.secret`; the old one keeps
    /// signing for 24 hours.
    ///
    /// # Errors
    /// As [`BackendClient::request`].
    pub async fn rotate_webhook_secret(&self, name: &str) -> Result<Value, Error> {
        let path = format!("game-modes/{}/webhook/rotate-secret", crate::segment(name));
        self.request(Method::POST, &path, None).await
    }

    /// `POST tickets`: a ticket for one player.
    ///
    /// # Errors
    /// `GAME_MODE_NOT_FOUND`, `MMR_REQUIRED`, `PLAYER_ALREADY_SEARCHING` (with
    /// `ticket_id`), `DECLINE_COOLDOWN` (with `retry_after`), …
    pub async fn create_ticket(&self, ticket: &NewTicket) -> Result<CreatedTicket, Error> {
        let body = serde_json::to_value(ticket).map_err(|e| Error::Decode(e.to_string()))?;
        self.request(Method::POST, "tickets", Some(&body)).await
    }

    /// `GET tickets/{ticketId}`: the studio's view of a ticket.
    ///
    /// # Errors
    /// As [`BackendClient::request`].
    pub async fn ticket(&self, ticket_id: &str) -> Result<TicketStatus, Error> {
        let path = format!("tickets/{}", crate::segment(ticket_id));
        self.request(Method::GET, &path, None).await
    }

    /// `DELETE tickets/{ticketId}`: cancels its search (its client gets `cancelled`).
    /// A ticket that never searched is revoked: the answer reads
    /// `cancelled` and its token can no longer search.
    ///
    /// # Errors
    /// As [`BackendClient::request`].
    pub async fn cancel_ticket(&self, ticket_id: &str) -> Result<TicketStatus, Error> {
        let path = format!("tickets/{}", crate::segment(ticket_id));
        self.request(Method::DELETE, &path, None).await
    }

    /// `POST tickets/{ticketId}/accept` or `/decline`: answers a proposal
    /// for a player (modes with acceptance).
    ///
    /// # Errors
    /// `PROPOSAL_CLOSED`, `NOT_PROPOSED`, …
    pub async fn answer_for(&self, ticket_id: &str, accept: bool) -> Result<Value, Error> {
        let verb = if accept { "accept" } else { "decline" };
        let path = format!("tickets/{}/{verb}", crate::segment(ticket_id));
        self.request(Method::POST, &path, None).await
    }

    /// `DELETE players/{playerId}/searches`: ends all of a player's searches.
    ///
    /// # Errors
    /// As [`BackendClient::request`].
    pub async fn end_player_searches(&self, player_id: &str) -> Result<Value, Error> {
        let path = format!("players/{}/searches", crate::segment(player_id));
        self.request(Method::DELETE, &path, None).await
    }

    /// `DELETE players/{playerId}`: erases a player's data from the project
    /// (a deletion request): cancels their searches, deletes their ratings,
    /// seated tickets and recorded events, and redacts them in stored
    /// matches and webhook deliveries. Answers the counts, by table
    /// (`ratingsDeleted`, `matchesRedacted`, …); repeating it answers every
    /// count `0`.
    ///
    /// # Errors
    /// `FORBIDDEN` (403) for a key without the `admin` scope; as
    /// [`BackendClient::request`].
    pub async fn erase_player(&self, player_id: &str) -> Result<Value, Error> {
        let path = format!("players/{}", crate::segment(player_id));
        self.request(Method::DELETE, &path, None).await
    }

    /// `DELETE parties/{partyId}/searches?gameMode=`: ends every live search
    /// of a party in one game mode at once (e.g. a member left the party in
    /// the game), so nobody waits with `PARTY_INCOMPLETE` for the others.
    /// Each cancelled member's client gets `cancelled`; a search already
    /// proposed or matched is left alone, and a party with no live search
    /// answers an empty `cancelled` (the call is idempotent).
    ///
    /// # Errors
    /// `GAME_MODE_NOT_FOUND` (404) for an unknown mode; as
    /// [`BackendClient::request`].
    pub async fn end_party_searches(
        &self,
        party_id: &str,
        game_mode: &str,
    ) -> Result<EndedPartySearches, Error> {
        let query = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("gameMode", game_mode)
            .finish();
        let path = format!("parties/{}/searches?{query}", crate::segment(party_id));
        self.request(Method::DELETE, &path, None).await
    }

    /// `GET matches/{matchId}`: the stored match (the `match.made` body without `type`).
    ///
    /// # Errors
    /// As [`BackendClient::request`].
    pub async fn get_match(&self, match_id: &str) -> Result<Value, Error> {
        let path = format!("matches/{}", crate::segment(match_id));
        self.request(Method::GET, &path, None).await
    }

    /// `GET matches?gameMode=&limit=&cursor=`: a page of matches, newest first.
    ///
    /// # Errors
    /// As [`BackendClient::request`].
    pub async fn matches(
        &self,
        game_mode: Option<&str>,
        limit: Option<u32>,
        cursor: Option<&str>,
    ) -> Result<Value, Error> {
        let mut query = url::form_urlencoded::Serializer::new(String::new());
        if let Some(mode) = game_mode {
            query.append_pair("gameMode", mode);
        }
        if let Some(limit) = limit {
            query.append_pair("limit", &limit.to_string());
        }
        if let Some(cursor) = cursor {
            query.append_pair("cursor", cursor);
        }
        self.request(Method::GET, &format!("matches?{}", query.finish()), None)
            .await
    }

    /// `POST game-modes/{name}/results`: reports a result (`{"matchId", "teams": [{"place", "players"}]}`).
    ///
    /// # Errors
    /// `RESULT_ALREADY_REPORTED`, `VALIDATION_ERROR`, …
    pub async fn report_result(&self, game_mode: &str, result: &Value) -> Result<Value, Error> {
        let path = format!("game-modes/{}/results", crate::segment(game_mode));
        self.request(Method::POST, &path, Some(result)).await
    }

    /// `POST matches/{matchId}/assignment`: tells the players where to play
    /// (`{"connection", "data", "players": {…}}`).
    ///
    /// # Errors
    /// `ALREADY_ASSIGNED`, …
    pub async fn assign(&self, match_id: &str, assignment: &Value) -> Result<Value, Error> {
        let path = format!("matches/{}/assignment", crate::segment(match_id));
        self.request(Method::POST, &path, Some(assignment)).await
    }

    /// `POST matches/{matchId}/release`: gives a made match back (no free server).
    ///
    /// # Errors
    /// `RELEASE_WINDOW_CLOSED`, …
    pub async fn release(&self, match_id: &str) -> Result<Value, Error> {
        let path = format!("matches/{}/release", crate::segment(match_id));
        self.request(Method::POST, &path, None).await
    }

    /// `GET matches/{matchId}/deliveries`: the webhook's attempts for a match.
    ///
    /// # Errors
    /// As [`BackendClient::request`].
    pub async fn deliveries(&self, match_id: &str) -> Result<Value, Error> {
        let path = format!("matches/{}/deliveries", crate::segment(match_id));
        self.request(Method::GET, &path, None).await
    }
}

/// A `204`/empty body read as JSON fails to decode; that is success here.
fn empty(error: Error) -> Result<Value, Error> {
    match error {
        Error::Decode(_) => Ok(Value::Null),
        other => Err(other),
    }
}
