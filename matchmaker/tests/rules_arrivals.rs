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
        assert_eq!(err.0[0].field, "arrivalsCsv", "{header}");
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
    assert!(
        err.0[0].message.starts_with("unknown attribute"),
        "{:?}",
        err.0
    );
}

/// The scenario of [`scenario`] with `csv` as its arrivals CSV text: its
/// failures as (field, message).
fn csv_failures(csv: &str) -> Vec<(String, String)> {
    let mut parsed = Scenario::parse(&scenario(json!([]))).unwrap();
    parsed
        .add_arrivals_csv(csv, "arrivalsCsv")
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| (e.field, e.message))
        .collect()
}

/// An `attributes` cell is read as the API reads a body: a key given twice
/// or a NUL character is refused and named, never kept silently.
#[test]
fn a_csv_attributes_cell_refuses_a_key_twice_and_a_nul() {
    let failed = csv_failures(
        "at,playerId,mmr,attributes\n\
         0,a,1500,\"{\"\"build\"\":\"\"1.4\"\",\"\"build\"\":\"\"1.5\"\",\"\"maps\"\":[\"\"dust\"\"]}\"\n\
         0,b,1500,\"{\"\"build\"\":\"\"1.4\"\",\"\"maps\"\":[\"\"du\\u0000st\"\"]}\"\n",
    );
    assert_eq!(
        failed,
        [
            (
                "arrivalsCsv[0].attributes.build".to_owned(),
                "this field is given twice".to_owned()
            ),
            (
                "arrivalsCsv[1].attributes.maps[0]".to_owned(),
                "text must not contain a NUL character (\\u0000)".to_owned()
            ),
        ]
    );
}

