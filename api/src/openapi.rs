//! The OpenAPI document's frame: info, tags, the security schemes, the
//! message and webhook schemas, and the passes over the assembled
//! document ([`finish`]). Paths come from the handlers themselves
//! (`routes!` in [`crate::router`]); the webhooks are in `openapi/webhooks.rs`.

mod free_form;
mod sent_back;
mod variants;
mod webhooks;

pub use webhooks::{add_event_schemas, add_webhooks};

use crate::problem::{Problem, ProblemFieldError, PROBLEM_JSON};
use matchplane_matchmaker::reasons::{SearchWaitingReason, WaitingReason};
use matchplane_store::repos::match_status::{AnswerWord, MatchStatus};
use matchplane_store::tickets::{ExpiredReason, StatusMessage};
use matchplane_webhook::payload::{BotSeat, Player, Quality, TeamWire};
use matchplane_webhook::player_view::PlayerMatch;
use matchplane_webhook::{MatchBackfilled, MatchMade, WebhookTest};
use serde_json::{json, Value};
use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, Ref, RefOr, ResponseBuilder};
use utoipa::{Modify, OpenApi};

/// The document's static part.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "matchplane",
        description = "Multi-tenant matchmaking control plane. Errors are `application/problem+json` \
            (schema `Problem`) with a stable `code`. Studios' backends authenticate with \
            `Authorization: Bearer mp_sk_…` (the operator with its token); game clients with their \
            ticket's token: `?ticket=` on the WebSocket `GET /v1/search`, the body of \
            `POST /v1/searches`, `Authorization: Ticket <token>` on `/v1/searches/{ticketId}`. \
            The WebSocket's text messages are the `SearchMessage` schema; the webhook bodies are \
            under `webhooks`. No text anywhere may contain a NUL character (`\\u0000`): \
            such a body is refused with `422 VALIDATION_ERROR` naming the field."
    ),
    modifiers(&SecuritySchemes),
    components(schemas(
        Problem,
        ProblemFieldError,
        StatusMessage,
        PlayerMatch<'static>,
        MatchMade,
        SearchWaitingReason,
        WaitingReason,
        ExpiredReason,
        crate::play::released::ReleasedReason,
        MatchStatus,
        AnswerWord,
        MatchBackfilled,
        WebhookTest,
        TeamWire,
        BotSeat,
        Player,
        Quality
    )),
    tags(
        (name = "service", description = "Health, readiness, metrics"),
        (name = "tiers", description = "Plans and their limits (operator)"),
        (name = "projects", description = "Tenants (operator)"),
        (name = "keys", description = "API keys of a project"),
        (name = "game-modes", description = "Game-mode configuration (API key)"),
        (name = "tickets", description = "Tickets, studio side (API key)"),
        (name = "searches", description = "Searches, game-client side (ticket token)"),
        (name = "matches", description = "Matches and their webhook deliveries (API key)"),
        (name = "ratings", description = "Results and ratings (API key)"),
        (name = "simulate", description = "Scenarios run by the matching core in virtual time (API key)")
    )
)]
pub struct ApiDoc;

/// The three ways a caller authenticates.
struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "`Authorization: Bearer <key>`: a project's API key (`mp_sk_…`) or the operator token",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "ticket",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "Authorization",
                "`Authorization: Ticket <token>`: the token of the ticket being searched with \
                 (the value is the word `Ticket`, a space, then the token). A Bearer API key is \
                 refused here with `401 TICKET_INVALID`.",
            ))),
        );
        components.add_security_scheme(
            "ticketQuery",
            SecurityScheme::ApiKey(ApiKey::Query(ApiKeyValue::with_description(
                "ticket",
                "`?ticket=<token>`: the ticket's token, for the WebSocket search, whose browser \
                 clients cannot set headers on an upgrade.",
            ))),
        );
    }
}

/// A problem response with `description`.
fn problem(description: &str) -> utoipa::openapi::Response {
    ResponseBuilder::new()
        .description(description)
        .content(
            PROBLEM_JSON,
            ContentBuilder::new()
                .schema(Some(Ref::from_schema_name("Problem")))
                .build(),
        )
        .build()
}

fn operations(
    openapi: &mut utoipa::openapi::OpenApi,
) -> impl Iterator<Item = (&String, &mut Operation)> {
    openapi.paths.paths.iter_mut().flat_map(|(path, item)| {
        [
            item.get.as_mut(),
            item.put.as_mut(),
            item.post.as_mut(),
            item.patch.as_mut(),
            item.delete.as_mut(),
        ]
        .into_iter()
        .flatten()
        .map(move |operation| (path, operation))
    })
}

