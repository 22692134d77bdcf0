//! Scenario files of docs/simulate.md and their validation.

use crate::codes::Code;
use crate::config::GameModeConfig;
use crate::search::Party;
use crate::tier::Tier;
use crate::validation::{validate, FieldError};
use serde::Deserialize;

mod arrival_attributes;
mod checks;
mod event;
mod named_players;
use arrival_attributes::{check_arrival_attributes, declared_in};
pub(crate) use arrival_attributes::{own_field, OWN_FIELDS};
use event::RawEvent;
use named_players::{also_failing, unarrived_inline, unarrived_with_added};

/// A scenario (docs/simulate.md), parsed and validated.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The mode under test.
    pub game_mode: GameModeConfig,
    /// The tier its config is validated against.
    pub tier: Tier,
    /// Seed of the RNG handed to every cycle (FIFO shuffles).
    pub seed: u64,
    /// Last virtual second at which a cycle may run.
    pub until: f64,
    /// Arrivals and cancels, sorted by `at` (stable).
    pub events: Vec<Event>,
    /// `arrivalsCsv` as written in the file; the caller loads it.
    pub arrivals_csv: Option<String>,
    /// `compare`: a second game mode run on the same arrivals and seed
    /// (see [`crate::simulate::compare`]), validated like `gameMode`.
    pub compare: Option<GameModeConfig>,
}

/// One timed event of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A player starts a search at `at` (seconds).
    Arrival {
        /// Virtual time (seconds).
        at: f64,
        /// The player.
        player_id: String,
        /// Ticket MMR.
        mmr: Option<f64>,
        /// Measured ping (milliseconds).
        ping_ms: Option<f64>,
        /// Party, if any.
        party: Option<Party>,
        /// `latencies` of the ticket (docs/regions.md), if any.
        latencies: Option<crate::latency::Latencies>,
        /// `data` of the ticket: a JSON object of at most 4 KiB.
        data: Option<serde_json::Value>,
        /// How the player answers a proposal (docs/acceptance.md, in a mode with
        /// `acceptance`); `None`: accepts at once.
        answer: Option<super::proposals::SimAnswer>,
        /// The mode's declared attributes (docs/rules.md), by name.
        attributes: crate::rules::DeclaredValues,
    },
    /// The players leave the match they are in at `at` (docs/backfill.md); with
    /// `backfill.enabled` their seats open to backfill.
    Leave {
        /// Virtual time (seconds).
        at: f64,
        /// The players who leave.
        players: Vec<String>,
    },
    /// The player's search is cancelled at `at`.
    Cancel {
        /// Virtual time (seconds).
        at: f64,
        /// The player whose search ends.
        player_id: String,
    },
    /// The mode's matching is held (`true`) or released (`false`) from `at`
    /// on (docs/game-modes.md#holding-matching): the cycles of a held mode form nothing.
    Hold {
        /// Virtual time (seconds).
        at: f64,
        /// Held from `at` on, or released.
        held: bool,
    },
}

impl Event {
    /// The event's virtual time (seconds).
    pub fn at(&self) -> f64 {
        match self {
            Event::Arrival { at, .. }
            | Event::Cancel { at, .. }
            | Event::Leave { at, .. }
            | Event::Hold { at, .. } => *at,
        }
    }
}

/// An invalid scenario: every failure, with documented codes (exit code 2).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("invalid scenario: {}", .0.iter().map(|e| format!("{} {}: {}", e.code, e.field, e.message)).collect::<Vec<_>>().join("; "))]
pub struct ScenarioError(pub Vec<FieldError>);

impl ScenarioError {
    pub(super) fn one(field: &str, code: Code, message: impl Into<String>) -> Self {
        Self(vec![FieldError::new(field, code, message)])
    }
}

/// A scenario's JSON body as sent (docs/simulate.md), before its game
/// modes and arrivals are checked: read it with serde (the CLI's
/// [`Scenario::parse`]) or any reader of the caller's, then
/// [`Scenario::from_body`].
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScenarioBody {
    game_mode: serde_json::Value,
    #[serde(default = "default_tier")]
    tier: String,
    #[serde(default)]
    seed: u64,
    until: f64,
    #[serde(default)]
    arrivals: Vec<RawEvent>,
    #[serde(default)]
    arrivals_csv: Option<String>,
    #[serde(default)]
    compare: Option<serde_json::Value>,
}

