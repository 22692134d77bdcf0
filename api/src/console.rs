//! `GET /console/`: the studio console, a small single-page app whose
//! files (`api/console/`: the page, its style sheet and one JavaScript
//! module per group of pages) are compiled into the binary, so the server needs
//! no files and no internet to serve it. The app calls the public `/v1` API
//! with the credential the user signs in with, kept in the tab's session
//! storage; the pages themselves carry no credential and need none.
//!
//! Every answer carries a Content-Security-Policy that allows scripts,
//! styles and requests of this origin only (no inline script or style
//! element, no other origin, no framing).

use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION, REFERRER_POLICY,
    X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

/// The page's policy: this origin only, nothing inline.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'none'; base-uri 'none'; frame-ancestors 'none'";

const INDEX: &str = include_str!("../console/index.html");
const APP_CSS: &str = include_str!("../console/app.css");

/// The JavaScript modules, served at `/console/<name>`: `app.js` (the
/// router) imports the others.
const MODULES: [(&str, &str); 11] = [
    ("app.js", include_str!("../console/app.js")),
    ("api.js", include_str!("../console/api.js")),
    ("dom.js", include_str!("../console/dom.js")),
    ("charts.js", include_str!("../console/charts.js")),
    ("modes.js", include_str!("../console/modes.js")),
    ("rules.js", include_str!("../console/rules.js")),
    ("webhook.js", include_str!("../console/webhook.js")),
    ("views.js", include_str!("../console/views.js")),
    ("matches.js", include_str!("../console/matches.js")),
    ("simulate.js", include_str!("../console/simulate.js")),
    ("operator.js", include_str!("../console/operator.js")),
];

fn asset(body: &'static str, content_type: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

async fn index() -> Response {
    asset(INDEX, "text/html; charset=utf-8")
}

async fn app_css() -> Response {
    asset(APP_CSS, "text/css; charset=utf-8")
}

async fn to_index() -> Response {
    (StatusCode::PERMANENT_REDIRECT, [(LOCATION, "/console/")]).into_response()
}

/// The console's routes: `/console` (redirects), `/console/`,
/// `/console/app.css` and one `/console/<name>.js` per module.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    let router = Router::new()
        .route("/console", get(to_index))
        .route("/console/", get(index))
        .route("/console/app.css", get(app_css));
    MODULES.iter().fold(router, |router, &(name, body)| {
        router.route(
            &format!("/console/{name}"),
            get(move || async move { asset(body, "text/javascript; charset=utf-8") }),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_no_inline_script_and_no_other_origin() {
        for (name, text) in [("index.html", INDEX), ("app.css", APP_CSS)]
            .into_iter()
            .chain(MODULES)
        {
            // The SVG namespace is a name, not a place anything is loaded from.
            let text = text.replace("\"http://www.w3.org/2000/svg\"", "");
            assert!(
                !text.contains("http://") && !text.contains("https://"),
                "{name} names another origin"
            );
        }
        // Every <script> of the page loads a file of this origin.
        for tag in INDEX.split("<script").skip(1) {
            let head = tag.split('>').next().unwrap_or_default();
            assert!(head.contains("src=\"/console/"), "inline script: {head}");
        }
        assert!(!INDEX.contains("<style"), "inline style element");
        assert!(!INDEX.contains(" style="), "inline style attribute");
        assert!(!INDEX.contains(" on"), "inline event handler");
    }

    /// Every module a module imports is one the server serves (a missing
    /// one would leave the console blank).
    #[test]
    fn every_imported_module_is_served() {
        let served: Vec<&str> = MODULES.iter().map(|(name, _)| *name).collect();
        for (name, text) in MODULES {
            for import in text.split("from \"./").skip(1) {
                let target = import.split('"').next().unwrap_or_default();
                assert!(
                    served.contains(&target),
                    "{name} imports {target}, not served"
                );
            }
        }
        let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/console"))
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|f| f.ends_with(".js"))
            .count();
        assert_eq!(
            files,
            MODULES.len(),
            "a module of api/console/ is not served"
        );
    }
}
