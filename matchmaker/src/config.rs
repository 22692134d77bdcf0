//! Game-mode configuration in the exact JSON of docs/game-modes.md.
//!
//! These types only describe shape and defaults; [`crate::validation`]
//! checks them against a [`crate::Tier`].

pub use crate::shape::{FlexibleShape, MatchShape, TeamSize};
use crate::tagged::tagged_enum;
use serde::{Deserialize, Serialize};

/// A game mode as a studio writes it (docs/game-modes.md). Server-set fields
/// (`version`, `createdAt`, `webhook.secret`) are not part of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = GameMode, example = json!({
    "name": "ranked-5v5", "enabled": true, "matchShape": [5, 5],
    "matchmakingCycleDurationSeconds": 2,
    "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
    "teamAssignment": "balanced",
    "parties": {"allowParties": true, "maxSize": 3, "keepTogether": true},
    "ticketTtlSeconds": 600,
    "webhook": {"url": "https://game.example.com/hooks/match", "enabled": true}})))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GameModeConfig {
    /// `^[a-z0-9][a-z0-9_-]{0,62}$`, unique in the project.
    #[cfg_attr(
        feature = "openapi",
        schema(
            pattern = "^[a-z0-9][a-z0-9_-]{0,62}$",
            min_length = 1,
            max_length = 63
        )
    )]
    pub name: String,
    /// Default `true`; a disabled mode runs no cycle and fails its searches
    /// (`GAME_MODE_DISABLED`).
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Players per team, e.g. `[5, 5]` (1..=64 teams, each >= 1, sum >= 2
    /// and <= the tier's `maxMatchSize`), or a flexible object such as
    /// `{"teams": 20, "teamSize": {"min": 1, "max": 3}}`.
    pub match_shape: MatchShape,
    /// Pause between two cycles (seconds), >= the tier floor, <= 3600.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 3600))]
    pub matchmaking_cycle_duration_seconds: f64,
    /// How candidates are grouped.
    pub algorithm: Algorithm,
    /// How a full group is split into teams (ignored for FIFO).
    #[serde(default)]
    pub team_assignment: TeamAssignment,
    /// Party rules; default solo only: `{"allowParties": false, "maxSize": 1,
    /// "keepTogether": true}`.
    #[serde(default, deserialize_with = "null_as_left_out")]
    #[cfg_attr(feature = "openapi", schema(nullable))]
    pub parties: Parties,
    /// How long a ticket (and so a search) lives (seconds); default 600.
    #[serde(default = "default_ticket_ttl")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 86400))]
    pub ticket_ttl_seconds: u32,
    /// Where `match.made` webhooks go; optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookConfig>,
    /// Glicko-2 ratings kept from reported results; optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratings: Option<crate::ratings::RatingsConfig>,
    /// Smaller shapes tried once a group's anchor (its longest-waiting
    /// player) has waited `afterSeconds` (docs/game-modes.md#thin-pools-smaller-matches-and-bots):
    /// at most 8, `afterSeconds` strictly increasing; empty: none. Only with
    /// an array `matchShape`.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_left_out"
    )]
    #[cfg_attr(feature = "openapi", schema(max_items = 8, nullable))]
    pub relaxations: Vec<Relaxation>,
    /// Bot seats completing a group of too few humans (docs/game-modes.md#thin-pools-smaller-matches-and-bots); optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bots: Option<Bots>,
    /// Region rule (docs/regions.md): tickets carry latency maps and a match is
    /// played in a region within every member's ceiling; optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regions: Option<crate::latency::Regions>,
    /// Match proposals every member accepts before the match is made
    /// (docs/acceptance.md); optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acceptance: Option<crate::acceptance::Acceptance>,
    /// Telling the players where to play (docs/acceptance.md): a made match waits for
    /// the studio's assignment; optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignment: Option<crate::assignment::Assignment>,
    /// Backfill of running matches (docs/backfill.md); optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backfill: Option<crate::backfill::BackfillConfig>,
    /// Recording of search starts, cancels and ends for replays and the
    /// guarded `PUT` (docs/tuning.md); optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recording: Option<crate::recording::Recording>,
    /// The studio's own ticket attributes, by name (docs/rules.md): at most
    /// 16, names `^[a-z][a-zA-Z0-9_]{0,31}$`, not `mmr`, `latencies` or
    /// `data`; optional. An empty block is stored as none, so that `{}` and
    /// leaving the block out are one config (one version).
    #[serde(default, skip_serializing_if = "declares_nothing")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<std::collections::BTreeMap<String, crate::rules::Declaration>>))]
    pub attributes: Option<crate::rules::Declarations>,
    /// Rules over those attributes (at most 16), each holding between every
    /// two candidates of a match (docs/rules.md); empty: none.
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "null_as_left_out"
    )]
    #[cfg_attr(feature = "openapi", schema(max_items = 16, nullable))]
    pub rules: Vec<crate::rules::Rule>,
    /// Role queues (docs/rules.md, "Role queues"): the role seats of every
    /// team, read from a `stringSet` attribute; optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub composition: Option<crate::roles::Composition>,
}

