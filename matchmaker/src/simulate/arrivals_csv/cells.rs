//! One row of an arrivals CSV read into an [`Event`] (docs/simulate.md,
//! "`arrivalsCsv`"): every cell's failure named by its column, the
//! `attributes` cell's by the attribute's path.

use crate::codes::Code;
use crate::json_kind::Got;
use crate::rules::{AttributeValue, DeclaredValues};
use crate::search::Party;
use crate::simulate::scenario::{own_field, Event, OWN_FIELDS};
use crate::strict_json::{nul_path, read_strict, StrictError, GIVEN_TWICE, NUL_MESSAGE};
use crate::validation::FieldError;

/// Where each column is in a row (`None`: the file has no such column).
pub(super) struct Columns {
    pub(super) at: Option<usize>,
    pub(super) player: Option<usize>,
    pub(super) mmr: Option<usize>,
    pub(super) ping: Option<usize>,
    pub(super) party_id: Option<usize>,
    pub(super) members: Option<usize>,
    pub(super) latencies: Option<usize>,
    pub(super) event: Option<usize>,
    pub(super) attributes: Option<usize>,
}

/// Why the CSV reader could not read a row, in the project's words.
pub(super) fn unreadable(error: &csv::Error) -> String {
    match error.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "the row has {len} {} where the header has {expected_len}",
            if *len == 1 { "cell" } else { "cells" }
        ),
        csv::ErrorKind::Utf8 { .. } => "the row is not UTF-8 text".into(),
        _ => "the row cannot be read as CSV".into(),
    }
}

impl Columns {
    /// Row `record` (named `row`, e.g. `arrivalsCsv[3]`) as an event.
    ///
    /// # Errors
    /// Every failure of the row, each on `row.<column>`.
    pub(super) fn event(
        &self,
        record: &csv::StringRecord,
        row: &str,
        regions: Option<&crate::latency::Regions>,
        declared: super::Declared<'_>,
    ) -> Result<Event, Vec<FieldError>> {
        let mut errors = Vec::new();
        let mut fail = |column: &str, message: String| {
            errors.push(FieldError::new(
                format!("{row}.{column}"),
                Code::ValidationError,
                message,
            ));
        };
        let cell = |c: Option<usize>| c.and_then(|c| record.get(c)).filter(|v| !v.is_empty());
        let mut number = |c: Option<usize>, name: &str| -> Option<f64> {
            let v = cell(c)?;
            let parsed = v.parse::<f64>().ok();
            if parsed.is_none() {
                fail(name, format!("{name} is not a number: {v}"));
            }
            parsed
        };
        // A cancel reads its time and player only (docs/simulate.md).
        let event = cell(self.event);
        let cancel = event == Some("cancel");
        let at = number(self.at, "at");
        let (mmr, ping_ms) = if cancel {
            (None, None)
        } else {
            (number(self.mmr, "mmr"), number(self.ping, "pingMs"))
        };
        if let Some(other) = event.filter(|e| !matches!(*e, "start" | "cancel")) {
            fail("event", format!("event is start or cancel, not {other}"));
        }
        if cell(self.at).is_none() {
            fail("at", "at is empty".into());
        }
        let player_id = cell(self.player);
        if player_id.is_none() {
            fail("playerId", "playerId is empty".into());
        }
        if cancel {
            let (Some(at), Some(player_id), true) = (at, player_id, errors.is_empty()) else {
                return Err(errors);
            };
            let player_id = player_id.to_owned();
            return Ok(Event::Cancel { at, player_id });
        }
        let party = match (cell(self.party_id), cell(self.members)) {
            (Some(id), Some(members)) => Some(Party {
                id: id.into(),
                // Trimmed as the latencies column's entries are.
                members: members.split('|').map(|m| m.trim().to_owned()).collect(),
            }),
            (None, None) => None,
            _ => {
                fail("partyId", "partyId and partyMembers go together".to_owned());
                None
            }
        };
        let latencies = match cell(self.latencies).map(|v| latencies(v, regions)) {
            Some(Ok(l)) => Some(l),
            Some(Err(failed)) => {
                errors.extend(within(row, failed));
                None
            }
            None => None,
        };
        let attributes = match cell(self.attributes) {
            Some(text) => {
                let (values, failed) = attributes(text, declared);
                errors.extend(within(row, failed));
                values
            }
            None => DeclaredValues::new(),
        };
        let (Some(at), Some(player_id), true) = (at, player_id, errors.is_empty()) else {
            return Err(errors);
        };
        let player_id = player_id.to_owned();
        Ok(Event::Arrival {
            at,
            player_id,
            mmr,
            ping_ms,
            party,
            latencies,
            data: None,
            answer: None,
            attributes,
        })
    }
}

