//! The OpenAPI document as third-party tools read it: unique operation ids,
//! every error a problem, every security scheme declared, every body with
//! an example, and the API's real answers (and the worker's webhooks, the
//! socket's messages) valid against the document's own schemas.

use crate::common::{mode, Answer, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn doc() -> Value {
    serde_json::to_value(matchplane_api::openapi()).unwrap()
}

const METHODS: [&str; 5] = ["get", "put", "post", "patch", "delete"];

/// Every (method, path, operation) of the document's paths.
fn operations(doc: &Value) -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS {
            if let Some(op) = item.get(method) {
                out.push((method.to_owned(), path.clone(), op.clone()));
            }
        }
    }
    out
}

/// A validator of `schema`, its `$ref`s resolved in the document.
fn validator(doc: &Value, schema: &Value) -> jsonschema::Validator {
    let mut root = json!({"$schema": "https://json-schema.org/draft/2020-12/schema"});
    if let Value::Object(fields) = schema {
        for (k, v) in fields {
            root[k] = v.clone();
        }
    }
    root["components"] = doc["components"].clone();
    jsonschema::draft202012::new(&root).unwrap_or_else(|e| panic!("schema {schema}: {e}"))
}

fn assert_valid(doc: &Value, schema: &Value, instance: &Value, what: &str) {
    let v = validator(doc, schema);
    let errors: Vec<String> = v
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: {instance}\nagainst {schema}:\n{}",
        errors.join("\n")
    );
}

fn component(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// Asserts `answer` is documented for `method template` (its status and
/// content type) and its body valid against the documented schema.
fn check_answer(doc: &Value, method: &Method, template: &str, answer: &Answer) {
    let what = format!("{method} {template} -> {}", answer.status);
    let op = &doc["paths"][template][method.as_str().to_ascii_lowercase()];
    assert!(op.is_object(), "{what}: no such operation");
    let response = &op["responses"][answer.status.as_str()];
    assert!(
        response.is_object(),
        "{what}: status undocumented ({}): {}",
        op["responses"]
            .as_object()
            .map(|r| r.keys().cloned().collect::<Vec<_>>().join(","))
            .unwrap_or_default(),
        answer.body
    );
    if answer.body.is_null() {
        return;
    }
    let content_type = answer
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let media = &response["content"][content_type.as_str()];
    assert!(
        media.is_object(),
        "{what}: content type {content_type} undocumented: {}",
        response["content"]
    );
    assert_valid(doc, &media["schema"], &answer.body, &what);
    assert_timestamps_canonical(&answer.body, &what);
}

/// Every string in `value` that parses as a date-time is written in the
/// one form (RFC 3339, three fractional digits, `Z`): docs/openapi.md,
/// "Timestamps".
fn assert_timestamps_canonical(value: &Value, what: &str) {
    match value {
        Value::String(s) if chrono::DateTime::parse_from_rfc3339(s).is_ok() => {
            assert!(
                matchplane_matchmaker::timestamp::is_canonical(s),
                "{what}: timestamp {s:?} is not RFC 3339 with milliseconds and `Z`"
            );
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| assert_timestamps_canonical(v, what)),
        Value::Object(fields) => fields
            .values()
            .for_each(|v| assert_timestamps_canonical(v, what)),
        _ => {}
    }
}

fn check_request(doc: &Value, method: &Method, template: &str, body: &Value) {
    let op = &doc["paths"][template][method.as_str().to_ascii_lowercase()];
    let schema = &op["requestBody"]["content"]["application/json"]["schema"];
    assert!(
        schema.is_object(),
        "{method} {template}: no JSON request body"
    );
    assert_valid(
        doc,
        schema,
        body,
        &format!("request of {method} {template}"),
    );
}

#[test]
fn operation_ids_are_unique_and_named_like_methods() {
    let doc = doc();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let webhooks = doc["webhooks"].as_object().expect("webhooks").clone();
    let mut all = operations(&doc);
    for (name, item) in &webhooks {
        all.push((
            "post".into(),
            format!("webhook {name}"),
            item["post"].clone(),
        ));
    }
    for (method, path, op) in all {
        let id = op["operationId"]
            .as_str()
            .unwrap_or_else(|| panic!("{method} {path} has no operationId"))
            .to_owned();
        assert!(
            is_method_name(&id),
            "{method} {path}: operationId {id:?} is not camelCase"
        );
        if let Some(other) = seen.insert(id.clone(), format!("{method} {path}")) {
            panic!("operationId {id} of {method} {path} is also {other}'s");
        }
    }
}

/// `^[a-z][a-zA-Z0-9]+$`: a code generator's method name.
fn is_method_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && s.len() > 1
        && chars.all(|c| c.is_ascii_alphanumeric())
}

