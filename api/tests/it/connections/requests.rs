//! What a request's head and body may be, on a real socket
//! (docs/error-codes.md, docs/operations.md#outages-and-slow-clients):
//! a body that does not arrive in time is the client's `408`, never the
//! server's `503`; a declared length over the body limit is `413` before
//! anything is read; `Authorization` or `Idempotency-Key` twice and an
//! empty `Idempotency-Key` are `400`; a length given both as
//! `Content-Length` and `Transfer-Encoding` ends its connection after its
//! answer; headers over 64 KiB in all are `431`.
//!
//! Before: a stalled body was `503` "a dependency did not answer" with
//! `Retry-After` (or `400`), an announced 10 MB body was waited for, the
//! first of two `Authorization` headers won, and a 200 KB header was
//! served.

use super::{problem_of, raw, read_until_closed, serve_with};
use crate::common::OPERATOR;
use matchplane_api::{ApiConfig, ConnectionLimits, ServeConfig};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// A server with the operator token, `deadline` and `body_read_timeout`.
fn config(deadline: Duration, body_read_timeout: Duration) -> ServeConfig {
    ServeConfig {
        api: ApiConfig {
            operator_token: Some(OPERATOR.to_owned()),
            operator_token_previous: None,
            ..ApiConfig::default()
        },
        connections: ConnectionLimits {
            body_read_timeout,
            ..ConnectionLimits::default()
        },
        request_deadline: deadline,
        ..ServeConfig::default()
    }
}

/// Creates a project as the operator; returns its id.
async fn project(addr: SocketAddr) -> String {
    let body = r#"{"name":"Studio","tier":"free"}"#;
    let request = format!(
        "POST /v1/projects HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {OPERATOR}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let answer = raw(addr, request.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    let body: Value = serde_json::from_str(body).unwrap();
    body["id"].as_str().unwrap().to_owned()
}

/// `POST …/tickets` of `project` as the operator with `more` head lines
/// (each ending in CRLF), then `body`, sent as it is.
fn ticket_post(project: &str, more: &str, body: &str) -> String {
    format!(
        "POST /v1/projects/{project}/tickets HTTP/1.1\r\nhost: x\r\n\
         authorization: Bearer {OPERATOR}\r\ncontent-type: application/json\r\n{more}\r\n{body}"
    )
}

/// Sends `request` and reads what comes back within `within` (the
/// connection may stay open).
async fn answer_within(addr: SocketAddr, request: &str, within: Duration) -> String {
    let mut socket = TcpStream::connect(addr).await.unwrap();
    socket.write_all(request.as_bytes()).await.unwrap();
    read_until_closed(&mut socket, within).await.0
}

/// The head of `answer`, lowercased.
fn head_of(answer: &str) -> String {
    answer
        .split_once("\r\n\r\n")
        .map_or(answer, |(head, _)| head)
        .to_ascii_lowercase()
}

/// Asserts `answer` is a `408 REQUEST_TIMEOUT` problem without
/// `Retry-After`.
fn assert_request_timeout(answer: &str) {
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(!head_of(answer).contains("retry-after"), "{answer}");
    let problem = problem_of(answer);
    assert_eq!(problem["status"], 408, "{problem}");
    assert_eq!(problem["code"], "REQUEST_TIMEOUT", "{problem}");
}

/// A body that stops before its end, by `Content-Length` or in a chunk
/// announced as 2^64 - 1 bytes, is cut at the request deadline as the
/// client's `408`, not the `503` of a dependency.
#[tokio::test]
async fn a_body_that_stalls_to_the_deadline_is_a_408() {
    let (addr, _db, _stop) =
        serve_with(config(Duration::from_secs(1), Duration::from_secs(30))).await;
    let p = project(addr).await;
    for (framing, partial) in [
        ("content-length: 100\r\n", "{\"gameMode\""),
        (
            "transfer-encoding: chunked\r\n",
            "FFFFFFFFFFFFFFFF\r\n{\"gameMode\"",
        ),
    ] {
        let started = Instant::now();
        let answer = answer_within(
            addr,
            &ticket_post(&p, framing, partial),
            Duration::from_secs(4),
        )
        .await;
        assert_request_timeout(&answer);
        assert!(started.elapsed() < Duration::from_secs(3), "{framing}");
    }
}

/// A body that pauses longer than the body read timeout (shorter than the
/// deadline here) is `408` too, not "the body could not be read".
#[tokio::test]
async fn a_body_that_pauses_past_the_body_read_timeout_is_a_408() {
    let (addr, _db, _stop) =
        serve_with(config(Duration::from_secs(10), Duration::from_millis(800))).await;
    let p = project(addr).await;
    let answer = answer_within(
        addr,
        &ticket_post(&p, "content-length: 100\r\n", "{\"gameMode\""),
        Duration::from_secs(4),
    )
    .await;
    assert_request_timeout(&answer);
}

/// A `Content-Length` over 64 KiB is answered `413` at once, with the
/// problem a 70 KB body gets, with or without `Idempotency-Key`.
#[tokio::test]
async fn a_declared_length_over_the_limit_is_refused_before_reading() {
    let (addr, _db, _stop) =
        serve_with(config(Duration::from_secs(10), Duration::from_secs(10))).await;
    let p = project(addr).await;
    let big = format!("{{\"gameMode\":\"{}\"}}", "a".repeat(70_000));
    let whole = ticket_post(
        &p,
        &format!("content-length: {}\r\nconnection: close\r\n", big.len()),
        &big,
    );
    let whole = raw(addr, whole.as_bytes()).await;
    assert!(whole.starts_with("HTTP/1.1 413"), "{}", &whole[..200]);
    let expected = problem_of(&whole);
    assert_eq!(expected["code"], "PAYLOAD_TOO_LARGE");
    for more in [
        "content-length: 65537\r\n",
        "content-length: 10000000\r\n",
        "content-length: 10000000\r\nidempotency-key: big-1\r\n",
    ] {
        let started = Instant::now();
        let answer = answer_within(addr, &ticket_post(&p, more, "{"), Duration::from_secs(3)).await;
        assert!(answer.starts_with("HTTP/1.1 413"), "{more}: {answer}");
        assert_eq!(problem_of(&answer), expected, "{more}");
        assert!(started.elapsed() < Duration::from_secs(2), "{more}");
    }
}

/// Asserts `answer` is a `400 VALIDATION_ERROR` problem naming `field`.
fn assert_bad_header(answer: &str, field: &str) {
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer}");
    let problem = problem_of(answer);
    assert_eq!(problem["code"], "VALIDATION_ERROR", "{problem}");
    assert_eq!(problem["errors"][0]["field"], field, "{problem}");
}