/// A wrongly typed cell is refused as an inline arrival's attributes are,
/// by the attribute's path, every bad row at once; a row's rule failures
/// name it by the same index (cancel rows counted).
#[test]
fn csv_attributes_are_refused_by_path_on_every_row() {
    let failed = csv_failures(
        "at,playerId,mmr,attributes\n\
         0,a,1500,\"{\"\"build\"\":\"\"1.4\"\",\"\"maps\"\":[1]}\"\n\
         0,b,1500,[1]\n\
         0,c,1500,null\n\
         0,d,1500,\"{\"\"build\"\":{},\"\"maps\"\":[\"\"dust\"\"]}\"\n",
    );
    let expected = [
        // In a ticket's words for the attribute's declaration.
        ("arrivalsCsv[0].attributes.maps[0]", "must be a string"),
        (
            "arrivalsCsv[1].attributes",
            "expected an object, got an array",
        ),
        ("arrivalsCsv[2].attributes", "expected an object, got null"),
        ("arrivalsCsv[3].attributes.build", "must be a string"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(f, m)| ((*f).to_owned(), (*m).to_owned()))
        .collect();
    assert_eq!(failed, expected);
    let failed = csv_failures(
        "at,playerId,mmr,event,attributes\n\
         0,a,1500,,\"{\"\"build\"\":\"\"1.4\"\",\"\"maps\"\":[\"\"dust\"\"]}\"\n\
         1,a,,cancel,\n\
         2,b,high,,\n",
    );
    assert_eq!(failed[0].0, "arrivalsCsv[2].mmr");
    let failed = csv_failures(
        "at,playerId,mmr,event,attributes\n\
         1,a,,cancel,\n\
         2,b,1500,,\"{\"\"build\"\":\"\"1.9\"\",\"\"maps\"\":[\"\"dust\"\"]}\"\n",
    );
    assert_eq!(failed[0].0, "arrivalsCsv[1].attributes.build");
    // A blank line counts as a row, for reading and rule errors alike: row
    // `i` is line `i + 2` of the text.
    let failed = csv_failures(
        "at,playerId,mmr,event,attributes\n\
         1,a,,cancel,\n\
         \n\
         2,b,1500,,\"{\"\"build\"\":\"\"1.9\"\",\"\"maps\"\":[\"\"dust\"\"]}\"\n\
         3,c,high,,\n",
    );
    let fields: Vec<&str> = failed.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(fields, ["arrivalsCsv[3].mmr"]);
    let failed = csv_failures(
        "at,playerId,mmr,event,attributes\n\
         1,a,,cancel,\n\
         \n\
         2,b,1500,,\"{\"\"build\"\":\"\"1.9\"\",\"\"maps\"\":[\"\"dust\"\"]}\"\n",
    );
    assert_eq!(failed[0].0, "arrivalsCsv[2].attributes.build");
}

/// A recording's attribute the mode no longer declares is ignored, as a
/// live search's is (docs/rules.md); inline arrivals, written by hand,
/// are refused it. `mmr` inside `attributes` is refused without listing
/// `mmr` as expected.
#[test]
fn csv_arrivals_ignore_attributes_no_longer_declared() {
    let mut parsed = Scenario::parse(&scenario(json!([]))).unwrap();
    parsed
        .add_arrivals_csv(
            "at,playerId,mmr,attributes\n\
             0,a,1500,\"{\"\"build\"\":\"\"1.4\"\",\"\"maps\"\":[\"\"dust\"\"],\"\"platform\"\":\"\"pc\"\"}\"\n",
            "arrivalsCsv",
        )
        .unwrap();
    let failed = Scenario::parse(&scenario(json!([
        {"at": 0, "playerId": "a", "mmr": 1500,
         "attributes": {"build": "1.4", "maps": ["dust"], "platform": "pc", "mmr": 3}}
    ])))
    .unwrap_err()
    .0;
    let mmr = failed
        .iter()
        .find(|e| e.field == "arrivals[0].attributes.mmr")
        .unwrap();
    assert!(
        !mmr.message.contains("expected one of mmr"),
        "{}",
        mmr.message
    );
    assert!(
        mmr.message.contains("field of the arrival itself"),
        "{}",
        mmr.message
    );
    let platform = failed
        .iter()
        .find(|e| e.field == "arrivals[0].attributes.platform")
        .unwrap();
    assert_eq!(
        platform.message,
        "unknown attribute; the attributes declared are blocked, build, maps"
    );
    let csv_mmr = csv_failures(
        "at,playerId,mmr,attributes\n\
         0,a,1500,\"{\"\"build\"\":\"\"1.4\"\",\"\"maps\"\":[\"\"dust\"\"],\"\"mmr\"\":3}\"\n",
    );
    assert_eq!(csv_mmr[0].0, "arrivalsCsv[0].attributes.mmr");
}

/// A cancel row is read for its time and player alone: what else it holds
/// (a recording leaves those cells empty) is not judged.
#[test]
fn a_cancel_row_reads_only_its_time_and_player() {
    use matchplane_matchmaker::simulate::{parse_arrivals_csv, Event};
    let text = "at,playerId,mmr,event,attributes\n0,ben,1500,start,\n0.5,ben,abc,cancel,\"{\"\"bad\"\":\"\n";
    let events = parse_arrivals_csv(text, None).unwrap();
    assert!(
        matches!(&events[1], Event::Cancel { at, player_id } if *at == 0.5 && player_id == "ben")
    );
    // A start row with the same cells is refused on both.
    let text = "at,playerId,mmr,event,attributes\n0.5,ben,abc,start,\"{\"\"bad\"\":\"\n";
    let err = parse_arrivals_csv(text, None).unwrap_err();
    let fields: Vec<&str> = err.0.iter().map(|e| e.field.as_str()).collect();
    assert!(fields.contains(&"arrivalsCsv[0].mmr"), "{fields:?}");
    assert!(
        fields
            .iter()
            .any(|f| f.starts_with("arrivalsCsv[0].attributes")),
        "{fields:?}"
    );
}

/// A plain `[1,1]` scenario with `arrivals`, and `arrivalsCsv` named when
/// `csv` is given.
fn plain(arrivals: Value, csv: bool) -> Result<Scenario, Vec<(String, String, String)>> {
    let mut body = json!({
        "gameMode": {
            "name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000,
                          "baseTolerance": 5, "expansionMultiplier": 2}
        },
        "until": 10,
        "arrivals": arrivals
    });
    if csv {
        body["arrivalsCsv"] = json!("arrivals.csv");
    }
    Scenario::parse(&body.to_string()).map_err(|e| {
        e.0.into_iter()
            .map(|f| (f.field, f.code.to_string(), f.message))
            .collect()
    })
}

