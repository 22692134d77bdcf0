//! Arrivals as `arrivalsCsv` text (docs/simulate.md): read by
//! [`parse_arrivals_csv`] (a scenario's `arrivalsCsv`), written by
//! [`write_arrivals_csv`]: a mode's recording is served this way
//! (`GET …/game-modes/{name}/recording`), with the `event` column saying
//! `start` or `cancel`.

use super::scenario::{Event, ScenarioError};
use crate::codes::Code;
use crate::validation::FieldError;

mod cells;

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

/// A failure worded for an inline arrival (a ticket's party rules), named
/// by the CSV column instead when it is a CSV row's (`csv`), as
/// docs/simulate.md ("`arrivalsCsv`") names a row's failures: `party.id`
/// is `partyId`, `party` and `party.members` are `partyMembers` (the
/// members make a party), in the field and in the message.
pub(super) fn as_column(mut e: FieldError, csv: bool) -> FieldError {
    let column = match e.field.as_str() {
        "party.id" if csv => "partyId",
        "party" | "party.members" if csv => "partyMembers",
        _ => return e,
    };
    e.field = column.to_owned();
    e.message = e
        .message
        .replace("party.id", "partyId")
        .replace("party.members", "partyMembers");
    e
}

/// The bytes of an arrivals CSV file as text, or every line that is not
/// UTF-8 text named as its row is (`source[i]`, line `i + 2`; the header
/// on `source`): "the row is not UTF-8 text", in the reader's own words.
///
/// # Errors
/// One `VALIDATION_ERROR` per line that is not UTF-8 text.
pub fn arrivals_csv_text<'b>(bytes: &'b [u8], source: &str) -> Result<&'b str, ScenarioError> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Ok(text);
    }
    let errors = bytes
        .split(|b| *b == b'\n')
        .enumerate()
        .filter(|(_, line)| std::str::from_utf8(line).is_err())
        .map(|(n, _)| match n {
            0 => FieldError::new(
                source,
                Code::ValidationError,
                "the header is not UTF-8 text",
            ),
            n => FieldError::new(
                format!("{source}[{}]", n - 1),
                Code::ValidationError,
                "the row is not UTF-8 text",
            ),
        })
        .collect();
    Err(ScenarioError(errors))
}

/// Parses `arrivalsCsv` text (docs/simulate.md), its rows named
/// `arrivalsCsv[i]`: see [`read_arrivals_csv`].
///
/// # Errors
/// As [`read_arrivals_csv`].
pub fn parse_arrivals_csv(
    text: &str,
    regions: Option<&crate::latency::Regions>,
) -> Result<Vec<Event>, ScenarioError> {
    read_arrivals_csv(text, regions, "arrivalsCsv")
}

/// Reads arrivals CSV text (docs/simulate.md): header
/// `at,playerId,mmr,pingMs,partyId,partyMembers` (no other column; none
/// twice), members separated by `|`; empty cells are absent values. An
/// optional `latencies` column is written `eu-west=31|us-east=110`, checked
/// against the mode's `regions`. An optional `attributes` column holds the
/// declared attributes as a JSON object (docs/rules.md), read strictly (a
/// key given twice or a NUL character refused) and each value read as an
/// inline arrival's is. An optional `event` column (a mode's recording,
/// docs/tuning.md) says `start` (or nothing: an arrival) or `cancel` (the
/// player's search ends at `at`; only `at` and `playerId` are read).
///
/// Row `i` after the header (0-based, cancel rows and blank lines
/// counted: the row on line `i + 2`) is named `{source}[i]` in errors, its cells by column (`arrivalsCsv[2].mmr`,
/// `arrivalsCsv[0].attributes.maps[1]`), as [`super::Scenario::add_events`]
/// names the same row's rule failures; the header's are on `{source}`.
///
/// # Errors
/// [`ScenarioError`] (`VALIDATION_ERROR`): every failure of every row.
pub fn read_arrivals_csv(
    text: &str,
    regions: Option<&crate::latency::Regions>,
    source: &str,
) -> Result<Vec<Event>, ScenarioError> {
    read_arrivals_csv_rows(text, regions, source).map(|(events, _)| events)
}

/// [`read_arrivals_csv`], with each event's row: the line it starts on,
/// counted from 0 on the line after the header (a blank line skipped is
/// still counted, so that `{source}[i]` is line `i + 2` of a text whose
/// header is its first line).
///
/// # Errors
/// As [`read_arrivals_csv`].
pub fn read_arrivals_csv_rows(
    text: &str,
    regions: Option<&crate::latency::Regions>,
    source: &str,
) -> Result<(Vec<Event>, Vec<usize>), ScenarioError> {
    read_rows(text, regions, source, &|_| None)
}

/// The declaration of an attribute by name in the scenario's modes, if one
/// declares it.
pub(super) type Declared<'a> = &'a dyn Fn(&str) -> Option<&'a crate::rules::Declaration>;

