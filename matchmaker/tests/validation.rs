//! Game-mode JSON (docs/game-modes.md) and validation against a tier, every failure at once.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::{validate, Algorithm, Code, GameModeConfig, TeamAssignment, Tier};

const SPEC_EXAMPLE: &str = r#"{
  "name": "ranked-5v5",
  "enabled": true,
  "matchShape": [5, 5],
  "matchmakingCycleDurationSeconds": 2,
  "algorithm": { "type": "mmr", "minMmr": 0, "maxMmr": 3000,
                 "baseTolerance": 5, "expansionMultiplier": 2 },
  "teamAssignment": "balanced",
  "parties": { "allowParties": true, "maxSize": 3, "keepTogether": true },
  "ticketTtlSeconds": 600,
  "webhook": { "url": "https://game.example.com/hooks/match", "enabled": true }
}"#;

#[test]
fn spec_example_parses_and_validates_on_pro() {
    let config: GameModeConfig = serde_json::from_str(SPEC_EXAMPLE).unwrap();
    assert_eq!(config.match_size(), 10);
    assert!(
        matches!(config.algorithm, Algorithm::Mmr { base_tolerance, .. } if base_tolerance == 5.0)
    );
    validate(&config, &Tier::pro()).unwrap();
    // Free's cycle floor is 5 s: the same mode fails there, with its code.
    let err = validate(&config, &Tier::free()).unwrap_err();
    assert_eq!(err.0.len(), 1);
    assert_eq!(err.0[0].code, Code::CycleDurationBelowTierFloor);
    assert_eq!(err.0[0].field, "matchmakingCycleDurationSeconds");
    // JSON round trip keeps the exact field names.
    let back = serde_json::to_value(&config).unwrap();
    assert_eq!(back["algorithm"]["type"], "mmr");
    assert_eq!(back["parties"]["keepTogether"], true);
}

#[test]
fn defaults_fill_what_a_studio_leaves_out() {
    let config: GameModeConfig = serde_json::from_str(
        r#"{"name": "casual", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 5, "algorithm": {"type": "fifo"}}"#,
    )
    .unwrap();
    assert!(config.enabled);
    assert_eq!(config.team_assignment, TeamAssignment::Balanced);
    assert!(!config.parties.allow_parties);
    assert_eq!(config.parties.max_size, 1);
    assert!(config.parties.keep_together);
    assert_eq!(config.ticket_ttl_seconds, 600);
}

#[test]
fn every_failure_is_reported_at_once_with_field_and_code() {
    let config: GameModeConfig = serde_json::from_str(
        r#"{"name": "Bad Name", "matchShape": [9, 9], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "mmr", "minMmr": 10, "maxMmr": 10, "baseTolerance": 2, "expansionMultiplier": 0.5},
            "parties": {"allowParties": true, "maxSize": 10, "keepTogether": true},
            "ticketTtlSeconds": 0,
            "ratings": {"tau": -1}}"#,
    )
    .unwrap();
    let err = validate(&config, &Tier::free()).unwrap_err();
    let got: Vec<(&str, Code)> = err.0.iter().map(|e| (e.field.as_str(), e.code)).collect();
    assert_eq!(
        got,
        vec![
            ("name", Code::ValidationError),
            ("matchShape", Code::MatchSizeLimitExceeded),
            (
                "matchmakingCycleDurationSeconds",
                Code::CycleDurationBelowTierFloor
            ),
            ("algorithm.maxMmr", Code::ValidationError),
            ("algorithm.baseTolerance", Code::ToleranceBelowTierFloor),
            (
                "algorithm.expansionMultiplier",
                Code::ExpansionBelowTierFloor
            ),
            ("parties.maxSize", Code::PartySizeExceedsShape),
            ("ticketTtlSeconds", Code::ValidationError),
            ("ratings.tau", Code::ValidationError),
        ]
    );
    assert_eq!(err.primary_code(), Code::ValidationError);
}

#[test]
fn shape_and_party_rules() {
    let base = |shape: &str, parties: &str| -> Vec<Code> {
        let config: GameModeConfig = serde_json::from_str(&format!(
            r#"{{"name": "m", "matchShape": {shape}, "matchmakingCycleDurationSeconds": 1,
                "algorithm": {{"type": "ping", "maxDelta": 50}}, "parties": {parties}}}"#
        ))
        .unwrap();
        validate(&config, &Tier::enterprise())
            .err()
            .map(|e| e.0.iter().map(|f| f.code).collect())
            .unwrap_or_default()
    };
    assert_eq!(
        base("[1]", "{}"),
        vec![Code::ValidationError],
        "a match needs two players"
    );
    assert_eq!(
        base("[]", "{}"),
        vec![Code::ValidationError, Code::ValidationError]
    );
    assert_eq!(base("[0, 2]", "{}"), vec![Code::ValidationError]);
    assert!(base(
        "[1, 3]",
        r#"{"allowParties": true, "maxSize": 3, "keepTogether": true}"#
    )
    .is_empty());
    assert_eq!(
        base(
            "[1, 3]",
            r#"{"allowParties": true, "maxSize": 4, "keepTogether": true}"#
        ),
        vec![Code::PartySizeExceedsShape]
    );
    // Without keep-together a party may span teams, up to the match size.
    assert!(base(
        "[1, 3]",
        r#"{"allowParties": true, "maxSize": 4, "keepTogether": false}"#
    )
    .is_empty());
    assert_eq!(
        base(
            "[1, 3]",
            r#"{"allowParties": true, "maxSize": 5, "keepTogether": false}"#
        ),
        vec![Code::PartySizeExceedsShape]
    );
}

