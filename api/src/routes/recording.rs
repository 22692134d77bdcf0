//! `GET /v1/projects/{projectId}/game-modes/{name}/recording?from=&to=`:
//! the mode's recorded searches of a window (default: the last hour) as
//! `simulate`'s `arrivalsCsv` text with an `event` column (`start`, or
//! `cancel` for a cancel or another end the API saw), streamed page by page
//! from the database, so a studio replays its own traffic with `matchplane
//! simulate` (docs/tuning.md). `at` is seconds since `from`; player and
//! party ids are the recording's keyed hashes. A mode that never recorded
//! answers the header alone. Any key of the project (a read of the mode).

use crate::auth::ProjectCaller;
use crate::extract::ApiQuery;
use crate::problem::{ApiError, Problem};
use crate::routes::replay::{event_of, WindowQuery};
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use matchplane_matchmaker::simulate::{write_arrivals_csv, ARRIVALS_CSV_HEADER};
use matchplane_store::repos::{game_modes, recordings};

/// Streams the mode's recording of a window as CSV.
#[utoipa::path(get, path = "/v1/projects/{projectId}/game-modes/{name}/recording", tag = "game-modes", operation_id = "getGameModeRecording",
    security(("bearer" = [])),
    params(("projectId" = String, Path, description = "`prj_…`"), ("name" = String, Path, description = "Game mode name"), WindowQuery),
    responses(
        (status = 200, content_type = "text/csv", body = String,
            description = "`at,playerId,mmr,pingMs,partyId,partyMembers,latencies,event,attributes` rows in time order (`at`: seconds since `from`; `attributes`: the declared attributes as a JSON object, block lists hashed)",
            example = "at,playerId,mmr,pingMs,partyId,partyMembers,latencies,event,attributes\n0.250,3f1c9a0b6d2e4f58a1b2c3d4e5f60718,1510,,,,,start,\n4.000,3f1c9a0b6d2e4f58a1b2c3d4e5f60718,,,,,,cancel,\n"),
        (status = 404, description = "GAME_MODE_NOT_FOUND: the project has no game mode `{name}`; NOT_FOUND: no such project", body = Problem),
        (status = 422, description = "VALIDATION_ERROR on `from` or `to`: a window bound that is not RFC 3339, or `from` not before `to`", body = Problem)))]
pub async fn recording(
    _caller: ProjectCaller,
    State(state): State<AppState>,
    Path((project_id, name)): Path<(String, String)>,
    ApiQuery(query): ApiQuery<WindowQuery>,
) -> Result<Response, ApiError> {
    game_modes::get(&state.db, &project_id, &name)
        .await
        .map_err(super::mode_error(&name))?;
    let window = query.millis(Utc::now())?;
    let db = state.db.clone();
    let header_chunk = futures::stream::once(async {
        Ok::<_, std::io::Error>(axum::body::Bytes::from_static(
            ARRIVALS_CSV_HEADER.as_bytes(),
        ))
    });
    let pages = futures::stream::unfold(Some(None), move |after| {
        let (db, project_id, name) = (db.clone(), project_id.clone(), name.clone());
        async move {
            let after = after?;
            let page = match recordings::window(
                &db,
                &project_id,
                &name,
                window,
                after,
                recordings::MAX_PAGE,
            )
            .await
            {
                Ok(page) => page,
                Err(error) => {
                    tracing::warn!(%error, "reading the recording failed mid-stream");
                    return Some((Err(std::io::Error::other("recording read failed")), None));
                }
            };
            let next = (page.len() as u64 == recordings::MAX_PAGE)
                .then(|| page.last().map(|r| (r.at_ms, r.id)));
            let events: Vec<_> = page
                .into_iter()
                .filter_map(|r| event_of(r, window.0))
                .collect();
            if events.is_empty() && next.is_none() {
                return None;
            }
            let mut text = String::with_capacity(events.len() * 64);
            write_arrivals_csv(&events, &mut text);
            Some((Ok(axum::body::Bytes::from(text)), next))
        }
    });
    let mut response =
        Body::from_stream(futures::StreamExt::chain(header_chunk, pages)).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/csv; charset=utf-8"),
    );
    Ok(response)
}
