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

/// A body with an internally tagged member, which serde reads from a
/// buffered copy: its fields' errors come worded by serde's visitors.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
#[allow(dead_code)]
enum Tagged {
    Kind {
        count: u32,
        level: i64,
        ratio: f64,
        name: String,
        on: bool,
        list: Vec<u8>,
        inner: Inner,
    },
}

fn first_error<T: DeserializeOwned + std::fmt::Debug>(value: Value) -> (String, String) {
    let found = deserialize_all::<T>(value).unwrap_err();
    (found[0].field.clone(), found[0].message.clone())
}

#[test]
fn serde_descriptions_are_the_ones_worded() {
    let body = json!({"type": "kind", "count": 1, "level": -1, "ratio": 0.5,
                      "name": "x", "on": true, "list": [1], "inner": {}});
    deserialize_all::<Tagged>(body.clone()).unwrap();
    for (field, wrong, message) in [
        (
            "count",
            json!("1"),
            "expected a whole number from 0 to 4294967295, got the string \"1\"",
        ),
        (
            "count",
            json!(-1),
            "expected a whole number from 0 to 4294967295, got the number -1",
        ),
        ("level", json!(true), "expected a whole number, got true"),
        ("ratio", json!([]), "expected a number, got an array"),
        ("name", json!(5), "expected a string, got the number 5"),
        ("on", json!(null), "expected true or false, got null"),
        ("list", json!({}), "expected an array, got an object"),
        (
            "inner",
            json!("x"),
            "expected an object, got the string \"x\"",
        ),
    ] {
        let mut wrong_body = body.clone();
        wrong_body[field] = wrong;
        // serde reads the tagged object from its copy, where paths are
        // not tracked: the message is what is kept.
        assert_eq!(first_error::<Tagged>(wrong_body).1, message, "{field}");
    }
}

#[test]
fn the_deserializer_words_what_each_field_asked_for() {
    for (body, field, message) in [
        (
            json!({"gameMode": "d", "playerId": "p", "count": "x", "teams": []}),
            "count",
            "expected a whole number from 0 to 4294967295, got the string \"x\"",
        ),
        (
            json!({"gameMode": "d", "playerId": "p", "count": 5000000000u64, "teams": []}),
            "count",
            "expected a whole number from 0 to 4294967295, got the number 5000000000",
        ),
        (
            json!({"gameMode": "d", "playerId": "p", "count": 1, "teams": {}}),
            "teams",
            "expected an array, got an object",
        ),
        (
            json!({"gameMode": "d", "playerId": "p", "count": 1, "teams": [[1]]}),
            "teams[0]",
            "expected an object, got an array",
        ),
        (
            json!({"gameMode": "d", "playerId": "p", "count": 1, "teams": [], "attributes": {"mmr": "x"}}),
            "attributes.mmr",
            "expected a number, got the string \"x\"",
        ),
    ] {
        assert_eq!(
            first_error::<Outer>(body),
            (field.to_owned(), message.to_owned())
        );
    }
    let found = first_error::<Outer>(json!({"gameMode": "d", "playerId": "p", "count": 1,
                                             "teams": [], "colour": 1}));
    assert_eq!(found.0, "colour");
    assert_eq!(
        found.1,
        "unknown field; expected one of `gameMode`, `playerId`, `attributes`, `count`, `teams`"
    );
}

