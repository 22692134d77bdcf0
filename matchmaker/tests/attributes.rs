//! A ticket's attributes (docs/api-tour.md, "3. Tickets"): one parse
//! against the mode that returns the value or every failure at once, and a
//! property test that it never panics and names each bad field.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::attributes::MAX_DATA_BYTES;
use matchplane_matchmaker::rules::Owner;
use matchplane_matchmaker::{Attributes, Code, GameModeConfig, RawAttributes, RawJson, Regions};
use proptest::prelude::*;
use serde_json::json;

/// The owner of a solo ticket.
const SOLO: Owner<'static> = Owner {
    player_id: "p1",
    party: None,
};

fn raw(value: serde_json::Value) -> RawAttributes {
    serde_json::from_str(&value.to_string()).unwrap()
}

fn regional(mut config: GameModeConfig, names: Option<&[&str]>) -> GameModeConfig {
    config.regions = Some(Regions {
        names: names.map(|n| n.iter().map(|s| (*s).to_owned()).collect()),
        max_latency_ms: 100.0,
        expansion: Vec::new(),
    });
    config
}

fn fields(errors: &[matchplane_matchmaker::FieldError]) -> Vec<(&str, Code)> {
    errors.iter().map(|e| (e.field.as_str(), e.code)).collect()
}