/// A cancel naming a player no arrival has (a typo), or one who arrives
/// only later, would do nothing: it is refused and named, every one at once
/// (docs/simulate.md, "Inline events").
#[test]
fn a_cancel_of_a_player_who_has_not_arrived_is_refused() {
    let failed = plain(
        json!([
            {"at": 0, "playerId": "ana", "mmr": 1500},
            {"at": 1, "cancel": "nobody"},
            {"at": 1, "cancel": "ben"},
            {"at": 2, "playerId": "ben", "mmr": 1500},
            {"at": 3, "cancel": "ana"},
            {"at": 3, "cancel": "ben"}
        ]),
        false,
    )
    .unwrap_err();
    assert_eq!(
        failed,
        vec![
            (
                "arrivals[1].cancel".to_string(),
                "VALIDATION_ERROR".to_string(),
                "no arrival of \"nobody\" comes before this cancel: it names a player of the scenario's arrivals"
                    .to_string()
            ),
            (
                "arrivals[2].cancel".to_string(),
                "VALIDATION_ERROR".to_string(),
                "no arrival of \"ben\" comes before this cancel: it names a player of the scenario's arrivals"
                    .to_string()
            ),
        ]
    );
    // Listed with the arrivals' own failures.
    let failed = plain(
        json!([{"at": 0, "playerId": "ana"}, {"at": 1, "cancel": "nobody"}]),
        false,
    )
    .unwrap_err();
    let fields: Vec<&str> = failed.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(fields, ["arrivals[0].mmr", "arrivals[1].cancel"]);
}

/// With an `arrivalsCsv`, the inline cancels and leaves are checked once
/// its arrivals are added: a cancel of a player of the file runs, a typo is
/// refused then. The file's own cancel rows are a recording's, whose
/// window may start after a search it ends: never refused.
#[test]
fn inline_cancels_see_the_csv_arrivals_and_csv_cancels_are_not_checked() {
    let inline = json!([
        {"at": 0, "playerId": "ana", "mmr": 1500},
        {"at": 5, "cancel": "kim"}
    ]);
    let mut scenario = plain(inline.clone(), true).unwrap();
    scenario
        .add_arrivals_csv("at,playerId,mmr\n1,kim,1500\n", "arrivalsCsv")
        .unwrap();
    let mut scenario = plain(inline, true).unwrap();
    let failed = scenario
        .add_arrivals_csv("at,playerId,mmr\n6,kim,1500\n", "arrivalsCsv")
        .unwrap_err()
        .0;
    assert_eq!(
        (failed[0].field.as_str(), failed[0].message.as_str()),
        (
            "arrivals",
            "the cancel at 5 names \"kim\", with no arrival before it: it names a player of the scenario's arrivals"
        )
    );
    assert_eq!(failed.len(), 1);
    let mut recorded = plain(json!([]), true).unwrap();
    recorded
        .add_arrivals_csv(
            "at,playerId,mmr,event\n0.5,started-before-the-window,,cancel\n1,kim,1500,start\n",
            "arrivalsCsv",
        )
        .unwrap();
    let mut recorded = plain(json!([]), false).unwrap();
    recorded
        .add_arrivals_csv("at,playerId,event\n0.5,gone,cancel\n", "arrivalsCsvText")
        .unwrap();
}

/// The `partyMembers` column's members are trimmed as the `latencies`
/// column's entries are, and a party failure of a CSV row names the CSV
/// column (`partyMembers`, `partyId`), not the inline arrival's path
/// (docs/simulate.md, "`arrivalsCsv`").
#[test]
fn csv_party_members_are_trimmed_and_failures_name_the_column() {
    let duos = |allow: bool| {
        Scenario::parse(
            &json!({
                "gameMode": {
                    "name": "duos", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
                    "algorithm": {"type": "fifo"},
                    "parties": {"allowParties": allow, "maxSize": 2, "keepTogether": true}
                },
                "until": 10
            })
            .to_string(),
        )
        .unwrap()
    };
    let header = "at,playerId,mmr,pingMs,partyId,partyMembers\n";
    duos(true)
        .add_arrivals_csv(
            &format!("{header}0,cat,,,duo,cat| dan\n0,dan,,,duo,cat| dan\n"),
            "arrivalsCsv",
        )
        .unwrap();
    let long = "p".repeat(129);
    let failed: Vec<(String, String)> = duos(true)
        .add_arrivals_csv(
            &format!("{header}0,eve,,,trio,eve|fay|gus\n0,fay,,,duo,eve|gus\n0,gus,,,{long},gus\n"),
            "arrivalsCsv",
        )
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| (e.field, e.message))
        .collect();
    let pair = |field: &str, message: &str| (field.to_owned(), message.to_owned());
    assert_eq!(
        failed,
        [
            // The trio is the config's ruling, not a malformed row: it ends
            // at the first cycle (docs/simulate.md, "`arrivalsCsv`").
            pair(
                "arrivalsCsv[1].partyMembers",
                "playerId must be one of partyMembers"
            ),
            pair(
                "arrivalsCsv[2].partyId",
                "partyId must be 1 to 128 characters"
            ),
        ]
    );
    // A mode without parties ends a recorded duo rather than refuse it.
    duos(false)
        .add_arrivals_csv(&format!("{header}0,cat,,,duo,cat|dan\n"), "arrivalsCsv")
        .unwrap();
}

