//! Validation of the thin-pool blocks (relaxations, bots, maxTolerance,
//! flexible shapes): every failure at once, fields named.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::{validate, Code, GameModeConfig, Tier};

fn mode(extra: &str) -> GameModeConfig {
    let text = format!(
        r#"{{"name": "thin", "matchShape": [5, 5], "matchmakingCycleDurationSeconds": 2,
            "algorithm": {{"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2}}
            {extra}}}"#
    );
    serde_json::from_str(&text).unwrap()
}

fn fields(config: &GameModeConfig, tier: &Tier) -> Vec<(String, Code)> {
    match validate(config, tier) {
        Ok(()) => Vec::new(),
        Err(e) => e.0.into_iter().map(|f| (f.field, f.code)).collect(),
    }
}

#[test]
fn the_documented_blocks_validate_and_round_trip() {
    let config = mode(
        r#", "relaxations": [{"afterSeconds": 20, "matchShape": [4, 4]}, {"afterSeconds": 40, "matchShape": [3, 3]}],
           "bots": {"fillAfterSeconds": 60, "minHumans": 2, "replaceable": true}"#,
    );
    assert_eq!(fields(&config, &Tier::pro()), vec![]);
    let back = serde_json::to_value(&config).unwrap();
    assert_eq!(
        back["relaxations"][1]["matchShape"],
        serde_json::json!([3, 3])
    );
    assert_eq!(back["bots"]["minHumans"], 2);
    // A mode without the blocks serialises as before: no new keys.
    let plain = serde_json::to_value(mode("")).unwrap();
    assert!(plain.get("relaxations").is_none() && plain.get("bots").is_none());
    assert!(plain["algorithm"].get("maxTolerance").is_none());
}

#[test]
fn every_relaxation_and_bot_failure_is_listed() {
    let config = mode(
        r#", "relaxations": [{"afterSeconds": 20, "matchShape": [4, 4]}, {"afterSeconds": 20, "matchShape": [6, 0, 1]},
                             {"afterSeconds": -1, "matchShape": [1, 0]}],
           "bots": {"fillAfterSeconds": 0.5, "minHumans": 0}"#,
    );
    let got = fields(&config, &Tier::pro());
    let expect = [
        "relaxations[1].afterSeconds",
        "relaxations[1].matchShape",
        "relaxations[1].matchShape[0]",
        "relaxations[1].matchShape[1]",
        "relaxations[2].afterSeconds",
        "relaxations[2].matchShape[1]",
        "relaxations[2].matchShape",
        "bots.fillAfterSeconds",
        "bots.minHumans",
    ];
    for field in expect {
        assert!(
            got.iter().any(|(f, _)| f == field),
            "{field} missing in {got:?}"
        );
    }
    assert!(
        got.iter().all(|(_, c)| *c == Code::ValidationError),
        "{got:?}"
    );
}

