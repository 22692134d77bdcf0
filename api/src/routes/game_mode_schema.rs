//! OpenAPI schemas of the game-mode bodies (docs/game-modes.md).
//!
//! The API parses bodies into the matching core's `GameModeConfig`, which
//! knows nothing of OpenAPI; these types describe the same JSON for the
//! document. A test parses sample bodies with both and requires they agree,
//! so the description cannot drift from what the API accepts.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use utoipa::ToSchema;

/// A game mode as written by a studio.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = GameMode)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({
    "name": "ranked-5v5", "enabled": true, "matchShape": [5, 5],
    "matchmakingCycleDurationSeconds": 2,
    "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
    "teamAssignment": "balanced",
    "parties": {"allowParties": true, "maxSize": 3, "keepTogether": true},
    "ticketTtlSeconds": 600,
    "webhook": {"url": "https://game.example.com/hooks/match", "enabled": true}}))]
pub struct GameModeSchema {
    /// `^[a-z0-9][a-z0-9_-]{0,62}$`, unique in the project.
    #[schema(
        pattern = "^[a-z0-9][a-z0-9_-]{0,62}$",
        min_length = 1,
        max_length = 63
    )]
    pub name: String,
    /// Default `true`; a disabled mode runs no cycle and fails its searches.
    #[serde(default)]
    #[schema(nullable = false)]
    pub enabled: Option<bool>,
    /// Players per team, e.g. `[5, 5]` (1..=64 teams, each >= 1, sum >= 2
    /// and <= the tier's `maxMatchSize`), or a flexible shape such as
    /// `{"teams": 20, "teamSize": {"min": 1, "max": 3}}`.
    pub match_shape: MatchShapeSchema,
    /// Seconds between cycles: >= the tier's floor, <= 3600.
    #[schema(minimum = 0, maximum = 3600)]
    pub matchmaking_cycle_duration_seconds: f64,
    /// How candidates are grouped.
    pub algorithm: AlgorithmSchema,
    /// How a full group is split into teams (ignored for FIFO).
    #[serde(default)]
    #[schema(nullable = false)]
    pub team_assignment: Option<TeamAssignmentSchema>,
    /// Default `{"allowParties": false, "maxSize": 1, "keepTogether": true}`.
    #[serde(default)]
    #[schema(nullable = false)]
    pub parties: Option<PartiesSchema>,
    /// Ticket (and so longest search) lifetime in seconds; default 600.
    #[serde(default)]
    #[schema(nullable = false, minimum = 1, maximum = 86400)]
    pub ticket_ttl_seconds: Option<u32>,
    /// Where `match.made` webhooks go.
    #[serde(default)]
    pub webhook: Option<WebhookSchema>,
    /// Glicko-2 ratings kept from reported results; absent: none.
    #[serde(default)]
    pub ratings: Option<RatingsSchema>,
    /// Smaller shapes tried once the longest-waiting player of a group has
    /// waited `afterSeconds` (at most 8, `afterSeconds` strictly
    /// increasing); only with an array `matchShape`.
    #[serde(default)]
    #[schema(nullable = false, max_items = 8)]
    pub relaxations: Option<Vec<RelaxationSchema>>,
    /// Bot seats completing a group of at least `minHumans` players once
    /// its longest-waiting player has waited `fillAfterSeconds`.
    #[serde(default)]
    pub bots: Option<BotsSchema>,
    /// Region rule: tickets carry latency maps, a match is played in a
    /// region within every member's ceiling; absent: none.
    #[serde(default)]
    pub regions: Option<super::regions_schema::RegionsSchema>,
    /// Backfill of running matches; absent: off.
    #[serde(default)]
    pub backfill: Option<super::regions_schema::BackfillSchema>,
    /// Match proposals every player accepts before the match is made;
    /// absent: matches are made at once.
    #[serde(default)]
    pub acceptance: Option<AcceptanceSchema>,
    /// Recording of search starts, cancels and ends for replays and the
    /// guarded `PUT` (docs/tuning.md); absent: off.
    #[serde(default)]
    pub recording: Option<RecordingSchema>,
    /// Telling the players where to play: a made match waits up to
    /// `waitSeconds` for the studio's assignment; absent: none.
    #[serde(default)]
    pub assignment: Option<AssignmentSchema>,
    /// The studio's own ticket attributes by name (at most 16, names
    /// `^[a-z][a-zA-Z0-9_]{0,31}$`, not `mmr`, `latencies` or `data`),
    /// docs/rules.md; absent (or `null`): none.
    #[serde(default)]
    pub attributes:
        Option<std::collections::BTreeMap<String, matchplane_matchmaker::rules::Declaration>>,
    /// Rules over those attributes (at most 16), each holding between
    /// every two candidates of a match, docs/rules.md; absent: none.
    #[serde(default)]
    #[schema(nullable = false, max_items = 16)]
    pub rules: Option<Vec<matchplane_matchmaker::rules::Rule>>,
}