#[test]
fn every_error_answer_is_documented_as_a_problem() {
    let doc = doc();
    let mut checked = 0;
    for (method, path, op) in operations(&doc) {
        for (status, response) in op["responses"].as_object().unwrap() {
            if !(status.starts_with('4') || status.starts_with('5')) {
                continue;
            }
            let content = response["content"].as_object().unwrap();
            assert_eq!(
                content.keys().collect::<Vec<_>>(),
                ["application/problem+json"],
                "{method} {path} {status}"
            );
            assert_eq!(
                content["application/problem+json"]["schema"],
                component("Problem"),
                "{method} {path} {status}"
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn every_security_requirement_names_a_declared_scheme() {
    let doc = doc();
    let schemes = doc["components"]["securitySchemes"].as_object().unwrap();
    assert_eq!(schemes["ticket"]["type"], "apiKey");
    assert_eq!(schemes["ticket"]["in"], "header");
    assert_eq!(schemes["ticket"]["name"], "Authorization");
    assert_eq!(schemes["ticketQuery"]["in"], "query");
    assert_eq!(schemes["ticketQuery"]["name"], "ticket");
    for (method, path, op) in operations(&doc) {
        if !path.starts_with("/v1/") {
            continue;
        }
        let security = op["security"]
            .as_array()
            .unwrap_or_else(|| panic!("{method} {path} declares no security"));
        for requirement in security {
            for name in requirement.as_object().unwrap().keys() {
                assert!(
                    schemes.contains_key(name),
                    "{method} {path}: {name} undeclared"
                );
            }
        }
    }
    let socket = &doc["paths"]["/v1/search"]["get"]["security"];
    assert_eq!(socket, &json!([{"ticketQuery": []}]));
    let poll = &doc["paths"]["/v1/searches/{ticketId}"]["get"]["security"];
    assert_eq!(poll, &json!([{"ticket": []}]));
}

/// Whether `schema` (a `$ref` followed, array items looked into) carries an
/// example.
fn has_example(doc: &Value, schema: &Value) -> bool {
    if schema.get("example").is_some() || schema.get("examples").is_some() {
        return true;
    }
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap();
        return has_example(doc, &doc["components"]["schemas"][name]);
    }
    if schema["type"] == "array" {
        return has_example(doc, &schema["items"]);
    }
    if let Some(branches) = schema["oneOf"].as_array() {
        // An optional body: every branch but `null` has one.
        return branches
            .iter()
            .filter(|b| b["type"] != "null")
            .all(|b| has_example(doc, b));
    }
    false
}

/// No property of an inline `oneOf` variant is an object written in place:
/// generators name such objects by position, and openapi-python-client
/// gave two of them one name and dropped both, leaving a client that could
/// not read a ticket's status (docs/openapi.md).
#[test]
fn objects_inside_union_variants_are_named_schemas() {
    let doc = doc();
    let mut inline = Vec::new();
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        for (i, variant) in schema["oneOf"].as_array().into_iter().flatten().enumerate() {
            for (property, value) in variant["properties"].as_object().into_iter().flatten() {
                let object = value["type"] == "object"
                    || value["type"]
                        .as_array()
                        .is_some_and(|t| t.contains(&json!("object")));
                if object && value.get("$ref").is_none() {
                    inline.push(format!("{name}.oneOf[{i}].{property}"));
                }
            }
        }
    }
    assert!(
        inline.is_empty(),
        "inline objects in union variants: {inline:?}"
    );
}

/// Every object schema of the whole document (components, paths, webhooks)
/// with no `properties` says what its keys are: a free-form object (a
/// ticket's `data`, a report) has `additionalProperties: true`, which
/// generators read as "any object" where a bare `{"type": "object"}` became
/// an object nothing fits in (openapi-typescript's `Record<string, never>`).
#[test]
fn free_form_objects_say_they_take_any_key() {
    fn walk(value: &Value, at: &str, bare: &mut Vec<String>) {
        match value {
            Value::Object(fields) => {
                let object = fields.get("type") == Some(&json!("object"))
                    || fields
                        .get("type")
                        .and_then(Value::as_array)
                        .is_some_and(|t| t.contains(&json!("object")));
                let keyed = fields
                    .get("properties")
                    .and_then(Value::as_object)
                    .is_some_and(|p| !p.is_empty())
                    || fields.contains_key("additionalProperties")
                    || fields.contains_key("patternProperties");
                if object && !keyed {
                    bare.push(at.to_owned());
                }
                for (key, inner) in fields {
                    if !["example", "examples", "default", "enum", "const"].contains(&key.as_str())
                    {
                        walk(inner, &format!("{at}/{key}"), bare);
                    }
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{at}/{i}"), bare);
                }
            }
            _ => {}
        }
    }
    let mut bare = Vec::new();
    walk(&doc(), "", &mut bare);
    assert!(
        bare.is_empty(),
        "objects without properties nor additionalProperties:\n{}",
        bare.join("\n")
    );
}

#[test]
fn every_body_has_an_example() {
    let doc = doc();
    let mut missing = Vec::new();
    for (method, path, op) in operations(&doc) {
        let mut bodies: Vec<(String, Value)> = Vec::new();
        if let Some(content) = op["requestBody"]["content"].as_object() {
            for (ct, media) in content {
                bodies.push((format!("request {ct}"), media.clone()));
            }
        }
        for (status, response) in op["responses"].as_object().unwrap() {
            if let Some(content) = response["content"].as_object() {
                for (ct, media) in content {
                    bodies.push((format!("{status} {ct}"), media.clone()));
                }
            }
        }
        for (what, media) in bodies {
            let text = media["schema"]["type"] == "string";
            if media.get("example").is_none() && !text && !has_example(&doc, &media["schema"]) {
                missing.push(format!("{method} {path} {what}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "bodies without an example:\n{}",
        missing.join("\n")
    );
}

#[test]
fn every_example_is_valid_against_its_schema() {
    let doc = doc();
    let mut checked = 0;
    for (name, schema) in doc["components"]["schemas"].as_object().unwrap() {
        let examples: Vec<Value> = match (schema.get("example"), schema.get("examples")) {
            (Some(one), _) => vec![one.clone()],
            (None, Some(Value::Array(many))) => many.clone(),
            _ => continue,
        };
        for example in examples {
            assert_valid(
                &doc,
                &component(name),
                &example,
                &format!("example of {name}"),
            );
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked}");
}

/// The socket's messages, as the store serialises every kind, and the
/// worker's webhook bodies are valid against their components, and the
/// webhooks are in the document.
#[test]
fn socket_messages_and_webhook_bodies_match_their_schemas() {
    use matchplane_store::tickets::StatusMessage;
    use matchplane_webhook::payload::{BotSeat, Player, Quality, Team};
    use matchplane_webhook::{Event, MatchMade, WebhookTest};
    let doc = doc();
    let messages = [
        StatusMessage::Searching {
            ticket_id: "tkt_1".into(),
            game_mode: "duel".into(),
            queued_at: "2026-12-01T10:00:00.000Z".into(),
        },
        StatusMessage::Status {
            wait_seconds: 2.5,
            ping_ms: Some(31.0),
            waiting_reason: Some(
                json!({"code": "NOT_ENOUGH_PLAYERS", "seatsWaiting": 1, "seatsNeeded": 2}),
            ),
            found: Some(1),
            needed: Some(2),
            role_waits: Some([("tank".to_owned(), 20.5)].into()),
        },
        StatusMessage::Status {
            wait_seconds: 0.0,
            ping_ms: None,
            waiting_reason: None,
            found: None,
            needed: None,
            role_waits: None,
        },
        StatusMessage::Status {
            wait_seconds: 3.0,
            ping_ms: None,
            waiting_reason: Some(json!({"code": "MATCH_PENDING"})),
            found: None,
            needed: None,
            role_waits: None,
        },
        StatusMessage::Status {
            wait_seconds: 3.0,
            ping_ms: Some(20.0),
            waiting_reason: Some(json!({"code": "NO_CANDIDATES_IN_RANGE",
                "nearestDistance": null, "range": 40.0, "unblocksInSeconds": null})),
            found: Some(1),
            needed: Some(2),
            role_waits: None,
        },
        StatusMessage::Proposed {
            match_id: "mat_1".into(),
            accept_by: "2026-12-01T10:00:20.000Z".into(),
            accept_in_seconds: 17.5,
            teams: vec![vec!["ana".into()], vec!["ben".into()]],
            attributes: Default::default(),
        },
        StatusMessage::Requeued {
            match_id: Some("mat_1".into()),
        },
        StatusMessage::Requeued { match_id: None },
        StatusMessage::Assigned {
            connection: "203.0.113.7:7777".into(),
            data: json!({"seat": 1}),
        },
        StatusMessage::AssignmentTimeout,
        StatusMessage::Failed {
            code: "GAME_MODE_DISABLED".into(),
            message: "game mode duel is disabled".into(),
        },
        StatusMessage::Cancelled,
        StatusMessage::Expired { reason: None },
        StatusMessage::Expired {
            reason: Some("PONG_TIMEOUT".into()),
        },
    ];
    let made_body = MatchMade {
        match_id: "mat_1".into(),
        project_id: "prj_1".into(),
        game_mode: "duel".into(),
        game_mode_version: 3,
        created_at: chrono::Utc::now(),
        made_at: Some(chrono::Utc::now()),
        teams: vec![Team {
            index: 0,
            players: vec![Player {
                player_id: "ana".into(),
                ticket_id: "tkt_1".into(),
                party_id: Some("party-1".into()),
                mmr: Some(1500.0),
                ping_ms: None,
                wait_seconds: 1.5,
                latency_ms: Some(31.0),
                data: Some(
                    matchplane_matchmaker::RawJson::from_text(r#"{"loadout":[3,1]}"#).unwrap(),
                ),
                backfill: false,
                left: false,
                attributes: Default::default(),
                role: Some("tank".into()),
            }],
            mean_mmr: Some(1500.0),
            bots: vec![BotSeat::new(Some(1500.0))],
        }],
        quality: Quality {
            mmr_spread: 0.0,
            team_imbalance: 0.0,
        },
        match_shape: vec![2],
        seats_open: vec![1],
        region: Some("eu-west".into()),
        backfill_id: None,
        attributes: Default::default(),
    };
    // The `matched` message carries the player's view of a real match.
    let player_view = matchplane_webhook::player_match(&made_body, "tkt_1").unwrap();
    let matched = StatusMessage::Matched {
        match_: player_view.clone(),
    };
    let mut kinds = std::collections::BTreeSet::new();
    for message in messages.into_iter().chain([matched]) {
        let json: Value = serde_json::from_str(&message.to_json()).unwrap();
        assert_valid(&doc, &component("SearchMessage"), &json, "socket message");
        kinds.insert(json["type"].as_str().unwrap().to_owned());
    }
    // Every kind a client receives is documented, each as its own
    // variant with its `type` a one-value enum; `released` (internal) is not.
    let documented: std::collections::BTreeSet<String> = doc["components"]["schemas"]
        ["SearchMessage"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            v["properties"]["type"]["enum"][0]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(kinds, documented);
    for kind in [
        "searching",
        "status",
        "proposed",
        "matched",
        "assigned",
        "requeued",
        "assignment_timeout",
        "failed",
        "cancelled",
        "expired",
    ] {
        assert!(documented.contains(kind), "{kind} missing: {documented:?}");
    }
    // A matched ticket's status shows either view of its match.
    let player_view: Value = serde_json::from_str(player_view.get()).unwrap();
    let studio_view = serde_json::to_value(&made_body).unwrap();
    for view in [&player_view, &studio_view] {
        assert_valid(&doc, &component("TicketMatch"), view, "a ticket's match");
        assert_timestamps_canonical(view, "a ticket's match");
    }
    let match_schema = &doc["components"]["schemas"]["PlayerMatch"];
    for field in [
        "matchId",
        "gameMode",
        "createdAt",
        "teams",
        "player",
        "quality",
    ] {
        assert!(
            match_schema["properties"][field].is_object(),
            "PlayerMatch.{field}: {match_schema}"
        );
    }
    let made = Event::MatchMade(made_body);
    let test = Event::Test(WebhookTest {
        project_id: "prj_1".into(),
        game_mode: "duel".into(),
        created_at: chrono::Utc::now(),
    });
    for (event, name, hook) in [
        (made, "MatchMadeEvent", "match.made"),
        (test, "WebhookTestEvent", "webhook.test"),
    ] {
        let json = serde_json::to_value(&event).unwrap();
        assert_valid(&doc, &component(name), &json, name);
        let body = &doc["webhooks"][hook]["post"]["requestBody"]["content"]["application/json"];
        assert_eq!(body["schema"], component(name), "{hook}");
        assert_valid(&doc, &body["schema"], &json, hook);
    }
    // The same document at /openapi.json carries them.
    assert!(doc["components"]["schemas"]["SearchMessage"].is_object());
}

/// The project endpoint's answer, as its example shows it, is a valid
/// `PUT` body: the request schema lists the server-set members too.
#[test]
fn the_project_webhook_answer_is_a_valid_put_body() {
    let doc = doc();
    let answer = doc["components"]["schemas"]["ProjectWebhookView"]["example"].clone();
    assert!(answer.get("secret").is_some(), "{answer}");
    let template = "/v1/projects/{projectId}/webhook";
    check_request(&doc, &Method::PUT, template, &answer);
}

/// The document's `GameMode` takes exactly the bodies the matching core
/// parses: fields the core defaults may be left out but not sent as
/// `null`, the optional blocks may be `null`, and unknown fields are
/// refused (a generated client neither sends what the server refuses nor
/// refuses what the server answers).
#[test]
fn game_mode_schema_takes_exactly_what_the_core_parses() {
    use matchplane_matchmaker::GameModeConfig;
    let doc = doc();
    let schema = validator(&doc, &component("GameMode"));
    let base = json!({"name": "m", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 2,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2}});
    let mut samples = vec![base.clone()];
    let mut with = |pointer: &str, value: Value| {
        let mut sample = base.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let parent = if parent.is_empty() {
            &mut sample
        } else {
            if sample.pointer(parent).is_none() {
                let (grand, name) = parent.rsplit_once('/').unwrap();
                let grand = if grand.is_empty() {
                    &mut sample
                } else {
                    sample.pointer_mut(grand).unwrap()
                };
                grand[name] = json!({});
            }
            sample.pointer_mut(parent).unwrap()
        };
        parent[key] = value;
        samples.push(sample);
    };
    for field in [
        "enabled",
        "teamAssignment",
        "parties",
        "ticketTtlSeconds",
        "webhook",
        "ratings",
    ] {
        with(&format!("/{field}"), Value::Null);
    }
    with("/enabled", json!(false));
    with("/teamAssignment", json!("snake"));
    with("/ticketTtlSeconds", json!(60));
    with(
        "/parties",
        json!({"allowParties": true, "maxSize": 2, "keepTogether": false}),
    );
    for field in ["allowParties", "maxSize", "keepTogether"] {
        with(&format!("/parties/{field}"), Value::Null);
    }
    with(
        "/webhook",
        json!({"url": "https://93.184.216.34/h", "enabled": false}),
    );
    with(
        "/webhook",
        json!({"url": "https://93.184.216.34/h", "enabled": null}),
    );
    with("/webhook", json!({"enabled": true}));
    with("/ratings", json!({}));
    with(
        "/ratings",
        json!({"enabled": true, "tau": 0.7, "initialRating": 1200, "initialDeviation": 300,
        "initialVolatility": 0.05, "ratingPeriodSeconds": 3600}),
    );
    for field in [
        "enabled",
        "tau",
        "initialRating",
        "initialDeviation",
        "initialVolatility",
        "ratingPeriodSeconds",
    ] {
        with(&format!("/ratings/{field}"), Value::Null);
    }
    with("/ratings", json!({"k": 32}));
    with("/colour", json!("red"));
    with("/algorithm", json!({"type": "fifo"}));
    with("/algorithm", json!({"type": "fifo", "minMmr": 0}));
    with("/algorithm", json!({"type": "ping", "maxDelta": 80}));
    with("/recording", json!({"enabled": true, "retentionDays": 7}));
    with("/recording", json!({"enabled": false}));
    with("/recording", json!({"retentionDays": 7}));
    with("/recording", json!({"enabled": true, "days": 7}));
    with("/attributes", json!({"build": {"type": "string"}}));
    with(
        "/attributes",
        json!({"build": {"type": "string", "min": 1}}),
    );
    with(
        "/attributes",
        json!({"level": {"type": "number", "min": 1}}),
    );
    with(
        "/attributes",
        json!({"level": {"type": "number", "values": ["1"]}}),
    );
    with(
        "/attributes",
        json!({"maps": {"type": "stringSet", "party": "union"}}),
    );
    with(
        "/attributes",
        json!({"blocked": {"type": "playerSet", "max": 5}}),
    );
    with(
        "/rules",
        json!([{"type": "equal", "name": "b", "attribute": "build"}]),
    );
    with(
        "/rules",
        json!([{"type": "equal", "name": "b", "attribute": "build", "max": 1}]),
    );
    with(
        "/rules",
        json!([{"type": "distance", "name": "l", "attribute": "level", "max": 10}]),
    );
    with(
        "/rules",
        json!([{"type": "avoid", "name": "a", "attribute": "blocked", "relax": []}]),
    );
    for sample in samples {
        let core = serde_json::from_value::<GameModeConfig>(sample.clone()).is_ok();
        assert_eq!(
            schema.is_valid(&sample),
            core,
            "document and core disagree on {sample}"
        );
    }
}

/// Every property path under `schema` (its `$ref`s and `oneOf` branches
/// followed), as JSON pointers from `at`.
fn property_paths(doc: &Value, schema: &Value, at: &str, out: &mut Vec<String>, depth: usize) {
    if depth > 8 {
        return;
    }
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.rsplit('/').next().unwrap();
        return property_paths(doc, &doc["components"]["schemas"][name], at, out, depth + 1);
    }
    for key in ["oneOf", "anyOf", "allOf"] {
        for branch in schema[key].as_array().into_iter().flatten() {
            property_paths(doc, branch, at, out, depth + 1);
        }
    }
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        let path = format!("{at}/{name}");
        if !out.contains(&path) {
            out.push(path.clone());
        }
        property_paths(doc, property, &path, out, depth + 1);
    }
}

/// The example of the object schema a property refers to (directly or in
/// one of its branches), as a valid block to set one field of to `null`.
fn block_example(doc: &Value, property: &Value) -> Option<Value> {
    let mut candidates = vec![property.clone()];
    for key in ["oneOf", "anyOf", "allOf"] {
        candidates.extend(property[key].as_array().into_iter().flatten().cloned());
    }
    candidates.iter().find_map(|schema| {
        let name = schema["$ref"].as_str()?.rsplit('/').next()?;
        let example = &doc["components"]["schemas"][name]["example"];
        example.is_object().then(|| example.clone())
    })
}

/// Every field of a game mode, nested blocks' included, sent as `null`:
/// the document takes it exactly when the core does (a field the document
/// says is nullable is one whose `null` the server accepts; a field it
/// defaults may be left out, not sent as `null`). A nested field is set
/// to `null` in its block's own example, so that nothing else in the
/// block is what either side refuses.
#[test]
fn game_mode_nulls_are_taken_exactly_where_the_document_says() {
    use matchplane_matchmaker::GameModeConfig;
    let doc = doc();
    let schema = validator(&doc, &component("GameMode"));
    let base = json!({"name": "m", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 2,
        "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2}});
    let mut paths = Vec::new();
    property_paths(
        &doc,
        &doc["components"]["schemas"]["GameMode"],
        "",
        &mut paths,
        0,
    );
    assert!(
        paths.iter().any(|p| p == "/backfill/ttlSeconds"),
        "{paths:?}"
    );
    let mut disagree = Vec::new();
    // The members the server sets are dropped whatever they hold.
    let server_set = |path: &str| {
        [
            "/version",
            "/createdAt",
            "/updatedAt",
            "/hold",
            "/webhook/secret",
            "/webhook/status",
        ]
        .iter()
        .any(|member| path == *member || path.starts_with(&format!("{member}/")))
    };
    for path in paths.into_iter().filter(|p| !server_set(p)) {
        let mut sample = base.clone();
        let steps: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        if steps.len() > 1 {
            let property = &doc["components"]["schemas"]["GameMode"]["properties"][steps[0]];
            if let Some(example) = block_example(&doc, property) {
                sample[steps[0]] = example;
            }
        }
        let mut at = &mut sample;
        for step in &steps[..steps.len() - 1] {
            if !at[*step].is_object() {
                at[*step] = json!({});
            }
            at = &mut at[*step];
        }
        at[steps[steps.len() - 1]] = Value::Null;
        let core = serde_json::from_value::<GameModeConfig>(sample.clone()).is_ok();
        if schema.is_valid(&sample) != core {
            disagree.push(format!("{path}: document {}, core {core}", !core));
        }
    }
    assert!(disagree.is_empty(), "{disagree:#?}");
}

/// A `u32` field is documented with the range the server takes
/// (up to 4 294 967 295), not as a signed `int32` that a client would cap at
/// 2 147 483 647 (Schemathesis sent 2 147 483 648 as "invalid" and it was
/// accepted).
#[test]
fn unsigned_integers_admit_what_the_server_takes() {
    fn walk(value: &Value, at: &str, bad: &mut Vec<String>) {
        match value {
            Value::Object(fields) => {
                if fields.get("format") == Some(&json!("int32"))
                    && fields
                        .get("minimum")
                        .and_then(Value::as_f64)
                        .is_some_and(|m| m >= 0.0)
                    && !fields.contains_key("maximum")
                {
                    bad.push(at.to_owned());
                }
                for (k, v) in fields {
                    walk(v, &format!("{at}/{k}"), bad);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, &format!("{at}/{i}"), bad);
                }
            }
            _ => {}
        }
    }
    let doc = doc();
    let mut bad = Vec::new();
    walk(&doc["components"], "#/components", &mut bad);
    assert!(bad.is_empty(), "u32 documented as int32: {bad:?}");
    let rps = &doc["components"]["schemas"]["TierBody"]["properties"]["requestsPerSecond"];
    assert_eq!(rps["maximum"], u32::MAX, "{rps}");
    assert_valid(
        &doc,
        &component("TierBody"),
        &json!({"minCycleDurationSeconds": 1,
        "minBaseTolerance": 2, "minExpansionMultiplier": 1, "maxMatchSize": 100, "maxGameModes": 50,
        "maxConcurrentSearches": 100000, "requestsPerSecond": 2_147_483_648_u64}),
        "a large u32",
    );
}

async fn send(t: &TestApp, method: Method, path: &str, auth: Option<&str>) -> Answer {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(auth) = auth {
        req = req.header(header::AUTHORIZATION, auth);
    }
    t.send(req.body(Body::empty()).unwrap()).await
}

/// The demo's modes (as `matchplane dev --demo` creates them).
fn demo_modes() -> [Value; 2] {
    [
        json!({"name": "duel", "matchShape": [1, 1], "matchmakingCycleDurationSeconds": 1,
               "algorithm": {"type": "mmr", "minMmr": 0, "maxMmr": 3000, "baseTolerance": 5, "expansionMultiplier": 2},
               "ratings": {"enabled": true}}),
        json!({"name": "squad", "matchShape": [2, 2], "matchmakingCycleDurationSeconds": 1,
               "algorithm": {"type": "ping", "maxDelta": 80},
               "parties": {"allowParties": true, "maxSize": 2, "keepTogether": true}}),
    ]
}

/// A walk through the API, every request and answer checked against the
/// document: what a generated client sends and expects.
async fn real_answers_match_the_document(backend: Backend) {
    let doc = doc();
    let t = TestApp::new(backend).await;
    let post = Method::POST;
    let get = Method::GET;
    let put = Method::PUT;
    let delete = Method::DELETE;

    let body = json!({"name": "Studio", "tier": "pro"});
    check_request(&doc, &post, "/v1/projects", &body);
    let a = t
        .call(post.clone(), "/v1/projects", Some(OPERATOR), Some(body))
        .await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    check_answer(&doc, &post, "/v1/projects", &a);
    let p = a.body["id"].as_str().unwrap().to_owned();
    for (path, template) in [
        ("/v1/projects", "/v1/projects"),
        ("/v1/tiers", "/v1/tiers"),
        ("/v1/tiers/pro", "/v1/tiers/{tier}"),
        ("/v1/tiers/nope", "/v1/tiers/{tier}"),
    ] {
        let a = t.call(get.clone(), path, Some(OPERATOR), None).await;
        check_answer(&doc, &get, template, &a);
    }
    let a = t
        .call(
            get.clone(),
            &format!("/v1/projects/{p}"),
            Some(OPERATOR),
            None,
        )
        .await;
    check_answer(&doc, &get, "/v1/projects/{projectId}", &a);

    // A tier created, replaced, refused while in use, deleted, unknown.
    let tier = json!({"minCycleDurationSeconds": 1, "minBaseTolerance": 1,
        "minExpansionMultiplier": 1, "maxMatchSize": 64, "maxGameModes": 10,
        "maxConcurrentSearches": 1000, "requestsPerSecond": 100});
    check_request(&doc, &put, "/v1/tiers/{tier}", &tier);
    for expected in [StatusCode::CREATED, StatusCode::OK] {
        let a = t
            .call(
                put.clone(),
                "/v1/tiers/gold",
                Some(OPERATOR),
                Some(tier.clone()),
            )
            .await;
        assert_eq!(a.status, expected, "{}", a.body);
        check_answer(&doc, &put, "/v1/tiers/{tier}", &a);
    }
    for (path, expected) in [
        ("/v1/tiers/free", StatusCode::CONFLICT),
        ("/v1/tiers/pro", StatusCode::CONFLICT),
        ("/v1/tiers/gold", StatusCode::NO_CONTENT),
        ("/v1/tiers/gold", StatusCode::NOT_FOUND),
    ] {
        let a = t.call(delete.clone(), path, Some(OPERATOR), None).await;
        assert_eq!(a.status, expected, "{path}: {}", a.body);
        check_answer(&doc, &delete, "/v1/tiers/{tier}", &a);
    }

    let keys = format!("/v1/projects/{p}/keys");
    let body = json!({"name": "backend"});
    check_request(&doc, &post, "/v1/projects/{projectId}/keys", &body);
    let a = t
        .call(post.clone(), &keys, Some(OPERATOR), Some(body))
        .await;
    check_answer(&doc, &post, "/v1/projects/{projectId}/keys", &a);
    let key = a.body["key"].as_str().unwrap().to_owned();
    // The body is optional: left out (not `null`), the key is `default`.
    let optional = &doc["paths"]["/v1/projects/{projectId}/keys"]["post"]["requestBody"];
    assert_eq!(optional["required"], false, "{optional}");
    assert_eq!(
        optional["content"]["application/json"]["schema"],
        component("CreateKey")
    );
    let a = t.call(post.clone(), &keys, Some(OPERATOR), None).await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    check_answer(&doc, &post, "/v1/projects/{projectId}/keys", &a);
    let a = t.call(get.clone(), &keys, Some(&key), None).await;
    check_answer(&doc, &get, "/v1/projects/{projectId}/keys", &a);

    let modes = format!("/v1/projects/{p}/game-modes");
    for body in demo_modes().into_iter().chain([mode("ranked")]) {
        check_request(&doc, &post, "/v1/projects/{projectId}/game-modes", &body);
        let a = t.call(post.clone(), &modes, Some(&key), Some(body)).await;
        assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
        check_answer(&doc, &post, "/v1/projects/{projectId}/game-modes", &a);
        // What a GET answers is what a PUT takes back.
        let name = a.body["name"].as_str().unwrap().to_owned();
        let one = format!("{modes}/{name}");
        let got = t.call(get.clone(), &one, Some(&key), None).await;
        check_answer(
            &doc,
            &get,
            "/v1/projects/{projectId}/game-modes/{name}",
            &got,
        );
        let back = t.call(put.clone(), &one, Some(&key), Some(got.body)).await;
        check_answer(
            &doc,
            &put,
            "/v1/projects/{projectId}/game-modes/{name}",
            &back,
        );
    }
    let a = t.call(get.clone(), &modes, Some(&key), None).await;
    check_answer(&doc, &get, "/v1/projects/{projectId}/game-modes", &a);
    for (suffix, template) in [
        (
            "duel/versions",
            "/v1/projects/{projectId}/game-modes/{name}/versions",
        ),
        (
            "duel/stats",
            "/v1/projects/{projectId}/game-modes/{name}/stats",
        ),
        (
            "duel/deliveries",
            "/v1/projects/{projectId}/game-modes/{name}/deliveries",
        ),
        (
            "duel/leaderboard",
            "/v1/projects/{projectId}/game-modes/{name}/leaderboard",
        ),
        (
            "duel/ratings/ana",
            "/v1/projects/{projectId}/game-modes/{name}/ratings/{playerId}",
        ),
        ("nope", "/v1/projects/{projectId}/game-modes/{name}"),
    ] {
        let a = t
            .call(get.clone(), &format!("{modes}/{suffix}"), Some(&key), None)
            .await;
        check_answer(&doc, &get, template, &a);
    }
    let body = json!({"rating": 1700, "deviation": 80, "volatility": 0.06});
    let template = "/v1/projects/{projectId}/game-modes/{name}/ratings/{playerId}";
    check_request(&doc, &put, template, &body);
    let a = t
        .call(
            put.clone(),
            &format!("{modes}/duel/ratings/ana"),
            Some(&key),
            Some(body),
        )
        .await;
    check_answer(&doc, &put, template, &a);

    let tickets = format!("/v1/projects/{p}/tickets");
    let body = json!({"gameMode": "duel", "playerId": "ana", "attributes": {"mmr": 1500}});
    check_request(&doc, &post, "/v1/projects/{projectId}/tickets", &body);
    let a = t.call(post.clone(), &tickets, Some(&key), Some(body)).await;
    assert_eq!(a.status, StatusCode::CREATED, "{}", a.body);
    check_answer(&doc, &post, "/v1/projects/{projectId}/tickets", &a);
    let ticket = a.body["ticketId"].as_str().unwrap().to_owned();
    let token = a.body["token"].as_str().unwrap().to_owned();
    for body in [
        json!({"gameMode": "duel", "playerId": "bob", "attributes": {"mmr": 5000}}),
        json!({"gameMode": "nope", "playerId": "bob"}),
        json!({"gameMode": "ranked", "playerId": "bob"}),
        json!({"gameMode": "duel", "playerId": "", "attributes": {"mmr": 1}}),
    ] {
        let a = t.call(post.clone(), &tickets, Some(&key), Some(body)).await;
        assert!(a.status.is_client_error(), "{}", a.body);
        check_answer(&doc, &post, "/v1/projects/{projectId}/tickets", &a);
    }
    let one = format!("{tickets}/{ticket}");
    let a = t.call(get.clone(), &one, Some(&key), None).await;
    check_answer(
        &doc,
        &get,
        "/v1/projects/{projectId}/tickets/{ticketId}",
        &a,
    );

    let body = json!({"ticket": token});
    check_request(&doc, &post, "/v1/searches", &body);
    let a = t
        .call(post.clone(), "/v1/searches", None, Some(body.clone()))
        .await;
    assert_eq!(a.status, StatusCode::ACCEPTED, "{}", a.body);
    check_answer(&doc, &post, "/v1/searches", &a);
    let a = t.call(post.clone(), "/v1/searches", None, Some(body)).await;
    check_answer(&doc, &post, "/v1/searches", &a);
    let ticket_auth = format!("Ticket {token}");
    let poll = format!("/v1/searches/{ticket}");
    let a = send(&t, get.clone(), &poll, Some(&ticket_auth)).await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    check_answer(&doc, &get, "/v1/searches/{ticketId}", &a);
    let a = t.call(get.clone(), &one, Some(&key), None).await;
    assert_eq!(a.body["status"], "searching", "{}", a.body);
    check_answer(
        &doc,
        &get,
        "/v1/projects/{projectId}/tickets/{ticketId}",
        &a,
    );
    let a = send(&t, delete.clone(), &poll, Some(&ticket_auth)).await;
    check_answer(&doc, &delete, "/v1/searches/{ticketId}", &a);
    let a = t.call(delete.clone(), &one, Some(&key), None).await;
    check_answer(
        &doc,
        &delete,
        "/v1/projects/{projectId}/tickets/{ticketId}",
        &a,
    );
    let a = t
        .call(
            delete.clone(),
            &format!("/v1/projects/{p}/players/ana/searches"),
            Some(&key),
            None,
        )
        .await;
    check_answer(
        &doc,
        &delete,
        "/v1/projects/{projectId}/players/{playerId}/searches",
        &a,
    );

    // A Ping mode refuses REST searches.
    let body = json!({"gameMode": "squad", "playerId": "cy"});
    let squad = t.call(post.clone(), &tickets, Some(&key), Some(body)).await;
    let a = t
        .call(
            post.clone(),
            "/v1/searches",
            None,
            Some(json!({"ticket": squad.body["token"]})),
        )
        .await;
    a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "PING_REQUIRES_WEBSOCKET");
    check_answer(&doc, &post, "/v1/searches", &a);

    for (path, template) in [
        (
            format!("/v1/projects/{p}/matches"),
            "/v1/projects/{projectId}/matches",
        ),
        (
            format!("/v1/projects/{p}/matches/mat_1"),
            "/v1/projects/{projectId}/matches/{matchId}",
        ),
        (
            format!("/v1/projects/{p}/matches/mat_1/deliveries"),
            "/v1/projects/{projectId}/matches/{matchId}/deliveries",
        ),
    ] {
        let a = t.call(get.clone(), &path, Some(&key), None).await;
        check_answer(&doc, &get, template, &a);
    }
    let a = t.call(get.clone(), &modes, None, None).await;
    check_answer(&doc, &get, "/v1/projects/{projectId}/game-modes", &a);
    let a = t
        .call(delete.clone(), &format!("{modes}/squad"), Some(&key), None)
        .await;
    check_answer(
        &doc,
        &delete,
        "/v1/projects/{projectId}/game-modes/{name}",
        &a,
    );
    for path in ["/healthz", "/readyz"] {
        let a = t.call(get.clone(), path, None, None).await;
        check_answer(&doc, &get, path, &a);
    }
}

/// A query parameter that is missing or does not parse is a `422
/// VALIDATION_ERROR` problem naming it, what it must be and the value sent,
/// on every route with one, as a value out of range is; documented.
async fn unparsable_query_parameters_are_named(backend: Backend) {
    let doc = doc();
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    t.call(
        Method::POST,
        &format!("/v1/projects/{p}/game-modes"),
        Some(&key),
        Some(demo_modes()[0].clone()),
    )
    .await;
    let deliveries = "/v1/projects/{projectId}/game-modes/{name}/deliveries";
    for (path, template, field, says) in [
        (
            format!("/v1/projects/{p}/matches?limit=abc"),
            "/v1/projects/{projectId}/matches",
            "limit",
            "must be a whole number from 1 to 200; got \"abc\"",
        ),
        (
            format!("/v1/projects/{p}/matches?limit=-1"),
            "/v1/projects/{projectId}/matches",
            "limit",
            "must be a whole number from 1 to 200; got \"-1\"",
        ),
        (
            format!("/v1/projects/{p}/game-modes/duel/leaderboard?limit=1.5"),
            "/v1/projects/{projectId}/game-modes/{name}/leaderboard",
            "limit",
            "must be a whole number",
        ),
        (
            format!("/v1/projects/{p}/game-modes/duel/deliveries?limit=x"),
            deliveries,
            "limit",
            "must be a whole number",
        ),
        (
            format!("/v1/projects/{p}/game-modes/duel/deliveries?limit=-1"),
            deliveries,
            "limit",
            "must be a whole number from 1 to 200",
        ),
        (
            format!("/v1/projects/{p}/game-modes/duel/deliveries?limit=99999999999999999999"),
            deliveries,
            "limit",
            "must be a whole number from 1 to 200; got \"99999999999999999999\"",
        ),
        (
            format!("/v1/projects/{p}/game-modes/duel/deliveries?eventType=bogus"),
            deliveries,
            "eventType",
            "must be one of `match.made`, `match.backfilled`, `webhook.test`; got \"bogus\"",
        ),
        (
            format!("/v1/projects/{p}/game-modes/duel/stats/history?from=yesterday"),
            "/v1/projects/{projectId}/game-modes/{name}/stats/history",
            "from",
            "must be an RFC 3339 date-time",
        ),
        (
            format!("/v1/projects/{p}/game-modes/duel/recording?from=yesterday"),
            "/v1/projects/{projectId}/game-modes/{name}/recording",
            "from",
            "must be an RFC 3339 date-time",
        ),
        (
            "/v1/search".to_owned(),
            "/v1/search",
            "ticket",
            "the `ticket` query parameter is required",
        ),
    ] {
        let a = t.call(Method::GET, &path, Some(&key), None).await;
        a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        assert_eq!(a.body["errors"][0]["field"], field, "{path}: {}", a.body);
        assert_eq!(
            a.body["errors"][0]["code"], "VALIDATION_ERROR",
            "{path}: {}",
            a.body
        );
        let detail = a.body["detail"].as_str().unwrap();
        assert!(
            detail.contains(&format!("`{field}` query parameter")) && detail.contains(says),
            "{path}: {detail}"
        );
        assert!(
            !detail.contains("invalid digit") && !detail.contains("unknown variant"),
            "{path}: a parser's message: {detail}"
        );
        check_answer(&doc, &Method::GET, template, &a);
    }
    // A limit that parses but is out of range answers the same way.
    let a = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/game-modes/duel/deliveries?limit=0"),
            Some(&key),
            None,
        )
        .await;
    a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(a.body["errors"][0]["field"], "limit", "{}", a.body);
    // Every event type the document lists is taken.
    let listed = &doc["paths"][deliveries]["get"]["parameters"];
    let event_type = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "eventType")
        .unwrap();
    let allowed = event_type["schema"]["oneOf"]
        .as_array()
        .map(|any| any.iter().find(|s| s["enum"].is_array()).unwrap()["enum"].clone())
        .unwrap_or_else(|| event_type["schema"]["enum"].clone());
    assert_eq!(
        allowed,
        json!(["match.made", "match.backfilled", "webhook.test"]),
        "{event_type}"
    );
    for kind in allowed.as_array().unwrap() {
        let a = t
            .call(
                Method::GET,
                &format!(
                    "/v1/projects/{p}/game-modes/duel/deliveries?eventType={}",
                    kind.as_str().unwrap()
                ),
                Some(&key),
                None,
            )
            .await;
        assert_eq!(a.status, StatusCode::OK, "{kind}: {}", a.body);
    }
}

/// The WebSocket route says what is missing, and starts no search for a
/// request that is not an upgrade; the REST search routes say they need
/// `Authorization: Ticket <token>` (a studio's Bearer key is not one).
async fn search_routes_say_what_is_missing(backend: Backend) {
    let doc = doc();
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let modes = format!("/v1/projects/{p}/game-modes");
    t.call(
        Method::POST,
        &modes,
        Some(&key),
        Some(demo_modes()[0].clone()),
    )
    .await;
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(json!({"gameMode": "duel", "playerId": "ana", "attributes": {"mmr": 1500}})),
        )
        .await;
    let token = created.body["token"].as_str().unwrap().to_owned();
    let ticket = created.body["ticketId"].as_str().unwrap().to_owned();

    let plain = send(&t, Method::GET, &format!("/v1/search?ticket={token}"), None).await;
    plain.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    let detail = plain.body["detail"].as_str().unwrap();
    assert!(
        detail.contains("a WebSocket upgrade is required"),
        "{detail}"
    );
    assert!(!detail.contains(&token), "{detail}");
    check_answer(&doc, &Method::GET, "/v1/search", &plain);
    let status = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/tickets/{ticket}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        status.body["status"], "created",
        "no search started: {}",
        status.body
    );

    let poll = format!("/v1/searches/{ticket}");
    for method in [Method::GET, Method::DELETE] {
        for auth in [
            Some(format!("Bearer {key}")),
            None,
            Some("Ticket".to_owned()),
        ] {
            let a = send(&t, method.clone(), &poll, auth.as_deref()).await;
            a.assert_problem(StatusCode::UNAUTHORIZED, "TICKET_INVALID");
            let detail = a.body["detail"].as_str().unwrap();
            assert!(
                detail.contains("Authorization: Ticket <token>"),
                "{auth:?}: {detail}"
            );
            assert!(!detail.contains(&key), "{detail}");
            check_answer(&doc, &method, "/v1/searches/{ticketId}", &a);
        }
    }
    let bearer = send(&t, Method::GET, &poll, Some(&format!("Bearer {key}"))).await;
    assert!(
        bearer.body["detail"]
            .as_str()
            .unwrap()
            .contains("not a `Bearer` credential"),
        "{}",
        bearer.body
    );
}

/// `POST …/keys` refuses a bad label with a documented 422.
async fn key_label_refusal_is_documented(backend: Backend) {
    let doc = doc();
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    for name in [json!(""), json!("x".repeat(101)), json!("a\u{7}b")] {
        let a = t
            .call(
                Method::POST,
                &format!("/v1/projects/{p}/keys"),
                Some(OPERATOR),
                Some(json!({ "name": name })),
            )
            .await;
        a.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        check_answer(&doc, &Method::POST, "/v1/projects/{projectId}/keys", &a);
    }
}

/// A mode's `GET` answer (webhook status and secret, hold, version and
/// times included) is a valid `PUT` body under the document, as
/// docs/config-as-code.md says it may be sent back, and the server takes
/// it unchanged.
async fn a_game_modes_answer_is_a_valid_body(backend: Backend) {
    let doc = doc();
    let t = TestApp::new(backend).await;
    let p = t.project("pro").await;
    let (_, key) = t.key(&p).await;
    let mut body = mode("sent-back");
    body["webhook"] = json!({"url": "https://93.184.216.34/h"});
    let path = format!("/v1/projects/{p}/game-modes/sent-back");
    let created = t.call(Method::PUT, &path, Some(&key), Some(body)).await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let read = t.call(Method::GET, &path, Some(&key), None).await;
    for member in ["version", "createdAt", "updatedAt", "hold"] {
        assert!(read.body.get(member).is_some(), "{member}: {}", read.body);
    }
    check_request(
        &doc,
        &Method::PUT,
        "/v1/projects/{projectId}/game-modes/{name}",
        &read.body,
    );
    let again = t
        .call(Method::PUT, &path, Some(&key), Some(read.body.clone()))
        .await;
    assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    assert_eq!(again.body["version"], read.body["version"]);
}

on_both!(
    real_answers_match_the_document,
    unparsable_query_parameters_are_named,
    search_routes_say_what_is_missing,
    key_label_refusal_is_documented,
    a_game_modes_answer_is_a_valid_body,
);

/// Every `/v1/` operation lists the statuses any request may get: `503`
/// (a dependency out of reach) everywhere, `408` (a body that stops
/// coming) wherever a body is taken.
#[test]
fn every_operation_lists_the_timeouts_and_outages() {
    let doc = doc();
    let mut missing = Vec::new();
    for (method, path, op) in operations(&doc) {
        if !path.starts_with("/v1/") {
            continue;
        }
        if op["responses"].get("503").is_none() {
            missing.push(format!("{method} {path}: 503"));
        }
        if op.get("requestBody").is_some() && op["responses"].get("408").is_none() {
            missing.push(format!("{method} {path}: 408"));
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}

/// Every parameter of every operation is in the document with a
/// description, the `PUT` of a mode's `guard` and `guardTolerance` among
/// them (a second `params(...)` in an annotation once dropped the first).
#[test]
fn every_parameter_is_documented() {
    let doc = doc();
    let mut undocumented = Vec::new();
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            for p in op["parameters"].as_array().into_iter().flatten() {
                if p["description"].as_str().is_none_or(str::is_empty) {
                    undocumented.push(format!("{method} {path} {}", p["name"]));
                }
            }
        }
    }
    assert!(undocumented.is_empty(), "{undocumented:#?}");
    let put = &doc["paths"]["/v1/projects/{projectId}/game-modes/{name}"]["put"];
    let query: Vec<&str> = put["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["in"] == "query")
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(query, ["guard", "guardTolerance"]);
}

/// A recording window bound that is not RFC 3339 answers `422
/// VALIDATION_ERROR` (as every unparsable query parameter does), and the
/// document says so: its `400` is only the one every route has (a request
/// it cannot read), not the window's.
#[test]
fn recording_window_refusals_are_documented_as_422() {
    let doc = doc();
    let responses =
        &doc["paths"]["/v1/projects/{projectId}/game-modes/{name}/recording"]["get"]["responses"];
    assert!(responses.is_object(), "{responses}");
    let unreadable = responses["400"]["description"].as_str().unwrap_or_default();
    assert!(
        !unreadable.contains("RFC 3339") && !unreadable.contains("from"),
        "{unreadable}"
    );
    let refused = responses["422"]["description"].as_str().unwrap_or_default();
    assert!(refused.contains("RFC 3339"), "{refused}");
}
