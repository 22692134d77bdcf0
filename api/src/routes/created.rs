//! `201 Created` answers (docs/api-tour.md, its opening): the created
//! resource's address rides in `Location`, on the first answer and on a
//! retry's replay under the same `Idempotency-Key`.

use axum::http::header::LOCATION;
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// A `201` whose `Location` is `.0` (a path from the root, e.g.
/// `/v1/projects/prj_…/tickets/tkt_…`) and whose body is `.1`.
#[derive(Debug)]
pub struct Created<T>(pub String, pub T);

impl<T: IntoResponse> IntoResponse for Created<T> {
    fn into_response(self) -> Response {
        let mut response = (StatusCode::CREATED, self.1).into_response();
        // Ids and names are checked against their patterns before a
        // resource is created, so the path is a valid header value; were it
        // not, the answer goes without `Location` rather than fail after
        // the resource exists.
        match HeaderValue::try_from(self.0) {
            Ok(location) => {
                response.headers_mut().insert(LOCATION, location);
            }
            Err(error) => tracing::warn!(%error, "a created resource's path is no header value"),
        }
        response
    }
}
