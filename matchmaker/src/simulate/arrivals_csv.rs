//! Arrivals as `arrivalsCsv` text (docs/simulate.md): read by
//! [`parse_arrivals_csv`] (a scenario's `arrivalsCsv`), written by
//! [`write_arrivals_csv`]: a mode's recording is served this way
//! (`GET …/game-modes/{name}/recording`), with the `event` column saying
//! `start` or `cancel`.

use super::scenario::{Event, ScenarioError};
use crate::codes::Code;
use crate::search::Party;

/// The header line written by [`write_arrivals_csv`] (with its newline).
pub const ARRIVALS_CSV_HEADER: &str =
    "at,playerId,mmr,pingMs,partyId,partyMembers,latencies,event,attributes\n";

/// Appends `events` to `out` as CSV rows (no header; see
/// [`ARRIVALS_CSV_HEADER`]): arrivals as `start`, cancels as `cancel`
/// (only `at` and `playerId` filled). `at` is written in seconds with
/// millisecond precision; leave events are not written (a recording has
/// none). Ids are written as given (a recording's are hex hashes, never
/// needing quotes); a cell holding `,`, `"` or a line break is quoted.
pub fn write_arrivals_csv(events: &[Event], out: &mut String) {
    use std::fmt::Write;
    for event in events {
        match event {
            Event::Arrival {
                at,
                player_id,
                mmr,
                ping_ms,
                party,
                latencies,
                attributes,
                ..
            } => {
                let _ = write!(out, "{at:.3},{},", cell(player_id));
                if let Some(mmr) = mmr {
                    let _ = write!(out, "{mmr}");
                }
                out.push(',');
                if let Some(ping) = ping_ms {
                    let _ = write!(out, "{ping}");
                }
                out.push(',');
                if let Some(party) = party {
                    let _ = write!(
                        out,
                        "{},{}",
                        cell(&party.id),
                        cell(&party.members.join("|"))
                    );
                } else {
                    out.push(',');
                }
                out.push(',');
                if let Some(latencies) = latencies {
                    let text: Vec<String> = latencies
                        .iter()
                        .map(|(region, ms)| format!("{region}={ms}"))
                        .collect();
                    out.push_str(&cell(&text.join("|")));
                }
                out.push_str(",start,");
                if !attributes.is_empty() {
                    if let Ok(text) = serde_json::to_string(attributes) {
                        out.push_str(&cell(&text));
                    }
                }
                out.push('\n');
            }
            Event::Cancel { at, player_id } => {
                let _ = writeln!(out, "{at:.3},{},,,,,,cancel,", cell(player_id));
            }
            Event::Leave { .. } | Event::Hold { .. } => {}
        }
    }
}

/// A CSV cell: as is, or quoted when it holds a separator or a quote.
fn cell(value: &str) -> std::borrow::Cow<'_, str> {
    if value.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", value.replace('"', "\"\"")).into()
    } else {
        value.into()
    }
}

/// The columns an arrivals CSV may have (docs/simulate.md).
const COLUMNS: [&str; 9] = [
    "at",
    "playerId",
    "mmr",
    "pingMs",
    "partyId",
    "partyMembers",
    "latencies",
    "event",
    "attributes",
];

