//! A search's matching attributes (docs/api-tour.md, "3. Tickets"): one
//! type from a ticket's body to its pool entry, its stored record, a
//! recording's rows and the simulator.
//!
//! [`RawAttributes`] is `attributes` as a ticket's body sends it;
//! [`Attributes::parse`] checks it against the game mode, every failure at
//! once, and returns the [`Attributes`] everything after it carries. A
//! search ([`crate::Search::new`]) takes its matching part from it; `data`
//! stays with the ticket and is never in the pool.
//!
//! Attributes a studio declares per mode will be fields of [`Attributes`]
//! too, parsed here against the mode's declarations: the API, the stores,
//! recordings and the simulator carry the type whole and need no change.

use crate::codes::Code;
use crate::config::{Algorithm, GameModeConfig};
use crate::latency::{parse_latencies, Latencies};
use crate::raw_json::RawJson;
use crate::rules::own_players::{check_own_players, check_own_players_sent, Owner};
use crate::rules::parse::parse_declared;
use crate::rules::sent::SentValues;
use crate::rules::value::DeclaredValues;
use crate::strict_json::{has_duplicate_key, strict_value, GIVEN_TWICE};
use crate::validation::{within, FieldError, MAX_ABS_MMR};
use serde::{Deserialize, Serialize};

/// Largest `attributes.data` (bytes, serialised).
pub const MAX_DATA_BYTES: usize = 4096;

/// `attributes` of a ticket: `mmr`, `latencies`, `data`, and the mode's
/// declared attributes (docs/rules.md). Any other key (a typo such as
/// `MMR`) is refused naming it, e.g. `attributes.MMR`: nothing a studio
/// sends is dropped silently.
#[derive(Debug, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = Attributes, example = json!({"mmr": 1500, "latencies": {"eu-west": 31, "us-east": 110}, "data": {"character": "mage"}})))]
pub struct RawAttributes {
    /// The player's MMR (required in MMR modes, unless the mode keeps
    /// ratings and one is stored for the player).
    #[cfg_attr(feature = "openapi", schema(minimum = -1e9, maximum = 1e9))]
    pub mmr: Option<f64>,
    /// Round trips (milliseconds, 0..=5000) the client measured to the
    /// studio's regions, by region name (1..=32 entries, names
    /// `^[a-z0-9][a-z0-9-]{0,31}$`, among the mode's `regions.names` when
    /// it lists them). Required in modes with `regions`
    /// (`LATENCIES_REQUIRED`).
    #[cfg_attr(feature = "openapi", schema(value_type = Option<HashMap<String, f64>>))]
    pub latencies: Option<serde_json::Value>,
    /// Any JSON object of at most 4 KiB serialised (loadout, character,
    /// anything the game server needs), kept with the ticket as the exact
    /// text sent; never part of the matching pool.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub data: Option<RawJson>,
    /// The mode's declared attributes (docs/rules.md), by name: a string,
    /// a number, or an array of strings, as the declaration's type says.
    /// A key the mode does not declare is refused naming it.
    // The document shows these as the object's other keys; the reading is
    // the hand-written `Deserialize` below.
    #[cfg_attr(feature = "openapi", serde(flatten))]
    #[cfg_attr(feature = "openapi", schema(value_type = HashMap<String, crate::rules::AttributeValue>))]
    pub declared: SentValues,
}

/// Read key by key: `mmr`, `latencies` and `data` into their fields, any
/// other key into `declared`. (A derived `#[serde(flatten)]` buffered the
/// whole object into serde's intermediate form and read it a second time:
/// a tenth of the cost of a ticket with five declared attributes.)
///
/// A key given twice is refused at every depth, `latencies`' and `data`'s
/// keys and a declared value's own included: the ticket route reads its
/// body in this one pass, without a second walk of the text for a
/// duplicate key (docs/errors.md).
impl<'de> Deserialize<'de> for RawAttributes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = RawAttributes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of attributes")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<RawAttributes, A::Error> {
                use serde::de::Error;
                let twice = |key: &str| A::Error::custom(format!("{key}: {GIVEN_TWICE}"));
                let mut out = RawAttributes::default();
                // `mmr`, `latencies`, `data` read (each may be `null`).
                let mut seen = [false; 3];
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    let slot = match key.as_ref() {
                        "mmr" => 0,
                        "latencies" => 1,
                        "data" => 2,
                        name => {
                            if out.declared.0.iter().any(|(k, _)| k == name) {
                                return Err(twice(name));
                            }
                            let value = map.next_value()?;
                            out.declared.push(key.into_owned(), value);
                            continue;
                        }
                    };
                    if std::mem::replace(&mut seen[slot], true) {
                        return Err(twice(&key));
                    }
                    match slot {
                        0 => out.mmr = map.next_value()?,
                        1 => out.latencies = map.next_value::<StrictValue>()?.0,
                        _ => {
                            let data: Option<RawJson> = map.next_value()?;
                            if data
                                .as_ref()
                                .is_some_and(|d| has_duplicate_key(d.get().as_bytes()))
                            {
                                return Err(A::Error::custom(format!("data: {GIVEN_TWICE}")));
                            }
                            out.data = data;
                        }
                    }
                }
                Ok(out)
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

