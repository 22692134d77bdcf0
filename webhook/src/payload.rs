//! Webhook bodies (docs/webhook-events.md): `match.made` and `webhook.test`.
//!
//! A body is serialised once into a [`Message`], when its delivery is
//! queued (a match's when it is stored); every attempt sends (and signs)
//! exactly those bytes, so a retry carries the same body as the first
//! attempt.

mod roster;
mod team;

pub use roster::{follow_roster, shape_of};
pub use team::{BotSeat, Player, Team, TeamWire};

use chrono::{DateTime, Utc};
use matchplane_matchmaker::ProposedMatch;
use serde::{Deserialize, Serialize};

/// An event as sent to a studio; `type` comes first in the JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    /// `match.made`: a match was formed and recorded.
    #[serde(rename = "match.made")]
    MatchMade(MatchMade),
    /// `webhook.test`: sent on demand to check an endpoint.
    #[serde(rename = "webhook.test")]
    Test(WebhookTest),
    /// `match.backfilled`: a fill seated new players in a running match.
    #[serde(rename = "match.backfilled")]
    Backfilled(crate::backfilled::MatchBackfilled),
}

impl Event {
    /// The event's type: its body's `type`.
    pub fn event_type(&self) -> crate::EventType {
        match self {
            Event::MatchMade(_) => crate::EventType::MatchMade,
            Event::Test(_) => crate::EventType::WebhookTest,
            Event::Backfilled(_) => crate::EventType::MatchBackfilled,
        }
    }
}

/// The `match.made` body (docs/webhook-events.md).
///
/// In the OpenAPI document: component `MatchRecord` (the studio's view of
/// a matched ticket's match; the webhook body adds `type`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = MatchRecord))]
#[cfg_attr(feature = "openapi", schema(example = json!({"matchId": "mat_01JDZ8M9X2K7P3R5T8V1W4Y6Z0",
    "projectId": "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9", "gameMode": "duel", "gameModeVersion": 1,
    "createdAt": "2026-12-01T10:00:03.120Z", "madeAt": "2026-12-01T10:00:03.180Z",
    "teams": [
        {"index": 0, "players": [{"playerId": "ana", "ticketId": "tkt_01JDZ8M4Q7N4W1Y8A5V3C2B6D9", "partyId": null, "mmr": 1500.0, "pingMs": null, "waitSeconds": 2.4}], "meanMmr": 1500.0},
        {"index": 1, "players": [{"playerId": "ben", "ticketId": "tkt_01JDZ8M5R8P5X2Z9B6W4D3C7E0", "partyId": null, "mmr": 1520.0, "pingMs": null, "waitSeconds": 1.1}], "meanMmr": 1520.0}],
    "quality": {"mmrSpread": 20.0, "teamImbalance": 20.0},
    "matchShape": [1, 1], "seatsOpen": [0, 0]})))]
