//! Rules over a mode's declared attributes (docs/rules.md): declarations
//! and rules validated all at once, tickets parsed, and the cycle never
//! matching anyone outside their own current version of a rule.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
use common::*;
use matchplane_matchmaker::rules::AttributeValue;
use matchplane_matchmaker::rules::Owner;
use matchplane_matchmaker::{
    validate, Attributes, Code, GameModeConfig, RawAttributes, Tier, WaitingReason,
};
use serde_json::json;

/// The owner of a solo ticket whose block lists name nobody it is.
const SOLO: Owner<'static> = Owner {
    player_id: "p1",
    party: None,
};

fn attrs(build: &str, maps: &[&str], level: f64) -> serde_json::Value {
    json!({"build": build, "maps": maps, "level": level})
}

#[test]
fn the_rules_example_validates_and_every_bad_declaration_is_listed_at_once() {
    let tier = Tier::by_name("enterprise").unwrap();
    validate(&ruled(&[2, 2]), &tier).unwrap();
    let mut bad = ruled(&[2, 2]);
    let broken: GameModeConfig = serde_json::from_value(json!({
        "name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "fifo"},
        "attributes": {
            "mmr":   { "type": "number" },
            "Bad":   { "type": "string" },
            "maps":  { "type": "stringSet" },
            "level": { "type": "number", "min": 10, "max": 1, "default": 200 }
        },
        "rules": [
            { "name": "a", "type": "equal", "attribute": "nope",
              "relax": [ { "afterSeconds": 0, "off": false } ] },
            { "name": "a", "type": "intersect", "attribute": "maps" },
            { "name": "d", "type": "distance", "attribute": "level", "max": -1,
              "relax": [ { "afterSeconds": 30, "max": 20 }, { "afterSeconds": 20, "max": 10 } ] },
            { "name": "e", "type": "distance", "attribute": "maps", "max": 1 },
            { "name": "f", "type": "distance", "attribute": "gone", "max": -1,
              "relax": [ { "afterSeconds": 0, "max": 0 } ] }
        ]
    }))
    .unwrap();
    bad.attributes = broken.attributes;
    bad.rules = broken.rules;
    let errors = validate(&bad, &tier).unwrap_err().0;
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    for expected in [
        "attributes.mmr",
        "attributes.Bad",
        "attributes.level.max",
        "attributes.level.default",
        "rules[0].attribute",
        // A rule on an undeclared attribute has its other errors listed too.
        "rules[0].relax[0].afterSeconds",
        "rules[0].relax[0].off",
        "rules[1].name",
        "rules[1].attribute",
        "rules[2].max",
        "rules[2].relax[1].afterSeconds",
        "rules[2].relax[1].max",
        "rules[3].attribute",
        "rules[4].attribute",
        "rules[4].max",
        "rules[4].relax[0].afterSeconds",
    ] {
        assert!(
            fields.contains(&expected),
            "{expected} missing from {fields:?}"
        );
    }
    assert!(errors.iter().all(|e| e.code == Code::ValidationError));
    // `avoid` has no relax: refused as an unknown field.
    let avoid = serde_json::from_value::<matchplane_matchmaker::rules::Rule>(json!(
        {"name": "b", "type": "avoid", "attribute": "blocked", "relax": []}
    ));
    assert!(avoid.unwrap_err().to_string().contains("relax"));
}

/// A declaration's option left out takes its meaning (no restriction,
/// required); `null` is refused as a value of the wrong type instead of
/// read as left out (it would drop a `values` restriction, or make an
/// attribute required that the studio meant to default).
#[test]
fn a_null_option_of_a_declaration_is_refused() {
    use matchplane_matchmaker::rules::Declaration;
    for (kind, option) in [
        ("string", "values"),
        ("string", "default"),
        ("number", "min"),
        ("number", "max"),
        ("number", "default"),
        ("stringSet", "values"),
        ("stringSet", "default"),
        ("playerSet", "default"),
    ] {
        let refused = serde_json::from_value::<Declaration>(json!({"type": kind, option: null}));
        let message = refused
            .expect_err(&format!("{kind}.{option}: null"))
            .to_string();
        assert!(message.contains("null"), "{kind}.{option}: {message}");
        serde_json::from_value::<Declaration>(json!({ "type": kind })).unwrap();
    }
}

