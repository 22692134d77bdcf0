//! Every transport-level error is a docs/error-codes.md problem: bad JSON (400, naming
//! where), wrong content type (415), body over 64 KiB (413), unknown route
//! (404), wrong method (405), rate limit (429 + Retry-After).

use crate::common::{mode, Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::body::Body;
use axum::http::{header, Method, Request, StatusCode};
use serde_json::json;

fn raw(
    method: Method,
    path: &str,
    token: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> Request<Body> {
    let mut req = Request::builder()
        .method(method)
        .uri(path)
        .header(header::AUTHORIZATION, format!("Bearer {token}"));
    if let Some(ct) = content_type {
        req = req.header(header::CONTENT_TYPE, ct);
    }
    req.body(Body::from(body)).unwrap()
}

async fn bad_input_is_a_problem(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    let base = format!("/v1/projects/{p}/game-modes");

    // Malformed JSON names line and column.
    let broken = t
        .send(raw(
            Method::POST,
            &base,
            &key,
            Some("application/json"),
            b"{\n  \"name\": \"x\",\n  oops\n}".to_vec(),
        ))
        .await;
    broken.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    let detail = broken.body["detail"].as_str().unwrap();
    assert!(detail.contains("line 3"), "{detail}");
    assert!(detail.contains("column"), "{detail}");

    // A wrong type names the field path.
    let mut wrong = mode("x");
    wrong["parties"]["maxSize"] = json!("five");
    let typed = t.call(Method::POST, &base, Some(&key), Some(wrong)).await;
    typed.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert_eq!(
        typed.body["errors"][0]["field"], "parties.maxSize",
        "{}",
        typed.body
    );

    // Also inside the tagged `algorithm`.
    let mut wrong = mode("x");
    wrong["algorithm"]["baseTolerance"] = json!("five");
    let typed = t.call(Method::POST, &base, Some(&key), Some(wrong)).await;
    typed.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert_eq!(typed.body["errors"][0]["field"], "algorithm.baseTolerance");

    // Unknown fields are refused, by path.
    let mut unknown = mode("x");
    unknown["parties"]["colour"] = json!("red");
    let answer = t.call(Method::POST, &base, Some(&key), Some(unknown)).await;
    answer.assert_problem(StatusCode::BAD_REQUEST, "VALIDATION_ERROR");
    assert!(answer.body["errors"][0]["field"]
        .as_str()
        .unwrap()
        .starts_with("parties"));

    // Wrong content type.
    t.send(raw(
        Method::POST,
        &base,
        &key,
        Some("text/plain"),
        serde_json::to_vec(&mode("x")).unwrap(),
    ))
    .await
    .assert_problem(StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE");
    t.send(raw(
        Method::POST,
        &base,
        &key,
        None,
        serde_json::to_vec(&mode("x")).unwrap(),
    ))
    .await
    .assert_problem(StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE");

    // Over 64 KiB.
    let mut huge = mode("x");
    huge["padding"] = json!("a".repeat(70 * 1024));
    t.call(Method::POST, &base, Some(&key), Some(huge))
        .await
        .assert_problem(StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE");

    // Unknown route, wrong method.
    t.call(Method::GET, "/v1/nothing-here", Some(&key), None)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    t.call(Method::GET, "/", None, None)
        .await
        .assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    let wrong_method = t
        .call(Method::PATCH, &base, Some(&key), Some(mode("x")))
        .await;
    wrong_method.assert_problem(StatusCode::METHOD_NOT_ALLOWED, "METHOD_NOT_ALLOWED");

    // Nothing was created by any of that.
    let listed = t.call(Method::GET, &base, Some(&key), None).await;
    assert_eq!(listed.body, json!([]));

    // Bad operator bodies are problems too.
    t.call(
        Method::POST,
        "/v1/projects",
        Some(OPERATOR),
        Some(json!({"name": ""})),
    )
    .await
    .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    t.call(
        Method::POST,
        "/v1/projects",
        Some(OPERATOR),
        Some(json!({"name": "x", "tier": "gold"})),
    )
    .await
    .assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
}

async fn rate_limit_answers_429_with_retry_after(backend: Backend) {
    let t = TestApp::new(backend).await;
    let tier = t
        .call(Method::PUT, "/v1/tiers/tiny", Some(OPERATOR), Some(json!({
            "minCycleDurationSeconds": 5, "minBaseTolerance": 5, "minExpansionMultiplier": 1,
            "maxMatchSize": 16, "maxGameModes": 3, "maxConcurrentSearches": 10, "requestsPerSecond": 2
        })))
        .await;
    assert_eq!(tier.status, StatusCode::CREATED, "{}", tier.body);
    let p = t.project("tiny").await;
    let (_, key) = t.key(&p).await;
    let path = format!("/v1/projects/{p}/game-modes");
    let mut limited = None;
    for _ in 0..10 {
        let a = t.call(Method::GET, &path, Some(&key), None).await;
        if a.status == StatusCode::TOO_MANY_REQUESTS {
            limited = Some(a);
            break;
        }
        assert_eq!(a.status, StatusCode::OK);
    }
    let limited = limited.expect("a 2 rps bucket must run dry within 10 quick requests");
    limited.assert_problem(StatusCode::TOO_MANY_REQUESTS, "RATE_LIMITED");
    let retry: u64 = limited.headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry >= 1);
    // Another project is not affected.
    let other = t.project("tiny").await;
    let (_, other_key) = t.key(&other).await;
    let a = t
        .call(
            Method::GET,
            &format!("/v1/projects/{other}/game-modes"),
            Some(&other_key),
            None,
        )
        .await;
    assert_eq!(a.status, StatusCode::OK);
}

/// PostgreSQL cannot store or compare text holding a NUL; every way a NUL
/// can come in (body, path, query) answers a client error on both backends,
/// never a 500.
async fn nul_characters_are_refused_everywhere(backend: Backend) {
    let t = TestApp::new(backend).await;
    let p = t.project("free").await;
    let (_, key) = t.key(&p).await;
    t.call(
        Method::POST,
        &format!("/v1/projects/{p}/game-modes"),
        Some(&key),
        Some(mode("duel")),
    )
    .await;

    let ticket = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(json!({"gameMode": "duel\u{0}", "playerId": "p1", "attributes": {"mmr": 1500}})),
        )
        .await;
    ticket.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(
        ticket.body["errors"][0]["field"], "gameMode",
        "{}",
        ticket.body
    );
    let nested = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(json!({"gameMode": "duel", "playerId": "p1",
                "party": {"id": "x", "members": ["p1", "p\u{0}2"]}})),
        )
        .await;
    nested.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(
        nested.body["errors"][0]["field"], "party.members[1]",
        "{}",
        nested.body
    );
    // An escaped backslash followed by `u0000` is text, not a NUL.
    let text = t
        .call(
            Method::POST,
            &format!("/v1/projects/{p}/tickets"),
            Some(&key),
            Some(json!({"gameMode": "duel", "playerId": "p\\u0000", "attributes": {"mmr": 1500}})),
        )
        .await;
    assert_eq!(text.status, StatusCode::CREATED, "{}", text.body);

    for path in [
        "/v1/projects/%00".to_owned(),
        "/v1/tiers/%00".to_owned(),
        format!("/v1/projects/{p}/matches/mat_%00"),
    ] {
        let answer = t.call(Method::GET, &path, Some(OPERATOR), None).await;
        answer.assert_problem(StatusCode::NOT_FOUND, "NOT_FOUND");
    }
    // In a mode's name it is any control character (nul_in_paths.rs).
    t.call(
        Method::GET,
        &format!("/v1/projects/{p}/game-modes/a%00"),
        Some(OPERATOR),
        None,
    )
    .await
    .assert_problem(StatusCode::NOT_FOUND, "GAME_MODE_NOT_FOUND");
    let query = t
        .call(
            Method::GET,
            &format!("/v1/projects/{p}/matches?gameMode=%00"),
            Some(&key),
            None,
        )
        .await;
    query.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
    assert_eq!(query.body["errors"][0]["field"], "query", "{}", query.body);
}

on_both!(
    bad_input_is_a_problem,
    rate_limit_answers_429_with_retry_after,
    nul_characters_are_refused_everywhere
);

/// The rows of the table under `## {section}` in docs/error-codes.md whose
/// first cell is a code: (code, the rest of the row's cells).
fn error_code_rows(doc: &str, from: &str, to: &str) -> Vec<(String, Vec<String>)> {
    let start = doc.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let end = start + doc[start..].find(to).unwrap_or_else(|| panic!("no {to:?}"));
    doc[start..end]
        .lines()
        .filter_map(|line| {
            let cells: Vec<String> = line
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().to_owned())
                .collect();
            let code = cells.first()?.strip_prefix('`')?.strip_suffix('`')?;
            code.chars()
                .all(|c| c.is_ascii_uppercase() || c == '_')
                .then(|| (code.to_owned(), cells[1..].to_vec()))
        })
        .collect()
}

/// Every problem's `title` is the one docs/error-codes.md shows for its
/// code (its "Titles" table and its example body), and every code of the
/// problem tables is in that table.
#[test]
fn problem_titles_are_as_documented() {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/error-codes.md"
    ))
    .unwrap();
    let titles = error_code_rows(&doc, "## Titles", "## Waiting reasons");
    let problems = error_code_rows(&doc, "## Request and credential errors", "## Titles");
    assert!(problems.len() > 40, "{}", problems.len());
    for (code, _) in &problems {
        assert!(
            titles.iter().any(|(c, _)| c == code),
            "{code} is not in the Titles table"
        );
    }
    let title_of = |code: &str| {
        let code: &'static str = code.to_owned().leak();
        matchplane_api::problem::ApiError::with_status(StatusCode::UNPROCESSABLE_ENTITY, code, "x")
            .problem()
            .title
    };
    for (code, cells) in &titles {
        assert_eq!(title_of(code), cells[0], "title of {code}");
    }
    // In alphabetical order, where a reader looks a code up.
    let codes: Vec<&str> = titles.iter().map(|(c, _)| c.as_str()).collect();
    let mut sorted = codes.clone();
    sorted.sort_unstable();
    assert_eq!(codes, sorted, "the Titles table is out of order");
    // The example body of "The problem body".
    let example_start = doc.find("```json").unwrap() + "```json".len();
    let example_end = example_start + doc[example_start..].find("```").unwrap();
    let example: serde_json::Value =
        serde_json::from_str(&doc[example_start..example_end]).unwrap();
    let code = example["code"].as_str().unwrap();
    assert_eq!(example["title"], title_of(code), "{example}");
}