/// `errors` (each field a path inside the row) named inside `row`.
fn within(row: &str, errors: Vec<FieldError>) -> impl Iterator<Item = FieldError> + '_ {
    errors.into_iter().map(move |mut e| {
        e.field = format!("{row}.{}", e.field);
        e
    })
}

/// An `attributes` cell: a JSON object (a key given twice or a NUL
/// character refused, as the API refuses them in a body), each value read
/// as an inline arrival's: [`AttributeValue::from_json`], a value of the
/// wrong JSON type refused in the words of a ticket's when `declared` has
/// its declaration ([`crate::rules::parse::value_of`]). Returns the values
/// read and every failure, each on `attributes[.<path>]`.
pub(super) fn attributes(
    cell: &str,
    declared: super::Declared<'_>,
) -> (DeclaredValues, Vec<FieldError>) {
    const FIELD: &str = "attributes";
    let one = |field: String, message: String| {
        vec![FieldError::new(field, Code::ValidationError, message)]
    };
    let at = |path: &str| match path {
        "" => FIELD.to_owned(),
        path if path.starts_with('[') => format!("{FIELD}{path}"),
        path => format!("{FIELD}.{path}"),
    };
    let value = match read_strict(cell.as_bytes()) {
        Ok(value) => value,
        Err(StrictError::Duplicate { field }) => {
            return (DeclaredValues::new(), one(at(&field), GIVEN_TWICE.into()))
        }
        Err(StrictError::Json(e) | StrictError::Trailing(e)) => {
            let message = format!(
                "the attributes cell is not one JSON object (the text breaks at column {}); \
                 write it as {{\"build\":\"1.4\",\"maps\":[\"dust\"]}}, CSV-quoted",
                e.column()
            );
            return (DeclaredValues::new(), one(FIELD.into(), message));
        }
    };
    if let Some(path) = nul_path(&value) {
        return (DeclaredValues::new(), one(at(&path), NUL_MESSAGE.into()));
    }
    let serde_json::Value::Object(fields) = value else {
        let message = format!("expected an object, got {}", Got::of(&value));
        return (DeclaredValues::new(), one(FIELD.into(), message));
    };
    let mut values = DeclaredValues::new();
    let mut errors = Vec::new();
    for (name, raw) in fields {
        if OWN_FIELDS.contains(&name.as_str()) {
            // Whatever its value, as an inline arrival's (docs/simulate.md).
            errors.extend(one(at(&name), own_field(&name)));
            continue;
        }
        match AttributeValue::from_json(&raw, &at(&name)) {
            Ok(value) => {
                values.insert(name, value);
            }
            Err(failed) => match declared(&name) {
                Some(declaration) => errors.extend(
                    crate::rules::parse::value_of(declaration, &raw, &at(&name))
                        .err()
                        .unwrap_or(failed),
                ),
                None => errors.extend(failed),
            },
        }
    }
    (values, errors)
}

/// A `latencies` cell, `eu-west=31|us-east=110`, checked as
/// docs/regions.md (a region given twice refused); failures on
/// `latencies[.<region>]`.
fn latencies(
    cell: &str,
    regions: Option<&crate::latency::Regions>,
) -> Result<crate::latency::Latencies, Vec<FieldError>> {
    let one = |message: String| vec![FieldError::new("latencies", Code::ValidationError, message)];
    let mut object = serde_json::Map::new();
    for pair in cell.split('|') {
        let Some((name, ms)) = pair.split_once('=') else {
            return Err(one(format!(
                "latencies are written name=ms|name=ms, not {pair}"
            )));
        };
        let Ok(ms) = ms.trim().parse::<f64>() else {
            return Err(one(format!("latency of {name} is not a number: {ms}")));
        };
        // A region given twice is refused, as the API refuses a key given
        // twice in a body (docs/simulate.md, "`arrivalsCsv`").
        let name = name.trim();
        if object
            .insert(name.to_owned(), serde_json::json!(ms))
            .is_some()
        {
            return Err(vec![FieldError::new(
                format!("latencies.{name}"),
                Code::ValidationError,
                GIVEN_TWICE,
            )]);
        }
    }
    crate::latency::parse_latencies(&serde_json::Value::Object(object), regions).map_err(|e| {
        e.into_iter()
            .map(crate::simulate::scenario::as_arrival_field)
            .collect()
    })
}