#[test]
fn good_attributes_parse_whole_and_serialise_as_sent() {
    let config = regional(mmr_mode(&[1, 1], 5.0, 2.0), None);
    let body =
        r#"{"mmr":1500.5,"latencies":{"eu-west":31,"us-east":110.5},"data":{"z":1,"a":[1.50]}}"#;
    let parsed = Attributes::parse(serde_json::from_str(body).unwrap(), &config, SOLO)
        .expect("valid attributes");
    assert_eq!(parsed.mmr, Some(1500.5));
    let latencies = parsed.latencies.as_ref().unwrap();
    assert_eq!(latencies.get("us-east"), Some(&110.5));
    assert_eq!(parsed.data.as_ref().unwrap().get(), r#"{"z":1,"a":[1.50]}"#);
    let text = serde_json::to_string(&parsed).unwrap();
    assert_eq!(
        text,
        r#"{"mmr":1500.5,"latencies":{"eu-west":31.0,"us-east":110.5},"data":{"z":1,"a":[1.50]}}"#
    );
    assert_eq!(serde_json::from_str::<Attributes>(&text).unwrap(), parsed);
    assert_eq!(serde_json::to_string(&Attributes::default()).unwrap(), "{}");
}

#[test]
fn every_failure_is_reported_at_once() {
    let config = regional(mmr_mode(&[1, 1], 5.0, 2.0), Some(&["eu-west"]));
    let errors = Attributes::parse(
        raw(json!({"mmr": 9000, "latencies": {"eu-west": 6000, "us-east": 3}, "data": [1]})),
        &config,
        SOLO,
    )
    .unwrap_err();
    assert_eq!(
        fields(&errors),
        [
            ("attributes.mmr", Code::MmrOutOfRange),
            ("attributes.latencies.eu-west", Code::ValidationError),
            ("attributes.latencies.us-east", Code::ValidationError),
            ("attributes.data", Code::ValidationError),
        ]
    );
    let errors = Attributes::parse(RawAttributes::default(), &config, SOLO).unwrap_err();
    assert_eq!(
        fields(&errors),
        [
            ("attributes.mmr", Code::MmrRequired),
            ("attributes.latencies", Code::LatenciesRequired),
        ]
    );
}

#[test]
fn unknown_keys_are_refused_naming_them() {
    let config = mmr_mode(&[1, 1], 5.0, 2.0);
    let raw = serde_json::from_str::<RawAttributes>(r#"{"mmr":1500,"MMR":1}"#).unwrap();
    let errors = Attributes::parse(raw, &config, SOLO).unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "attributes.MMR");
    assert!(errors[0].message.contains("unknown field"), "{errors:?}");
}

#[test]
fn the_mode_rules_over_parsed_attributes_are_the_parses() {
    let config = regional(mmr_mode(&[1, 1], 5.0, 2.0), None);
    let attributes = Attributes {
        mmr: Some(1500.0),
        ..Attributes::default()
    };
    assert_eq!(
        attributes.check(&config).unwrap_err().code,
        Code::LatenciesRequired
    );
    let huge = Attributes {
        mmr: Some(1.7e308),
        ..Attributes::default()
    };
    assert_eq!(
        huge.check(&ping_mode(&[1, 1], 50.0)).unwrap_err().code,
        Code::ValidationError
    );
}

/// A piece of an attribute, and whether the parse must refuse it.
#[derive(Debug, Clone)]
struct Case {
    mmr: Option<f64>,
    latencies: Option<Vec<(String, serde_json::Value)>>,
    data: Option<String>,
    mmr_mode: bool,
    regions: bool,
}

fn latency_entry() -> impl Strategy<Value = (String, serde_json::Value)> {
    let name = prop_oneof!["[a-z][a-z0-9-]{0,8}", "[A-Z_ ]{1,3}", Just(String::new())];
    let ms = prop_oneof![
        (-100.0..6000.0f64).prop_map(|v| json!(v)),
        Just(json!("fast")),
        Just(json!(null)),
        Just(json!([1])),
    ];
    (name, ms)
}

fn data_text() -> impl Strategy<Value = String> {
    prop_oneof![
        (0usize..5000).prop_map(|n| format!(r#"{{"k":"{}"}}"#, "x".repeat(n))),
        Just("[1,2]".to_owned()),
        Just("\"text\"".to_owned()),
        Just("12".to_owned()),
        Just("{}".to_owned()),
    ]
}

fn case() -> impl Strategy<Value = Case> {
    (
        proptest::option::of(prop_oneof![
            -2e9..2e9f64,
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(1e300)
        ]),
        proptest::option::of(proptest::collection::vec(latency_entry(), 0..40)),
        proptest::option::of(data_text()),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(mmr, latencies, data, mmr_mode, regions)| Case {
            mmr,
            latencies,
            data,
            mmr_mode,
            regions,
        })
}

proptest! {
    /// Never a panic, and each bad field is named: the parse's errors are
    /// exactly the fields an independent reading of the rules finds bad.
    #[test]
    fn parse_never_panics_and_names_every_bad_field(case in case()) {
        let mut config = if case.mmr_mode { mmr_mode(&[1, 1], 5.0, 2.0) } else { fifo_mode(&[1, 1]) };
        if case.regions {
            config = regional(config, Some(&["eu-west", "us-east", "a1"]));
        }
        let latencies = case.latencies.as_ref().map(|entries| {
            serde_json::Value::Object(entries.iter().cloned().collect())
        });
        let raw = RawAttributes {
            mmr: case.mmr,
            latencies: latencies.clone(),
            data: case.data.as_ref().map(|d| RawJson::from_text(d.clone()).unwrap()),
            declared: Default::default(),
        };
        let mut expected: Vec<String> = Vec::new();
        let mmr_bad = match case.mmr {
            Some(v) => !v.is_finite() || v.abs() > 1e9 || (case.mmr_mode && !(0.0..=3000.0).contains(&v)),
            None => case.mmr_mode,
        };
        if mmr_bad {
            expected.push("attributes.mmr".into());
        }
        match &latencies {
            None if case.regions => expected.push("attributes.latencies".into()),
            None => {}
            Some(serde_json::Value::Object(object)) => {
                if object.is_empty() || object.len() > 32 {
                    expected.push("attributes.latencies".into());
                }
                for (name, ms) in object {
                    let known = !case.regions || ["eu-west", "us-east", "a1"].contains(&name.as_str());
                    let well_formed = !name.is_empty()
                        && name.len() <= 32
                        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                        && !name.starts_with('-');
                    let in_range = ms.as_f64().is_some_and(|v| (0.0..=5000.0).contains(&v));
                    if !(well_formed && known && in_range) {
                        expected.push(format!("attributes.latencies.{name}"));
                    }
                }
            }
            Some(_) => unreachable!(),
        }
        if let Some(d) = &case.data {
            if !d.starts_with('{') || d.len() > MAX_DATA_BYTES {
                expected.push("attributes.data".into());
            }
        }
        match Attributes::parse(raw, &config, SOLO) {
            Ok(parsed) => {
                prop_assert!(expected.is_empty(), "accepted, expected {:?}", expected);
                prop_assert_eq!(parsed.mmr.map(f64::to_bits), case.mmr.map(f64::to_bits));
                prop_assert!(parsed.check(&config).is_ok());
            }
            Err(errors) => {
                let mut got: Vec<String> = errors.iter().map(|e| e.field.clone()).collect();
                got.sort();
                expected.sort();
                prop_assert_eq!(got, expected);
            }
        }
    }
}

/// A declared number sent as `-0.0` is 0: it is written back as `0.0`,
/// never `-0.0` (a match's `attributes` echoed it so).
#[test]
fn a_negative_zero_is_zero() {
    let mut config = mmr_mode(&[1, 1], 5.0, 2.0);
    config.attributes = serde_json::from_value(json!({"level": {"type": "number"}})).unwrap();
    let body = r#"{"mmr":1500,"level":-0.0}"#;
    let parsed = Attributes::parse(serde_json::from_str(body).unwrap(), &config, SOLO)
        .expect("valid attributes");
    let text = serde_json::to_string(&parsed).unwrap();
    assert!(text.contains(r#""level":0.0"#), "{text}");
    assert!(!text.contains("-0"), "{text}");
    let stored: matchplane_matchmaker::rules::AttributeValue =
        serde_json::from_str("-0.0").unwrap();
    assert_eq!(serde_json::to_string(&stored).unwrap(), "0.0");
}