#[test]
fn ping_delta_bounds() {
    for (delta, ok) in [(0.0, false), (0.5, true), (1000.0, true), (1000.5, false)] {
        let config: GameModeConfig = serde_json::from_value(serde_json::json!({
            "name": "p", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
            "algorithm": {"type": "ping", "maxDelta": delta}}))
        .unwrap();
        assert_eq!(
            validate(&config, &Tier::pro()).is_ok(),
            ok,
            "maxDelta {delta}"
        );
    }
}

#[test]
fn unknown_fields_and_algorithms_are_refused() {
    assert!(serde_json::from_str::<GameModeConfig>(
        r#"{"name": "m", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1, "algorithm": {"type": "elo"}}"#
    )
    .is_err());
    assert!(serde_json::from_str::<GameModeConfig>(
        r#"{"name": "m", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1, "algorithm": {"type": "fifo"}, "colour": 1}"#
    )
    .is_err());
}

#[test]
fn seeded_tiers_are_spec_2() {
    let [free, pro, enterprise] = Tier::seeded();
    assert_eq!(
        (
            free.max_match_size,
            pro.max_match_size,
            enterprise.max_match_size
        ),
        (16, 64, 200)
    );
    assert_eq!(enterprise.min_cycle_duration_seconds, 0.1);
    assert_eq!(pro.requests_per_second, 2000);
    assert_eq!(free.max_concurrent_searches, 1000);
}

#[test]
fn mmr_magnitudes_that_would_overflow_a_match_are_refused() {
    // Case from a newcomer's probe: a range of ±1.7e308 was accepted, the
    // match's team means overflowed to infinity and the match could not be
    // recorded. Bounds and ticket values are now limited to ±1e9.
    let config: GameModeConfig = serde_json::from_value(serde_json::json!({
        "name": "m", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": -1.7e308, "maxMmr": 1.7e308,
                      "baseTolerance": 5, "expansionMultiplier": 2}}))
    .unwrap();
    let err = validate(&config, &Tier::pro()).unwrap_err();
    assert_eq!(err.0[0].field, "algorithm.maxMmr");
    let mut ping = config.clone();
    ping.algorithm = Algorithm::Ping { max_delta: 50.0 };
    validate(&ping, &Tier::pro()).unwrap();
    let huge = matchplane_matchmaker::attributes::check_mmr(&ping, Some(1.7e308)).unwrap_err();
    assert_eq!(huge.code, Code::ValidationError);
    assert!(matchplane_matchmaker::attributes::check_mmr(&ping, Some(1e9)).is_ok());
}

#[test]
fn a_webhook_url_longer_than_2_kib_is_refused() {
    let mut config: GameModeConfig = serde_json::from_str(SPEC_EXAMPLE).unwrap();
    let base = "https://game.example.com/hooks/";
    let webhook = config.webhook.as_mut().unwrap();
    webhook.url = Some(format!("{base}{}", "a".repeat(2_048 - base.len())));
    validate(&config, &Tier::pro()).unwrap();
    if let Some(url) = config.webhook.as_mut().unwrap().url.as_mut() {
        url.push('a');
    }
    let err = validate(&config, &Tier::pro()).unwrap_err();
    assert_eq!(err.0.len(), 1);
    assert_eq!(err.0[0].code, Code::InvalidWebhookUrl);
    assert_eq!(err.0[0].field, "webhook.url");
    assert!(err.0[0].message.contains("2048"), "{}", err.0[0].message);
}

#[test]
fn use_project_endpoint_takes_no_url_and_a_mode_without_it_needs_one() {
    let mut config: GameModeConfig = serde_json::from_str(SPEC_EXAMPLE).unwrap();
    let webhook = config.webhook.as_mut().unwrap();
    webhook.use_project_endpoint = true;
    let err = validate(&config, &Tier::pro()).unwrap_err();
    assert_eq!(err.0.len(), 1);
    assert_eq!(err.0[0].field, "webhook.url");
    assert_eq!(err.0[0].code, Code::ValidationError);
    config.webhook.as_mut().unwrap().url = None;
    validate(&config, &Tier::pro()).unwrap();
    // The stored JSON of a mode on the project endpoint has no url; a mode
    // with its own url keeps exactly its fields.
    let stored = serde_json::to_value(config.webhook.as_ref().unwrap()).unwrap();
    assert_eq!(
        stored,
        serde_json::json!({"enabled": true, "useProjectEndpoint": true})
    );
    config.webhook.as_mut().unwrap().use_project_endpoint = false;
    let err = validate(&config, &Tier::pro()).unwrap_err();
    assert_eq!(err.0[0].field, "webhook.url");
    assert_eq!(err.0[0].code, Code::InvalidWebhookUrl);
    let own: GameModeConfig = serde_json::from_str(SPEC_EXAMPLE).unwrap();
    let mut keys: Vec<String> = serde_json::to_value(own.webhook.unwrap())
        .unwrap()
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["enabled", "url"]);
    // `url: null` is refused by the parse, as the document says.
    let mut raw: serde_json::Value = serde_json::from_str(SPEC_EXAMPLE).unwrap();
    raw["webhook"]["url"] = serde_json::Value::Null;
    assert!(serde_json::from_value::<GameModeConfig>(raw).is_err());
}
