//! A kept answer (docs/api-keys.md, `Idempotency-Key`): sealed with
//! ChaCha20-Poly1305 under a key derived from the caller's credential when
//! a success is kept, opened again for the same caller's retry.

use super::{MAX_ANSWER_BYTES, REPLAYED};
use crate::problem::ApiError;
use crate::state::AppState;
use axum::body::{to_bytes, Body};
use axum::http::header::{CONTENT_TYPE, LOCATION};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use matchplane_store::entities::idempotency_key;
use matchplane_store::repos::idempotency;
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305};
use ring::hmac;

/// The answer's encryption key: HMAC-SHA256(credential, context).
fn cipher(credential: &[u8], project_id: &str, key: &str, seed: &str) -> Option<LessSafeKey> {
    let mac = hmac::Key::new(hmac::HMAC_SHA256, credential);
    let context = ["matchplane idempotency v1", project_id, key, seed].join("\0");
    let derived = hmac::sign(&mac, context.as_bytes());
    UnboundKey::new(&CHACHA20_POLY1305, derived.as_ref())
        .ok()
        .map(LessSafeKey::new)
}

fn aad(project_id: &str, key: &str) -> Vec<u8> {
    [project_id.as_bytes(), b"\0", key.as_bytes()].concat()
}

/// Keeps a success for the retries, releases the key otherwise; answers
/// `answer` as it was.
pub(super) async fn keep(
    state: &AppState,
    project_id: &str,
    key: &str,
    seed: &str,
    credential: &[u8],
    answer: Response,
) -> Response {
    let status = answer.status();
    if !status.is_success() {
        if let Err(error) = idempotency::release(&state.db, project_id, key).await {
            tracing::warn!(%error, project_id, "releasing an idempotency key failed");
        }
        return answer;
    }
    let (parts, body) = answer.into_parts();
    let Ok(bytes) = to_bytes(body, MAX_ANSWER_BYTES).await else {
        let _ = idempotency::release(&state.db, project_id, key).await;
        return ApiError::internal(&"an answer over 1 MiB").into_response();
    };
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let location = parts
        .headers
        .get(LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let sealed = cipher(credential, project_id, key, seed).and_then(|c| {
        let mut buffer = bytes.to_vec();
        c.seal_in_place_append_tag(
            Nonce::assume_unique_for_key([0; 12]),
            Aad::from(aad(project_id, key)),
            &mut buffer,
        )
        .ok()
        .map(|()| STANDARD.encode(buffer))
    });
    let stored = match sealed {
        Some(body) => {
            idempotency::complete(
                &state.db,
                project_id,
                key,
                idempotency::Answer {
                    status: status.as_u16(),
                    content_type: content_type.as_deref(),
                    body: &body,
                    location: location.as_deref(),
                },
            )
            .await
        }
        None => Err(matchplane_store::repos::StoreError::Corrupt(
            "sealing failed".into(),
        )),
    };
    if let Err(error) = stored {
        // The creation happened; only its replay is lost (a retry may
        // create again). Said loudly, not turned into an error answer.
        tracing::error!(%error, project_id, "keeping an idempotent answer failed");
        let _ = idempotency::release(&state.db, project_id, key).await;
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// The kept answer of `row`, decrypted with the caller's credential.
pub(super) fn replay(
    row: &idempotency_key::Model,
    project_id: &str,
    key: &str,
    credential: &[u8],
) -> Result<Response, ApiError> {
    let reused = || {
        ApiError::idempotency_key_reused(
            "this Idempotency-Key's answer cannot be read with these credentials; use a new key",
        )
    };
    let mut sealed = row
        .body
        .as_deref()
        .and_then(|b| STANDARD.decode(b).ok())
        .ok_or_else(reused)?;
    let cipher = cipher(credential, project_id, key, &row.seed).ok_or_else(reused)?;
    let plain = cipher
        .open_in_place(
            Nonce::assume_unique_for_key([0; 12]),
            Aad::from(aad(project_id, key)),
            &mut sealed,
        )
        .map_err(|_| reused())?
        .to_vec();
    let status = row
        .status
        .and_then(|s| u16::try_from(s).ok())
        .and_then(|s| StatusCode::from_u16(s).ok())
        .unwrap_or(StatusCode::OK);
    let mut response = (status, plain).into_response();
    if let Some(value) = row
        .content_type
        .as_deref()
        .and_then(|c| HeaderValue::from_str(c).ok())
    {
        response.headers_mut().insert(CONTENT_TYPE, value);
    }
    if let Some(value) = row
        .location
        .as_deref()
        .and_then(|c| HeaderValue::from_str(c).ok())
    {
        response.headers_mut().insert(LOCATION, value);
    }
    response
        .headers_mut()
        .insert(REPLAYED, HeaderValue::from_static("true"));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_credential_opens_an_answer() {
        let seal = |credential: &[u8]| {
            let mut buffer = b"{\"token\":\"secret\"}".to_vec();
            cipher(credential, "prj_1", "k1", "seed")
                .unwrap()
                .seal_in_place_append_tag(
                    Nonce::assume_unique_for_key([0; 12]),
                    Aad::from(aad("prj_1", "k1")),
                    &mut buffer,
                )
                .unwrap();
            buffer
        };
        let mut sealed = seal(b"Bearer mp_sk_a");
        assert!(!sealed.windows(6).any(|w| w == b"secret"));
        let mut other = sealed.clone();
        assert!(cipher(b"Bearer mp_sk_b", "prj_1", "k1", "seed")
            .unwrap()
            .open_in_place(
                Nonce::assume_unique_for_key([0; 12]),
                Aad::from(aad("prj_1", "k1")),
                &mut other
            )
            .is_err());
        let plain = cipher(b"Bearer mp_sk_a", "prj_1", "k1", "seed")
            .unwrap()
            .open_in_place(
                Nonce::assume_unique_for_key([0; 12]),
                Aad::from(aad("prj_1", "k1")),
                &mut sealed,
            )
            .unwrap();
        assert_eq!(plain, b"{\"token\":\"secret\"}");
    }
}