/// A JSON value read refusing a key given twice at any depth (`null`:
/// `None`).
struct StrictValue(Option<serde_json::Value>);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = strict_value(d)?;
        Ok(Self((!value.is_null()).then_some(value)))
    }
}

/// A ticket's attributes, checked against its game mode: what its search
/// matches on (`mmr`, `latencies`) and what travels with it (`data`).
/// Serialises as the body's `attributes` (camelCase, absent fields left
/// out), which is how stores and recordings keep it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attributes {
    /// The player's MMR: sent, or a stored rating filled in before the
    /// parse; within ±1e9 and, in MMR modes, within `[minMmr, maxMmr]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mmr: Option<f64>,
    /// Round trips (milliseconds) by region name; present in modes with
    /// `regions`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latencies: Option<Latencies>,
    /// The studio's JSON object, byte for byte as sent (at most 4 KiB);
    /// never in the pool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<RawJson>,
    /// The mode's declared attributes the ticket sent (docs/rules.md), by
    /// name, checked against their declarations.
    #[serde(flatten, default)]
    pub declared: DeclaredValues,
}

impl Attributes {
    /// Parses `raw` for a ticket of `config`: `mmr` within ±1e9, present
    /// in MMR modes (`MMR_REQUIRED`) and within the mode's range
    /// (`MMR_OUT_OF_RANGE`); `latencies` well formed and present in modes
    /// with `regions` (`LATENCIES_REQUIRED`); `data` an object of at most
    /// 4 KiB; the declared attributes as [`check_declared`] checks them
    /// for `owner`, the ticket's player and party.
    ///
    /// # Errors
    /// Every failure, each with its field (`attributes.mmr`,
    /// `attributes.latencies[.<name>]`, `attributes.data`).
    pub fn parse(
        raw: RawAttributes,
        config: &GameModeConfig,
        owner: Owner<'_>,
    ) -> Result<Self, Vec<FieldError>> {
        let mut errors = Vec::new();
        // Unknown keys first: a typo such as `MMR` is the first thing said.
        let (declared, failed) = check_declared(raw.declared, config, owner);
        errors.extend(failed);
        if let Err(e) = check_mmr(config, raw.mmr) {
            errors.push(e);
        }
        let latencies = match raw
            .latencies
            .as_ref()
            .map(|l| parse_latencies(l, config.regions.as_ref()))
        {
            Some(Ok(l)) => Some(l),
            Some(Err(e)) => {
                errors.extend(e);
                None
            }
            None => {
                if let Err(e) = check_latencies(config, None) {
                    errors.push(e);
                }
                None
            }
        };
        if let Some(data) = &raw.data {
            if let Err(e) = check_data_text(data.get()) {
                errors.push(e);
            }
        }
        if errors.is_empty() {
            Ok(Self {
                mmr: raw.mmr,
                latencies,
                data: raw.data,
                declared,
            })
        } else {
            Err(errors)
        }
    }

    /// The mode's rules over attributes already parsed (a scenario's
    /// arrivals, the pool's re-check after a config change): the first
    /// failure, as [`Attributes::parse`] words it.
    ///
    /// # Errors
    /// The failed rule as a [`FieldError`].
    pub fn check(&self, config: &GameModeConfig) -> Result<(), FieldError> {
        check_matching(config, self.mmr, self.latencies.as_ref())?;
        crate::rules::parse::recheck_declared(&self.declared, config.attributes.as_ref())?;
        crate::roles::check_ticket_roles(config, &self.declared)
    }
}