/// Recording of the mode's searches: starts (player ids as keyed hashes,
/// MMR, latencies, party), cancels and ends, kept `retentionDays`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Recording, example = json!({"enabled": true, "retentionDays": 7}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordingSchema {
    /// Whether searches are recorded.
    pub enabled: bool,
    /// Days a recorded event is kept: 1 to the tier's `retentionDays`
    /// (free 30, pro 90, enterprise 365); default 7.
    #[serde(default)]
    #[schema(nullable = false, minimum = 1)]
    pub retention_days: Option<u32>,
}

/// Assignment: a made match's searches stay open until the studio posts
/// where to play (`POST …/matches/{matchId}/assignment`), at most
/// `waitSeconds`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Assignment, example = json!({"waitSeconds": 60}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AssignmentSchema {
    /// Seconds a made match waits for its assignment, 1..=600.
    #[schema(minimum = 1, maximum = 600)]
    pub wait_seconds: f64,
}

/// Match proposals: a formed group is proposed to its players, who accept
/// or decline within `timeoutSeconds`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Acceptance, example = json!({"timeoutSeconds": 20, "declineCooldownSeconds": 60}))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AcceptanceSchema {
    /// Seconds the players have to answer, 1..=600.
    #[schema(minimum = 1, maximum = 600)]
    pub timeout_seconds: f64,
    /// Seconds a player who declined, stayed silent or left may not search
    /// again in this mode, 0..=3600; default 0.
    #[serde(default)]
    #[schema(nullable = false, minimum = 0, maximum = 3600)]
    pub decline_cooldown_seconds: Option<f64>,
}

/// `matchShape`: an array of team sizes, or a flexible object.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = MatchShape)]
#[serde(untagged)]
pub enum MatchShapeSchema {
    /// Players per team, exactly: 1..=64 teams, each >= 1.
    Fixed(Vec<u32>),
    /// Teams filled up to `teamSize.max`, settling short after a while.
    Flexible(FlexibleShapeSchema),
}

/// A flexible `matchShape` (free-for-all, battle royale, arena).
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = FlexibleShape)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FlexibleShapeSchema {
    /// Teams of a full match, 2..=100; `teams × teamSize.max` <= the
    /// tier's `maxMatchSize`.
    #[schema(minimum = 2, maximum = 100)]
    pub teams: u32,
    /// Players per team.
    pub team_size: TeamSizeSchema,
    /// Fewest teams of a settled match, 2..=`teams`; default `teams`.
    #[serde(default)]
    #[schema(nullable = false, minimum = 2, maximum = 100)]
    pub min_teams: Option<u32>,
    /// Seconds of the longest wait after which a match may settle with
    /// `minTeams` teams of at least `min` players; 0..=600, default 15.
    #[serde(default)]
    #[schema(nullable = false, minimum = 0, maximum = 600)]
    pub settle_after_seconds: Option<f64>,
}

/// `teamSize` of a flexible shape.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = TeamSize)]
#[serde(deny_unknown_fields)]
pub struct TeamSizeSchema {
    /// Fewest players of a team in a settled match, >= 1.
    #[schema(minimum = 1, maximum = 64)]
    pub min: u32,
    /// A team is full at `max`: `min..=64`.
    #[schema(minimum = 1, maximum = 64)]
    pub max: u32,
}

