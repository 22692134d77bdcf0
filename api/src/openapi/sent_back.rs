//! A game mode's `GET` answer may be edited and sent back as its `PUT`
//! body (docs/config-as-code.md), and so may the project webhook
//! endpoint's (docs/webhooks.md): the request schemas list the members the
//! server sets, so that a client or linter validating against the document
//! accepts that flow. The server ignores all of them but a mode's
//! `version`, which applies the body only onto that version (as
//! `If-Match`).

use serde_json::json;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;

/// Ignored when sent: set by the server.
const IGNORED: &str = "Set by the server; ignored when sent back.";

/// Adds the server-set members to the `GameMode`, `Webhook` and
/// `PutProjectWebhook` request schemas (each optional).
pub fn server_set_members_may_be_sent_back(openapi: &mut utoipa::openapi::OpenApi) {
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    let members = |schema: &str| match schema {
        "GameMode" => vec![
            (
                "version",
                json!({"type": "integer", "format": "int64", "minimum": 1,
                "description": "The version this body was read at: it is applied only onto that version, as `If-Match: \"<version>\"` (412 VERSION_MISMATCH otherwise)."}),
            ),
            (
                "createdAt",
                json!({"type": "string", "format": "date-time", "readOnly": true, "description": IGNORED}),
            ),
            (
                "updatedAt",
                json!({"type": "string", "format": "date-time", "readOnly": true, "description": IGNORED}),
            ),
            (
                "hold",
                json!({"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/ModeHold"}],
                "readOnly": true, "description": IGNORED}),
            ),
        ],
        "PutProjectWebhook" => vec![
            (
                "secret",
                json!({"type": "string", "readOnly": true, "description": IGNORED}),
            ),
            (
                "status",
                json!({"allOf": [{"$ref": "#/components/schemas/WebhookStatus"}],
                "readOnly": true, "description": IGNORED}),
            ),
            (
                "createdAt",
                json!({"type": "string", "format": "date-time", "readOnly": true, "description": IGNORED}),
            ),
            (
                "updatedAt",
                json!({"type": "string", "format": "date-time", "readOnly": true, "description": IGNORED}),
            ),
        ],
        _ => vec![
            (
                "secret",
                json!({"type": "string", "readOnly": true, "description": IGNORED}),
            ),
            (
                "status",
                json!({"oneOf": [{"type": "null"}, {"$ref": "#/components/schemas/WebhookStatus"}],
                "readOnly": true, "description": IGNORED}),
            ),
        ],
    };
    for name in ["GameMode", "Webhook", "PutProjectWebhook"] {
        let Some(RefOr::T(Schema::Object(object))) = components.schemas.get_mut(name) else {
            continue;
        };
        for (member, schema) in members(name) {
            if let Ok(schema) = serde_json::from_value::<RefOr<Schema>>(schema) {
                object.properties.entry(member.to_owned()).or_insert(schema);
            }
        }
    }
}