fn default_tier() -> String {
    "enterprise".into()
}

/// Most cycles `until` may allow: 1e9. The cycles of an idle stretch
/// (nobody waiting, nothing open) are skipped, so a run costs its busy
/// cycles only and this bound only catches a typo in `until`: a year of
/// recorded traffic at 100 ms cycles is 3.2e8.
pub const MAX_CYCLES: f64 = 1e9;

/// Server-set fields a studio may paste along with a mode's body.
const SERVER_FIELDS: [&str; 5] = ["version", "createdAt", "updatedAt", "id", "hold"];

/// Reads a game mode's JSON body into its config, or lists what is wrong
/// with its shape (each field error's `field` a path inside the body, `$`
/// or empty for the body itself).
pub type ReadMode<'a> = &'a dyn Fn(serde_json::Value) -> Result<GameModeConfig, Vec<FieldError>>;

/// [`ReadMode`] by serde alone: its first error, in its words.
///
/// # Errors
/// One field error, at the body.
pub fn read_mode_with_serde(body: serde_json::Value) -> Result<GameModeConfig, Vec<FieldError>> {
    serde_json::from_value(body)
        .map_err(|e| vec![FieldError::new("", Code::ValidationError, e.to_string())])
}

/// A game mode's body as pasted into a scenario, without the server-set
/// fields a mode's view carries (`version`, `createdAt`, the webhook's
/// `secret`…), which a scenario ignores.
pub fn without_server_fields(mut mode_json: serde_json::Value) -> serde_json::Value {
    if let Some(obj) = mode_json.as_object_mut() {
        for f in SERVER_FIELDS {
            obj.remove(f);
        }
        if let Some(hook) = obj.get_mut("webhook").and_then(|w| w.as_object_mut()) {
            hook.remove("secret");
        }
    }
    mode_json
}

/// `errors` of a member's body (a game mode's shape errors, each `field` a
/// path inside it, `$` or empty for the body itself) named inside the
/// scenario's `field` (`gameMode`, `compare`).
pub fn errors_within(field: &str, errors: Vec<FieldError>) -> Vec<FieldError> {
    errors
        .into_iter()
        .map(|mut f| {
            f.field = match f.field.as_str() {
                "" | "$" => field.to_owned(),
                inner => format!("{field}.{inner}"),
            };
            f
        })
        .collect()
}

/// An arrival's own field for a failure worded for a ticket: `mmr`,
/// `latencies` and `data` are an arrival's fields, where a ticket has them
/// inside `attributes`.
pub(crate) fn as_arrival_field(mut e: FieldError) -> FieldError {
    if let Some(own) = e.field.strip_prefix("attributes.") {
        e.field = own.to_owned();
    }
    e
}

/// Parses a game-mode body of a scenario (`field`: `gameMode` or
/// `compare`) with `read`: server-set fields dropped, validated against
/// `tier`, its failures pushed to `errors` with `field.` in front.
///
/// # Errors
/// [`ScenarioError`] when the body is not a game mode at all.
pub fn parse_mode(
    mode_json: serde_json::Value,
    tier: &Tier,
    field: &str,
    read: ReadMode<'_>,
    errors: &mut Vec<FieldError>,
) -> Result<GameModeConfig, ScenarioError> {
    let game_mode = read(without_server_fields(mode_json))
        .map_err(|shape| ScenarioError(errors_within(field, shape)))?;
    if let Err(e) = validate(&game_mode, tier) {
        errors.extend(e.0.into_iter().map(|mut f| {
            f.field = format!("{field}.{}", f.field);
            f
        }));
    }
    Ok(game_mode)
}

