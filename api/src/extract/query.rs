//! Query strings: [`ApiQuery`] parses a route's query struct with our own
//! typed parsing ([`crate::params`]), and [`refuse_unknown_query`] refuses
//! a parameter the route does not document; every refusal is `422
//! VALIDATION_ERROR` in one shape ([`query_invalid`], docs/error-codes.md).

use crate::problem::ApiError;
use axum::extract::Request;
use matchplane_matchmaker::Code;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// A query string parsed into `T`, or `422 VALIDATION_ERROR` whose
/// `errors[0].field` names the parameter that is missing or does not
/// parse (e.g. `limit`) and whose `detail` says in plain words what it
/// must be and what was sent: the same answer as a value out of range, on
/// every route that takes query parameters.
#[derive(Debug)]
pub struct ApiQuery<T>(pub T);

/// `422 VALIDATION_ERROR` on query parameter `field`: "the `field` query
/// parameter {rule}; got {value}", the one shape of every query answer.
pub fn query_invalid(field: &str, rule: &str, value: Option<&str>) -> ApiError {
    let field = shown(field);
    let detail = match value {
        Some(value) => format!(
            "the `{field}` query parameter {rule}; got {:?}",
            shown(value)
        ),
        None => format!("the `{field}` query parameter {rule}"),
    };
    ApiError::invalid(vec![matchplane_matchmaker::FieldError::new(
        field,
        Code::ValidationError,
        detail,
    )])
}

/// Most characters of a client's parameter name or value an answer
/// repeats: a query string may be many kilobytes long, and its answer
/// names the parameter twice.
const SHOWN_CHARS: usize = 64;

/// `text` as an answer shows it: at most [`SHOWN_CHARS`] characters, a
/// longer one cut with `…`.
fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(SHOWN_CHARS) {
        Some((at, _)) => format!("{}…", &text[..at]).into(),
        None => text.into(),
    }
}

/// `422 VALIDATION_ERROR` on a query parameter the route does not take,
/// listing those it does.
fn unknown_parameter<K: AsRef<str>>(name: &str, known: &[K]) -> ApiError {
    let rule = if known.is_empty() {
        "is not known: this route takes no query parameters".to_owned()
    } else {
        let list: Vec<String> = known.iter().map(|k| format!("`{}`", k.as_ref())).collect();
        format!("is not known: this route takes {}", list.join(", "))
    };
    query_invalid(name, &rule, None)
}

/// The query parameters each documented operation takes, from the OpenAPI
/// document, keyed by method and path template (`GET
/// /v1/projects/{projectId}/matches`): the routes without a query struct
/// ([`ApiQuery`]) are checked against it by [`refuse_unknown_query`].
#[derive(Debug, Default)]
pub struct QueryNames(std::collections::HashMap<String, Vec<String>>);

impl QueryNames {
    /// The query parameters of every operation of `spec`.
    pub fn of(spec: &utoipa::openapi::OpenApi) -> Self {
        let mut names = std::collections::HashMap::new();
        let Ok(Value::Object(paths)) = serde_json::to_value(&spec.paths.paths) else {
            return Self(names);
        };
        for (path, ops) in paths {
            let Value::Object(ops) = ops else { continue };
            for (method, op) in ops {
                let query = op["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|p| p["in"] == "query")
                    .filter_map(|p| p["name"].as_str().map(str::to_owned))
                    .collect();
                names.insert(format!("{} {path}", method.to_ascii_uppercase()), query);
            }
        }
        Self(names)
    }
}

/// Middleware (a route layer, so the route is known): a query parameter
/// the matched operation does not document is refused with `422
/// VALIDATION_ERROR` naming it, before the handler runs, so a misspelled
/// or made-up parameter (`POST …/tickets?dryRun=true`) is never ignored
/// silently on a route that reads no query at all. Routes the document
/// does not hold (the console, `/docs`) are left alone.
pub fn refuse_unknown_query(names: std::sync::Arc<QueryNames>) -> RefuseUnknownQueryLayer {
    RefuseUnknownQueryLayer(names)
}

/// The layer of [`refuse_unknown_query`]: a plain tower layer rather than
/// an axum `from_fn` one, which would box each request's future and clone
/// the route's service for it (docs/performance.md, "Ticket generation").
#[derive(Clone)]
pub struct RefuseUnknownQueryLayer(std::sync::Arc<QueryNames>);

impl<S> tower::Layer<S> for RefuseUnknownQueryLayer {
    type Service = RefuseUnknownQuery<S>;

