//! Writing arrivals as `arrivalsCsv` text (docs/simulate.md), the format
//! [`super::parse_arrivals_csv`] reads back: a mode's recording is served
//! this way (`GET …/game-modes/{name}/recording`), with the `event`
//! column saying `start` or `cancel`.

use super::scenario::Event;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::AttributeValue;
    use crate::search::Party;
    use crate::simulate::parse_arrivals_csv;

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
