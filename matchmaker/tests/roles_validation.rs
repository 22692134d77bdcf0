//! Role queues (docs/rules.md, "Role queues"): `composition` validated
//! with the mode's other errors, and tickets' role lists parsed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use matchplane_matchmaker::rules::Owner;
use matchplane_matchmaker::{validate, Attributes, Code, GameModeConfig, RawAttributes, Tier};
use serde_json::{json, Value};

fn mode(extra: Value) -> GameModeConfig {
    let mut base = json!({
        "name": "roles-5v5", "matchShape": [5, 5], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
        "attributes": {
            "roles": {"type": "stringSet", "values": ["tank", "damage", "support"]},
            "map": {"type": "string"}
        },
        "composition": {"attribute": "roles",
            "perTeam": {"tank": 1, "damage": 2, "support": 2},
            "relax": [{"afterSeconds": 120, "perTeam": {"tank": 1, "damage": 2, "support": 1, "any": 1}}]}
    });
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    serde_json::from_value(base).unwrap()
}

fn errors(config: &GameModeConfig) -> Vec<(String, Code)> {
    let tier = Tier::by_name("enterprise").unwrap();
    match validate(config, &tier) {
        Ok(()) => Vec::new(),
        Err(e) => e.0.into_iter().map(|f| (f.field, f.code)).collect(),
    }
}

fn has(errors: &[(String, Code)], field: &str) -> bool {
    errors
        .iter()
        .any(|(f, c)| f == field && *c == Code::ValidationError)
}

#[test]
fn the_documented_composition_validates_and_round_trips() {
    let config = mode(json!({}));
    assert_eq!(errors(&config), Vec::new());
    let text = serde_json::to_value(&config).unwrap();
    assert_eq!(text["composition"]["perTeam"]["tank"], 1);
    assert_eq!(
        text["composition"]["relax"][0]["perTeam"]["any"], 1,
        "{text}"
    );
    let back: GameModeConfig = serde_json::from_value(text).unwrap();
    assert_eq!(back, config);
}

#[test]
fn every_bad_composition_is_reported_at_once_with_its_field() {
    let relax: Vec<Value> = (0..9)
        .map(|i| json!({"afterSeconds": 10 * (i + 1), "perTeam": {"tank": 1, "damage": 4}}))
        .collect();
    let config = mode(json!({
        "matchShape": [5, 4],
        "relaxations": [{"afterSeconds": 30, "matchShape": [4, 4]}],
        "composition": {"attribute": "roles",
            "perTeam": {"tank": 1, "healer": 2, "support": 3},
            "relax": relax}
    }));
    let e = errors(&config);
    assert!(has(&e, "composition.perTeam.healer"), "{e:?}");
    assert!(has(&e, "matchShape"), "unequal teams: {e:?}");
    assert!(has(&e, "relaxations"), "shape relaxations: {e:?}");
    assert!(has(&e, "composition.relax"), "nine steps: {e:?}");
}

#[test]
fn counts_must_sum_to_the_team_size_in_the_base_and_every_step() {
    let config = mode(json!({
        "composition": {"attribute": "roles",
            "perTeam": {"tank": 1, "damage": 2, "support": 1},
            "relax": [{"afterSeconds": 60, "perTeam": {"tank": 2, "damage": 2, "support": 2}},
                      {"afterSeconds": 30, "perTeam": {"tank": 1, "any": 4}}]}
    }));
    let e = errors(&config);
    assert!(has(&e, "composition.perTeam"), "{e:?}");
    assert!(has(&e, "composition.relax[0].perTeam"), "{e:?}");
    assert!(
        !has(&e, "composition.relax[1].perTeam"),
        "1 + 4 any is 5: {e:?}"
    );
    assert!(
        has(&e, "composition.relax[1].afterSeconds"),
        "not increasing: {e:?}"
    );
}

#[test]
fn the_attribute_must_be_a_declared_string_set_with_values() {
    let undeclared = mode(json!({
        "composition": {"attribute": "nope", "perTeam": {"tank": 5}}
    }));
    assert!(has(&errors(&undeclared), "composition.attribute"));
    let wrong_type = mode(json!({
        "composition": {"attribute": "map", "perTeam": {"any": 5}}
    }));
    assert!(has(&errors(&wrong_type), "composition.attribute"));
    let no_values = mode(json!({
        "attributes": {"roles": {"type": "stringSet"}},
        "composition": {"attribute": "roles", "perTeam": {"any": 5}}
    }));
    assert!(has(&errors(&no_values), "composition.attribute"));
}

#[test]
fn a_flexible_shape_is_refused_with_composition() {
    let config = mode(json!({
        "matchShape": {"teams": 2, "teamSize": {"min": 1, "max": 5}}
    }));
    let e = errors(&config);
    assert!(has(&e, "composition"), "{e:?}");
}

#[test]
fn unknown_fields_of_composition_are_refused() {
    let text = json!({
        "name": "x", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
        "algorithm": {"type": "fifo"},
        "composition": {"attribute": "roles", "perTeam": {"tank": 1}, "perteam": {}}
    });
    assert!(serde_json::from_value::<GameModeConfig>(text).is_err());
}