/// An arrival's block list naming its own player or a member of its own
/// party is refused as a ticket's is, inline and in a CSV, and in the
/// attributes only a compared mode declares.
#[test]
fn an_arrivals_block_list_naming_itself_or_its_party_is_refused() {
    let with_parties = |arrivals: Value| {
        let mut body: Value = serde_json::from_str(&scenario(arrivals)).unwrap();
        body["gameMode"]["matchShape"] = json!([2, 2]);
        body["gameMode"]["parties"] =
            json!({"allowParties": true, "maxSize": 2, "keepTogether": true});
        body
    };
    let duo = json!({"id": "pB", "members": ["b0", "b1"]});
    let body = with_parties(json!([
        {"at": 0, "playerId": "b0", "mmr": 1500, "party": duo,
         "attributes": {"build": "1.4", "maps": ["dust"], "blocked": ["z", "b1"]}},
        {"at": 0, "playerId": "b1", "mmr": 1500, "party": duo,
         "attributes": {"build": "1.4", "maps": ["dust"]}},
        {"at": 0, "playerId": "selfie", "mmr": 1500,
         "attributes": {"build": "1.4", "maps": ["dust"], "blocked": ["selfie"]}}
    ]));
    let failed: Vec<(String, String)> = Scenario::parse(&body.to_string())
        .unwrap_err()
        .0
        .into_iter()
        .map(|e| (e.field, e.message))
        .collect();
    let fields: Vec<&str> = failed.iter().map(|f| f.0.as_str()).collect();
    assert_eq!(
        fields,
        [
            "arrivals[0].attributes.blocked[1]",
            "arrivals[2].attributes.blocked[0]"
        ],
        "{failed:?}"
    );
    assert!(failed[0].1.contains("own party"), "{failed:?}");
    assert!(failed[1].1.contains("own player"), "{failed:?}");

    // The same rows from a CSV.
    let mut parsed = Scenario::parse(&with_parties(json!([])).to_string()).unwrap();
    let csv = "at,playerId,mmr,partyId,partyMembers,attributes\n\
               0,b0,1500,pB,b0|b1,\"{\"\"build\"\":\"\"1.4\"\",\"\"maps\"\":[\"\"dust\"\"],\"\"blocked\"\":[\"\"b1\"\"]}\"\n\
               0,b1,1500,pB,b0|b1,\"{\"\"build\"\":\"\"1.4\"\",\"\"maps\"\":[\"\"dust\"\"]}\"\n";
    let failed = parsed.add_arrivals_csv(csv, "arrivalsCsv").unwrap_err().0;
    let fields: Vec<&str> = failed.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(
        fields,
        ["arrivalsCsv[0].attributes.blocked[0]"],
        "{failed:?}"
    );

    // An attribute only the compared mode declares is checked there.
    let mut body = with_parties(json!([
        {"at": 0, "playerId": "selfie", "mmr": 1500,
         "attributes": {"build": "1.4", "maps": ["dust"], "blocked": ["selfie"]}}
    ]));
    body["compare"] = body["gameMode"].clone();
    let own = body["gameMode"]["attributes"].as_object_mut().unwrap();
    own.remove("blocked");
    body["gameMode"]["rules"].as_array_mut().unwrap().pop();
    let failed = Scenario::parse(&body.to_string()).unwrap_err().0;
    let fields: Vec<&str> = failed.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["arrivals[0].attributes.blocked[0]"], "{failed:?}");
}
