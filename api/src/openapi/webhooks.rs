//! The webhooks in the OpenAPI document (docs/webhook-events.md): the
//! requests matchplane sends to a studio's endpoint, and their bodies'
//! components, made from the webhook crate's own payload types.

use matchplane_webhook::EventType;
use serde_json::{json, Value};
use utoipa::openapi::RefOr;

/// How one event's body is documented.
struct EventDoc {
    /// The body's component.
    component: &'static str,
    /// The component of the payload it is made from, derived on the
    /// webhook crate's type.
    payload: &'static str,
    /// The component of its `type`.
    type_component: &'static str,
    /// The body's description.
    about: &'static str,
}

/// How `event`'s body is documented.
fn event_doc(event: EventType) -> EventDoc {
    match event {
        EventType::MatchMade => EventDoc {
            component: "MatchMadeEvent",
            payload: "MatchRecord",
            type_component: "MatchMadeType",
            about: "The `match.made` body: a match was formed and recorded.",
        },
        EventType::MatchBackfilled => EventDoc {
            component: "MatchBackfilledEvent",
            payload: "MatchBackfilledEvent",
            type_component: "MatchBackfilledType",
            about: "The `match.backfilled` body: a fill seated new players in a running\n\
                    match. Its `webhook-id` is `fillId`.",
        },
        EventType::WebhookTest => EventDoc {
            component: "WebhookTestEvent",
            payload: "WebhookTestEvent",
            type_component: "WebhookTestType",
            about: "The `webhook.test` body, sent on demand to check an endpoint.",
        },
    }
}

/// Fields a webhook body always carries though the payload type defaults
/// them (a stored match record made before they were kept lacks them).
const ALWAYS_SENT: [&str; 2] = ["matchShape", "seatsOpen"];

/// One webhook body's schema: the payload's, with `type` (the event's
/// name, tagged as the worker serialises `matchplane_webhook::Event`)
/// added to its properties, its required fields and its example.
fn event_schema(payload: &Value, event: EventType, doc: &EventDoc) -> Value {
    let mut schema = payload.clone();
    let name = event.as_str();
    schema["description"] = json!(doc.about);
    schema["properties"]["type"] = json!({
        "$ref": format!("#/components/schemas/{}", doc.type_component),
        "description": format!("Always `{name}`."),
    });
    if let Some(required) = schema["required"].as_array_mut() {
        required.insert(0, json!("type"));
        let present: Vec<Value> = ALWAYS_SENT
            .iter()
            .filter(|field| schema_has(payload, field))
            .map(|field| json!(field))
            .filter(|field| !required.contains(field))
            .collect();
        required.extend(present);
    }
    if let Some(example) = schema.get_mut("example").and_then(Value::as_object_mut) {
        example.insert("type".to_owned(), json!(name));
    }
    schema
}

/// Whether `schema` has the property `field`.
fn schema_has(schema: &Value, field: &str) -> bool {
    schema["properties"].get(field).is_some()
}

/// Adds each webhook body's component and its `type`'s (a one-value
/// string enum) from the payload components.
pub fn add_event_schemas(openapi: &mut utoipa::openapi::OpenApi) {
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for event in EventType::ALL {
        let doc = event_doc(event);
        let Some(Ok(payload)) = components
            .schemas
            .get(doc.payload)
            .map(serde_json::to_value)
        else {
            continue;
        };
        let kind = json!({
            "type": "string",
            "description": format!("`type` of a `{}` body.", event.as_str()),
            "enum": [event.as_str()],
        });
        let body = event_schema(&payload, event, &doc);
        for (name, schema) in [(doc.type_component, kind), (doc.component, body)] {
            if let Ok(schema) = serde_json::from_value::<RefOr<_>>(schema) {
                components.schemas.insert(name.to_owned(), schema);
            }
        }
    }
}

/// The headers every webhook request carries (Standard Webhooks).
fn webhook_headers() -> Value {
    json!([
        {"name": "webhook-id", "in": "header", "required": true,
         "description": "The event's id: the `matchId` of a `match.made`, the `fillId` of a `match.backfilled`, `tst_…` of a `webhook.test`; the same on every retry",
         "schema": {"type": "string"}},
        {"name": "webhook-timestamp", "in": "header", "required": true,
         "description": "Unix seconds of this attempt",
         "schema": {"type": "string", "pattern": "^[0-9]+$"}},
        {"name": "webhook-signature", "in": "header", "required": true,
         "description": "`v1,<base64 HMAC-SHA256 of \"{webhook-id}.{webhook-timestamp}.{body}\">` under the mode's secret (its `whsec_` prefix removed, the rest base64-decoded); several, space-separated, while a rotated secret is still honoured",
         "schema": {"type": "string"}}
    ])
}

fn webhook(operation_id: &str, summary: &str, schema: &str) -> Value {
    json!({"post": {
        "operationId": operation_id,
        "summary": summary,
        "tags": ["webhooks"],
        "parameters": webhook_headers(),
        "requestBody": {"required": true, "content": {"application/json": {
            "schema": {"$ref": format!("#/components/schemas/{schema}")}}}},
        "responses": {
            "2XX": {"description": "Delivered. A `match.made` answered otherwise (or not within 5 s) is retried with backoff, 9 attempts in all; a `webhook.test` is sent once"}
        }
    }})
}

/// The OpenAPI 3.1 `webhooks` member: the requests matchplane sends to a
/// mode's webhook URL. utoipa 5 has no field for it, so it goes into the
/// root's flattened extensions, which serialise as top-level members.
pub fn add_webhooks(openapi: &mut utoipa::openapi::OpenApi) {
    let webhooks: serde_json::Map<String, serde_json::Value> = EventType::ALL
        .into_iter()
        .map(|event| {
            let item = match event {
                EventType::MatchMade => webhook(
                    "matchMade",
                    "A match was formed and recorded",
                    "MatchMadeEvent",
                ),
                EventType::MatchBackfilled => webhook(
                    "matchBackfilled",
                    "A backfill fill seated new players in a running match",
                    "MatchBackfilledEvent",
                ),
                EventType::WebhookTest => webhook(
                    "webhookTest",
                    "A test event, sent on demand",
                    "WebhookTestEvent",
                ),
            };
            (event.as_str().to_owned(), item)
        })
        .collect();
    let webhooks = serde_json::Value::Object(webhooks);
    openapi
        .extensions
        .get_or_insert_with(Default::default)
        .insert("webhooks".to_owned(), webhooks);
}