    fn layer(&self, inner: S) -> Self::Service {
        RefuseUnknownQuery {
            inner,
            names: self.0.clone(),
        }
    }
}

/// Routes a probe or a scraper calls, which read no query and ignore one:
/// a load balancer's health check or a Prometheus job may add its own
/// parameters (a cache-buster, `params:`), which must not fail the probe.
const PROBES: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// The service of [`RefuseUnknownQueryLayer`] around a route.
#[derive(Clone)]
pub struct RefuseUnknownQuery<S> {
    inner: S,
    names: std::sync::Arc<QueryNames>,
}

impl<S> RefuseUnknownQuery<S> {
    /// The refusal of `req`'s first parameter its operation does not
    /// document, if any.
    fn refusal(&self, req: &Request) -> Option<ApiError> {
        let query = req.uri().query()?;
        let matched = req.extensions().get::<axum::extract::MatchedPath>()?;
        if PROBES.contains(&matched.as_str()) {
            return None;
        }
        let method = if req.method() == axum::http::Method::HEAD {
            "GET"
        } else {
            req.method().as_str()
        };
        let known = self
            .names
            .0
            .get(&format!("{method} {}", matched.as_str()))?;
        let (name, _) = form_urlencoded::parse(query.as_bytes())
            .find(|(name, _)| !known.iter().any(|k| k == name))?;
        Some(unknown_parameter(&name, known))
    }
}

impl<S> tower::Service<Request> for RefuseUnknownQuery<S>
where
    S: tower::Service<Request, Response = axum::response::Response>,
{
    type Response = axum::response::Response;
    type Error = S::Error;
    type Future = futures::future::Either<
        std::future::Ready<Result<axum::response::Response, S::Error>>,
        S::Future,
    >;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        use axum::response::IntoResponse;
        match self.refusal(&req) {
            Some(refused) => {
                futures::future::Either::Left(std::future::ready(Ok(refused.into_response())))
            }
            None => futures::future::Either::Right(self.inner.call(req)),
        }
    }
}

/// Refuses a parameter given more than once. A parameter the route does
/// not take is refused before the handler, by [`refuse_unknown_query`]
/// (every route with a query is a documented operation).
fn refuse_repeated_query(query: &str) -> Result<(), ApiError> {
    let mut seen: Vec<std::borrow::Cow<'_, str>> = Vec::new();
    for (name, _) in form_urlencoded::parse(query.as_bytes()) {
        if seen.contains(&name) {
            return Err(query_invalid(&name, "is given more than once", None));
        }
        seen.push(name);
    }
    Ok(())
}

/// Parses a raw query string (without `?`) into `T`.
///
/// # Errors
/// `422 VALIDATION_ERROR` naming the parameter, what it must be and the
/// value sent; for a parameter given twice, naming it and saying so.
pub fn parse_query<T: DeserializeOwned>(query: &str) -> Result<T, ApiError> {
    refuse_repeated_query(query)?;
    crate::params::from_query(query).map_err(|error| {
        let field = error.field.as_deref().unwrap_or("$");
        let value = error
            .shows_value
            .then_some(error.value.as_deref())
            .flatten();
        query_invalid(field, &error.rule, value)
    })
}

impl<S: Send + Sync, T: DeserializeOwned> axum::extract::FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _: &S,
    ) -> Result<Self, Self::Rejection> {
        parse_query(parts.uri.query().unwrap_or_default()).map(ApiQuery)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Q {
        page_size: Option<u32>,
    }

    #[test]
    fn a_query_parameter_given_twice_is_refused() {
        assert!(parse_query::<Q>("pageSize=3").is_ok());
        assert!(parse_query::<Q>("pageSize=3&pageSize=4").is_err());
    }
}