/// [`read_arrivals_csv_rows`], an `attributes` cell's value of the wrong
/// JSON type for its declaration in `declared` refused in the words of a
/// ticket's (`POST …/tickets`, as an inline arrival's is).
///
/// # Errors
/// As [`read_arrivals_csv`].
pub(super) fn read_rows(
    text: &str,
    regions: Option<&crate::latency::Regions>,
    source: &str,
    declared: Declared<'_>,
) -> Result<(Vec<Event>, Vec<usize>), ScenarioError> {
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| ScenarioError::one(source, Code::ValidationError, cells::unreadable(&e)))?
        .clone();
    // A column of another name would be read as absent: refused, as a
    // scenario refuses a field it does not know.
    let mut errors = Vec::new();
    for (i, name) in headers.iter().enumerate() {
        if name.is_empty() {
            let last = i + 1 == headers.len();
            errors.push(format!(
                "an empty column name (column {}{}); the columns are {}",
                i + 1,
                if last {
                    ", after a trailing comma?"
                } else {
                    ""
                },
                COLUMNS.join(", ")
            ));
        } else if !COLUMNS.contains(&name) {
            errors.push(format!(
                "unknown column {name:?}; the columns are {}",
                COLUMNS.join(", ")
            ));
        } else if headers.iter().take(i).any(|h| h == name) {
            errors.push(format!("column {name} is given twice"));
        }
    }
    let col = |name: &str| headers.iter().position(|h| h == name);
    if col("at").is_none() || col("playerId").is_none() {
        errors.push("the header needs at least at and playerId".into());
    }
    if !errors.is_empty() {
        return Err(ScenarioError(
            errors
                .into_iter()
                .map(|m| FieldError::new(source, Code::ValidationError, m))
                .collect(),
        ));
    }
    let columns = cells::Columns {
        at: col("at"),
        player: col("playerId"),
        mmr: col("mmr"),
        ping: col("pingMs"),
        party_id: col("partyId"),
        members: col("partyMembers"),
        latencies: col("latencies"),
        event: col("event"),
        attributes: col("attributes"),
    };
    let header_line = headers.position().map_or(1, csv::Position::line);
    // The row of a record starting on `line` (1-based), else the one after
    // the last.
    let row_of = |line: Option<u64>, last: Option<usize>| {
        line.and_then(|l| usize::try_from(l.checked_sub(header_line + 1)?).ok())
            .unwrap_or_else(|| last.map_or(0, |r| r + 1))
    };
    let mut events = Vec::new();
    let mut rows = Vec::new();
    let mut errors = Vec::new();
    let mut last = None;
    for record in reader.records() {
        if let Err(e) = &record {
            if blank_line(text, e) {
                continue;
            }
        }
        let line = match &record {
            Ok(r) => r.position().map(|p| first_line(text, p)),
            Err(e) => e.position().map(|p| first_line(text, p)),
        };
        let i = row_of(line, last);
        last = Some(i);
        let row = format!("{source}[{i}]");
        match record {
            Ok(record) => match columns.event(&record, &row, regions, declared) {
                Ok(event) => {
                    events.push(event);
                    rows.push(i);
                }
                Err(failed) => errors.extend(failed),
            },
            Err(e) => errors.push(FieldError::new(
                row,
                Code::ValidationError,
                cells::unreadable(&e),
            )),
        }
    }
    if errors.is_empty() {
        Ok((events, rows))
    } else {
        Err(ScenarioError(errors))
    }
}

/// Whether `error` is that of a line holding only spaces or tabs (one
/// empty cell where the header has more), which is skipped as a blank
/// line is.
fn blank_line(text: &str, error: &csv::Error) -> bool {
    let csv::ErrorKind::UnequalLengths { len: 1, pos, .. } = error.kind() else {
        return false;
    };
    let from = pos
        .as_ref()
        .and_then(|p| usize::try_from(p.byte()).ok())
        .unwrap_or(usize::MAX);
    // The record's position may be that of empty lines before it.
    text.get(from..)
        .and_then(|rest| {
            rest.split('\n')
                .find(|l| !l.trim_end_matches('\r').is_empty())
        })
        .is_some_and(|l| l.trim().is_empty())
}

/// The line a record at `position` starts on: the reader places a record
/// that follows blank lines at the first of them.
fn first_line(text: &str, position: &csv::Position) -> u64 {
    let from = usize::try_from(position.byte()).unwrap_or(usize::MAX);
    let blank = text
        .as_bytes()
        .get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| matches!(b, b'\n' | b'\r'))
        .filter(|b| **b == b'\n')
        .count();
    position.line() + blank as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::AttributeValue;
    use crate::search::Party;

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
    fn a_row_is_named_by_its_line_whatever_blank_lines_come_before() {
        // Lines holding only spaces or tabs are blank lines too.
        let text = "at,playerId,mmr\n0,a,1500\n\n1,b,x\n2,c\n \t\r\n\n3,d,y\n  \n";
        let err = parse_arrivals_csv(text, None).unwrap_err();
        let fields: Vec<&str> = err.0.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            ["arrivalsCsv[2].mmr", "arrivalsCsv[3]", "arrivalsCsv[6].mmr"],
            "{err:?}"
        );
    }

    /// A region given twice in a `latencies` cell is refused, as the API
    /// refuses a key given twice, never read as its last value.
    #[test]
    fn a_region_given_twice_in_latencies_is_refused() {
        let text = "at,playerId,mmr,pingMs,partyId,partyMembers,latencies\n\
                    0,ana,1500,,,,eu-west=30| eu-west =200\n";
        let err = parse_arrivals_csv(text, None).unwrap_err();
        let failed: Vec<(&str, &str)> = err
            .0
            .iter()
            .map(|e| (e.field.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(
            failed,
            [(
                "arrivalsCsv[0].latencies.eu-west",
                crate::strict_json::GIVEN_TWICE
            )]
        );
    }

    #[test]
    fn an_unknown_event_names_its_row() {
        let text = "at,playerId,event\n0,a,start\n1,a,leave\n";
        let err = parse_arrivals_csv(text, None).unwrap_err();
        assert_eq!(err.0[0].field, "arrivalsCsv[1].event");
        assert!(err.0[0].message.contains("leave"));
    }
}