/// `Authorization` twice is refused, whichever comes first (before: the
/// first one counted).
#[tokio::test]
async fn authorization_twice_is_refused() {
    let (addr, _db, _stop) =
        serve_with(config(Duration::from_secs(10), Duration::from_secs(10))).await;
    let p = project(addr).await;
    for (first, second) in [(OPERATOR, "mp_sk_other"), ("mp_sk_other", OPERATOR)] {
        let request = format!(
            "GET /v1/projects/{p} HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {first}\r\n\
             authorization: Bearer {second}\r\nconnection: close\r\n\r\n"
        );
        assert_bad_header(&raw(addr, request.as_bytes()).await, "Authorization");
    }
}

/// A ticket posted with `keys` (head lines) answers `400` naming
/// `Idempotency-Key`.
async fn assert_key_refused(keys: &[&str]) {
    let (addr, _db, _stop) =
        serve_with(config(Duration::from_secs(10), Duration::from_secs(10))).await;
    let p = project(addr).await;
    let body = r#"{"gameMode":"duel","playerId":"ana"}"#;
    for keys in keys {
        let more = format!(
            "{keys}content-length: {}\r\nconnection: close\r\n",
            body.len()
        );
        let answer = raw(addr, ticket_post(&p, &more, body).as_bytes()).await;
        assert_bad_header(&answer, "Idempotency-Key");
    }
}

/// `Idempotency-Key` twice, the same or not, is refused.
#[tokio::test]
async fn idempotency_key_twice_is_refused() {
    assert_key_refused(&[
        "idempotency-key: a\r\nidempotency-key: b\r\n",
        "idempotency-key: a\r\nidempotency-key: a\r\n",
    ])
    .await;
}

/// An empty `Idempotency-Key` is refused as any malformed one.
#[tokio::test]
async fn an_empty_idempotency_key_is_refused() {
    assert_key_refused(&["idempotency-key: \r\n", "idempotency-key:\r\n"]).await;
}

/// `Content-Length` with `Transfer-Encoding` (a request smuggling
/// attempt behind a proxy that reads the other one): the body is read by
/// its `Transfer-Encoding` alone, whichever comes first, and the
/// connection closes after the answer, so a second request hidden after
/// the body is never served.
#[tokio::test]
async fn a_length_given_two_ways_smuggles_nothing() {
    let (addr, _db, _stop) =
        serve_with(config(Duration::from_secs(10), Duration::from_secs(10))).await;
    let p = project(addr).await;
    // Read as chunks, a whole ticket of a mode that does not exist (`404`);
    // by its `Content-Length`, the body would end after 5 bytes.
    let json = r#"{"gameMode":"duel","playerId":"ana"}"#;
    let chunked = format!("{:X}\r\n{json}\r\n0\r\n\r\n", json.len());
    let hidden = "GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n";
    for framing in [
        "content-length: 5\r\ntransfer-encoding: chunked\r\n",
        "transfer-encoding: chunked\r\ncontent-length: 5\r\n",
    ] {
        let request = format!("{}{hidden}", ticket_post(&p, framing, &chunked));
        let mut socket = TcpStream::connect(addr).await.unwrap();
        socket.write_all(request.as_bytes()).await.unwrap();
        let (answer, closed) = read_until_closed(&mut socket, Duration::from_secs(3)).await;
        assert!(closed, "{framing}: the connection stayed open: {answer}");
        assert!(answer.starts_with("HTTP/1.1 404"), "{framing}: {answer}");
        assert_eq!(
            answer.matches("HTTP/1.1 ").count(),
            1,
            "{framing}: {answer}"
        );
    }
}

/// Headers over 64 KiB in all are `431 HEADERS_TOO_LARGE`, one large
/// header or several; 60 KB of them are served.
#[tokio::test]
async fn headers_over_64_kib_are_431() {
    let (addr, _db, _stop) =
        serve_with(config(Duration::from_secs(10), Duration::from_secs(10))).await;
    let get = |headers: String| async move {
        let request =
            format!("GET /healthz HTTP/1.1\r\nhost: x\r\n{headers}connection: close\r\n\r\n");
        raw(addr, request.as_bytes()).await
    };
    for headers in [
        format!("x-big: {}\r\n", "a".repeat(200_000)),
        format!(
            "x-one: {}\r\nx-two: {}\r\n",
            "a".repeat(34_000),
            "b".repeat(34_000)
        ),
    ] {
        let answer = get(headers).await;
        assert!(answer.starts_with("HTTP/1.1 431"), "{answer}");
        assert_eq!(problem_of(&answer)["code"], "HEADERS_TOO_LARGE");
    }
    let served = get(format!("x-big: {}\r\n", "a".repeat(60_000))).await;
    assert!(served.starts_with("HTTP/1.1 200"), "{served}");
}
