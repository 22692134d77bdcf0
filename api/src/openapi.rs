//! The OpenAPI document's frame: info, tags and the bearer security scheme.
//! Paths come from the handlers themselves (`routes!` in [`crate::router`]).

use crate::problem::Problem;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

/// The document's static part.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "matchplane",
        description = "Multi-tenant matchmaking control plane. Errors are `application/problem+json` with a stable `code`."
    ),
    modifiers(&BearerAuth),
    components(schemas(Problem)),
    tags(
        (name = "service", description = "Health, readiness, metrics"),
        (name = "tiers", description = "Plans and their limits (operator)"),
        (name = "projects", description = "Tenants (operator)"),
        (name = "keys", description = "API keys of a project"),
        (name = "game-modes", description = "Game-mode configuration (API key)")
    )
)]
pub struct ApiDoc;

/// `Authorization: Bearer <operator token | mp_sk_…>`.
struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// Documents on every `/v1` operation the errors any of them can answer:
/// 401 (credentials), 429 (rate limit, with `Retry-After`) and 500; and on
/// every operation with a body, 400 (malformed JSON), 413 and 415. Runs on
/// the assembled document, once the routes have added their paths.
pub fn document_common_errors(openapi: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::{ContentBuilder, Ref, ResponseBuilder};
    let problem = |description: &str| {
        ResponseBuilder::new()
            .description(description)
            .content(
                crate::problem::PROBLEM_JSON,
                ContentBuilder::new()
                    .schema(Some(Ref::from_schema_name("Problem")))
                    .build(),
            )
            .build()
    };
    for (path, item) in openapi.paths.paths.iter_mut() {
        if !path.starts_with("/v1/") {
            continue;
        }
        for operation in [
            item.get.as_mut(),
            item.put.as_mut(),
            item.post.as_mut(),
            item.patch.as_mut(),
            item.delete.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            let has_body = operation.request_body.is_some();
            let responses = &mut operation.responses.responses;
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
            if has_body {
                add(
                    "400",
                    "VALIDATION_ERROR: malformed JSON, with line, column and path",
                );
                add("413", "PAYLOAD_TOO_LARGE: body over 64 KiB");
                add(
                    "415",
                    "UNSUPPORTED_MEDIA_TYPE: body is not application/json",
                );
            }
        }
    }
}