/// One relaxation step: from `afterSeconds` of the anchor's wait, groups
/// may also form with `matchShape` (same team count, each team at most the
/// base shape's).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Relaxation {
    /// Anchor wait (seconds) from which this shape is allowed.
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 86400))]
    pub after_seconds: f64,
    /// Players per team of the smaller match: as many teams as the base
    /// shape, each 1..=its team.
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 64))]
    pub match_shape: Vec<u32>,
}

/// Bot fill (docs/game-modes.md#thin-pools-smaller-matches-and-bots): once a group's anchor has waited `fillAfterSeconds`,
/// at least `minHumans` mutually-in-range players are completed with bots
/// to the base shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Bots {
    /// Anchor wait (seconds, >= 1 and >= the last relaxation's
    /// `afterSeconds`) from which bots may fill.
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 86400))]
    pub fill_after_seconds: f64,
    /// Fewest humans of a bot match (players, 1..=the match size).
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub min_humans: u32,
    /// Whether bot seats are open to backfill (`seatsOpen` lists them);
    /// default `false`.
    #[serde(default)]
    pub replaceable: bool,
}

/// An optional block or list given as `null` is read as left out, as
/// every optional block of a mode is (docs/game-modes.md).
fn null_as_left_out<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

fn default_true() -> bool {
    true
}

fn default_ticket_ttl() -> u32 {
    600
}

tagged_enum! {
/// The grouping algorithm, tagged by `type` (docs/game-modes.md).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase", deny_unknown_fields)]
pub enum Algorithm via AlgorithmTwin {
    /// Skill-based: a widening MMR window (docs/game-modes.md#the-mmr-window).
    #[serde(rename_all = "camelCase")]
    Mmr {
        /// Lowest MMR a ticket may carry.
        #[cfg_attr(feature = "openapi", schema(minimum = -1e9, maximum = 1e9))]
        min_mmr: f64,
        /// Highest MMR a ticket may carry (> `minMmr`).
        #[cfg_attr(feature = "openapi", schema(minimum = -1e9, maximum = 1e9))]
        max_mmr: f64,
        /// Starting window, percent of `maxMmr - minMmr`: the tier's
        /// floor..=100.
        #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 100))]
        base_tolerance: f64,
        /// How fast the window widens: at 10 s of wait the window is
        /// `baseTolerance * expansionMultiplier` percent; >= max(1, the
        /// tier's floor), <= 100.
        #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 100))]
        expansion_multiplier: f64,
        /// Where the window stops widening (percent, > `baseTolerance`,
        /// <= 100); absent: it widens without end.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 100))]
        max_tolerance: Option<f64>,
    },
    /// Latency-based: every pair within `maxDelta` milliseconds (docs/game-modes.md#ping).
    #[serde(rename_all = "camelCase")]
    Ping {
        /// Largest allowed ping difference within a match (milliseconds),
        /// 0 < x <= 1000.
        #[cfg_attr(feature = "openapi", schema(exclusive_minimum = 0, maximum = 1000))]
        max_delta: f64,
    },
    /// First come, first served (docs/game-modes.md#fifo); no other fields.
    // A struct variant without fields, so that other fields (`minMmr` on a
    // `fifo`) are refused: a unit variant of a tagged enum ignores them.
    Fifo {},
}
}

/// How a full group is split into teams (docs/game-modes.md#teamassignment).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum TeamAssignment {
    /// Smallest spread of team means; exact up to 20 parties.
    #[default]
    Balanced,
    /// Sort by value, deal in snake-draft order.
    Snake,
}

/// Party rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Parties {
    /// Whether tickets may carry a party of more than one member; default
    /// `false`.
    #[serde(default)]
    pub allow_parties: bool,
    /// Most members a party may have (players, >= 1; with `keepTogether`
    /// <= the largest team); default 1.
    #[serde(default = "default_party_size")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub max_size: u32,
    /// Whether a party always sits whole on one team; default `true`.
    #[serde(default = "default_true")]
    pub keep_together: bool,
    /// The MMR a party is matched at (docs/game-modes.md#parties):
    /// `"mean"` (default), `"max"`, or `{"blend": b}` with 0 <= b <= 1
    /// (mean + b × (max − mean)).
    #[serde(default, skip_serializing_if = "PartyMmr::is_mean")]
    pub mmr: PartyMmr,
    /// Seconds a party may stay incomplete (a member's search ended, or
    /// never started) before its waiting members fail with
    /// `PARTY_INCOMPLETE` naming who is missing (docs/game-modes.md#parties);
    /// 5..=3600, default 120.
    #[serde(
        default = "default_incomplete_timeout",
        skip_serializing_if = "is_default_incomplete_timeout"
    )]
    #[cfg_attr(feature = "openapi", schema(minimum = 5, maximum = 3600))]
    pub incomplete_timeout_seconds: u32,
}