/// Parses `arrivalsCsv` text (docs/simulate.md): header `at,playerId,mmr,pingMs,partyId,partyMembers`
/// (no other column; none twice),
/// members separated by `|`; empty cells are absent values. An optional
/// `latencies` column is written `eu-west=31|us-east=110`, checked against
/// the mode's `regions`. An optional `attributes` column holds the mode's
/// declared attributes as a JSON object (docs/rules.md). An optional
/// `event` column (a mode's recording, docs/tuning.md) says `start` (or nothing: an arrival) or `cancel` (the
/// player's search ends at `at`; only `at` and `playerId` are read).
///
/// # Errors
/// [`ScenarioError`] (`VALIDATION_ERROR`) naming the first bad row (row 0:
/// the header).
pub fn parse_arrivals_csv(
    text: &str,
    regions: Option<&crate::latency::Regions>,
) -> Result<Vec<Event>, ScenarioError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let bad = |row: usize, message: String| {
        ScenarioError::one(
            &format!("arrivalsCsv row {row}"),
            Code::ValidationError,
            message,
        )
    };
    let headers = reader.headers().map_err(|e| bad(0, e.to_string()))?.clone();
    // A column of another name would be read as absent: refused, as a
    // scenario refuses a field it does not know.
    for (i, name) in headers.iter().enumerate() {
        if !COLUMNS.contains(&name) {
            return Err(bad(
                0,
                format!(
                    "unknown column {name:?}; the columns are {}",
                    COLUMNS.join(", ")
                ),
            ));
        }
        if headers.iter().take(i).any(|h| h == name) {
            return Err(bad(0, format!("column {name} is given twice")));
        }
    }
    let col = |name: &str| headers.iter().position(|h| h == name);
    let (Some(at_c), Some(player_c)) = (col("at"), col("playerId")) else {
        return Err(bad(0, "the header needs at least at and playerId".into()));
    };
    let (mmr_c, ping_c, pid_c, members_c, lat_c, event_c) = (
        col("mmr"),
        col("pingMs"),
        col("partyId"),
        col("partyMembers"),
        col("latencies"),
        col("event"),
    );
    let attributes_c = col("attributes");
    let mut events = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let row = i + 1;
        let record = record.map_err(|e| bad(row, e.to_string()))?;
        let cell = |c: Option<usize>| c.and_then(|c| record.get(c)).filter(|v| !v.is_empty());
        let number = |c: Option<usize>, name: &str| -> Result<Option<f64>, ScenarioError> {
            cell(c)
                .map(|v| {
                    v.parse::<f64>()
                        .map_err(|_| bad(row, format!("{name} is not a number: {v}")))
                })
                .transpose()
        };
        let at = number(Some(at_c), "at")?.ok_or_else(|| bad(row, "at is empty".into()))?;
        let player_id = cell(Some(player_c)).ok_or_else(|| bad(row, "playerId is empty".into()))?;
        match cell(event_c) {
            None | Some("start") => {}
            Some("cancel") => {
                events.push(Event::Cancel {
                    at,
                    player_id: player_id.to_string(),
                });
                continue;
            }
            Some(other) => return Err(bad(row, format!("event is start or cancel, not {other}"))),
        }
        let party = match (cell(pid_c), cell(members_c)) {
            (Some(id), Some(members)) => Some(Party {
                id: id.into(),
                members: members.split('|').map(str::to_string).collect(),
            }),
            (None, None) => None,
            _ => return Err(bad(row, "partyId and partyMembers go together".into())),
        };
        let latencies = cell(lat_c)
            .map(|v| csv_latencies(v, regions).map_err(|m| bad(row, m)))
            .transpose()?;
        events.push(Event::Arrival {
            at,
            player_id: player_id.to_string(),
            mmr: number(mmr_c, "mmr")?,
            ping_ms: number(ping_c, "pingMs")?,
            party,
            latencies,
            data: None,
            answer: None,
            attributes: cell(attributes_c)
                .map(|v| {
                    serde_json::from_str(v).map_err(|e| {
                        bad(
                            row,
                            format!("attributes is a JSON object of strings, numbers and arrays of strings: {e}"),
                        )
                    })
                })
                .transpose()?
                .unwrap_or_default(),
        });
    }
    Ok(events)
}

/// A CSV `latencies` cell, `eu-west=31|us-east=110`, checked as docs/regions.md.
fn csv_latencies(
    cell: &str,
    regions: Option<&crate::latency::Regions>,
) -> Result<crate::latency::Latencies, String> {
    let mut object = serde_json::Map::new();
    for pair in cell.split('|') {
        let (name, ms) = pair
            .split_once('=')
            .ok_or_else(|| format!("latencies are written name=ms|name=ms, not {pair}"))?;
        let ms: f64 = ms
            .trim()
            .parse()
            .map_err(|_| format!("latency of {name} is not a number: {ms}"))?;
        object.insert(name.trim().to_string(), serde_json::json!(ms));
    }
    crate::latency::parse_latencies(&serde_json::Value::Object(object), regions).map_err(|e| {
        e.iter()
            .map(|f| format!("{}: {}", f.field, f.message))
            .collect::<Vec<_>>()
            .join("; ")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::AttributeValue;

    #[test]
    fn written_rows_read_back_as_the_same_events() {
        let events = vec![
            Event::Arrival {
                at: 0.25,
                player_id: "a1".into(),
                mmr: Some(1500.0),
                ping_ms: None,
                party: Some(Party {
                    id: "p,1".into(),
                    members: vec!["a1".into(), "b2".into()],
                }),
                latencies: None,
                data: None,
                answer: None,
                attributes: [
                    ("build".to_owned(), AttributeValue::Text("1.4".into())),
                    ("level".to_owned(), AttributeValue::Number(37.0)),
                    (
                        "maps".to_owned(),
                        AttributeValue::Set(vec!["dust".into(), "nuke".into()]),
                    ),
                ]
                .into_iter()
                .collect(),
            },
            Event::Arrival {
                at: 1.0,
                player_id: "c3".into(),
                mmr: None,
                ping_ms: Some(40.0),
                party: None,
                latencies: None,
                data: None,
                answer: None,
                attributes: Default::default(),
            },
            Event::Cancel {
                at: 2.5,
                player_id: "c3".into(),
            },
        ];
        let mut text = ARRIVALS_CSV_HEADER.to_string();
        write_arrivals_csv(&events, &mut text);
        assert_eq!(parse_arrivals_csv(&text, None).unwrap(), events);
    }

    #[test]
    fn an_unknown_event_names_its_row() {
        let text = "at,playerId,event\n0,a,start\n1,a,leave\n";
        let err = parse_arrivals_csv(text, None).unwrap_err();
        assert_eq!(err.0[0].field, "arrivalsCsv row 2");
        assert!(err.0[0].message.contains("leave"));
    }
}
