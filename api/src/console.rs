//! `GET /console/`: the studio console, a small single-page app whose three
//! files (`api/console/`) are compiled into the binary, so the server needs
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
const APP_JS: &str = include_str!("../console/app.js");
const APP_CSS: &str = include_str!("../console/app.css");

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

async fn app_js() -> Response {
    asset(APP_JS, "text/javascript; charset=utf-8")
}

async fn app_css() -> Response {
    asset(APP_CSS, "text/css; charset=utf-8")
}

async fn to_index() -> Response {
    (StatusCode::PERMANENT_REDIRECT, [(LOCATION, "/console/")]).into_response()
}

/// The console's routes: `/console` (redirects), `/console/`,
/// `/console/app.js`, `/console/app.css`.
pub fn routes<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/console", get(to_index))
        .route("/console/", get(index))
        .route("/console/app.js", get(app_js))
        .route("/console/app.css", get(app_css))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_no_inline_script_and_no_other_origin() {
        for (name, text) in [
            ("index.html", INDEX),
            ("app.js", APP_JS),
            ("app.css", APP_CSS),
        ] {
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
}
