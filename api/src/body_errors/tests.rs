//! The shape errors of `body_errors`, listed and worded.

use super::*;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct Inner {
    mmr: Option<f64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct Outer {
    game_mode: String,
    player_id: String,
    #[serde(default)]
    attributes: Option<Inner>,
    count: u32,
    teams: Vec<Inner>,
}

fn fields(value: Value) -> Vec<(String, String)> {
    deserialize_all::<Outer>(value)
        .unwrap_err()
        .into_iter()
        .map(|e| (e.field, e.message))
        .collect()
}

#[test]
fn lists_every_error_with_its_field_and_no_rust_type() {
    let found = fields(json!({
        "gameMode": 5, "attributes": {"MMR": 1}, "count": -1,
        "teams": [{"mmr": 1}, {"mmr": "high"}], "extra": true
    }));
    let names: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        names,
        [
            "attributes.MMR",
            "count",
            "extra",
            "gameMode",
            "teams[1].mmr",
            "playerId"
        ],
        "{found:?}"
    );
    for (_, message) in &found {
        assert!(!looks_rusty(message), "{message}");
    }
    assert_eq!(found[5].1, "this field is required");
    assert_eq!(found[3].1, "expected a string, got the number 5");
}

#[test]
fn rewords_serde_messages() {
    assert_eq!(
        plain("invalid type: sequence, expected struct CreateTicket"),
        "expected an object, got an array"
    );
    assert_eq!(
        plain("invalid value: integer `-1`, expected u32"),
        "expected a whole number from 0 to 4294967295, got the number -1"
    );
    assert_eq!(
        plain("invalid type: unit value, expected internally tagged enum Algorithm"),
        "expected an object, got null"
    );
}

#[test]
fn a_whole_number_with_a_zero_fraction_is_an_integer() {
    let parsed = deserialize_all::<Outer>(json!({
        "gameMode": "duel", "playerId": "ana", "count": 824.0,
        "teams": [{"mmr": 1.0}]
    }))
    .unwrap();
    assert_eq!(parsed.count, 824);
    // Beside other errors it is still no error; a fraction is one.
    let found = fields(json!({
        "gameMode": 5, "playerId": "ana", "count": 824.0, "teams": []
    }));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "gameMode");
    let found = fields(json!({
        "gameMode": "duel", "playerId": "ana", "count": 824.5, "teams": []
    }));
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "count");
    let found = fields(json!({
        "gameMode": "duel", "playerId": "ana", "count": -1.0, "teams": []
    }));
    assert_eq!(found[0].0, "count", "{found:?}");
}