/// One relaxation step.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Relaxation)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RelaxationSchema {
    /// Seconds of the longest wait from which this shape is tried.
    #[schema(minimum = 0, maximum = 86400)]
    pub after_seconds: f64,
    /// Players per team: as many teams as `matchShape`, each 1..=its team.
    #[schema(min_items = 1, max_items = 64)]
    pub match_shape: Vec<u32>,
}

/// Bot fill.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Bots)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BotsSchema {
    /// Seconds of the longest wait from which bots fill: >= 1 and >= the
    /// last relaxation's `afterSeconds`.
    #[schema(minimum = 1, maximum = 86400)]
    pub fill_after_seconds: f64,
    /// Fewest humans of a bot match: 1..=the match size.
    #[schema(minimum = 1)]
    pub min_humans: u32,
    /// Whether bot seats are open to backfill (`seatsOpen` lists them);
    /// default `false`.
    #[serde(default)]
    #[schema(nullable = false)]
    pub replaceable: Option<bool>,
}

/// The grouping algorithm, by `type`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Algorithm)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum AlgorithmSchema {
    /// Widening MMR window.
    #[serde(rename_all = "camelCase")]
    Mmr {
        /// Lowest MMR a ticket may carry.
        #[schema(minimum = -1e9, maximum = 1e9)]
        min_mmr: f64,
        /// Highest MMR a ticket may carry (> `minMmr`).
        #[schema(minimum = -1e9, maximum = 1e9)]
        max_mmr: f64,
        /// Starting window in percent of the MMR range: tier floor..=100.
        #[schema(minimum = 0, maximum = 100)]
        base_tolerance: f64,
        /// Window widening: >= max(1, tier floor), <= 100.
        #[schema(minimum = 1, maximum = 100)]
        expansion_multiplier: f64,
        /// Where the window stops widening (percent, > `baseTolerance`,
        /// <= 100); absent or `null`: it widens without end.
        #[serde(default)]
        #[schema(exclusive_minimum = 0, maximum = 100)]
        max_tolerance: Option<f64>,
    },
    /// Flat ping window.
    #[serde(rename_all = "camelCase")]
    Ping {
        /// Largest ping difference in a match (milliseconds), 0 < x <= 1000.
        #[schema(exclusive_minimum = 0, maximum = 1000)]
        max_delta: f64,
    },
    /// First come, first served (no other fields).
    Fifo {},
}

/// Team split of a full group.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = TeamAssignment)]
#[serde(rename_all = "lowercase")]
pub enum TeamAssignmentSchema {
    /// Smallest spread of team means (default).
    Balanced,
    /// Snake draft by value.
    Snake,
}

/// Party rules.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Parties)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PartiesSchema {
    /// Whether tickets may carry a party of several players.
    #[serde(default)]
    #[schema(nullable = false)]
    pub allow_parties: Option<bool>,
    /// Most members (>= 1; with `keepTogether` <= the largest team).
    #[serde(default)]
    #[schema(nullable = false, minimum = 1)]
    pub max_size: Option<u32>,
    /// Whether a party always sits whole on one team (default `true`).
    #[serde(default)]
    #[schema(nullable = false)]
    pub keep_together: Option<bool>,
    /// The MMR a party is matched at: `"mean"` (default), `"max"`, or
    /// `{"blend": b}` with 0 <= b <= 1 (mean + b × (max − mean)).
    #[serde(default)]
    #[schema(nullable = false)]
    pub mmr: Option<matchplane_matchmaker::PartyMmr>,
    /// Seconds a party may stay incomplete (a member's search ended or
    /// never started) before its waiting members fail with
    /// `PARTY_INCOMPLETE` naming who is missing (default 120).
    #[serde(default)]
    #[schema(nullable = false, minimum = 5, maximum = 3600)]
    pub incomplete_timeout_seconds: Option<u32>,
}