/// Default of `parties.incompleteTimeoutSeconds`.
pub const DEFAULT_INCOMPLETE_TIMEOUT_SECONDS: u32 = 120;

fn default_incomplete_timeout() -> u32 {
    DEFAULT_INCOMPLETE_TIMEOUT_SECONDS
}

fn is_default_incomplete_timeout(seconds: &u32) -> bool {
    *seconds == DEFAULT_INCOMPLETE_TIMEOUT_SECONDS
}

/// How a party's MMR is formed from its members' for the MMR window and
/// backfill fit (docs/game-modes.md#parties); teams are still balanced on
/// each player's own MMR.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(
    untagged,
    expecting = "expected \"mean\", \"max\" or {\"blend\": b} with b from 0 to 1"
)]
pub enum PartyMmr {
    /// `"mean"` or `"max"` of the members' MMR.
    Rule(PartyMmrRule),
    /// `{"blend": b}`, 0 <= b <= 1: mean + b × (max − mean).
    Blend(PartyMmrBlend),
}

/// `"mean"` or `"max"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum PartyMmrRule {
    /// The members' mean.
    Mean,
    /// The strongest member's.
    Max,
}

/// `{"blend": b}`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PartyMmrBlend {
    /// How far from the mean towards the strongest member (0..=1).
    pub blend: f64,
}

impl Default for PartyMmr {
    fn default() -> Self {
        PartyMmr::Rule(PartyMmrRule::Mean)
    }
}

impl PartyMmr {
    /// Whether this is the default, `"mean"`.
    pub fn is_mean(&self) -> bool {
        *self == PartyMmr::Rule(PartyMmrRule::Mean)
    }

    /// A party's MMR from its members' `mean` and `max`.
    pub fn of(&self, mean: f64, max: f64) -> f64 {
        match self {
            PartyMmr::Rule(PartyMmrRule::Mean) => mean,
            PartyMmr::Rule(PartyMmrRule::Max) => max,
            PartyMmr::Blend(PartyMmrBlend { blend }) => mean + blend * (max - mean),
        }
    }
}

fn default_party_size() -> u32 {
    1
}

impl Default for Parties {
    fn default() -> Self {
        Self {
            allow_parties: false,
            max_size: 1,
            keep_together: true,
            mmr: PartyMmr::default(),
            incomplete_timeout_seconds: DEFAULT_INCOMPLETE_TIMEOUT_SECONDS,
        }
    }
}

/// Webhook destination of a mode (docs/game-modes.md). The URL's safety (docs/game-modes.md,
/// `INVALID_WEBHOOK_URL`) needs DNS, so the API checks it, not the core.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = Webhook))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookConfig {
    /// `https://…` endpoint of the studio's backend, at most 2 048 bytes,
    /// whose host resolves only to public addresses; required unless
    /// `useProjectEndpoint`, and refused together with it.
    #[serde(
        default,
        deserialize_with = "present",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(max_length = 2048, nullable = false))]
    pub url: Option<String>,
    /// Whether `match.made` events are sent; default `true`.
    #[serde(default = "default_true")]
    pub enabled: bool,
    /// Deliver to the project's webhook endpoint (its URL, secret and
    /// event filter, docs/webhooks.md) instead of a URL of the mode's own;
    /// default `false`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub use_project_endpoint: bool,
}

/// The reader of an optional field that may be left out but is never
/// `null` (`#[serde(default, deserialize_with = "…::present")]`: absent is
/// `None` through `default`; `null` is refused as the field's type refuses
/// it), as the OpenAPI document's `nullable: false` says.
///
/// # Errors
/// The field's own error for `null` or a wrong value.
pub fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

// serde's `skip_serializing_if` hands the field by reference.
#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_false(value: &bool) -> bool {
    !*value
}

impl GameModeConfig {
    /// Seats in one full match (players): the shape's sum, or `teams × max`
    /// for a flexible shape (saturating).
    pub fn match_size(&self) -> u32 {
        u32::try_from(self.match_shape.size()).unwrap_or(u32::MAX)
    }

    /// The largest team of the shape (players).
    pub fn largest_team(&self) -> u32 {
        self.match_shape.largest_team()
    }
}

/// Whether an `attributes` block declares nothing (absent or `{}`): such a
/// block is not written out.
fn declares_nothing(attributes: &Option<crate::rules::Declarations>) -> bool {
    attributes.as_ref().is_none_or(|d| d.is_empty())
}
