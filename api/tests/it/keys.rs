//! API keys: shown once, stored hashed, revocable at once; operator auth.

use crate::common::{Backend, TestApp, OPERATOR};
use crate::on_both;
use axum::http::{Method, StatusCode};
use sea_orm::{ConnectionTrait, Statement};
use sha2::{Digest, Sha256};

async fn key_is_shown_once_and_stored_hashed(backend: Backend) {
    let t = TestApp::new(backend).await;
    let project = t.project("free").await;
    let created = t
        .call(
            Method::POST,
            &format!("/v1/projects/{project}/keys"),
            Some(OPERATOR),
            None,
        )
        .await;
    assert_eq!(created.status, StatusCode::CREATED, "{}", created.body);
    let key = created.body["key"].as_str().unwrap().to_owned();
    assert!(key.starts_with("mp_sk_"));
    assert!(key.len() >= 6 + 27, "at least 160 bits of base64");
    let prefix = created.body["prefix"].as_str().unwrap();
    assert!(key.starts_with(prefix) && prefix.len() < key.len());

    // Listing never shows the key again.
    let listed = t
        .call(
            Method::GET,
            &format!("/v1/projects/{project}/keys"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(listed.status, StatusCode::OK);
    assert!(!listed.body.to_string().contains(&key));
    assert_eq!(listed.body[0]["prefix"], prefix);

    // Written in the background, within a second or so of the use.
    let mut listed = listed;
    for _ in 0..50 {
        if listed.body[0]["lastUsedAt"].is_string() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        listed = t
            .call(
                Method::GET,
                &format!("/v1/projects/{project}/keys"),
                Some(OPERATOR),
                None,
            )
            .await;
    }
    assert!(listed.body[0]["lastUsedAt"].is_string(), "{}", listed.body);

    // The table holds the SHA-256, never the key.
    let backend_kind = t.db.get_database_backend();
    let rows =
        t.db.query_all(Statement::from_string(
            backend_kind,
            "SELECT id, project_id, name, prefix, hash FROM api_keys",
        ))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let hash: String = rows[0].try_get("", "hash").unwrap();
    let expected: String = Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(hash, expected);
    for column in ["id", "project_id", "name", "prefix", "hash"] {
        let value: String = rows[0].try_get("", column).unwrap();
        assert_ne!(value, key, "{column} holds the plaintext key");
    }
}

/// A key's and a project's name are printable as a player id is
/// (docs/api-keys.md): a bidirectional override that would make a name
/// display as another, a zero-width space, a line break or only spaces is
/// refused `422` on `name`; letters of any script and emoji are kept.
async fn names_display_as_what_they_are(backend: Backend) {
    let t = TestApp::new(backend).await;
    let project = t.project("free").await;
    let keys = format!("/v1/projects/{project}/keys");
    for bad in ["\u{202E}lave", "a\u{200B}b", "a\nb", "   "] {
        let body = serde_json::json!({"name": bad, "scopes": ["read"]});
        let refused = t
            .call(Method::POST, &keys, Some(OPERATOR), Some(body))
            .await;
        refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        assert_eq!(refused.body["errors"][0]["field"], "name", "{bad:?}");
        let body = serde_json::json!({"name": bad, "tier": "free"});
        let refused = t
            .call(Method::POST, "/v1/projects", Some(OPERATOR), Some(body))
            .await;
        refused.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, "VALIDATION_ERROR");
        assert_eq!(refused.body["errors"][0]["field"], "name", "{bad:?}");
    }
    let body = serde_json::json!({"name": "Ключ 🔑 بوت", "scopes": ["read"]});
    let kept = t
        .call(Method::POST, &keys, Some(OPERATOR), Some(body))
        .await;
    assert_eq!(kept.status, StatusCode::CREATED, "{}", kept.body);
    assert_eq!(kept.body["name"], "Ключ 🔑 بوت");
}

async fn revoked_key_stops_at_once(backend: Backend) {
    let t = TestApp::new(backend).await;
    let project = t.project("free").await;
    let (key_id, key) = t.key(&project).await;
    let path = format!("/v1/projects/{project}/game-modes");
    assert_eq!(
        t.call(Method::GET, &path, Some(&key), None).await.status,
        StatusCode::OK
    );
    let revoked = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{project}/keys/{key_id}"),
            Some(OPERATOR),
            None,
        )
        .await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT);
    t.call(Method::GET, &path, Some(&key), None)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    let listed = t
        .call(
            Method::GET,
            &format!("/v1/projects/{project}/keys"),
            Some(OPERATOR),
            None,
        )
        .await;
    assert!(listed.body[0]["revokedAt"].is_string());
}

async fn credentials_are_required(backend: Backend) {
    let t = TestApp::new(backend).await;
    let project = t.project("free").await;
    let (_, key) = t.key(&project).await;
    let path = format!("/v1/projects/{project}/game-modes");
    t.call(Method::GET, &path, None, None)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    t.call(Method::GET, &path, Some("mp_sk_not-a-real-key"), None)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    t.call(
        Method::GET,
        "/v1/projects",
        Some("wrong-operator-token"),
        None,
    )
    .await
    .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    // A key is not the operator.
    t.call(Method::GET, "/v1/projects", Some(&key), None)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    t.call(
        Method::PATCH,
        &format!("/v1/projects/{project}"),
        Some(&key),
        Some(serde_json::json!({"tier": "enterprise"})),
    )
    .await
    .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    // A key may create another key of its own project.
    let own = t
        .call(
            Method::POST,
            &format!("/v1/projects/{project}/keys"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(own.status, StatusCode::CREATED);
}

/// A dead key (unknown, or revoked) is refused from memory on its next
/// use: the database is not asked again (here it is even gone).
async fn dead_keys_are_refused_without_the_database(backend: Backend) {
    let t = TestApp::new(backend).await;
    let project = t.project("free").await;
    let (key_id, key) = t.key(&project).await;
    let path = format!("/v1/projects/{project}/game-modes");
    assert_eq!(
        t.call(Method::GET, &path, Some(&key), None).await.status,
        StatusCode::OK
    );
    let revoked = t
        .call(
            Method::DELETE,
            &format!("/v1/projects/{project}/keys/{key_id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(revoked.status, StatusCode::NO_CONTENT);
    let unknown = "mp_sk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    t.call(Method::GET, &path, Some(unknown), None)
        .await
        .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    t.db.clone().close().await.unwrap();
    for dead in [key.as_str(), unknown] {
        t.call(Method::GET, &path, Some(dead), None)
            .await
            .assert_problem(StatusCode::UNAUTHORIZED, "UNAUTHORIZED");
    }
}

on_both!(
    names_display_as_what_they_are,
    dead_keys_are_refused_without_the_database,
    key_is_shown_once_and_stored_hashed,
    revoked_key_stops_at_once,
    credentials_are_required
);
