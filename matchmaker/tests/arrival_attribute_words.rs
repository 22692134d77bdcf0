//! A scenario's arrival refuses an attribute value in the words a ticket's
//! `attributes` is refused in (docs/simulate.md: a scenario's failures carry
//! the API's codes and words), every failure at once; an arrivals CSV's
//! header names its mistakes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::rules::Owner;
use matchplane_matchmaker::simulate::{parse_arrivals_csv, Scenario};
use matchplane_matchmaker::{Attributes, RawAttributes};
use serde_json::{json, Value};

fn body(arrivals: Value) -> String {
    json!({
        "gameMode": {
            "name": "vote", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                          "baseTolerance": 5, "expansionMultiplier": 2},
            "attributes": {
                "build": {"type": "string", "values": ["1.4", "1.5"], "default": "1.4"},
                "level": {"type": "number", "min": 0, "max": 100, "default": 1},
                "maps": {"type": "stringSet", "values": ["dust", "nuke"], "default": ["dust"]}
            },
            "rules": [{"name": "same-build", "type": "equal", "attribute": "build"}]
        },
        "until": 10,
        "arrivals": arrivals
    })
    .to_string()
}

/// The scenario's failures as (field, code, message).
fn failures(arrivals: Value) -> Vec<(String, String, String)> {
    Scenario::parse(&body(arrivals))
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| (e.field, e.code.to_string(), e.message))
        .collect()
}

/// A ticket's failures for `attributes` (its declared ones) in the same
/// mode, as `POST …/tickets` answers them: (field, code, message).
fn ticket_failures(declared: &Value) -> Vec<(String, String, String)> {
    let mode = Scenario::parse(&body(json!([]))).unwrap().game_mode;
    let raw = RawAttributes {
        mmr: Some(1500.0),
        declared: serde_json::from_value(declared.clone()).unwrap(),
        ..RawAttributes::default()
    };
    match Attributes::parse(raw, &mode, Owner::new("p0", None)) {
        Ok(_) => Vec::new(),
        Err(e) => e
            .into_iter()
            .map(|e| (e.field, e.code.to_string(), e.message))
            .collect(),
    }
}

#[test]
fn a_wrongly_typed_attribute_is_worded_as_a_tickets() {
    for declared in [
        json!({"level": null}),
        json!({"level": "10"}),
        json!({"level": true}),
        json!({"level": {"a": 1}}),
        json!({"level": [1]}),
        json!({"build": null}),
        json!({"build": 14}),
        json!({"maps": null}),
        json!({"maps": "dust"}),
        json!({"maps": ["dust", 1, null]}),
        json!({"level": null, "build": 1, "maps": [true]}),
    ] {
        let ticket: Vec<(String, String, String)> = ticket_failures(&declared)
            .into_iter()
            .map(|(f, c, m)| (format!("arrivals[0].{f}"), c, m))
            .collect();
        assert!(!ticket.is_empty(), "{declared}");
        let arrival = failures(json!([
            {"at": 0, "playerId": "a", "mmr": 1500, "attributes": declared}
        ]));
        assert_eq!(arrival, ticket, "{declared}");
    }
}

/// One `null` among many mistakes is one failure more, not the only one.
#[test]
fn a_null_attribute_is_listed_with_every_other_failure() {
    let arrivals = |level: Value| {
        json!([
            {"at": 0, "playerId": "a", "mmr": 1500, "attributes": {"build": "1.3"}},
            {"at": 0, "playerId": "b", "mmr": 5000},
            {"at": 0, "playerId": "c", "mmr": 1500, "attributes": {"maps": ["mirage"]}},
            {"at": 0, "playerId": "d", "mmr": 1500, "attributes": {"level": level}},
            {"at": 0, "playerId": "e", "mmr": 1500, "attributes": {"level": 101}}
        ])
    };
    let without = failures(arrivals(json!(5)));
    assert_eq!(without.len(), 4, "{without:?}");
    let with = failures(arrivals(Value::Null));
    let fields: Vec<&str> = with.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        fields,
        [
            "arrivals[0].attributes.build",
            "arrivals[1].mmr",
            "arrivals[2].attributes.maps[0]",
            "arrivals[3].attributes.level",
            "arrivals[4].attributes.level",
        ],
        "{with:?}"
    );
    assert_eq!(with[3].2, "must be a finite number");
}