/// The passes over the assembled document, once the routes have added
/// their paths: [`document_common_errors`], every error as a problem
/// ([`errors_are_problems`]), the webhook bodies ([`add_event_schemas`])
/// and the webhooks ([`add_webhooks`]), then names the objects inside
/// union variants ([`variants::name_variant_objects`]) and says that the
/// free-form objects take any key ([`free_form::free_form_objects_say_so`]).
pub fn finish(openapi: &mut utoipa::openapi::OpenApi) {
    document_common_errors(openapi);
    errors_are_problems(openapi);
    optional_bodies_are_omitted_not_null(openapi);
    constrain_items(openapi);
    unsigned_32_is_not_int32(openapi);
    variants::closed_config_variants(openapi);
    variants::internal_messages_are_not_sent(openapi);
    add_event_schemas(openapi);
    add_webhooks(openapi);
    variants::name_variant_objects(openapi);
    sent_back::server_set_members_may_be_sent_back(openapi);
    free_form::free_form_objects_say_so(openapi);
}

/// An optional body (`Option<ApiJson<T>>`) is left out, never sent as
/// `null` (which is refused): utoipa documents it as `oneOf [null, T]`;
/// this makes it `T` with `required: false`.
pub fn optional_bodies_are_omitted_not_null(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::Schema;
    use utoipa::openapi::Required;
    for (_, operation) in operations(openapi) {
        let Some(body) = operation.request_body.as_mut() else {
            continue;
        };
        for content in body.content.values_mut() {
            let Some(RefOr::T(Schema::OneOf(one_of))) = &content.schema else {
                continue;
            };
            let is_null = |item: &RefOr<Schema>| {
                serde_json::to_value(item).is_ok_and(|v| v == json!({"type": "null"}))
            };
            if one_of.items.len() == 2 && one_of.items.iter().any(is_null) {
                let kept = one_of.items.iter().find(|item| !is_null(item)).cloned();
                content.schema = kept;
                body.required = Some(Required::False);
            }
        }
    }
}