fn ticket(config: &GameModeConfig, attributes: Value) -> Result<Attributes, Vec<(String, Code)>> {
    let raw: RawAttributes = serde_json::from_value(attributes).unwrap();
    Attributes::parse(raw, config, Owner::new("p1", None))
        .map_err(|e| e.into_iter().map(|f| (f.field, f.code)).collect())
}

#[test]
fn a_ticket_lists_at_least_one_role_among_the_values() {
    let config = mode(json!({}));
    ticket(
        &config,
        json!({"mmr": 1500, "map": "a", "roles": ["tank", "support"]}),
    )
    .unwrap();
    let empty = ticket(&config, json!({"mmr": 1500, "map": "a", "roles": []})).unwrap_err();
    assert!(has(&empty, "attributes.roles"), "{empty:?}");
    let unknown = ticket(
        &config,
        json!({"mmr": 1500, "map": "a", "roles": ["healer"]}),
    )
    .unwrap_err();
    assert!(
        unknown
            .iter()
            .any(|(f, c)| f.starts_with("attributes.roles") && *c == Code::ValidationError),
        "{unknown:?}"
    );
    let missing = ticket(&config, json!({"mmr": 1500, "map": "a"})).unwrap_err();
    assert!(
        missing
            .iter()
            .any(|(f, c)| f == "attributes.roles" && *c == Code::AttributeRequired),
        "{missing:?}"
    );
}

#[test]
fn an_empty_default_role_list_is_refused_when_the_ticket_leaves_it_out() {
    let config = mode(json!({
        "attributes": {"roles": {"type": "stringSet", "values": ["tank", "damage", "support"], "default": []},
                       "map": {"type": "string"}}
    }));
    let e = ticket(&config, json!({"mmr": 1500, "map": "a"})).unwrap_err();
    assert!(has(&e, "attributes.roles"), "{e:?}");
}

#[test]
fn a_role_cannot_be_named_any() {
    // `any` is the wildcard seat of perTeam: a role of that name could not
    // be told from it.
    let config = mode(json!({
        "attributes": {"roles": {"type": "stringSet", "values": ["tank", "any"]}},
        "composition": {"attribute": "roles", "perTeam": {"tank": 2, "any": 3}}
    }));
    let e = errors(&config);
    assert!(has(&e, "attributes.roles.values"), "{e:?}");
}

/// A role attribute's `default` of no role would refuse every ticket that
/// leaves the attribute out: the mode is refused instead.
#[test]
fn an_empty_default_role_list_is_refused_with_the_mode() {
    let config = mode(json!({"attributes": {
        "roles": {"type": "stringSet", "values": ["tank", "damage", "support"], "default": []}
    }}));
    let errors = errors(&config);
    assert!(has(&errors, "attributes.roles.default"), "{errors:?}");
    let config = mode(json!({"attributes": {
        "roles": {"type": "stringSet", "values": ["tank", "damage", "support"], "default": ["damage"]}
    }}));
    assert!(self::errors(&config).is_empty());
}

/// Likewise a `default` listing only roles no step seats (a role of
/// `values` with no seat, no `any` seat): refused with the mode; a step
/// with an `any` seat seats it.
#[test]
fn a_default_whose_roles_no_step_seats_is_refused_with_the_mode() {
    let roles = json!({"type": "stringSet",
        "values": ["tank", "damage", "support", "spectator"], "default": ["spectator"]});
    let config = mode(json!({
        "attributes": {"roles": roles},
        "composition": {"attribute": "roles", "perTeam": {"tank": 1, "damage": 2, "support": 2}}
    }));
    let errors = errors(&config);
    assert_eq!(
        errors,
        vec![("attributes.roles.default".to_owned(), Code::ValidationError)]
    );
    // The documented composition's relaxed step has an `any` seat.
    let config = mode(json!({"attributes": {"roles": roles}}));
    assert!(self::errors(&config).is_empty());
}

/// A ticket listing only roles no step of the composition seats (a count
/// of 0, no `any` seat) could never be matched: refused at once.
#[test]
fn a_ticket_whose_roles_no_step_seats_is_refused() {
    let config = mode(json!({"composition": {"attribute": "roles",
        "perTeam": {"tank": 3, "support": 2, "damage": 0}}}));
    let refused = ticket(
        &config,
        json!({"mmr": 1500, "map": "a", "roles": ["damage"]}),
    )
    .unwrap_err();
    assert!(has(&refused, "attributes.roles"), "{refused:?}");
    ticket(
        &config,
        json!({"mmr": 1500, "map": "a", "roles": ["damage", "tank"]}),
    )
    .unwrap();
    // A relax step with an `any` seat seats anyone.
    let config = mode(json!({"composition": {"attribute": "roles",
        "perTeam": {"tank": 3, "support": 2, "damage": 0},
        "relax": [{"afterSeconds": 60, "perTeam": {"tank": 2, "support": 2, "any": 1}}]}}));
    ticket(
        &config,
        json!({"mmr": 1500, "map": "a", "roles": ["damage"]}),
    )
    .unwrap();
}
