//! The teams and players of a `match.made` body (docs/webhook-events.md),
//! bot seats included, and their forms from the matching core's match.

use matchplane_matchmaker::{MatchedPlayer, ProposedTeam};
use serde::{Deserialize, Serialize};

/// One team of a `match.made` body. In JSON, `players` lists the humans
/// and then the team's bot seats (`{"bot": true, "playerId": null,
/// "ticketId": null, "mmr": …}`, docs/game-modes.md#thin-pools-smaller-matches-and-bots).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "TeamWire", into = "TeamWire")]
pub struct Team {
    /// Position in the match shape, from 0.
    pub index: usize,
    /// The seated players.
    pub players: Vec<Player>,
    /// Mean MMR of the players that carry one; `null` if none does.
    pub mean_mmr: Option<f64>,
    /// The team's bot seats, after its players.
    pub bots: Vec<BotSeat>,
}

/// A bot seat (docs/game-modes.md#thin-pools-smaller-matches-and-bots): no player, no ticket, the humans' mean MMR.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookBotSeat))]
#[serde(rename_all = "camelCase")]
pub struct BotSeat {
    /// Always `true`.
    pub bot: bool,
    /// Always `null`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub player_id: Option<String>,
    /// Always `null`.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub ticket_id: Option<String>,
    /// Mean of the match's humans' MMR, or `null`.
    pub mmr: Option<f64>,
    /// In a role queue, the role seat the bot fills (docs/rules.md, "Role
    /// queues"); absent without `composition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
}

impl BotSeat {
    /// A bot seat of MMR `mmr`.
    pub fn new(mmr: Option<f64>) -> Self {
        Self {
            bot: true,
            player_id: None,
            ticket_id: None,
            mmr,
            role: None,
        }
    }

    /// This seat, filling the role seat `role`.
    pub fn with_role(mut self, role: Option<&str>) -> Self {
        self.role = role.map(str::to_owned);
        self
    }
}

/// A [`Team`] as written: humans and bots in one `players` array (the
/// OpenAPI document's `WebhookTeam`).
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookTeam))]
#[serde(rename_all = "camelCase")]
pub struct TeamWire {
    /// Position in the match shape, from 0.
    index: usize,
    /// The seated players, then the team's bot seats.
    players: Vec<SeatWire>,
    /// Mean MMR of the players that carry one; `null` if none does.
    mean_mmr: Option<f64>,
}

/// A seat as written: a bot seat carries `"bot": true`, a player does not.
#[derive(Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookSeat))]
#[serde(untagged)]
enum SeatWire {
    Bot(BotSeat),
    Player(Player),
}

impl From<TeamWire> for Team {
    fn from(wire: TeamWire) -> Self {
        let mut players = Vec::new();
        let mut bots = Vec::new();
        for seat in wire.players {
            match seat {
                SeatWire::Bot(b) if b.bot => bots.push(b),
                SeatWire::Bot(b) => bots.push(BotSeat::new(b.mmr).with_role(b.role.as_deref())),
                SeatWire::Player(p) => players.push(p),
            }
        }
        Self {
            index: wire.index,
            players,
            mean_mmr: wire.mean_mmr,
            bots,
        }
    }
}

impl From<Team> for TeamWire {
    fn from(team: Team) -> Self {
        let players = team
            .players
            .into_iter()
            .map(SeatWire::Player)
            .chain(team.bots.into_iter().map(SeatWire::Bot))
            .collect();
        Self {
            index: team.index,
            players,
            mean_mmr: team.mean_mmr,
        }
    }
}

/// One player of a `match.made` body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = WebhookPlayer))]
#[serde(rename_all = "camelCase")]
pub struct Player {
    /// The studio's player id.
    pub player_id: String,
    /// `tkt_…` of the matched search.
    pub ticket_id: String,
    /// The party id, `null` for a solo player.
    pub party_id: Option<String>,
    /// The ticket's MMR, if any.
    pub mmr: Option<f64>,
    /// The search's ping in milliseconds, if measured.
    pub ping_ms: Option<f64>,
    /// Seconds the search waited until the cycle that matched it, to the
    /// millisecond.
    #[serde(serialize_with = "matchplane_matchmaker::timestamp::seconds")]
    #[cfg_attr(feature = "openapi", schema(minimum = 0))]
    pub wait_seconds: f64,
    /// The player's latency to the match's region (milliseconds); absent
    /// in modes without `regions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub latency_ms: Option<f64>,
    /// The ticket's `attributes.data`, exactly as the studio sent it
    /// (docs/searching.md); absent when the ticket had none. Filled by the outbox
    /// consumer from the ticket's record, never carried in the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>, nullable = false))]
    pub data: Option<matchplane_matchmaker::RawJson>,
    /// `true` for a player a backfill seated after the match was made;
    /// absent for the match's own players.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backfill: bool,
    /// `true` for a player the studio's latest backfill roster no longer
    /// lists (it left the running match); absent otherwise. Only the match
    /// views carry it (docs/backfill.md), never a webhook body.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub left: bool,
    /// The player's own values of the mode's declared attributes
    /// (docs/rules.md), defaults filled in; absent without declarations.
    #[serde(
        default,
        skip_serializing_if = "matchplane_matchmaker::rules::DeclaredValues::is_empty"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<HashMap<String, matchplane_matchmaker::rules::AttributeValue>>, nullable = false))]
    pub attributes: matchplane_matchmaker::rules::DeclaredValues,
    /// The role seat the player takes in a mode with `composition`
    /// (docs/rules.md, "Role queues"): one of the roles its ticket listed,
    /// or `any`; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(nullable = false))]
    pub role: Option<String>,
}

impl From<&ProposedTeam> for Team {
    fn from(team: &ProposedTeam) -> Self {
        Self {
            index: team.index,
            players: team.players.iter().map(Player::from).collect(),
            mean_mmr: team.mean_mmr,
            bots: Vec::new(),
        }
    }
}

impl From<&MatchedPlayer> for Player {
    fn from(player: &MatchedPlayer) -> Self {
        Self {
            player_id: player.player_id.to_string(),
            ticket_id: player.ticket_id.to_string(),
            party_id: player.party_id.as_ref().map(ToString::to_string),
            mmr: player.mmr,
            ping_ms: player.ping_ms,
            wait_seconds: player.wait_seconds,
            latency_ms: player.latency_ms,
            data: None,
            backfill: false,
            left: false,
            attributes: player.attributes.to_values(),
            role: player.role.as_ref().map(ToString::to_string),
        }
    }
}