#[serde(rename_all = "camelCase")]
pub struct MatchMade {
    /// `mat_…`, also the `webhook-id`.
    pub match_id: String,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The game mode's config version the match was made under.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub game_mode_version: i64,
    /// When the cycle formed the match, or proposed it in a mode with
    /// acceptance (RFC 3339, UTC, milliseconds).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
    /// When the match was stored and its players told `matched` (RFC 3339,
    /// UTC, milliseconds): the release window and the assignment wait
    /// count from it (docs/acceptance.md). Absent for a match stored, or an
    /// event first queued, before the field existed: such a match was made
    /// at `createdAt`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "matchplane_matchmaker::timestamp::option::serialize"
    )]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub made_at: Option<DateTime<Utc>>,
    /// Teams in match-shape order.
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<TeamWire>, min_items = 1))]
    pub teams: Vec<Team>,
    /// How close the match is (over humans only).
    pub quality: Quality,
    /// The shape used, players per team (docs/game-modes.md#thin-pools-smaller-matches-and-bots): the base shape, a
    /// relaxed one, or a settled flexible match's team sizes; a bot match's
    /// is the base shape. Empty only in records made before it was kept.
    #[serde(default)]
    pub match_shape: Vec<u32>,
    /// Seats open to backfill per team: the base shape minus the one used,
    /// or a bot match's replaceable bot seats.
    #[serde(default)]
    pub seats_open: Vec<u32>,
    /// The region the match is played in (docs/regions.md); absent in modes
    /// without `regions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The backfill request opened for the match's open seats (`bf_…`)
    /// when the mode has `backfill.auto`; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backfill_id: Option<String>,
    /// What every player agreed on under the mode's rules (docs/rules.md,
    /// "The match"): each `equal` rule's common value, each `intersect`
    /// rule's shared values, by attribute; absent without rules.
    #[serde(
        default,
        skip_serializing_if = "matchplane_matchmaker::rules::DeclaredValues::is_empty"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<HashMap<String, matchplane_matchmaker::rules::AttributeValue>>, nullable = false))]
    pub attributes: matchplane_matchmaker::rules::DeclaredValues,
}

/// Match quality figures (docs/simulate.md).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookQuality))]
#[serde(rename_all = "camelCase")]
pub struct Quality {
    /// Max minus min player MMR (0 without MMRs).
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub mmr_spread: f64,
    /// Max minus min team mean MMR (0 without MMRs).
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub team_imbalance: f64,
}

/// The `webhook.test` body.
///
/// In the OpenAPI document: component `WebhookTestEvent`, with its `type`
/// added by the API's document pass.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookTestEvent))]
#[cfg_attr(feature = "openapi", schema(example = json!({"projectId": "prj_01JDZ8K0A1B2C3D4E5F6G7H8J9",
    "gameMode": "duel", "createdAt": "2026-12-01T10:00:00.000Z"})))]
#[serde(rename_all = "camelCase")]
pub struct WebhookTest {
    /// `prj_…`.
    pub project_id: String,
    /// The game mode whose webhook is tested.
    pub game_mode: String,
    /// When the test was requested (RFC 3339, UTC, milliseconds).
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::serialize")]
    pub created_at: DateTime<Utc>,
}

/// Identity of a recorded match, with which a [`ProposedMatch`] becomes a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchIdentity {
    /// `mat_…`.
    pub match_id: String,
    /// `prj_…`.
    pub project_id: String,
    /// The game mode's name.
    pub game_mode: String,
    /// The game mode's config version.
    pub game_mode_version: i64,
    /// When the match was recorded.
    pub created_at: DateTime<Utc>,
}

impl MatchMade {
    /// The `match.made` body of a match the core proposed and the worker recorded.
    pub fn new(identity: MatchIdentity, proposed: &ProposedMatch) -> Self {
        Self {
            match_id: identity.match_id,
            project_id: identity.project_id,
            game_mode: identity.game_mode,
            game_mode_version: identity.game_mode_version,
            created_at: identity.created_at,
            made_at: None,
            teams: proposed
                .teams
                .iter()
                .map(|t| {
                    let mut team = Team::from(t);
                    team.bots = (0..t.bots as usize)
                        .map(|i| {
                            BotSeat::new(proposed.bot_mmr)
                                .with_role(t.bot_roles.get(i).map(|r| r.as_str()))
                        })
                        .collect();
                    team
                })
                .collect(),
            quality: Quality {
                mmr_spread: proposed.mmr_spread,
                team_imbalance: proposed.team_imbalance,
            },
            match_shape: proposed.match_shape.clone(),
            seats_open: proposed.seats_open.clone(),
            region: proposed.region.as_ref().map(ToString::to_string),
            backfill_id: None,
            attributes: proposed.attributes.clone(),
        }
    }
}