/// An `intersect` rule whose lowest `minOverlap` exceeds the values its
/// attribute declares would refuse every ticket: refused with the mode.
#[test]
fn a_min_overlap_beyond_the_declared_values_is_refused_with_the_mode() {
    let tier = Tier::by_name("enterprise").unwrap();
    let with = |rule: serde_json::Value| {
        let mut config = ruled(&[2, 2]);
        let broken: GameModeConfig = serde_json::from_value(json!({
            "name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "fifo"},
            "attributes": {"maps": {"type": "stringSet", "values": ["dust", "inferno", "nuke"]}},
            "rules": [rule]
        }))
        .unwrap();
        config.attributes = broken.attributes;
        config.rules = broken.rules;
        validate(&config, &tier).map_err(|e| {
            e.0.iter()
                .map(|e| (e.field.clone(), e.message.clone()))
                .collect::<Vec<_>>()
        })
    };
    let errors =
        with(json!({"name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 4}))
            .unwrap_err();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].0, "rules[0].minOverlap");
    assert!(errors[0].1.contains("3 values"), "{errors:?}");
    // As many as declared, or a step down to them, can be matched.
    with(json!({"name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 3}))
        .unwrap();
    with(
        json!({"name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 5,
                "relax": [{"afterSeconds": 10, "minOverlap": 2}]}),
    )
    .unwrap();
    // Nor past the 32 entries a ticket's set may hold, however many values
    // are declared; and not past the default a ticket leaving it out takes.
    let mut forty = ruled(&[1, 1]);
    let values: Vec<String> = (0..40).map(|i| format!("v{i}")).collect();
    let declared: GameModeConfig = serde_json::from_value(json!({
        "name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "fifo"},
        "attributes": {"s": {"type": "stringSet", "values": values, "default": ["v0"]}},
        "rules": [{"name": "r", "type": "intersect", "attribute": "s", "minOverlap": 33}]
    }))
    .unwrap();
    forty.attributes = declared.attributes;
    forty.rules = declared.rules;
    let errors = validate(&forty, &tier).unwrap_err().0;
    let fields: Vec<(&str, &str)> = errors
        .iter()
        .map(|e| (e.field.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(fields.len(), 2, "{fields:?}");
    assert_eq!(fields[0].0, "rules[0].minOverlap");
    assert!(fields[0].1.contains("32 entries"), "{fields:?}");
    assert_eq!(fields[1].0, "attributes.s.default");
    forty.rules[0] = serde_json::from_value(
        json!({"name": "r", "type": "intersect", "attribute": "s", "minOverlap": 32,
               "relax": [{"afterSeconds": 5, "minOverlap": 1}]}),
    )
    .unwrap();
    validate(&forty, &tier).unwrap();
    // An empty default under a rule needing one shared value.
    let mut empty = ruled(&[2, 2]);
    if let Some(matchplane_matchmaker::rules::Declaration::StringSet { default, .. }) =
        empty.attributes.as_mut().and_then(|d| d.get_mut("maps"))
    {
        *default = Some(Vec::new());
    }
    let errors = validate(&empty, &tier).unwrap_err().0;
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].field, "attributes.maps.default");
    // The wording's article fits the rule's type.
    let errors = with(json!({"name": "m", "type": "equal", "attribute": "maps"})).unwrap_err();
    assert!(
        errors[0].1.starts_with("an equal rule cannot read maps"),
        "{errors:?}"
    );
}

/// A set smaller than the lowest `minOverlap` its `intersect` rule ever
/// relaxes to could never be matched: refused when the ticket is generated.
#[test]
fn a_set_too_small_for_its_intersect_rule_is_refused() {
    let parse = |config: &GameModeConfig, maps: serde_json::Value| {
        let raw: RawAttributes = serde_json::from_value(json!({
            "mmr": 1500, "build": "1.4.2", "maps": maps, "level": 37
        }))
        .unwrap();
        Attributes::parse(raw, config, SOLO).map_err(|errors| {
            errors
                .iter()
                .map(|e| (e.field.clone(), e.code))
                .collect::<Vec<_>>()
        })
    };
    let config = ruled(&[2, 2]);
    assert_eq!(
        parse(&config, json!([])).unwrap_err(),
        [("attributes.maps".to_owned(), Code::ValidationError)]
    );
    parse(&config, json!(["dust"])).unwrap();
    // Listed with the ticket's other failures, not instead of them.
    let raw: RawAttributes =
        serde_json::from_value(json!({"mmr": 1500, "maps": [], "level": 37})).unwrap();
    let mut fields: Vec<(String, Code)> = Attributes::parse(raw, &config, SOLO)
        .unwrap_err()
        .into_iter()
        .map(|e| (e.field, e.code))
        .collect();
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        fields,
        [
            ("attributes.build".to_owned(), Code::AttributeRequired),
            ("attributes.maps".to_owned(), Code::ValidationError)
        ]
    );
    // A value refused on its own is not judged again by its rule.
    let raw: RawAttributes =
        serde_json::from_value(json!({"mmr": 1500, "build": "1", "maps": ["mirage"], "level": 37}))
            .unwrap();
    assert_eq!(Attributes::parse(raw, &config, SOLO).unwrap_err().len(), 1);
    // `minOverlap` 2 relaxed to 1 after 30 s: one map is enough, at last.
    let mut relaxing = config.clone();
    relaxing.rules[2] = serde_json::from_value(json!({
        "name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 2,
        "relax": [{"afterSeconds": 30, "minOverlap": 1}]
    }))
    .unwrap();
    parse(&relaxing, json!(["dust"])).unwrap();
    let mut strict = config;
    strict.rules[2] = serde_json::from_value(json!({
        "name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 2
    }))
    .unwrap();
    assert!(parse(&strict, json!(["dust"])).is_err());
    parse(&strict, json!(["dust", "nuke"])).unwrap();
}

#[test]
fn a_ticket_is_parsed_against_the_declarations_with_every_failure() {
    let config = ruled(&[2, 2]);
    let raw: RawAttributes = serde_json::from_value(json!({
        "mmr": 1500, "build": "1.4.2", "maps": ["dust", "nuke"], "level": 37, "blocked": ["player-9"]
    }))
    .unwrap();
    let a = Attributes::parse(raw, &config, SOLO).unwrap();
    assert_eq!(
        a.declared[&"maps".to_owned()],
        AttributeValue::Set(vec!["dust".into(), "nuke".into()])
    );
    assert!(!a.declared.contains_key("pool"), "defaults are not stored");

    // Every bad entry of a set is named, not only the first.
    let raw: RawAttributes = serde_json::from_value(json!({
        "mmr": 1500, "maps": ["dust", "mirage", "dust", 3], "level": 101, "colour": "red", "pool": 3,
        "blocked": ["", "ok", "ok"]
    }))
    .unwrap();
    let errors = Attributes::parse(raw, &config, SOLO).unwrap_err();
    let got: Vec<(&str, Code)> = errors.iter().map(|e| (e.field.as_str(), e.code)).collect();
    for expected in [
        ("attributes.build", Code::AttributeRequired),
        ("attributes.maps[1]", Code::ValidationError),
        ("attributes.maps[2]", Code::ValidationError),
        ("attributes.maps[3]", Code::ValidationError),
        ("attributes.blocked[0]", Code::ValidationError),
        ("attributes.blocked[2]", Code::ValidationError),
        ("attributes.level", Code::ValidationError),
        ("attributes.colour", Code::ValidationError),
        ("attributes.pool", Code::ValidationError),
    ] {
        assert!(got.contains(&expected), "{expected:?} missing from {got:?}");
    }
}

/// A ticket's values are read straight into their typed form where they
/// have one, and kept as JSON where not: either way, a refusal says what
/// the JSON reading says (`value_of`), and a value that fits is kept as
/// that reading keeps it. Read from the body's text and from a JSON tree
/// alike.
#[test]
fn a_value_read_typed_is_judged_and_worded_as_its_json() {
    use matchplane_matchmaker::rules::parse::value_of;
    let config = ruled(&[2, 2]);
    let declarations = config.attributes.as_ref().unwrap();
    let values = [
        json!(null),
        json!(true),
        json!({}),
        json!({"a": 1}),
        json!("x"),
        json!(""),
        json!("dust"),
        json!(3),
        json!(1.5),
        json!(-0.0),
        json!(101),
        json!(1e300),
        json!([]),
        json!(["dust"]),
        json!(["dust", "dust"]),
        json!(["dust", 1]),
        json!([1, "dust"]),
        json!(["dust", null, true, {}, [], ["x"]]),
        json!([["dust"]]),
        json!(["player-2", "player-3"]),
        json!(["x".repeat(65)]),
        json!((0..40).map(|i| format!("q{i}")).collect::<Vec<_>>()),
    ];
    for name in ["build", "pool", "maps", "level", "blocked"] {
        let declaration = &declarations[name];
        let field = format!("attributes.{name}");
        for value in &values {
            let mut body = json!({"mmr": 1500, "build": "1.0", "maps": ["dust"], "level": 5});
            body[name] = value.clone();
            let expected = value_of(declaration, value, &field);
            let from_text: RawAttributes = serde_json::from_str(&body.to_string()).unwrap();
            let from_tree: RawAttributes = serde_json::from_value(body.clone()).unwrap();
            for raw in [from_text, from_tree] {
                let got = Attributes::parse(raw, &config, SOLO);
                match (&expected, got) {
                    (Ok(kept), Ok(parsed)) => {
                        assert_eq!(parsed.declared.get(name), Some(kept), "{name} = {value}");
                    }
                    (Err(words), Err(errors)) => {
                        let mine: Vec<_> = errors
                            .iter()
                            .filter(|e| e.field.starts_with(&field))
                            .map(|e| (e.field.clone(), e.message.clone()))
                            .collect();
                        let want: Vec<_> = words
                            .iter()
                            .map(|e| (e.field.clone(), e.message.clone()))
                            .collect();
                        assert_eq!(mine, want, "{name} = {value}");
                    }
                    // Fits its declaration, but no rule could ever match it
                    // (an empty map vote): a check of its own, after.
                    (Ok(_), Err(errors))
                        if errors
                            .iter()
                            .all(|e| e.message.contains("could never be matched")) => {}
                    (expected, got) => panic!("{name} = {value}: {expected:?} but {got:?}"),
                }
            }
        }
    }
}

/// A block list naming the ticket's own player, or a member of its own
/// party, is refused entry by entry: an `avoid` rule compares candidates
/// and a party is one, so such an entry would keep nobody apart.
#[test]
fn a_block_list_naming_its_own_player_or_party_is_refused() {
    let config = with_parties(ruled(&[2, 2]), 2, true);
    let party = matchplane_matchmaker::Party {
        id: "pB".into(),
        members: vec!["b0".into(), "b1".into()],
    };
    let parse = |config: &GameModeConfig, owner: Owner<'_>, blocked: serde_json::Value| {
        let mut body = attrs("1.4", &["dust"], 37.0);
        body["mmr"] = json!(1500);
        if !blocked.is_null() {
            body["blocked"] = blocked;
        }
        Attributes::parse(serde_json::from_value(body).unwrap(), config, owner).map_err(|e| {
            e.into_iter()
                .map(|e| (e.field, e.code, e.message))
                .collect::<Vec<_>>()
        })
    };
    let b0 = Owner::new("b0", Some(&party));
    let refused = parse(&config, b0, json!(["b1"])).unwrap_err();
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert_eq!(
        (refused[0].0.as_str(), refused[0].1),
        ("attributes.blocked[0]", Code::ValidationError)
    );
    assert!(
        refused[0]
            .2
            .contains("names a member of the ticket's own party (pB)"),
        "{refused:?}"
    );
    // Every such entry is named, the player's own id as itself.
    let refused = parse(&config, b0, json!(["b0", "z", "b1"])).unwrap_err();
    let fields: Vec<&str> = refused.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(fields, ["attributes.blocked[0]", "attributes.blocked[2]"]);
    assert!(
        refused[0].2.contains("names the ticket's own player"),
        "{refused:?}"
    );
    let selfie = Owner::new("selfie", None);
    let refused = parse(&config, selfie, json!(["x", "selfie"])).unwrap_err();
    assert_eq!(refused[0].0, "attributes.blocked[1]", "{refused:?}");
    assert!(refused[0].2.contains("own player"), "{refused:?}");
    // Players outside the ticket's party, and no list at all, are fine.
    parse(&config, b0, json!(["z"])).unwrap();
    parse(&config, selfie, serde_json::Value::Null).unwrap();
    // Listed with the ticket's other failures.
    let raw: RawAttributes = serde_json::from_value(
        json!({"mmr": 1500, "maps": ["dust"], "level": 37, "blocked": ["b1"]}),
    )
    .unwrap();
    let fields: Vec<String> = Attributes::parse(raw, &config, b0)
        .unwrap_err()
        .into_iter()
        .map(|e| e.field)
        .collect();
    assert_eq!(fields, ["attributes.build", "attributes.blocked[0]"]);
    // Named beside an entry of the same list that fails on its own (of
    // the wrong type, or listed twice), once per entry.
    let fields = |refused: Vec<(String, Code, String)>| {
        let mut fields: Vec<String> = refused.into_iter().map(|e| e.0).collect();
        fields.sort();
        fields
    };
    for (blocked, named) in [
        (
            json!(["b0", 5]),
            vec!["attributes.blocked[0]", "attributes.blocked[1]"],
        ),
        (
            json!(["x", "x", "b0"]),
            vec!["attributes.blocked[1]", "attributes.blocked[2]"],
        ),
        (
            json!(["b0", "x", "b0"]),
            vec!["attributes.blocked[0]", "attributes.blocked[2]"],
        ),
        (
            json!(["b1", null, "b0"]),
            vec![
                "attributes.blocked[0]",
                "attributes.blocked[1]",
                "attributes.blocked[2]",
            ],
        ),
    ] {
        let refused = parse(&config, b0, blocked.clone()).unwrap_err();
        assert_eq!(fields(refused), named, "{blocked}");
    }
    // Every `playerSet` is checked, whether or not an `avoid` rule reads it.
    let mut unread = config.clone();
    unread.rules.retain(|r| r.name() != "no-blocked");
    assert!(parse(&unread, b0, json!(["b1"])).is_err());
}

#[test]
fn builds_never_mix_and_the_match_carries_what_everyone_shares() {
    let config = ruled(&[1, 1]);
    let pool = vec![
        player("a", 1500.0, 0.0, attrs("1.4", &["dust", "nuke"], 30.0)),
        player("b", 1500.0, 0.0, attrs("1.5", &["dust", "nuke"], 30.0)),
        player("c", 1501.0, 0.5, attrs("1.4", &["nuke", "inferno"], 35.0)),
        player("d", 1501.0, 0.5, attrs("1.5", &["inferno"], 35.0)),
    ];
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.matches.len(), 1, "{out:#?}");
    let m = &out.matches[0];
    let ids: Vec<&str> = m
        .teams
        .iter()
        .flat_map(|t| &t.players)
        .map(|p| p.player_id.as_str())
        .collect();
    assert!(ids.contains(&"a") && ids.contains(&"c"), "{ids:?}");
    assert_eq!(
        m.attributes[&"build".to_owned()],
        AttributeValue::Text("1.4".into())
    );
    assert_eq!(
        m.attributes[&"pool".to_owned()],
        AttributeValue::Text("crossplay".into())
    );
    assert_eq!(
        m.attributes[&"maps".to_owned()],
        AttributeValue::Set(vec!["nuke".into()])
    );
    // Each player's own attributes, the default filled in.
    let a = m
        .teams
        .iter()
        .flat_map(|t| &t.players)
        .find(|p| p.player_id == "a")
        .unwrap();
    assert_eq!(
        a.attributes.get("pool"),
        Some(&AttributeValue::Text("crossplay".into()))
    );
    // b and d share a build but no map.
    let waiting: Vec<&WaitingReason> = out.waiting.iter().map(|w| &w.reason).collect();
    assert!(
        waiting.iter().any(|r| matches!(r, WaitingReason::RuleNotMet { rule, overlap: Some(0), min_overlap: Some(1), .. } if rule == "map")),
        "{waiting:?}"
    );
    assert_eq!(out.rule_turned_away["map"], 2, "{:?}", out.rule_turned_away);
}

#[test]
fn a_distance_rule_relaxes_on_each_candidates_own_wait_and_says_when() {
    let config = ruled(&[1, 1]);
    // 25 levels apart: both need max >= 25, i.e. both past 60 s (max 40).
    let pool = vec![
        player("old", 1500.0, 0.0, attrs("1.4", &["dust"], 10.0)),
        player("new", 1500.0, 50.0, attrs("1.4", &["dust"], 35.0)),
    ];
    let out = cycle(&config, &pool, 70.0);
    assert!(out.matches.is_empty(), "the newcomer's own max is 20");
    let reason = out.waiting.iter().find(|w| w.player_id == "new").unwrap();
    match &reason.reason {
        WaitingReason::RuleNotMet {
            rule,
            distance,
            max,
            unblocks_in_seconds,
            ..
        } => {
            assert_eq!(rule, "level");
            assert_eq!(*distance, Some(25.0));
            assert_eq!(*max, Some(10.0), "its own max at 20 s");
            assert_eq!(
                *unblocks_in_seconds,
                Some(40.0),
                "its own max reaches 25 at 60 s"
            );
        }
        other => panic!("{other:?}"),
    }
    // The longer waiter's own max (40) allows the 25 already: it waits
    // for the newcomer's step all the same, and is told so, not "never".
    let old = out.waiting.iter().find(|w| w.player_id == "old").unwrap();
    assert!(
        matches!(&old.reason, WaitingReason::RuleNotMet { rule, distance: Some(d), unblocks_in_seconds: Some(u), .. }
            if rule == "level" && *d == 25.0 && *u == 40.0),
        "{:?}",
        old.reason
    );
    // Written as a status is: to the millisecond.
    let out = cycle(&config, &pool, 70.123_456_7);
    let reason = out.waiting.iter().find(|w| w.player_id == "new").unwrap();
    let json = serde_json::to_value(&reason.reason).unwrap();
    assert_eq!(json["unblocksInSeconds"], json!(39.877), "{json}");
    let out = cycle(&config, &pool, 110.0);
    assert_eq!(out.matches.len(), 1, "{out:#?}");
}

/// A joiner must be near enough to every member, not only the anchor: a
/// player between two others who are too far apart is told the miss
/// between them (18 against 10, allowed from 30 s), never a miss within
/// `max` that "unblocks" at once (docs/rules.md, "Why a player is still
/// waiting").
#[test]
fn the_nearest_miss_is_to_the_member_the_candidate_is_too_far_from() {
    let config = ruled(&[1, 1, 1]);
    let pool = vec![
        player("low", 1500.0, 0.0, attrs("1.4", &["dust"], 10.0)),
        player("mid", 1500.0, 0.0, attrs("1.4", &["dust"], 19.0)),
        player("high", 1500.0, 0.0, attrs("1.4", &["dust"], 28.0)),
    ];
    let out = cycle(&config, &pool, 10.0);
    assert!(out.matches.is_empty(), "{out:#?}");
    for id in ["low", "mid", "high"] {
        let waiting = out.waiting.iter().find(|w| w.player_id == id).unwrap();
        let json = serde_json::to_value(&waiting.reason).unwrap();
        assert_eq!(json["rule"], "level", "{id}: {json}");
        assert_eq!(json["distance"], json!(18.0), "{id}: {json}");
        assert_eq!(json["max"], json!(10.0), "{id}: {json}");
        assert_eq!(json["unblocksInSeconds"], json!(20.0), "{id}: {json}");
    }
    assert_eq!(cycle(&config, &pool, 30.0).matches.len(), 1);
}

#[test]
fn an_equal_rule_turned_off_matches_only_others_past_their_own_off_step() {
    let config = ruled(&[1, 1]);
    let with_pool = |id: &str, at: f64, pool: &str| {
        let mut a = attrs("1.4", &["dust"], 50.0);
        a["pool"] = json!(pool);
        player(id, 1500.0, at, a)
    };
    let pool = vec![
        with_pool("pc", 0.0, "pc"),
        with_pool("console", 50.0, "console"),
    ];
    assert!(
        cycle(&config, &pool, 100.0).matches.is_empty(),
        "console waited 50 s"
    );
    assert_eq!(cycle(&config, &pool, 141.0).matches.len(), 1);
    let m = &cycle(&config, &pool, 141.0).matches[0];
    assert!(
        !m.attributes.contains_key("pool"),
        "a relaxed equal rule carries no value"
    );
}

/// A player kept from one candidate by a rule that never loosens and from
/// another by one that does, one seat each: the reason names the one that
/// loosens (and when), not "never" for a player who will be matched.
#[test]
fn a_tie_between_rules_names_the_one_that_loosens_soonest() {
    let config = ruled(&[1, 1]);
    let with = |id: &str, build: &str, pool: &str| {
        let mut a = attrs(build, &["dust"], 50.0);
        a["pool"] = json!(pool);
        player(id, 1500.0, 0.0, a)
    };
    let pool = vec![
        with("a", "1.4", "pc"),
        with("b", "1.5", "pc"),
        with("c", "1.4", "console"),
    ];
    let out = cycle(&config, &pool, 30.0);
    assert!(out.matches.is_empty(), "{out:#?}");
    for id in ["a", "c"] {
        let waiting = out.waiting.iter().find(|w| w.player_id == id).unwrap();
        let json = serde_json::to_value(&waiting.reason).unwrap();
        assert_eq!(json["rule"], "platform", "{id}: {json}");
        assert_eq!(json["unblocksInSeconds"], json!(60.0), "{id}: {json}");
    }
    // b is kept from both by its build alone, which never loosens.
    let b = out.waiting.iter().find(|w| w.player_id == "b").unwrap();
    let json = serde_json::to_value(&b.reason).unwrap();
    assert_eq!(json["rule"], "same-build", "{json}");
    assert_eq!(json["unblocksInSeconds"], json!(null), "{json}");
    assert_eq!(cycle(&config, &pool, 90.0).matches.len(), 1);
}

/// A player past its own `off` step, kept apart from a candidate of
/// another platform that is not, waits for that candidate's step: the
/// reason names the rule that loosens and when, for both of them, not
/// "never" because the player's own steps are spent (docs/rules.md, "Why
/// a player is still waiting").
#[test]
fn an_equal_rule_off_for_one_side_says_when_the_other_side_turns_it_off() {
    let config = ruled(&[1, 1]);
    let with = |id: &str, build: &str, pool: &str, at: f64| {
        let mut a = attrs(build, &["dust"], 50.0);
        a["pool"] = json!(pool);
        player(id, 1500.0, at, a)
    };
    // At 100 s: a waited 100 s (past its 90 s step), c 50 s (40 s to go),
    // b another build (never).
    let pool = vec![
        with("a", "1.4", "pc", 0.0),
        with("b", "1.5", "pc", 100.0),
        with("c", "1.4", "console", 50.0),
    ];
    let out = cycle(&config, &pool, 100.0);
    assert!(out.matches.is_empty(), "{out:#?}");
    for id in ["a", "c"] {
        let waiting = out.waiting.iter().find(|w| w.player_id == id).unwrap();
        let json = serde_json::to_value(&waiting.reason).unwrap();
        assert_eq!(json["rule"], "platform", "{id}: {json}");
        assert_eq!(json["unblocksInSeconds"], json!(40.0), "{id}: {json}");
    }
    let out = cycle(&config, &pool, 140.0);
    assert_eq!(out.matches.len(), 1, "{out:#?}");
}

/// A number out of its declared bounds, or a value of the wrong type, is
/// worded the same by a ticket's parse and by the check of values already
/// parsed (a backfill's roster, the re-check), and a huge number in
/// exponent form.
#[test]
fn an_out_of_range_number_or_a_wrong_type_reads_the_same_everywhere() {
    use matchplane_matchmaker::rules::parse::{check_typed, value_of};
    let config = ruled(&[1, 1]);
    let level = &config.attributes.as_ref().unwrap()["level"];
    for (n, text) in [
        (500.0, "500 is outside [1, 100]"),
        (1e308, "1e308 is outside [1, 100]"),
    ] {
        let parsed = value_of(level, &json!(n), "attributes.level").unwrap_err();
        let checked =
            check_typed(level, &AttributeValue::Number(n), "attributes.level").unwrap_err();
        assert_eq!(parsed[0].message, text);
        assert_eq!(checked[0].message, text);
    }
    // A value of the wrong type, for every type.
    let declarations = config.attributes.as_ref().unwrap();
    for name in ["build", "level", "maps", "blocked"] {
        let declaration = &declarations[name];
        for (json, value) in [
            (json!("x"), AttributeValue::Text("x".into())),
            (json!(3), AttributeValue::Number(3.0)),
            (json!(["x"]), AttributeValue::Set(vec!["x".into()])),
        ] {
            let (Err(parsed), Err(checked)) = (
                value_of(declaration, &json, "attributes.a"),
                check_typed(declaration, &value, "attributes.a"),
            ) else {
                continue;
            };
            if parsed[0].field == "attributes.a" && checked[0].field == "attributes.a" {
                assert_eq!(parsed[0].message, checked[0].message, "{name} given {json}");
            }
        }
    }
}

#[test]
fn blocked_players_are_never_matched_either_way() {
    let config = ruled(&[1, 1]);
    let mut a = attrs("1.4", &["dust"], 50.0);
    a["blocked"] = json!(["b"]);
    let pool = vec![
        player("a", 1500.0, 0.0, a),
        player("b", 1500.0, 0.0, attrs("1.4", &["dust"], 50.0)),
    ];
    let out = cycle(&config, &pool, 5.0);
    assert!(out.matches.is_empty());
    assert!(out.waiting.iter().all(|w| matches!(&w.reason, WaitingReason::RuleNotMet { rule, unblocks_in_seconds: None, .. } if rule == "no-blocked")), "{:?}", out.waiting);
}

#[test]
fn a_party_whose_members_differ_on_a_string_fails_and_its_set_is_the_intersection() {
    let config = with_parties(ruled(&[2, 2]), 2, true);
    let mut members = party("p", 2, 1500.0, 0.0);
    members[0].attributes = serde_json::from_value(attrs("1.4", &["dust"], 10.0)).unwrap();
    members[1].attributes = serde_json::from_value(attrs("1.5", &["dust"], 10.0)).unwrap();
    let out = cycle(&config, &members, 1.0);
    assert_eq!(out.failed.len(), 2);
    assert!(out
        .failed
        .iter()
        .all(|f| f.code == Code::PartyAttributesDiffer));

    // Members who share no map could never be matched: failed likewise.
    members[1].attributes = serde_json::from_value(attrs("1.4", &["nuke"], 10.0)).unwrap();
    let out = cycle(&config, &members, 1.0);
    assert_eq!(out.failed.len(), 2, "{:?}", out.waiting);
    assert!(out
        .failed
        .iter()
        .all(|f| f.code == Code::PartyAttributesDiffer && f.message.contains("attribute maps")));

    // Same build: the party's maps are what both chose, its level the max.
    members[1].attributes = serde_json::from_value(attrs("1.4", &["dust", "nuke"], 60.0)).unwrap();
    members[0].attributes = serde_json::from_value(attrs("1.4", &["nuke"], 10.0)).unwrap();
    let mut pool = members.clone();
    pool.push(player("x", 1500.0, 0.0, attrs("1.4", &["nuke"], 55.0)));
    pool.push(player(
        "y",
        1500.0,
        0.0,
        attrs("1.4", &["nuke", "dust"], 58.0),
    ));
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.matches.len(), 1, "{out:#?}");
    assert_eq!(
        out.matches[0].attributes[&"maps".to_owned()],
        AttributeValue::Set(vec!["nuke".into()])
    );
    // A player 30 levels from the party's max is out of reach.
    pool[3].attributes = serde_json::from_value(attrs("1.4", &["nuke"], 30.0)).unwrap();
    assert!(cycle(&config, &pool, 1.0).matches.is_empty());
}