#[test]
fn a_raw_json_field_takes_the_value_text() {
    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct WithData {
        data: Box<serde_json::value::RawValue>,
        n: u8,
    }
    let parsed = deserialize_all::<WithData>(json!({"data": {"a": [1, "x"]}, "n": 2})).unwrap();
    assert_eq!(parsed.data.get(), r#"{"a":[1,"x"]}"#);
    let found = first_error::<WithData>(json!({"data": 1, "n": 300}));
    assert_eq!(
        found,
        (
            "n".to_owned(),
            "expected a whole number from 0 to 255, got the number 300".to_owned()
        )
    );
}

#[test]
fn an_enumeration_names_its_values() {
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    enum Colour {
        Red,
        Dark,
        Light,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Paint {
        colour: Colour,
    }
    assert_eq!(
        first_error::<Paint>(json!({"colour": "blue"})),
        (
            "colour".to_owned(),
            "unknown variant `blue`, expected one of `red`, `dark`, `light`".to_owned()
        )
    );
    assert_eq!(
        first_error::<Paint>(json!({"colour": 1})),
        (
            "colour".to_owned(),
            "expected one of the allowed values, got the number 1".to_owned()
        )
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

/// A game mode's tagged objects (`algorithm`, each declared attribute,
/// each rule) as the API reads them.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[allow(dead_code)]
struct Mode {
    #[serde(default)]
    name: String,
    algorithm: Option<matchplane_matchmaker::Algorithm>,
    #[serde(default)]
    attributes: matchplane_matchmaker::rules::Declarations,
    #[serde(default)]
    rules: Vec<matchplane_matchmaker::rules::Rule>,
}

fn mode_errors(body: Value) -> Vec<(String, String)> {
    deserialize_all::<Mode>(body)
        .unwrap_err()
        .into_iter()
        .map(|e| (e.field, e.message))
        .collect()
}

#[test]
fn an_error_inside_a_tagged_object_is_named_at_its_own_path() {
    for (body, field, message) in [
        (
            json!({"algorithm": {"type": "ping"}}),
            "algorithm.maxDelta",
            "this field is required",
        ),
        (
            json!({"rules": [{"type": "equal", "name": "b", "attribute": "build",
                              "relax": [{"afterSeconds": 30}]}]}),
            "rules[0].relax[0].off",
            "this field is required",
        ),
        (
            json!({"attributes": {"level": {"type": "number", "party": "median"}}}),
            "attributes.level.party",
            "unknown variant `median`, expected one of `mean`, `min`, `max`",
        ),
        (
            json!({"attributes": {"s": {"type": "stringSet", "default": "dust"}}}),
            "attributes.s.default",
            "expected an array, got the string \"dust\"",
        ),
        (
            json!({"algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": [1],
                                 "baseTolerance": 5, "expansionMultiplier": 2}}),
            "algorithm.maxMmr",
            "expected a number, got an array",
        ),
        (
            json!({"rules": [{"name": "b", "attribute": "build"}]}),
            "rules[0].type",
            "this field is required",
        ),
    ] {
        assert_eq!(
            mode_errors(body.clone()),
            [(field.to_owned(), message.to_owned())],
            "{body}"
        );
    }
}

#[test]
fn errors_after_an_unknown_name_are_listed_too() {
    // No plain value stands in for `party`, so it is left out to go on.
    let found = mode_errors(json!({
        "name": 5,
        "attributes": {"level": {"type": "number", "party": "median"},
                       "s": {"type": "stringSet", "default": "dust"}},
        "rules": [{"type": "equal", "name": "b", "attribute": "build",
                   "relax": [{"afterSeconds": 30}]}]}));
    let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        fields,
        [
            "attributes.level.party",
            "attributes.s.default",
            "name",
            "rules[0].relax[0].off"
        ],
        "{found:?}"
    );
}

#[test]
fn errors_after_a_type_that_names_no_type_are_listed_too() {
    // Nothing stands in for `type`; the attribute holding it is left out.
    let found = mode_errors(json!({
        "attributes": {"build": {"type": "bool"}, "level": {"type": "number", "min": "1"}},
        "rules": [{"type": "equal", "name": "b", "attribute": "build",
                   "relax": [{"afterSeconds": "x", "off": true}]}]}));
    let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        fields,
        [
            "attributes.build.type",
            "attributes.level.min",
            "rules[0].relax[0].afterSeconds"
        ],
        "{found:?}"
    );
}

#[test]
fn every_error_inside_a_tagged_object_is_listed() {
    let found = mode_errors(
        json!({"algorithm": {"type": "mmr", "minMmr": "low", "maxMmr": true,
                                                  "baseTolerance": 5, "expansionMultiplier": 2,
                                                  "window": 3}}),
    );
    let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        fields,
        ["algorithm.maxMmr", "algorithm.minMmr", "algorithm.window"],
        "{found:?}"
    );
}

#[test]
fn a_tag_names_its_variant_by_name_never_by_number() {
    // serde's reading of a value would take `0` as the first variant.
    for tag in [json!(0), json!(1), json!(1.0), json!(true), json!("same")] {
        let found =
            mode_errors(json!({"rules": [{"type": tag, "name": "b", "attribute": "build"}]}));
        assert_eq!(found.len(), 1, "{tag}: {found:?}");
        assert_eq!(found[0].0, "rules[0].type", "{tag}");
        let says = if tag.is_string() {
            "unknown variant `same`, expected one of `equal`, `intersect`, `distance`, `avoid`"
                .to_owned()
        } else {
            format!(
                "expected one of the allowed values, got {}",
                shape::Got::of(&tag)
            )
        };
        assert_eq!(found[0].1, says, "{tag}");
    }
    let ok = deserialize_all::<Mode>(json!({"algorithm": {"type": "ping", "maxDelta": 5}}));
    assert!(ok.is_ok(), "{ok:?}");
}

#[test]
fn a_set_entry_of_the_wrong_type_is_named_at_its_index() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Request {
        attributes: matchplane_matchmaker::rules::DeclaredValues,
    }
    let found =
        deserialize_all::<Request>(json!({"attributes": {"blocked": ["a", 1]}})).unwrap_err();
    assert_eq!(found[0].field, "attributes.blocked[1]", "{found:?}");
    assert_eq!(found[0].message, "expected a string, got the number 1");
    let found = deserialize_all::<Request>(json!({"attributes": {"level": true}})).unwrap_err();
    assert_eq!(found[0].field, "attributes.level", "{found:?}");
    let ok = deserialize_all::<Request>(
        json!({"attributes": {"level": 3, "build": "1.4", "maps": ["dust"]}}),
    )
    .unwrap();
    use matchplane_matchmaker::rules::AttributeValue;
    assert_eq!(
        ok.attributes.get("level"),
        Some(&AttributeValue::Number(3.0))
    );
    assert_eq!(
        ok.attributes.get("maps"),
        Some(&AttributeValue::Set(vec!["dust".into()]))
    );
}
