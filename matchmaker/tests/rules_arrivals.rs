//! A scenario's arrivals are checked as tickets are (docs/simulate.md,
//! docs/rules.md): the same values refused, every failure listed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::simulate::Scenario;
use serde_json::{json, Value};

fn scenario(arrivals: Value) -> String {
    json!({
        "gameMode": {
            "name": "vote", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                          "baseTolerance": 5, "expansionMultiplier": 2},
            "attributes": {
                "build": {"type": "string", "values": ["1.4", "1.5"]},
                "maps": {"type": "stringSet", "values": ["dust", "inferno", "nuke"]},
                "blocked": {"type": "playerSet", "default": []}
            },
            "rules": [
                {"name": "same-build", "type": "equal", "attribute": "build"},
                {"name": "map", "type": "intersect", "attribute": "maps"},
                {"name": "no-blocked", "type": "avoid", "attribute": "blocked"}
            ]
        },
        "until": 10,
        "arrivals": arrivals
    })
    .to_string()
}

fn failures(arrivals: Value) -> Vec<(String, String)> {
    Scenario::parse(&scenario(arrivals))
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| (e.field, e.code.to_string()))
        .collect()
}

#[test]
fn an_arrival_is_refused_what_a_ticket_is_refused() {
    for (attributes, field) in [
        // No map at all: the intersect rule could never be met.
        (
            json!({"build": "1.4", "maps": []}),
            "arrivals[0].attributes.maps",
        ),
        (
            json!({"build": "1.4", "maps": ["dust", "dust"]}),
            "arrivals[0].attributes.maps[1]",
        ),
        (
            json!({"build": "1.4", "maps": ["dust"], "blocked": ["p1", "p1"]}),
            "arrivals[0].attributes.blocked[1]",
        ),
        (
            json!({"build": "1.4", "maps": ["dust"], "blocked": [""]}),
            "arrivals[0].attributes.blocked[0]",
        ),
    ] {
        let found = failures(json!([{"at": 0, "playerId": "a", "mmr": 1500,
                                     "attributes": attributes}]));
        assert_eq!(found.len(), 1, "{attributes}: {found:?}");
        assert_eq!(found[0].0, field, "{attributes}");
    }
}

#[test]
fn every_failure_of_an_arrival_is_listed() {
    let found = failures(json!([
        {"at": 0, "playerId": "a", "mmr": 1500,
         "attributes": {"build": "1.3", "maps": ["dust", "mirage"], "foo": 1}},
        {"at": 1, "playerId": "b", "mmr": 1500, "attributes": {}}
    ]));
    let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        fields,
        [
            "arrivals[0].attributes.build",
            "arrivals[0].attributes.foo",
            "arrivals[0].attributes.maps[1]",
            "arrivals[1].attributes.build",
            "arrivals[1].attributes.maps"
        ],
        "{found:?}"
    );
    assert_eq!(found[3].1, "ATTRIBUTE_REQUIRED");
}

#[test]
fn an_arrivals_own_fields_are_named_as_the_scenario_writes_them() {
    // `mmr` is the arrival's own field, not one of its attributes.
    let found = failures(json!([{"at": 0, "playerId": "a",
                                 "attributes": {"build": "1.4", "maps": ["dust"]}}]));
    assert_eq!(
        found,
        [("arrivals[0].mmr".to_owned(), "MMR_REQUIRED".to_owned())]
    );
}

#[test]
fn good_arrivals_pass() {
    let text = scenario(json!([
        {"at": 0, "playerId": "a", "mmr": 1500,
         "attributes": {"build": "1.4", "maps": ["dust"], "blocked": ["b"]}},
        {"at": 0, "playerId": "c", "mmr": 1500, "attributes": {"build": "1.4", "maps": ["dust"]}}
    ]));
    assert!(Scenario::parse(&text).is_ok());
}

#[test]
fn an_arrivals_csv_names_only_known_columns_once() {
    use matchplane_matchmaker::simulate::parse_arrivals_csv;
    for (header, says) in [
        (
            "at,playerId,mmr,Attributes",
            "unknown column \"Attributes\"",
        ),
        ("at,playerId,mmr,foo", "unknown column \"foo\""),
        (
            "at,playerId,attributes,attributes",
            "column attributes is given twice",
        ),
    ] {
        let text = format!("{header}\n0,a,1500,\n");
        let err = parse_arrivals_csv(&text, None).unwrap_err();
        assert_eq!(err.0[0].field, "arrivalsCsv row 0", "{header}");
        assert!(
            err.0[0].message.starts_with(says),
            "{header}: {}",
            err.0[0].message
        );
    }
    let ok = parse_arrivals_csv(
        "at,playerId,mmr,pingMs,partyId,partyMembers,latencies,event,attributes\n0,a,1500,,,,,,\n",
        None,
    );
    assert_eq!(ok.unwrap().len(), 1);
}

/// "What would these rules cost?": the scenario's mode without them, the
/// compared mode with them, on arrivals carrying the attributes.
#[test]
fn arrivals_may_carry_attributes_only_the_compared_mode_declares() {
    use matchplane_matchmaker::simulate::compare;
    let mut body: Value = serde_json::from_str(&scenario(json!([
        {"at": 0, "playerId": "a", "mmr": 1500, "attributes": {"build": "1.4", "maps": ["dust"]}},
        {"at": 0, "playerId": "b", "mmr": 1500, "attributes": {"build": "1.5", "maps": ["dust"]}}
    ])))
    .unwrap();
    let with_rules = body["gameMode"].clone();
    let plain = body["gameMode"].as_object_mut().unwrap();
    plain.remove("attributes");
    plain.remove("rules");
    body["compare"] = with_rules;
    let parsed = Scenario::parse(&body.to_string()).unwrap();
    let both = compare(&parsed, parsed.compare.as_ref().unwrap());
    assert_eq!(both.a.stats.matches, 1, "the builds meet without the rules");
    assert_eq!(both.b.stats.matches, 0, "same-build keeps them apart");

    // Their values are still checked, against the mode that declares them.
    body["arrivals"][0]["attributes"]["build"] = json!("1.3");
    let err = Scenario::parse(&body.to_string()).unwrap_err();
    assert_eq!(
        err.0[0].field, "arrivals[0].attributes.build",
        "{:?}",
        err.0
    );
    // Without a compared mode, an attribute the mode does not declare is unknown.
    body.as_object_mut().unwrap().remove("compare");
    let err = Scenario::parse(&body.to_string()).unwrap_err();
    assert_eq!(
        err.0[0].field, "arrivals[0].attributes.build",
        "{:?}",
        err.0
    );
    assert!(err.0[0].message.starts_with("unknown field"), "{:?}", err.0);
}