/// A value of an attribute the mode no longer declares is ignored by the
/// cycle, and left out of the matched player's values.
#[test]
fn a_value_no_longer_declared_is_left_out_of_the_match() {
    let mut config = ruled(&[1, 1]);
    let pool = vec![
        player("a", 1500.0, 0.0, attrs("1.4", &["dust"], 10.0)),
        player(
            "b",
            1500.0,
            0.0,
            json!({"build": "1.4", "maps": ["dust"], "level": 12, "blocked": ["x"]}),
        ),
    ];
    config.rules.retain(|r| r.attribute() != "blocked");
    if let Some(declared) = config.attributes.as_mut() {
        declared.remove("blocked");
    }
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.matches.len(), 1, "{out:#?}");
    for team in &out.matches[0].teams {
        for p in &team.players {
            assert!(p.attributes.get("blocked").is_none(), "{:?}", p.attributes);
            let json = serde_json::to_value(&p.attributes).unwrap();
            assert!(json.get("blocked").is_none(), "{json}");
            assert_eq!(json["build"], "1.4", "{json}");
            assert_eq!(json["pool"], "crossplay", "the default, filled in: {json}");
        }
    }
}

/// Two values whose difference overflows a double still name their
/// nearest miss (the largest finite number), never `null`.
#[test]
fn a_miss_too_far_for_a_double_is_still_a_number() {
    let mut config = fifo_mode(&[1, 1]);
    let block: GameModeConfig = serde_json::from_value(json!({
        "name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "fifo"},
        "attributes": {"lv": {"type": "number"}},
        "rules": [{"name": "lv", "type": "distance", "attribute": "lv", "max": 10}]
    }))
    .unwrap();
    config.attributes = block.attributes;
    config.rules = block.rules;
    let pool = vec![
        player("a", 1500.0, 0.0, json!({"lv": 1e308})),
        player("b", 1500.0, 0.0, json!({"lv": -1e308})),
    ];
    let out = cycle(&config, &pool, 1.0);
    assert!(out.matches.is_empty());
    let json = serde_json::to_value(&out.waiting[0].reason).unwrap();
    assert_eq!(json["code"], "RULE_NOT_MET", "{json}");
    assert_eq!(json["distance"], json!(f64::MAX), "{json}");
}