/// Webhook destination.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Webhook)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookSchema {
    /// `https://` URL whose host resolves only to public addresses, at
    /// most 2 048 bytes. Required unless `useProjectEndpoint`; not allowed
    /// with it.
    #[serde(default)]
    #[schema(max_length = 2048, nullable = false)]
    pub url: Option<String>,
    /// Default `true`.
    #[serde(default)]
    #[schema(nullable = false)]
    pub enabled: Option<bool>,
    /// Deliver to the project's webhook endpoint (`PUT
    /// /v1/projects/{projectId}/webhook`: its URL, secret and `eventTypes`)
    /// instead of a URL of the mode's own; default `false`.
    #[serde(default)]
    #[schema(nullable = false)]
    pub use_project_endpoint: Option<bool>,
}

/// A game mode as answered: the body with its defaults filled in, plus the
/// server-set fields. A body sent back with them (e.g. in a PUT) is
/// accepted; they are ignored.
#[derive(Debug, ToSchema)]
#[schema(as = GameModeResponse)]
#[serde(rename_all = "camelCase")]
#[schema(example = json!({
    "name": "duel", "enabled": true, "matchShape": [1, 1],
    "matchmakingCycleDurationSeconds": 1,
    "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
    "teamAssignment": "balanced",
    "parties": {"allowParties": false, "maxSize": 1, "keepTogether": true},
    "ticketTtlSeconds": 600,
    "webhook": {"url": "https://game.example.com/hooks/match", "enabled": true, "secret": "whsec_********"},
    "ratings": {"enabled": true, "tau": 0.5, "initialRating": 1500, "initialDeviation": 350,
        "initialVolatility": 0.06, "ratingPeriodSeconds": 86400},
    "version": 1, "createdAt": "2026-12-01T10:00:00.000Z", "updatedAt": "2026-12-01T10:00:00.000Z",
    "hold": null}))]
pub struct GameModeResponseSchema {
    /// The mode's name.
    pub name: String,
    /// Whether the mode runs.
    pub enabled: bool,
    /// Players per team, or the flexible shape.
    pub match_shape: MatchShapeSchema,
    /// Seconds between cycles.
    pub matchmaking_cycle_duration_seconds: f64,
    /// How candidates are grouped.
    pub algorithm: AlgorithmSchema,
    /// How a full group is split into teams.
    pub team_assignment: TeamAssignmentSchema,
    /// Party rules.
    pub parties: PartiesSchema,
    /// Ticket lifetime (seconds).
    pub ticket_ttl_seconds: u32,
    /// Webhook destination and signing secret. Present on create and
    /// rotate answers even without a URL, to show the secret.
    pub webhook: Option<WebhookResponseSchema>,
    /// Glicko-2 ratings, with their defaults filled in; absent: none.
    pub ratings: Option<RatingsSchema>,
    /// Relaxation steps; absent: none.
    pub relaxations: Option<Vec<RelaxationSchema>>,
    /// Bot fill; absent: none.
    pub bots: Option<BotsSchema>,
    /// Region rule; absent: none.
    pub regions: Option<super::regions_schema::RegionsSchema>,
    /// Match proposals; absent: none.
    pub acceptance: Option<AcceptanceSchema>,
    /// Assignment; absent: none.
    pub assignment: Option<AssignmentSchema>,
    /// Backfill; absent: off.
    pub backfill: Option<super::regions_schema::BackfillSchema>,
    /// Recording of searches; absent: off.
    pub recording: Option<RecordingSchema>,
    /// Declared ticket attributes; absent: none.
    pub attributes:
        Option<std::collections::BTreeMap<String, matchplane_matchmaker::rules::Declaration>>,
    /// Rules over the attributes; absent: none.
    pub rules: Option<Vec<matchplane_matchmaker::rules::Rule>>,
    /// Starts at 1, +1 on every change.
    pub version: i64,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// The mode's hold (docs/game-modes.md, "Holding matching"): since when and by whom;
    /// `null` when its matching is not held. Live state, not config:
    /// ignored when sent back.
    pub hold: Option<super::mode_hold::ModeHold>,
}