impl Scenario {
    /// Parses and validates a scenario's JSON text. Arrivals from
    /// `arrivalsCsv` are added later with [`Scenario::add_events`].
    ///
    /// # Errors
    /// [`ScenarioError`] listing every failure with its documented code:
    /// `VALIDATION_ERROR` for malformed JSON or fields, the tier-floor codes
    /// of docs/game-modes.md for the mode, docs/searching.md's ticket codes for arrivals,
    /// `VALIDATION_ERROR` for a cancel or leave naming a player with no
    /// arrival before it (unless an `arrivalsCsv` is named: then checked by
    /// [`Scenario::add_arrivals_csv`]).
    pub fn parse(json: &str) -> Result<Self, ScenarioError> {
        let body: ScenarioBody = serde_json::from_str(json).map_err(|e| {
            ScenarioError::one(
                &format!("line {} column {}", e.line(), e.column()),
                Code::ValidationError,
                e.to_string(),
            )
        })?;
        Self::from_body(body, &read_mode_with_serde)
    }

    /// Checks a scenario's body read already, its game modes read with
    /// `read_mode`. Arrivals from `arrivalsCsv` are added later with
    /// [`Scenario::add_events`].
    ///
    /// # Errors
    /// As [`Scenario::parse`].
    pub fn from_body(raw: ScenarioBody, read_mode: ReadMode<'_>) -> Result<Self, ScenarioError> {
        let tier = Tier::by_name(&raw.tier).ok_or_else(|| {
            ScenarioError::one(
                "tier",
                Code::ValidationError,
                format!("unknown tier {}: use free, pro or enterprise", raw.tier),
            )
        })?;
        let mut errors = Vec::new();
        let game_mode = parse_mode(raw.game_mode, &tier, "gameMode", read_mode, &mut errors)?;
        let compare = match raw.compare {
            Some(other) => Some(parse_mode(other, &tier, "compare", read_mode, &mut errors)?),
            None => None,
        };
        // An arrival is checked against valid modes only.
        let modes_valid = errors.is_empty();
        if !raw.until.is_finite() || raw.until < 0.0 {
            errors.push(FieldError::new(
                "until",
                Code::ValidationError,
                "until is a number of seconds >= 0",
            ));
        } else if raw.until / game_mode.matchmaking_cycle_duration_seconds.max(1e-3) > MAX_CYCLES {
            errors.push(FieldError::new(
                "until",
                Code::ValidationError,
                format!("until allows more than {MAX_CYCLES:e} cycles: shorten it or lengthen the cycle"),
            ));
        }
        let mut scenario = Scenario {
            game_mode,
            tier,
            seed: raw.seed,
            until: raw.until,
            events: Vec::new(),
            arrivals_csv: raw.arrivals_csv,
            compare,
        };
        let written = raw.arrivals.len();
        let events = scenario.inline_events(raw.arrivals, modes_valid, &mut errors);
        // An inline event no cycle would see: refused, not dropped unseen
        // (docs/simulate.md, "Timing").
        if events.len() == written {
            errors.extend(
                events
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| e.at() > raw.until)
                    .map(|(i, _)| {
                        let message =
                            format!("after `until` ({} s): no cycle would see it", raw.until);
                        FieldError::new(format!("arrivals[{i}].at"), Code::ValidationError, message)
                    }),
            );
        }
        // A cancel or leave naming a player who has not arrived by then
        // (docs/simulate.md, "Inline events"), once every event could be
        // read; with an `arrivalsCsv` to come, checked once its arrivals
        // are added.
        if scenario.arrivals_csv.is_none() && events.len() == written {
            errors.extend(unarrived_inline(&events));
        }
        if !errors.is_empty() {
            return Err(ScenarioError(errors));
        }
        // Checked above, every failure with the others.
        scenario.insert_sorted(events);
        Ok(scenario)
    }

    /// Reads arrivals CSV text ([`super::read_arrivals_csv`], its rows
    /// named `{source}[i]`) and adds its events as
    /// [`Scenario::add_recorded_events`] does.
    ///
    /// When the scenario names an `arrivalsCsv`, its inline cancels and
    /// leaves are checked here, with the file's arrivals (docs/simulate.md,
    /// "Inline events"); the file's own cancel rows never are.
    ///
    /// # Errors
    /// [`ScenarioError`]: every row that cannot be read; else every
    /// arrival that breaks a ticket rule, and every inline cancel or leave
    /// naming a player with no arrival before it (on `arrivals`).
    pub fn add_arrivals_csv(&mut self, text: &str, source: &str) -> Result<(), ScenarioError> {
        // A value of the wrong type is refused in a ticket's words for its
        // declaration, as an inline arrival's is (docs/simulate.md).
        let declared = |name: &str| {
            declared_in(Some(&self.game_mode), name)
                .or_else(|| declared_in(self.compare.as_ref(), name))
        };
        let regions = self.game_mode.regions.as_ref();
        let (mut events, rows) = super::arrivals_csv::read_rows(text, regions, source, &declared)?;
        self.drop_undeclared(&mut events);
        let not_arrived = if self.arrivals_csv.is_some() {
            unarrived_with_added(&self.events, &events)
        } else {
            Vec::new()
        };
        also_failing(
            self.add_events_at(events, source, Some(&rows), true),
            not_arrived,
        )
    }

    /// Adds recorded `events` (an arrivals CSV, a mode's recording) as
    /// [`Scenario::add_events`] does, except that an attribute neither the
    /// mode nor the compared one declares is dropped rather than refused:
    /// a recording keeps the attributes of the config it was made under,
    /// and a live search's value of an attribute no longer declared is
    /// ignored (docs/rules.md, "Config changes"). Inline arrivals, written
    /// by hand, are refused such a value (a typo is said, not dropped).
    ///
    /// # Errors
    /// As [`Scenario::add_events`].
    pub fn add_recorded_events(
        &mut self,
        mut events: Vec<Event>,
        source: &str,
    ) -> Result<(), ScenarioError> {
        self.drop_undeclared(&mut events);
        self.add_events_at(events, source, None, true)
    }

    /// Drops from `events` the attributes neither the mode nor the
    /// compared one declares (see [`Scenario::add_recorded_events`]).
    fn drop_undeclared(&self, events: &mut [Event]) {
        for event in events {
            if let Event::Arrival { attributes, .. } = event {
                attributes.retain(|name, _| {
                    OWN_FIELDS.contains(&name.as_str())
                        || declared_in(Some(&self.game_mode), name).is_some()
                        || declared_in(self.compare.as_ref(), name).is_some()
                });
            }
        }
    }

    /// Checks `events` against the mode (docs/searching.md's ticket rules) and adds
    /// them, keeping every event sorted by `at` (stable). `source` names
    /// them in errors (`arrivals` or `arrivalsCsv`).
    ///
    /// # Errors
    /// [`ScenarioError`] listing each bad event with its documented code.
    pub fn add_events(&mut self, events: Vec<Event>, source: &str) -> Result<(), ScenarioError> {
        self.add_events_at(events, source, None, false)
    }

    /// [`Scenario::add_events`], naming event `i` `{source}[rows[i]]`
    /// (a CSV's rows, see [`super::read_arrivals_csv_rows`]) when `rows`
    /// is given, else `{source}[i]`; `recorded` events are checked as
    /// [`Scenario::event_failures`] says.
    fn add_events_at(
        &mut self,
        events: Vec<Event>,
        source: &str,
        rows: Option<&[usize]>,
        recorded: bool,
    ) -> Result<(), ScenarioError> {
        let mut errors = Vec::new();
        for (k, ev) in events.iter().enumerate() {
            let i = rows.and_then(|r| r.get(k)).copied().unwrap_or(k);
            let mut failed = self.event_failures(ev, rows.is_some(), recorded);
            if let Event::Arrival {
                attributes,
                player_id,
                party,
                ..
            } = ev
            {
                failed.extend(check_arrival_attributes(
                    &self.game_mode,
                    self.compare.as_ref(),
                    attributes,
                    crate::rules::Owner::new(player_id, party.as_ref()),
                ));
            }
            errors.extend(errors_within(&format!("{source}[{i}]"), failed));
        }
        if !errors.is_empty() {
            return Err(ScenarioError(errors));
        }
        self.insert_sorted(events);
        Ok(())
    }

    /// Adds `events`, keeping every event sorted by `at` (stable).
    fn insert_sorted(&mut self, events: Vec<Event>) {
        self.events.extend(events);
        self.events.sort_by(|a, b| a.at().total_cmp(&b.at()));
    }
}