/// A party's `mean` of finite values is finite, however large: two
/// members at 1.7e308 (whose sum overflows) stand at 1.7e308 and match
/// solos there.
#[test]
fn a_partys_mean_of_huge_values_does_not_overflow() {
    let mut config = with_parties(fifo_mode(&[2, 2]), 2, true);
    let block: GameModeConfig = serde_json::from_value(json!({
        "name": "x", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "fifo"},
        "attributes": {"x": {"type": "number"}},
        "rules": [{"name": "near", "type": "distance", "attribute": "x", "max": 1}]
    }))
    .unwrap();
    config.attributes = block.attributes;
    config.rules = block.rules;
    let mut pool = party("p", 2, 1500.0, 0.0);
    for member in &mut pool {
        member.attributes = serde_json::from_value(json!({"x": 1.7e308})).unwrap();
    }
    pool.push(player("c", 1500.0, 0.0, json!({"x": 1.7e308})));
    pool.push(player("d", 1500.0, 0.0, json!({"x": 1.7e308})));
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.matches.len(), 1, "{:?}", out.waiting);
}

#[test]
fn a_partys_block_list_is_every_members_and_blocks_each_member() {
    let config = with_parties(ruled(&[2, 2]), 2, true);
    let matched = |pool: &[matchplane_matchmaker::Search]| -> Vec<String> {
        let out = cycle(&config, pool, 1.0);
        assert_eq!(out.matches.len(), 1, "{out:#?}");
        let mut ids: Vec<String> = out.matches[0]
            .teams
            .iter()
            .flat_map(|t| t.players.iter().map(|p| p.player_id.to_string()))
            .collect();
        ids.sort();
        ids
    };
    let mut members = party("p", 2, 1500.0, 0.0);
    members[0].attributes = serde_json::from_value(attrs("1.4", &["dust"], 50.0)).unwrap();
    let mut second = attrs("1.4", &["dust"], 50.0);
    second["blocked"] = json!(["x"]);
    members[1].attributes = serde_json::from_value(second).unwrap();
    let mut pool = members.clone();
    for id in ["x", "y", "z"] {
        pool.push(player(id, 1500.0, 0.0, attrs("1.4", &["dust"], 50.0)));
    }
    // The second member's block list keeps x out of the party's match.
    assert_eq!(matched(&pool), ["p-0", "p-1", "y", "z"]);
    // A solo blocking either member is kept out too.
    pool[1].attributes = serde_json::from_value(attrs("1.4", &["dust"], 50.0)).unwrap();
    let mut blocking = attrs("1.4", &["dust"], 50.0);
    blocking["blocked"] = json!(["p-0"]);
    pool[3].attributes = serde_json::from_value(blocking).unwrap();
    assert_eq!(matched(&pool), ["p-0", "p-1", "x", "z"]);
}

