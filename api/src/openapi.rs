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