/// Limits the server enforces on array items and arrays, which utoipa's
/// field attributes cannot express: (component, property, keywords of the
/// property, keywords of its items).
const ITEM_RULES: &[(&str, &str, &str, &str)] = &[
    ("GameMode", "matchShape", "{}", r#"{"minimum": 1}"#),
    ("GameModeResponse", "matchShape", "{}", r#"{"minimum": 1}"#),
    (
        "PartyBody",
        "members",
        r#"{"uniqueItems": true}"#,
        r#"{"minLength": 1, "maxLength": 128}"#,
    ),
    (
        "TeamResultSchema",
        "players",
        r#"{"uniqueItems": true}"#,
        r#"{"minLength": 1}"#,
    ),
];

/// Applies [`ITEM_RULES`] to the components' schemas.
pub fn constrain_items(openapi: &mut utoipa::openapi::OpenApi) {
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for (name, property, own, items) in ITEM_RULES {
        let Some(schema) = components.schemas.get_mut(*name) else {
            continue;
        };
        let Ok(mut value) = serde_json::to_value(&*schema) else {
            continue;
        };
        let Some(target) = value.pointer_mut(&format!("/properties/{property}")) else {
            continue;
        };
        let merge = |into: &mut Value, keywords: &str| {
            if let (Some(into), Ok(Value::Object(add))) = (
                into.as_object_mut(),
                serde_json::from_str::<Value>(keywords),
            ) {
                into.extend(add);
            }
        };
        merge(target, own);
        if let Some(item) = target.get_mut("items") {
            merge(item, items);
        }
        if let Ok(patched) = serde_json::from_value(value) {
            *schema = patched;
        }
    }
}

/// The 422 of a route with query parameters.
const QUERY_422: &str =
    "VALIDATION_ERROR: a query parameter is missing, invalid or not one this route takes; \
     `errors[0].field` names it";

/// The 422 of a route without query parameters.
const UNKNOWN_QUERY_422: &str =
    "VALIDATION_ERROR: a query parameter, which this route does not take; `errors[0].field` \
     names it";

/// Documents on every `/v1` operation the errors any of them can answer:
/// 400 (a request it cannot read: a header such as `Authorization` given
/// twice, a body where it takes none or malformed JSON where it takes one,
/// a bad `Idempotency-Key` where it reads one), 401 (credentials), 422 (a
/// query parameter it does not take; with query parameters, also one that
/// is missing or does not parse, naming it), 429 (rate limit, with
/// `Retry-After`) and 500; on every operation with a path parameter, 404
/// (on a mode's routes, `GAME_MODE_NOT_FOUND` for an unknown `{name}`); and
/// on every operation with a body, 413 and 415. An operation whose one
/// security requirement is empty (no credential) is documented with none
/// (`security: []`), as generated clients read it.
pub fn document_common_errors(openapi: &mut utoipa::openapi::OpenApi) {
    for (path, operation) in operations(openapi) {
        if !path.starts_with("/v1/") {
            continue;
        }
        let has_body = operation.request_body.is_some();
        let params = operation.parameters.as_deref().unwrap_or_default();
        let has_path = params.iter().any(|p| p.parameter_in == ParameterIn::Path);
        let has_query = params.iter().any(|p| p.parameter_in == ParameterIn::Query);
        let idempotent = params
            .iter()
            .any(|p| p.parameter_in == ParameterIn::Header && p.name == "Idempotency-Key");
        if operation.security.as_ref().is_some_and(|s| {
            s.len() == 1 && serde_json::to_value(&s[0]).is_ok_and(|v| v == json!({}))
        }) {
            operation.security = Some(Vec::new());
        }
        let responses = &mut operation.responses.responses;
        if has_query {
            // A route's own 422 without words says what every bad query
            // parameter answers.
            if let Some(RefOr::T(response)) = responses.get_mut("422") {
                if response.description.is_empty() {
                    response.description = QUERY_422.to_owned();
                }
            }
        }
        if path.contains("/game-modes/{name}") && !responses.contains_key("201") {
            // A route on a mode that must exist (one that creates it when
            // absent answers 201 instead).
            let entry = responses
                .entry("404".to_owned())
                .or_insert_with(|| problem("").into());
            if let RefOr::T(response) = entry {
                if response.description.is_empty() {
                    response.description = "GAME_MODE_NOT_FOUND: the project has no game mode \
                        `{name}`; NOT_FOUND: no such project"
                        .to_owned();
                }
            }
        }
        let mut add = |status: &str, description: &str| {
            responses
                .entry(status.to_owned())
                .or_insert_with(|| problem(description).into());
        };
        add("401", "UNAUTHORIZED: missing or invalid credentials");
        add(
            "429",
            "RATE_LIMITED: the project's requests per second are used up; see Retry-After",
        );
        add(
            "500",
            "INTERNAL: failed on our side; nothing internal is said",
        );
        if has_path {
            add("404", "NOT_FOUND: no such resource in this project");
        }
        add(
            "422",
            if has_query {
                QUERY_422
            } else {
                UNKNOWN_QUERY_422
            },
        );
        let body = if has_body {
            "malformed JSON, with line, column and path"
        } else {
            "a body, which this route does not take"
        };
        let key = if idempotent {
            "; an Idempotency-Key that is not 1 to 255 printable ASCII characters"
        } else {
            ""
        };
        add(
            "400",
            &format!("VALIDATION_ERROR: {body}; a header such as Authorization given twice{key}"),
        );
        add("503", "SERVICE_UNAVAILABLE: the database or Redis is out of reach or slow (detail names which); see Retry-After");
        if has_body {
            add("408", "REQUEST_TIMEOUT: the body paused longer than the body read timeout, or was still coming at the request deadline");
            add("413", "PAYLOAD_TOO_LARGE: body over 64 KiB");
            add(
                "415",
                "UNSUPPORTED_MEDIA_TYPE: body is not application/json",
            );
        }
    }
}

/// Every 4xx and 5xx answer is documented as what it is:
/// `application/problem+json` with the `Problem` schema.
pub fn errors_are_problems(openapi: &mut utoipa::openapi::OpenApi) {
    for (_, operation) in operations(openapi) {
        for (status, response) in operation.responses.responses.iter_mut() {
            if !(status.starts_with('4') || status.starts_with('5')) {
                continue;
            }
            if let RefOr::T(response) = response {
                let example = response
                    .content
                    .values()
                    .find_map(|content| content.example.clone());
                response.content.clear();
                let mut content = ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("Problem")))
                    .build();
                content.example = example;
                response.content.insert(PROBLEM_JSON.to_owned(), content);
            }
        }
    }
}

/// utoipa documents a `u32` as `format: int32` (signed: at most
/// 2 147 483 647), while the server takes up to 4 294 967 295: every such
/// integer (`int32` with a `minimum` of 0 or more and no maximum of its own,
/// which only unsigned fields have here) becomes
/// `int64` with that maximum.
pub fn unsigned_32_is_not_int32(openapi: &mut utoipa::openapi::OpenApi) {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(fields) => {
                let unsigned = fields.get("format") == Some(&json!("int32"))
                    && fields
                        .get("minimum")
                        .and_then(Value::as_f64)
                        .is_some_and(|m| m >= 0.0)
                    && !fields.contains_key("maximum");
                if unsigned {
                    fields.insert("format".into(), json!("int64"));
                    fields.insert("maximum".into(), json!(u32::MAX));
                }
                fields.values_mut().for_each(walk);
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for schema in components.schemas.values_mut() {
        let Ok(mut value) = serde_json::to_value(&*schema) else {
            continue;
        };
        walk(&mut value);
        if let Ok(patched) = serde_json::from_value(value) {
            *schema = patched;
        }
    }
}