#[test]
fn a_config_change_fails_searches_it_no_longer_allows() {
    let mut config = ruled(&[1, 1]);
    let pool = vec![
        player("a", 1500.0, 0.0, attrs("1.4", &["dust"], 50.0)),
        player("b", 1500.0, 0.0, json!({"build": "1.4", "maps": ["nuke"]})),
    ];
    if let Some(a) = config.attributes.as_mut() {
        a.insert(
            "maps".into(),
            serde_json::from_value(json!({"type": "stringSet", "values": ["dust"]})).unwrap(),
        );
    }
    let out = cycle(&config, &pool, 1.0);
    let codes: Vec<(&str, Code)> = out
        .failed
        .iter()
        .map(|f| (f.player_id.as_str(), f.code))
        .collect();
    assert!(codes.contains(&("b", Code::AttributeRequired)), "{codes:?}");
    assert_eq!(out.failed.len(), 1, "{codes:?}");
    let pool = vec![player("c", 1500.0, 0.0, attrs("1.4", &["nuke"], 50.0))];
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.failed[0].code, Code::AttributeNotAllowed);
    // The message names the attribute (a mode declares several).
    assert!(
        out.failed[0].message.contains("attribute maps"),
        "{}",
        out.failed[0].message
    );
}

/// A party member a config change no longer allows fails its whole party
/// with its code; the other members' message names that member, so that a
/// player is not told of a value it never sent.
#[test]
fn a_party_failed_for_one_member_names_that_member() {
    let mut config = with_parties(ruled(&[2, 2]), 2, true);
    let mut pool = party("duo", 2, 1500.0, 0.0);
    pool[0].attributes = serde_json::from_value(attrs("1.4", &["dust"], 50.0)).unwrap();
    pool[1].attributes = serde_json::from_value(attrs("1.4", &["nuke", "dust"], 50.0)).unwrap();
    if let Some(a) = config.attributes.as_mut() {
        a.insert(
            "maps".into(),
            serde_json::from_value(json!({"type": "stringSet", "values": ["dust"]})).unwrap(),
        );
    }
    let out = cycle(&config, &pool, 1.0);
    let failed: Vec<(&str, Code, &str)> = out
        .failed
        .iter()
        .map(|f| (f.player_id.as_str(), f.code, f.message.as_str()))
        .collect();
    assert_eq!(failed.len(), 2, "{failed:?}");
    let of = |p: &str| failed.iter().find(|f| f.0 == p).copied().unwrap();
    assert_eq!(of("duo-1").1, Code::AttributeNotAllowed);
    assert!(!of("duo-1").2.starts_with("party member"), "{failed:?}");
    assert_eq!(of("duo-0").1, Code::AttributeNotAllowed);
    assert!(
        of("duo-0").2.starts_with("party member duo-1: ") && of("duo-0").2.contains("nuke"),
        "{failed:?}"
    );
}