/// Glicko-2 ratings of a game mode: results are accepted, and a stored
/// rating stands in for a ticket without `attributes.mmr`.
#[derive(Debug, Deserialize, ToSchema)]
#[schema(as = Ratings)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RatingsSchema {
    /// Whether results are accepted and ratings used; default `true`.
    #[serde(default)]
    #[schema(nullable = false)]
    pub enabled: Option<bool>,
    /// Glicko-2 system constant τ, in (0, 10]; default 0.5.
    #[serde(default)]
    #[schema(nullable = false, exclusive_minimum = 0, maximum = 10)]
    pub tau: Option<f64>,
    /// Rating of a player never seen (1500 = average); default 1500.
    #[serde(default)]
    #[schema(nullable = false, minimum = -1e9, maximum = 1e9)]
    pub initial_rating: Option<f64>,
    /// Deviation of a player never seen, in (0, 1000]; default 350.
    #[serde(default)]
    #[schema(nullable = false, exclusive_minimum = 0, maximum = 1000)]
    pub initial_deviation: Option<f64>,
    /// Volatility σ of a player never seen, in (0, 1]; default 0.06.
    #[serde(default)]
    #[schema(nullable = false, exclusive_minimum = 0, maximum = 1)]
    pub initial_volatility: Option<f64>,
    /// Length of one rating period (seconds), >= 1; default 86400.
    #[serde(default)]
    #[schema(nullable = false, minimum = 1)]
    pub rating_period_seconds: Option<f64>,
}

/// Webhook destination as answered.
#[derive(Debug, ToSchema)]
#[schema(as = WebhookResponse)]
#[serde(rename_all = "camelCase")]
pub struct WebhookResponseSchema {
    /// Destination URL.
    pub url: Option<String>,
    /// Whether match-made events are sent.
    pub enabled: Option<bool>,
    /// Whether the mode delivers to the project's webhook endpoint (absent:
    /// `false`).
    pub use_project_endpoint: Option<bool>,
    /// `whsec_` + base64 of 32 random bytes: in full on create and rotate,
    /// `whsec_********` elsewhere.
    pub secret: String,
    /// Whether deliveries are failing (in `GET …/game-modes` and `GET
    /// …/game-modes/{name}`; ignored when sent back).
    pub status: Option<crate::routes::webhook_status::WebhookStatus>,
}

#[cfg(test)]
mod tests {
    use super::GameModeSchema;
    use matchplane_matchmaker::GameModeConfig;
    use serde_json::{json, Value};