/// `data` (and `mmr`, `latencies`) inside an arrival's `attributes` is
/// said to be the arrival's own field, whatever its value, inline and in a
/// CSV's `attributes` cell; `data`, which a CSV row does not carry, is not
/// said to have a column.
#[test]
fn data_inside_attributes_is_said_to_be_the_arrivals_own_field() {
    let found = failures(json!([
        {"at": 0, "playerId": "a", "mmr": 1500,
         "attributes": {"data": {"k": 1}, "latencies": {"eu-west": 3}, "level": null}}
    ]));
    let fields: Vec<&str> = found.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        fields,
        [
            "arrivals[0].attributes.data",
            "arrivals[0].attributes.latencies",
            "arrivals[0].attributes.level",
        ],
        "{found:?}"
    );
    assert_eq!(
        found[0].2,
        "data is a field of the arrival itself, not one of its attributes \
         (an arrivals CSV carries no data)"
    );
    assert!(
        found[1]
            .2
            .starts_with("latencies is a field of the arrival itself"),
        "{found:?}"
    );
    let err = parse_arrivals_csv(
        "at,playerId,mmr,attributes\n0,a,1500,\"{\"\"data\"\":{\"\"k\"\":1}}\"\n",
        None,
    )
    .unwrap_err();
    assert_eq!(err.0[0].field, "arrivalsCsv[0].attributes.data");
    assert_eq!(err.0[0].message, found[0].2);
}

#[test]
fn an_empty_csv_column_name_is_said_to_be_one() {
    for header in ["at,playerId,mmr,", "at,,playerId"] {
        let err = parse_arrivals_csv(&format!("{header}\n0,a,1500\n"), None).unwrap_err();
        assert_eq!(err.0[0].field, "arrivalsCsv", "{header}");
        assert!(
            err.0[0].message.starts_with("an empty column name"),
            "{header}: {}",
            err.0[0].message
        );
    }
    let err = parse_arrivals_csv("at,playerId,mmr,\n0,a,1500,\n", None).unwrap_err();
    assert!(err.0[0].message.contains("trailing comma"), "{err:?}");
}

/// An arrivals CSV's `attributes` cell refuses a value of the wrong type in
/// the words an inline arrival's (and a ticket's) are refused in: one that
/// is no attribute value at all (`null`, an object, a list entry not a
/// string) as the cell is read, the others with the rules.
#[test]
fn a_csv_attribute_of_the_wrong_type_is_worded_as_an_inline_one() {
    let read = [
        (json!({"level": null}), "level"),
        (json!({"build": {"v": 1}}), "build"),
        (json!({"maps": ["dust", 1]}), "maps[1]"),
    ];
    let ruled = [
        (json!({"build": 14}), "build"),
        (json!({"level": "10"}), "level"),
    ];
    for cells in [&read[..], &ruled[..]] {
        csv_and_inline_agree(cells);
    }
}

/// Each of `cells` (an `attributes` value and the path of its failure) as
/// a CSV row and as an inline arrival: the same failure, by row.
fn csv_and_inline_agree(cells: &[(Value, &str)]) {
    let mut text = "at,playerId,mmr,attributes\n".to_owned();
    for (i, (cell, _)) in cells.iter().enumerate() {
        let quoted = cell.to_string().replace('"', "\"\"");
        text.push_str(&format!("0,p{i},1500,\"{quoted}\"\n"));
    }
    let mut scenario = Scenario::parse(&body(json!([]))).unwrap();
    let csv: Vec<(String, String)> = scenario
        .add_arrivals_csv(&text, "arrivalsCsv")
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| (e.field, e.message))
        .collect();
    let inline: Vec<(String, String)> = cells
        .iter()
        .enumerate()
        .map(|(i, (cell, path))| {
            let found = failures(json!([
                {"at": 0, "playerId": "a", "mmr": 1500, "attributes": cell}
            ]));
            assert_eq!(found.len(), 1, "{found:?}");
            (
                format!("arrivalsCsv[{i}].attributes.{path}"),
                found[0].2.clone(),
            )
        })
        .collect();
    assert_eq!(csv, inline);
}