/// A rule changed to need more shared values than a waiting search's set
/// lists fails it at the next cycle, as its ticket would now be refused,
/// instead of leaving it waiting on a rule it can never meet.
#[test]
fn a_rule_change_fails_searches_whose_sets_it_leaves_too_small() {
    let mut config = ruled(&[1, 1]);
    let pool = vec![
        player("one", 1500.0, 0.0, attrs("1.4", &["dust"], 50.0)),
        player("two", 1500.0, 0.0, attrs("1.4", &["dust", "nuke"], 50.0)),
        player("three", 1500.0, 0.0, attrs("1.4", &["dust", "nuke"], 50.0)),
    ];
    assert!(cycle(&config, &pool, 1.0).failed.is_empty());
    config.rules[2] = serde_json::from_value(json!({
        "name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 2
    }))
    .unwrap();
    let out = cycle(&config, &pool, 1.0);
    let failed: Vec<(&str, Code, &str)> = out
        .failed
        .iter()
        .map(|f| (f.player_id.as_str(), f.code, f.message.as_str()))
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(
        (failed[0].0, failed[0].1),
        ("one", Code::AttributeNotAllowed)
    );
    assert!(
        failed[0].2.contains("rule map needs at least 2"),
        "{failed:?}"
    );
    assert_eq!(out.matches.len(), 1, "the others still match");
    // A step down to one shared value keeps it: it can be matched later.
    config.rules[2] = serde_json::from_value(json!({
        "name": "map", "type": "intersect", "attribute": "maps", "minOverlap": 2,
        "relax": [{"afterSeconds": 60, "minOverlap": 1}]
    }))
    .unwrap();
    assert!(cycle(&config, &pool, 1.0).failed.is_empty());
}