/// A webhook ready to send: its `webhook-id` and the exact body bytes.
#[derive(Clone, PartialEq, Eq)]
pub struct Message {
    /// `webhook-id`, stable across retries (the match id for `match.made`).
    pub id: String,
    /// The JSON body, serialised once; every attempt sends these bytes.
    pub body: Vec<u8>,
}

impl std::fmt::Debug for Message {
    /// Bodies are never logged (STYLE 14): only the id and the length.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Message")
            .field("id", &self.id)
            .field("body_len", &self.body.len())
            .finish()
    }
}

impl Message {
    /// Serialises `event` once under the `webhook-id` `id`.
    ///
    /// # Errors
    /// A `serde_json` error, which plain data types do not produce.
    pub fn new(id: impl Into<String>, event: &Event) -> Result<Self, serde_json::Error> {
        Ok(Self {
            id: id.into(),
            body: serde_json::to_vec(event)?,
        })
    }

    /// The `match.made` message, whose `webhook-id` is the match id.
    ///
    /// # Errors
    /// As [`Message::new`].
    pub fn match_made(event: MatchMade) -> Result<Self, serde_json::Error> {
        let id = event.match_id.clone();
        Self::new(id, &Event::MatchMade(event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use matchplane_matchmaker::{MatchedPlayer, ProposedTeam};

    fn proposed() -> ProposedMatch {
        let player = |id: &str, mmr: f64| MatchedPlayer {
            player_id: id.into(),
            ticket_id: format!("tkt_{id}").into(),
            party_id: None,
            mmr: Some(mmr),
            ping_ms: None,
            wait_seconds: 12.4,
            latency_ms: None,
            attributes: Default::default(),
            role: None,
        };
        ProposedMatch {
            teams: vec![
                ProposedTeam {
                    index: 0,
                    players: vec![player("a", 1500.0)],
                    mean_mmr: Some(1500.0),
                    bots: 0,
                    bot_roles: Vec::new(),
                },
                ProposedTeam {
                    index: 1,
                    players: vec![player("Zoë🎮", 1520.5)],
                    mean_mmr: Some(1520.5),
                    bots: 0,
                    bot_roles: Vec::new(),
                },
            ],
            mmr_spread: 20.5,
            team_imbalance: 20.5,
            match_shape: vec![1, 1],
            seats_open: vec![0, 0],
            bot_mmr: None,
            region: None,
            attributes: Default::default(),
        }
    }

    fn identity() -> MatchIdentity {
        MatchIdentity {
            match_id: "mat_1".to_owned(),
            project_id: "prj_1".to_owned(),
            game_mode: "ranked-1v1".to_owned(),
            game_mode_version: 3,
            created_at: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
        }
    }

    #[test]
    fn match_made_has_the_spec_shape() {
        let message = Message::match_made(MatchMade::new(identity(), &proposed())).unwrap();
        assert_eq!(message.id, "mat_1");
        let text = std::str::from_utf8(&message.body).unwrap();
        assert!(text.starts_with(r#"{"type":"match.made","matchId":"mat_1","projectId":"prj_1""#));
        assert!(text.contains("Zoë🎮"), "raw UTF-8, not escaped: {text}");
        let value: serde_json::Value = serde_json::from_slice(&message.body).unwrap();
        assert_eq!(value["gameModeVersion"], 3);
        assert_eq!(value["createdAt"], "2027-01-15T08:00:00.000Z");
        let player = &value["teams"][0]["players"][0];
        for key in [
            "playerId",
            "ticketId",
            "partyId",
            "mmr",
            "pingMs",
            "waitSeconds",
        ] {
            assert!(player.get(key).is_some(), "{key}");
        }
        assert_eq!(value["teams"][1]["meanMmr"], 1520.5);
        assert_eq!(value["quality"]["mmrSpread"], 20.5);
        assert_eq!(value["quality"]["teamImbalance"], 20.5);
        let back: Event = serde_json::from_slice(&message.body).unwrap();
        assert!(matches!(back, Event::MatchMade(m) if m.teams.len() == 2));
    }

    #[test]
    fn bot_seats_follow_the_players_and_round_trip() {
        let mut proposed = proposed();
        proposed.teams[1].bots = 2;
        proposed.bot_mmr = Some(1510.25);
        proposed.match_shape = vec![1, 3];
        proposed.seats_open = vec![0, 2];
        let body = MatchMade::new(identity(), &proposed);
        let message = Message::match_made(body.clone()).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&message.body).unwrap();
        let seats = value["teams"][1]["players"].as_array().unwrap();
        assert_eq!(seats.len(), 3);
        assert_eq!(seats[0]["playerId"], "Zoë🎮");
        assert_eq!(
            seats[1],
            serde_json::json!({"bot": true, "playerId": null, "ticketId": null, "mmr": 1510.25})
        );
        assert_eq!(value["matchShape"], serde_json::json!([1, 3]));
        assert_eq!(value["seatsOpen"], serde_json::json!([0, 2]));
        let back: Event = serde_json::from_slice(&message.body).unwrap();
        assert_eq!(back, Event::MatchMade(body));
    }

    #[test]
    fn a_bot_seat_carries_the_role_it_fills_and_round_trips() {
        let mut proposed = proposed();
        proposed.teams[1].bots = 2;
        proposed.teams[1].bot_roles = vec!["tank".into(), "any".into()];
        proposed.match_shape = vec![1, 3];
        let body = MatchMade::new(identity(), &proposed);
        let message = Message::match_made(body.clone()).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&message.body).unwrap();
        let seats = value["teams"][1]["players"].as_array().unwrap();
        assert_eq!(seats[1]["bot"], true);
        assert_eq!(seats[1]["role"], "tank");
        assert_eq!(seats[2]["role"], "any");
        let back: Event = serde_json::from_slice(&message.body).unwrap();
        assert_eq!(back, Event::MatchMade(body));
    }

    #[test]
    fn a_players_role_is_in_the_body_and_its_own_view_and_absent_without_one() {
        let mut proposed = proposed();
        proposed.teams[0].players[0].role = Some("tank".into());
        let body = MatchMade::new(identity(), &proposed);
        let message = Message::match_made(body.clone()).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&message.body).unwrap();
        assert_eq!(value["teams"][0]["players"][0]["role"], "tank");
        assert!(value["teams"][1]["players"][0].get("role").is_none());
        let own = crate::player_match(&body, "tkt_a").unwrap();
        let own: serde_json::Value = serde_json::from_str(own.get()).unwrap();
        assert_eq!(own["player"]["role"], "tank");
        let back: Event = serde_json::from_slice(&message.body).unwrap();
        assert_eq!(back, Event::MatchMade(body));
    }

    #[test]
    fn a_record_without_shape_fields_still_reads() {
        let text = r#"{"type":"match.made","matchId":"mat_1","projectId":"prj_1","gameMode":"m","gameModeVersion":1,"createdAt":"2027-01-15T08:00:00.000Z","teams":[],"quality":{"mmrSpread":0,"teamImbalance":0}}"#;
        let back: Event = serde_json::from_str(text).unwrap();
        assert_eq!(back.event_type(), crate::EventType::MatchMade);
        assert!(matches!(back, Event::MatchMade(m) if m.match_shape.is_empty()));
    }

    #[test]
    fn webhook_test_is_tagged() {
        let event = Event::Test(WebhookTest {
            project_id: "prj_1".to_owned(),
            game_mode: "duel".to_owned(),
            created_at: DateTime::from_timestamp(0, 0).unwrap(),
        });
        let message = Message::new("tst_1", &event).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&message.body).unwrap();
        assert_eq!(value["type"], event.event_type().as_str());
        assert!(
            !format!("{message:?}").contains("prj_1"),
            "Debug hides the body"
        );
    }
}