/// A ticket's declared attributes (every key of its `attributes` but
/// `mmr`, `latencies` and `data`) parsed and checked against `config`
/// (docs/rules.md): each value against its declaration, then the checks
/// over several values (a role list, an `intersect` rule's reach, a block
/// list naming `owner`'s own player or party) on the values that parsed, so
/// that every failure is listed at once. Tickets and a scenario's arrivals
/// both go through it.
///
/// Returns the values that parsed and every failure; the attributes are
/// valid only when the failures are empty.
pub fn check_declared(
    raw: SentValues,
    config: &GameModeConfig,
    owner: Owner<'_>,
) -> (DeclaredValues, Vec<FieldError>) {
    let (declared, mut errors, refused_sets) = parse_declared(raw, config.attributes.as_ref());
    let declarations = config.attributes.as_ref();
    errors.extend(check_own_players(
        &declared,
        |name| declarations.and_then(|d| d.get(name)),
        owner,
    ));
    // A block list that failed its own parse still has each entry naming
    // the owner listed (an entry failed twice is named once).
    for e in check_own_players_sent(&refused_sets, owner) {
        if !errors.iter().any(|seen| seen.field == e.field) {
            errors.push(e);
        }
    }
    // A value that failed its own parse is not judged again (its default
    // would stand in for it here).
    for check in [
        crate::roles::check_ticket_roles(config, &declared),
        crate::rules::reachable::check_reachable(config, &declared),
    ] {
        if let Err(e) = check {
            if !errors.iter().any(|seen| seen.field == e.field) {
                errors.push(e);
            }
        }
    }
    (declared, errors)
}

/// The mode's rules over a search's matching attributes: [`check_mmr`],
/// then [`check_latencies`]. The re-check of a live pool reads them off
/// each search.
///
/// # Errors
/// The first failed rule.
pub fn check_matching(
    config: &GameModeConfig,
    mmr: Option<f64>,
    latencies: Option<&Latencies>,
) -> Result<(), FieldError> {
    check_mmr(config, mmr)?;
    check_latencies(config, latencies)
}

/// `attributes.mmr`: within ±1e9 (`VALIDATION_ERROR`), present in MMR
/// modes (`MMR_REQUIRED`) and within `[minMmr, maxMmr]`
/// (`MMR_OUT_OF_RANGE`).
///
/// # Errors
/// The failure on `attributes.mmr`.
pub fn check_mmr(config: &GameModeConfig, mmr: Option<f64>) -> Result<(), FieldError> {
    const FIELD: &str = "attributes.mmr";
    if let Some(value) = mmr {
        if !within(value, MAX_ABS_MMR) {
            return Err(FieldError::new(
                FIELD,
                Code::ValidationError,
                format!("mmr must be a number within ±{MAX_ABS_MMR:e}"),
            ));
        }
    }
    if let Algorithm::Mmr {
        min_mmr, max_mmr, ..
    } = &config.algorithm
    {
        match mmr {
            None => {
                return Err(FieldError::new(
                    FIELD,
                    Code::MmrRequired,
                    format!(
                        "game mode {} matches on MMR: attributes.mmr is required",
                        config.name
                    ),
                ))
            }
            Some(value) if value < *min_mmr || value > *max_mmr => {
                return Err(FieldError::new(
                    FIELD,
                    Code::MmrOutOfRange,
                    format!("mmr {value} is outside [{min_mmr}, {max_mmr}]"),
                ))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `LATENCIES_REQUIRED` for a ticket without a latency map in a mode with
/// `regions`.
///
/// # Errors
/// The failure on `attributes.latencies`.
pub fn check_latencies(
    config: &GameModeConfig,
    latencies: Option<&Latencies>,
) -> Result<(), FieldError> {
    if config.regions.is_some() && latencies.is_none_or(|l| l.is_empty()) {
        return Err(FieldError::new(
            "attributes.latencies",
            Code::LatenciesRequired,
            format!(
                "game mode {} matches by region: attributes.latencies is required",
                config.name
            ),
        ));
    }
    Ok(())
}

/// `attributes.data` as JSON text: an object of at most
/// [`MAX_DATA_BYTES`].
///
/// # Errors
/// The failure on `attributes.data`.
pub fn check_data_text(text: &str) -> Result<(), FieldError> {
    if !text.trim_start().starts_with('{') || text.len() > MAX_DATA_BYTES {
        return Err(FieldError::new(
            "attributes.data",
            Code::ValidationError,
            "data must be a JSON object of at most 4096 bytes",
        ));
    }
    Ok(())
}
