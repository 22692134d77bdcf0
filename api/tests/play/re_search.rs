//! A search started again with a ticket whose mode's config changed since
//! (docs/searching.md, "Statuses"): a ticket the changed config rules out
//! is refused at the start with the code a cycle would fail its search
//! with, rather than added and failed at the next cycle.

use crate::harness::{duel, fast, Pools, TestApp};
use crate::on_both_pools;
use axum::http::{Method, StatusCode};
use serde_json::{json, Value};

on_both_pools!(
    a_re_search_the_changed_config_rules_out_is_refused_with_the_cycles_code,
    a_re_search_whose_values_the_changed_declarations_refuse_is_refused,
);

/// Cancels `ticket`'s search as its client does.
async fn cancel(t: &TestApp, ticket: &str, token: &str) {
    let a = t
        .call(
            Method::DELETE,
            &format!("/v1/searches/{ticket}"),
            Some(&format!("Ticket {token}")),
            None,
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert_eq!(a.body["status"], "cancelled", "{}", a.body);
}

/// Puts `body` as `project`'s mode `name`.
async fn put_mode(t: &TestApp, project: &str, key: &str, name: &str, body: Value) {
    let a = t
        .call(
            Method::PUT,
            &format!("/v1/projects/{project}/game-modes/{name}"),
            Some(key),
            Some(body),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
}

/// Asserts `answer` is the `422` problem of `code` naming `field`.
fn assert_ruled_out(answer: &crate::harness::Answer, code: &str, field: &str) {
    answer.assert_problem(StatusCode::UNPROCESSABLE_ENTITY, code);
    assert_eq!(answer.body["errors"][0]["field"], field, "{}", answer.body);
    assert_eq!(answer.body["errors"][0]["code"], code, "{}", answer.body);
}

/// A ticket searched, cancelled, then its mode narrowed `maxMmr` below its
/// `mmr`, and another's mode stopped allowing parties: each re-search is
/// refused (`422 MMR_OUT_OF_RANGE`, `422 PARTIES_NOT_ENABLED`) and leaves
/// the ticket as it was (`cancelled`); a ticket the config still takes
/// searches again.
async fn a_re_search_the_changed_config_rules_out_is_refused_with_the_cycles_code(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let addr = t.serve().await;
    let (p, key) = t.project("free").await;
    t.mode(&p, &key, duel("duel")).await;
    let (solo, solo_token) = t
        .ticket_ok(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "ana", "attributes": {"mmr": 2500}}),
        )
        .await;
    let (duo, duo_token) = t
        .ticket_ok(
            &p,
            &key,
            json!({"gameMode": "duel", "playerId": "bo", "attributes": {"mmr": 1500},
                "party": {"id": "duo", "members": ["bo", "cy"]}}),
        )
        .await;
    for (ticket, token) in [(&solo, &solo_token), (&duo, &duo_token)] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
        cancel(&t, ticket, token).await;
    }

    let mut narrowed = duel("duel");
    narrowed["algorithm"]["maxMmr"] = json!(2000);
    put_mode(&t, &p, &key, "duel", narrowed).await;
    assert_ruled_out(
        &t.rest_search(&solo_token).await,
        "MMR_OUT_OF_RANGE",
        "attributes.mmr",
    );
    // The same refusal before a WebSocket's upgrade.
    let refused =
        tokio_tungstenite::connect_async(format!("ws://{addr}/v1/search?ticket={solo_token}"))
            .await
            .expect_err("refused");
    match refused {
        tokio_tungstenite::tungstenite::Error::Http(response) => {
            assert_eq!(response.status().as_u16(), 422);
        }
        other => panic!("expected an HTTP refusal, got {other}"),
    }
    let status = t.status(&p, &key, &solo).await.body;
    assert_eq!(
        status["status"], "cancelled",
        "a refused start changes nothing: {status}"
    );
    assert_eq!(t.play.pool.count_live(&p).await.unwrap(), 0);

    let mut solos_only = duel("duel");
    solos_only["parties"] = json!({"allowParties": false, "maxSize": 1, "keepTogether": false});
    put_mode(&t, &p, &key, "duel", solos_only).await;
    assert_ruled_out(
        &t.rest_search(&duo_token).await,
        "PARTIES_NOT_ENABLED",
        "party",
    );
    // Back in range: the solo's ticket searches again.
    assert_eq!(
        t.rest_search(&solo_token).await.status,
        StatusCode::ACCEPTED
    );
    let status = t.status(&p, &key, &solo).await.body;
    assert_eq!(status["status"], "searching", "{status}");
}

/// A mode's declared `build` drops a value a cancelled ticket sent, and
/// its `composition` drops a role another listed: each re-search is
/// refused `422 ATTRIBUTE_NOT_ALLOWED` at the attribute.
async fn a_re_search_whose_values_the_changed_declarations_refuse_is_refused(pools: Pools) {
    let t = TestApp::new(pools, fast()).await;
    let (p, key) = t.project("free").await;
    let mode = |builds: Value, roles: Value| {
        json!({"name": "arena", "enabled": true, "matchShape": [2, 2],
            "matchmakingCycleDurationSeconds": 5, "algorithm": {"type": "fifo"},
            "ticketTtlSeconds": 600,
            "attributes": {"build": {"type": "string", "values": builds, "default": "mage"},
                "roles": {"type": "stringSet", "values": ["tank", "healer", "damage"]}},
            "composition": {"attribute": "roles", "perTeam": roles}})
    };
    let both = json!({"tank": 1, "healer": 1});
    t.mode(&p, &key, mode(json!(["mage", "rogue"]), both.clone()))
        .await;
    let (rogue, rogue_token) = t
        .ticket_ok(
            &p,
            &key,
            json!({"gameMode": "arena", "playerId": "ana",
                "attributes": {"build": "rogue", "roles": ["tank"]}}),
        )
        .await;
    let (healer, healer_token) = t
        .ticket_ok(
            &p,
            &key,
            json!({"gameMode": "arena", "playerId": "bo", "attributes": {"roles": ["healer"]}}),
        )
        .await;
    for (ticket, token) in [(&rogue, &rogue_token), (&healer, &healer_token)] {
        assert_eq!(t.rest_search(token).await.status, StatusCode::ACCEPTED);
        cancel(&t, ticket, token).await;
    }
    let tanks_only = json!({"tank": 2});
    put_mode(&t, &p, &key, "arena", mode(json!(["mage"]), tanks_only)).await;
    assert_ruled_out(
        &t.rest_search(&rogue_token).await,
        "ATTRIBUTE_NOT_ALLOWED",
        "attributes.build",
    );
    assert_ruled_out(
        &t.rest_search(&healer_token).await,
        "ATTRIBUTE_NOT_ALLOWED",
        "attributes.roles",
    );
}
