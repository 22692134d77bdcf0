//! A free-form object (a ticket's `data`, an assignment's connection data,
//! a simulation report) is any JSON object: the document says so with
//! `additionalProperties: true`. utoipa writes it as a bare
//! `{"type": "object"}`, which JSON Schema reads as the same thing but
//! generators do not (openapi-typescript made it `Record<string, never>`,
//! an object nothing can be put in nor read from).

use serde_json::{json, Value};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;

/// Keywords whose values are data, not schemas: never walked.
const DATA_KEYWORDS: [&str; 5] = ["example", "examples", "default", "enum", "const"];

/// Marks every object schema with neither `properties`, `additionalProperties`
/// nor `patternProperties` (in the components and in the operations' bodies)
/// as `additionalProperties: true`.
pub fn free_form_objects_say_so(openapi: &mut utoipa::openapi::OpenApi) {
    if let Some(components) = openapi.components.as_mut() {
        components.schemas.values_mut().for_each(patch);
    }
    for (_, operation) in super::operations(openapi) {
        if let Some(body) = operation.request_body.as_mut() {
            for content in body.content.values_mut() {
                content.schema.iter_mut().for_each(patch);
            }
        }
        for response in operation.responses.responses.values_mut() {
            if let RefOr::T(response) = response {
                for content in response.content.values_mut() {
                    content.schema.iter_mut().for_each(patch);
                }
            }
        }
    }
}

/// [`mark`] on one schema, through its JSON form.
fn patch(schema: &mut RefOr<Schema>) {
    let Ok(mut value) = serde_json::to_value(&*schema) else {
        return;
    };
    if !mark(&mut value) {
        return;
    }
    if let Ok(patched) = serde_json::from_value(value) {
        *schema = patched;
    }
}

/// Marks the free-form objects in `value` and below; whether it marked any.
fn mark(value: &mut Value) -> bool {
    match value {
        Value::Object(fields) => {
            let object = match fields.get("type") {
                Some(Value::String(t)) => t == "object",
                Some(Value::Array(types)) => types.contains(&json!("object")),
                _ => false,
            };
            let shaped = fields
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty())
                || fields.contains_key("additionalProperties")
                || fields.contains_key("patternProperties");
            let mut marked = false;
            if object && !shaped {
                fields.insert("additionalProperties".into(), Value::Bool(true));
                marked = true;
            }
            for (key, inner) in fields.iter_mut() {
                if !DATA_KEYWORDS.contains(&key.as_str()) {
                    marked |= mark(inner);
                }
            }
            marked
        }
        Value::Array(items) => items
            .iter_mut()
            .fold(false, |marked, item| mark(item) | marked),
        _ => false,
    }
}