    fn samples() -> Vec<Value> {
        let base = json!({"name": "m", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 2,
            "algorithm": {"type": "fifo"}});
        let mut out = vec![base.clone()];
        let mut with = |path: &[&str], value: Value| {
            let mut v = base.clone();
            let mut cursor = &mut v;
            for key in &path[..path.len() - 1] {
                cursor = &mut cursor[*key];
            }
            cursor[path[path.len() - 1]] = value;
            out.push(v);
        };
        with(
            &["algorithm"],
            json!({"type": "mmr", "minMmr": 0, "maxMmr": 10, "baseTolerance": 5, "expansionMultiplier": 2}),
        );
        with(&["algorithm"], json!({"type": "ping", "maxDelta": 50}));
        with(&["algorithm"], json!({"type": "ping"}));
        with(&["algorithm"], json!({"type": "elo"}));
        with(&["algorithm"], json!({"type": "fifo", "extra": 1}));
        with(&["teamAssignment"], json!("snake"));
        with(&["teamAssignment"], json!("random"));
        with(&["parties"], json!({"allowParties": true, "maxSize": 2}));
        with(&["parties"], json!({"size": 2}));
        with(
            &["parties"],
            json!({"allowParties": true, "maxSize": 2, "mmr": "max"}),
        );
        with(
            &["parties"],
            json!({"allowParties": true, "maxSize": 2, "mmr": {"blend": 0.5}}),
        );
        with(&["parties"], json!({"mmr": "median"}));
        with(&["parties"], json!({"mmr": {"blend": 0.5, "x": 1}}));
        with(&["webhook"], json!({"url": "https://x.example/h"}));
        with(&["webhook"], json!({"enabled": true}));
        with(&["webhook"], json!({"useProjectEndpoint": true}));
        with(&["webhook"], json!({"useProjectEndpoint": "yes"}));
        with(&["ticketTtlSeconds"], json!(30));
        with(&["colour"], json!("red"));
        with(&["enabled"], json!(false));
        with(&["ratings"], json!({"enabled": true}));
        with(
            &["ratings"],
            json!({"tau": 0.7, "initialRating": 1200, "initialDeviation": 300, "initialVolatility": 0.05, "ratingPeriodSeconds": 3600}),
        );
        with(&["ratings"], json!({"elo": true}));
        with(&["ratings"], json!({}));
        with(
            &["matchShape"],
            json!({"teams": 20, "teamSize": {"min": 1, "max": 3}}),
        );
        with(
            &["matchShape"],
            json!({"teams": 8, "teamSize": {"min": 1, "max": 1}, "minTeams": 4, "settleAfterSeconds": 10}),
        );
        with(&["matchShape"], json!({"teams": 8, "teamSize": {"min": 1}}));
        with(
            &["matchShape"],
            json!({"teams": 8, "teamSize": {"min": 1, "max": 2}, "fill": true}),
        );
        with(&["matchShape"], json!(4));
        with(
            &["relaxations"],
            json!([{"afterSeconds": 20, "matchShape": [1, 1]}]),
        );
        with(&["relaxations"], json!([{"afterSeconds": 20}]));
        with(
            &["bots"],
            json!({"fillAfterSeconds": 60, "minHumans": 2, "replaceable": true}),
        );
        with(&["bots"], json!({"fillAfterSeconds": 60}));
        with(
            &["regions"],
            json!({"names": ["eu-west"], "maxLatencyMs": 80, "expansion": [{"afterSeconds": 20, "maxLatencyMs": 120}]}),
        );
        with(
            &["regions"],
            json!({"maxLatencyMs": 80, "expansion": [{"afterSeconds": 20}]}),
        );
        with(&["regions"], json!({"maxLatencyMs": 80, "radius": 3}));
        with(&["acceptance"], json!({"timeoutSeconds": 20}));
        with(
            &["acceptance"],
            json!({"timeoutSeconds": 20, "declineCooldownSeconds": 60}),
        );
        with(&["acceptance"], json!({"declineCooldownSeconds": 60}));
        with(&["acceptance"], json!({"timeoutSeconds": 20, "grace": 1}));
        with(&["assignment"], json!({"waitSeconds": 60}));
        with(&["assignment"], json!({"wait": 60}));
        with(
            &["backfill"],
            json!({"enabled": true, "auto": true, "ttlSeconds": 60}),
        );
        with(&["backfill"], json!({"ttl": 60}));
        with(
            &["attributes"],
            json!({"build": {"type": "string"}, "maps": {"type": "stringSet", "values": ["dust"], "party": "union"},
                   "level": {"type": "number", "min": 1, "party": "max"}, "blocked": {"type": "playerSet", "default": []}}),
        );
        with(&["attributes"], json!({"build": {"type": "text"}}));
        with(
            &["attributes"],
            json!({"build": {"type": "string", "party": "max"}}),
        );
        with(
            &["rules"],
            json!([{"name": "b", "type": "equal", "attribute": "build", "relax": [{"afterSeconds": 9, "off": true}]},
                   {"name": "m", "type": "intersect", "attribute": "maps", "minOverlap": 2},
                   {"name": "l", "type": "distance", "attribute": "level", "max": 5, "relax": [{"afterSeconds": 9, "max": 9}]},
                   {"name": "a", "type": "avoid", "attribute": "blocked"}]),
        );
        with(
            &["rules"],
            json!([{"name": "a", "type": "avoid", "attribute": "blocked", "relax": []}]),
        );
        with(
            &["rules"],
            json!([{"name": "d", "type": "distance", "attribute": "level"}]),
        );
        with(
            &["algorithm"],
            json!({"type": "mmr", "minMmr": 0, "maxMmr": 10, "baseTolerance": 5, "expansionMultiplier": 2, "maxTolerance": 20}),
        );
        out
    }

    #[test]
    fn schema_accepts_exactly_what_the_core_accepts() {
        for sample in samples() {
            let core = serde_json::from_value::<GameModeConfig>(sample.clone()).is_ok();
            let doc = serde_json::from_value::<GameModeSchema>(sample.clone()).is_ok();
            assert_eq!(core, doc, "schema and core disagree on {sample}");
        }
    }
}
