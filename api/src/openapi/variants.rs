//! Named schemas for the objects inside a union's variants (docs/openapi.md,
//! "What is in it").
//!
//! A `oneOf` variant written inline (the tagged enums: `SearchMessage`,
//! `WaitingReason`, …) may hold a property that is itself an object (a
//! map of role waits, a player's `data`). Generators name such an object
//! from its position (`SearchMessage_type_1`), and openapi-python-client
//! gives two of them one name and drops both, leaving a client that cannot
//! read the union at all. Lifted into `components.schemas` under a name of
//! its own (`SearchMessageStatusRoleWaits`: the union, the variant's tag,
//! the property), each is read alike by every generator.
//!
//! Also the unions' variants as the server takes and sends them: each
//! variant of a mode's `algorithm`, attributes and rules closed to its own
//! fields, and the status message no client receives left out.

use heck::ToUpperCamelCase;
use serde_json::{json, Map, Value};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;

/// Lifts every inline object schema in a property of an inline `oneOf`
/// variant of a component into a component of its own, referenced where
/// it was (its description kept beside the reference).
pub fn name_variant_objects(openapi: &mut utoipa::openapi::OpenApi) {
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    let mut lifted: Vec<(String, Value)> = Vec::new();
    for (name, schema) in components.schemas.iter_mut() {
        let Ok(mut value) = serde_json::to_value(&*schema) else {
            continue;
        };
        let before = lifted.len();
        let variants = value.get_mut("oneOf").and_then(Value::as_array_mut);
        for variant in variants.into_iter().flatten() {
            let Some(tag) = tag_of(variant) else { continue };
            let Some(properties) = variant.get_mut("properties").and_then(Value::as_object_mut)
            else {
                continue;
            };
            for (property, schema) in properties.iter_mut() {
                if !is_inline_object(schema) {
                    continue;
                }
                let component = format!(
                    "{name}{}{}",
                    tag.to_upper_camel_case(),
                    property.to_upper_camel_case()
                );
                let mut reference = Map::new();
                reference.insert(
                    "$ref".to_owned(),
                    Value::from(format!("#/components/schemas/{component}")),
                );
                if let Some(description) = schema.get("description") {
                    reference.insert("description".to_owned(), description.clone());
                }
                lifted.push((
                    component,
                    std::mem::replace(schema, Value::Object(reference)),
                ));
            }
        }
        if lifted.len() > before {
            if let Ok(patched) = serde_json::from_value::<RefOr<Schema>>(value) {
                *schema = patched;
            }
        }
    }
    for (name, value) in lifted {
        if let Ok(schema) = serde_json::from_value::<RefOr<Schema>>(value) {
            components.schemas.insert(name, schema);
        }
    }
}

/// A variant's tag: the one value of the property that has a one-value
/// `enum` (`type` of a message, `code` of a reason).
fn tag_of(variant: &Value) -> Option<String> {
    variant
        .get("properties")?
        .as_object()?
        .values()
        .find_map(|p| match p.get("enum")?.as_array()?.as_slice() {
            [Value::String(tag)] => Some(tag.clone()),
            _ => None,
        })
}

/// Whether `schema` is an object written in place (not a `$ref`).
fn is_inline_object(schema: &Value) -> bool {
    schema.get("$ref").is_none()
        && match schema.get("type") {
            Some(Value::String(t)) => t == "object",
            Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
            _ => false,
        }
}

/// `SearchMessage` is the store's status message, whose `released` (the
/// studio released a match, told to the sockets waiting for its
/// assignment) never reaches a client (they send `requeued`): its variant
/// leaves the document.
pub(super) fn internal_messages_are_not_sent(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::Schema;
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    let Some(RefOr::T(Schema::OneOf(one_of))) = components.schemas.get_mut("SearchMessage") else {
        return;
    };
    one_of.items.retain(|item| {
        serde_json::to_value(item)
            .map(|v| v.pointer("/properties/type/enum") != Some(&json!(["released"])))
            .unwrap_or(true)
    });
}

/// Each variant of the tagged unions a studio writes in a mode (its
/// `algorithm`, each attribute declaration and each rule) takes its own
/// fields and no other (a `fifo` with `minMmr`, a `string` attribute with
/// `min` are refused): utoipa leaves a tagged enum's variants open.
pub(super) fn closed_config_variants(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::{AdditionalProperties, Schema};
    let Some(components) = openapi.components.as_mut() else {
        return;
    };
    for name in ["Algorithm", "Declaration", "Rule"] {
        let Some(RefOr::T(Schema::OneOf(one_of))) = components.schemas.get_mut(name) else {
            continue;
        };
        for item in &mut one_of.items {
            if let RefOr::T(Schema::Object(object)) = item {
                object.additional_properties =
                    Some(Box::new(AdditionalProperties::FreeForm(false)));
            }
        }
    }
}