#[test]
fn twenty_builds_partition_the_pool_and_match_within_each() {
    let config = ruled(&[5, 5]);
    let mut pool = Vec::new();
    for i in 0..400 {
        let build = format!("b{}", i % 20);
        pool.push(player(
            &format!("p{i}"),
            1500.0 + (i % 7) as f64,
            0.0,
            attrs(&build, &["dust"], 50.0),
        ));
    }
    let out = cycle(&config, &pool, 1.0);
    assert_eq!(out.matches.len(), 40, "{} matched", out.matches.len());
    for m in &out.matches {
        let builds: std::collections::HashSet<String> = m
            .teams
            .iter()
            .flat_map(|t| &t.players)
            .map(|p| format!("{:?}", p.attributes.get("build")))
            .collect();
        assert_eq!(builds.len(), 1);
    }
}

/// A rule's count of turned-away candidates (docs/rules.md, "Which rule
/// costs wait time") leaves out the tries that formed a match: a's try
/// passes over b (another build) and matches c, b's then matches d, so
/// the build rule cost nobody any wait.
#[test]
fn what_a_rule_turns_away_counts_only_in_tries_that_stay_short() {
    let config = ruled(&[1, 1]);
    let pool = vec![
        player("a", 1500.0, 0.0, attrs("1.4", &["dust"], 10.0)),
        player("b", 1500.0, 1.0, attrs("1.5", &["dust"], 10.0)),
        player("c", 1500.0, 2.0, attrs("1.4", &["dust"], 10.0)),
        player("d", 1500.0, 3.0, attrs("1.5", &["dust"], 10.0)),
    ];
    let out = cycle(&config, &pool, 5.0);
    assert_eq!(out.matches.len(), 2, "{:?}", out.waiting);
    assert_eq!(
        out.rule_turned_away["same-build"], 0,
        "{:?}",
        out.rule_turned_away
    );
}