#[test]
fn at_most_eight_relaxations() {
    let steps: Vec<String> = (0..9)
        .map(|i| {
            format!(
                r#"{{"afterSeconds": {}, "matchShape": [4, 4]}}"#,
                10 * (i + 1)
            )
        })
        .collect();
    let config = mode(&format!(r#", "relaxations": [{}]"#, steps.join(",")));
    // (Each repeated step is also refused as no smaller than the one before.)
    let got = fields(&config, &Tier::pro());
    assert!(
        got.contains(&("relaxations".to_string(), Code::ValidationError)),
        "{got:?}"
    );
}

/// Each relaxed shape is a smaller match than the shape before it (the
/// base shape first): a step as large, or one growing back, is refused.
#[test]
fn a_relaxed_shape_is_a_smaller_match() {
    let with = |steps: &str| {
        fields(
            &mode(&format!(r#", "relaxations": [{steps}]"#)),
            &Tier::pro(),
        )
    };
    let at = |i: usize| {
        vec![(
            format!("relaxations[{i}].matchShape"),
            Code::ValidationError,
        )]
    };
    assert_eq!(with(r#"{"afterSeconds": 5, "matchShape": [5, 5]}"#), at(0));
    assert_eq!(
        with(
            r#"{"afterSeconds": 5, "matchShape": [4, 4]}, {"afterSeconds": 9, "matchShape": [4, 4]}"#
        ),
        at(1)
    );
    assert_eq!(
        with(
            r#"{"afterSeconds": 5, "matchShape": [5, 4]}, {"afterSeconds": 9, "matchShape": [4, 5]}"#
        ),
        at(1)
    );
    assert_eq!(
        with(
            r#"{"afterSeconds": 5, "matchShape": [2, 2]}, {"afterSeconds": 9, "matchShape": [3, 3]}"#
        ),
        at(1)
    );
    assert!(with(
        r#"{"afterSeconds": 5, "matchShape": [5, 4]}, {"afterSeconds": 9, "matchShape": [3, 3]}"#
    )
    .is_empty());
}

#[test]
fn bots_fill_after_the_last_relaxation() {
    let config = mode(
        r#", "relaxations": [{"afterSeconds": 40, "matchShape": [3, 3]}],
           "bots": {"fillAfterSeconds": 30, "minHumans": 2}"#,
    );
    assert_eq!(
        fields(&config, &Tier::pro()),
        vec![("bots.fillAfterSeconds".to_string(), Code::ValidationError)]
    );
}

#[test]
fn max_tolerance_above_base_and_at_most_100() {
    for (value, ok) in [
        ("25", true),
        ("5", false),
        ("3", false),
        ("100", true),
        ("101", false),
    ] {
        let text = format!(
            r#"{{"name": "t", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 2,
                "algorithm": {{"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5,
                "expansionMultiplier": 2, "maxTolerance": {value}}}}}"#
        );
        let config: GameModeConfig = serde_json::from_str(&text).unwrap();
        let got = fields(&config, &Tier::pro());
        if ok {
            assert!(got.is_empty(), "{value}: {got:?}");
        } else {
            assert_eq!(
                got,
                vec![("algorithm.maxTolerance".to_string(), Code::ValidationError)]
            );
        }
    }
}

fn flexible(shape: &str, parties: &str) -> GameModeConfig {
    let text = format!(
        r#"{{"name": "royale", "matchShape": {shape}, "matchmakingCycleDurationSeconds": 5,
            "algorithm": {{"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2}},
            "parties": {parties}}}"#
    );
    serde_json::from_str(&text).unwrap()
}

#[test]
fn royale_and_free_for_all_examples_validate() {
    let royale = flexible(
        r#"{"teams": 20, "teamSize": {"min": 1, "max": 3}}"#,
        r#"{"allowParties": true, "maxSize": 3}"#,
    );
    assert_eq!(fields(&royale, &Tier::pro()), vec![]);
    assert_eq!(royale.match_size(), 60);
    let ffa = flexible(
        r#"{"teams": 8, "teamSize": {"min": 1, "max": 1}, "minTeams": 4}"#,
        "{}",
    );
    assert_eq!(fields(&ffa, &Tier::free()), vec![]);
}

#[test]
fn every_flexible_failure_is_listed() {
    let config = flexible(
        r#"{"teams": 101, "teamSize": {"min": 0, "max": 65}, "minTeams": 1, "settleAfterSeconds": 601}"#,
        r#"{"allowParties": true, "maxSize": 66, "keepTogether": false}"#,
    );
    let got = fields(&config, &Tier::enterprise());
    for (field, code) in [
        ("matchShape.teams", Code::ValidationError),
        ("matchShape.teamSize.min", Code::ValidationError),
        ("matchShape.teamSize.max", Code::ValidationError),
        ("matchShape.minTeams", Code::ValidationError),
        ("matchShape.settleAfterSeconds", Code::ValidationError),
        ("matchShape", Code::MatchSizeLimitExceeded),
        ("parties.keepTogether", Code::ValidationError),
        ("parties.maxSize", Code::PartySizeExceedsShape),
    ] {
        assert!(
            got.contains(&(field.to_string(), code)),
            "{field} {code} missing in {got:?}"
        );
    }
}

#[test]
fn tier_max_match_size_counts_teams_times_max() {
    // 8 × 3 = 24 > free's 16.
    let config = flexible(r#"{"teams": 8, "teamSize": {"min": 1, "max": 3}}"#, "{}");
    assert_eq!(
        fields(&config, &Tier::free()),
        vec![("matchShape".to_string(), Code::MatchSizeLimitExceeded)]
    );
}

#[test]
fn relaxations_are_refused_with_a_flexible_shape() {
    let mut config = flexible(r#"{"teams": 8, "teamSize": {"min": 1, "max": 1}}"#, "{}");
    config.relaxations =
        mode(r#", "relaxations": [{"afterSeconds": 20, "matchShape": [4, 4]}]"#).relaxations;
    assert_eq!(
        fields(&config, &Tier::pro()),
        vec![("relaxations".to_string(), Code::ValidationError)]
    );
}

#[test]
fn a_malformed_shape_is_a_parse_error_naming_both_forms() {
    let err = serde_json::from_str::<GameModeConfig>(
        r#"{"name": "x", "matchShape": 5, "matchmakingCycleDurationSeconds": 2, "algorithm": {"type": "fifo"}}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("array of team sizes"), "{err}");
}