/// A backfill roster's `attributes` is an object of values; the list of
/// `[name, value]` pairs a sorted-array map would also read is refused, as
/// it was when the values were a tree map.
#[test]
fn roster_attributes_must_be_an_object() {
    let roster = |attributes: serde_json::Value| {
        serde_json::from_value::<matchplane_matchmaker::backfill::roster::Roster>(json!({
            "teams": [{"index": 0, "players": [{"playerId": "p1"}]}],
            "attributes": attributes,
        }))
    };
    let read = roster(json!({"maps": ["dust"]})).expect("an object reads");
    assert_eq!(
        read.attributes.get("maps"),
        Some(&AttributeValue::Set(vec!["dust".into()]))
    );
    assert!(roster(json!([["maps", ["dust"]]])).is_err());
}

/// Declared values write as a JSON object, empty ones included, so that a
/// ticket's record (which flattens them beside `mmr`) reads back whole.
#[test]
fn declared_values_write_as_an_object_even_empty() {
    use matchplane_matchmaker::rules::DeclaredValues;
    assert_eq!(serde_json::to_string(&DeclaredValues::new()).unwrap(), "{}");
    let a: Attributes = serde_json::from_value(json!({"mmr": 1500.0})).unwrap();
    let back: Attributes = serde_json::from_str(&serde_json::to_string(&a).unwrap()).unwrap();
    assert_eq!(back, a);
    let b: Attributes = serde_json::from_value(json!({"mmr": 1.0, "level": 3.0})).unwrap();
    let text = serde_json::to_string(&b).unwrap();
    assert!(text.contains(r#""level":3.0"#), "{text}");
}

/// An `intersect` rule's nearest miss is read against what the group
/// shares, as the check reads it: `c` shares `dust` with the anchor `a`,
/// but `a` and `b` share only `nuke`, so `c`'s overlap is 0 (an overlap of
/// 1 against a `minOverlap` of 1 would say the rule was met).
#[test]
fn an_intersect_miss_is_the_overlap_with_the_groups_shared_maps() {
    let config = ruled(&[1, 1, 1]);
    let pool = vec![
        player("a", 1500.0, 0.0, attrs("1.4", &["dust", "nuke"], 30.0)),
        player("b", 1501.0, 1.0, attrs("1.4", &["nuke"], 30.0)),
        player("c", 1502.0, 1.0, attrs("1.4", &["dust"], 30.0)),
    ];
    let out = cycle(&config, &pool, 1.0);
    assert!(out.matches.is_empty(), "{out:#?}");
    let a = out.waiting.iter().find(|w| w.player_id == "a").unwrap();
    match &a.reason {
        WaitingReason::RuleNotMet {
            rule,
            overlap,
            min_overlap,
            ..
        } => {
            assert_eq!(rule, "map");
            assert_eq!(
                (*overlap, *min_overlap),
                (Some(0), Some(1)),
                "{:?}",
                a.reason
            );
        }
        other => panic!("{other:?}"),
    }
    for w in &out.waiting {
        if let WaitingReason::RuleNotMet {
            overlap: Some(o),
            min_overlap: Some(m),
            ..
        } = &w.reason
        {
            assert!(o < m, "{}: {:?}", w.player_id, w.reason);
        }
    }
}
